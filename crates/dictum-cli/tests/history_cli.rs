//! `dictum history` deleting and exporting, as a user runs it: `--delete ID...` takes rows and
//! their audio, `--delete-all` wants `--yes` off a terminal and a typed "yes" on one (a real
//! pseudo-terminal through `script`), a damaged database is moved aside with a warning, and 8
//! `dictum` processes opening a fresh database at once all succeed.

use dictum_engine::store::{Entry, History, Outcome, Query, Source};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "support/dictum_cmd.rs"]
mod dictum_cmd;
use dictum_cmd::Sandbox;

impl Sandbox {
    fn data(&self) -> PathBuf {
        self.path("data")
    }

    fn db(&self) -> PathBuf {
        self.data().join("history.sqlite3")
    }

    fn dictum(&self, args: &[&str]) -> Output {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .expect("run dictum")
    }

    /// `n` rows, each with a kept WAV; returns (ids, wav paths).
    fn seed(&self, n: usize) -> (Vec<i64>, Vec<PathBuf>) {
        let history = History::open(&self.db()).expect("open");
        let audio = self.data().join("audio");
        std::fs::create_dir_all(&audio).expect("audio dir");
        let mut ids = Vec::new();
        let mut wavs = Vec::new();
        for i in 0..n {
            let mut e = Entry::new(Source::Mic);
            e.outcome = Outcome::Ok;
            e.text = Some(format!("private dictation {i}"));
            history.insert(&mut e).expect("insert");
            let id = e.id.expect("id");
            let wav = audio.join(format!("{id}.wav"));
            std::fs::write(&wav, b"RIFF").expect("wav");
            e.audio_path = Some(wav.display().to_string());
            history.update(&e).expect("update");
            ids.push(id);
            wavs.push(wav);
        }
        (ids, wavs)
    }

    fn count(&self) -> usize {
        History::open(&self.db())
            .expect("open")
            .list(&Query::default())
            .expect("list")
            .len()
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn one_error_line(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("dictum: error: "), "{err}");
    assert!(lines[0].contains(needle), "{err}");
}

#[test]
fn delete_by_id_takes_rows_and_audio() {
    let sb = Sandbox::new();
    let (ids, wavs) = sb.seed(3);
    let out = sb.dictum(&[
        "history",
        "--delete",
        &ids[0].to_string(),
        &ids[2].to_string(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("deleted 2 entries"));
    assert!(!wavs[0].exists() && !wavs[2].exists());
    assert!(wavs[1].exists(), "the others stay");
    assert_eq!(sb.count(), 1);
    // An id that is not there: said, exit 1; the existing one still goes.
    let out = sb.dictum(&["history", "--delete", &ids[1].to_string(), "4242"]);
    one_error_line(&out, "no entry #4242");
    assert!(!wavs[1].exists());
    assert_eq!(sb.count(), 0);
}

#[test]
fn delete_all_needs_yes_off_a_terminal() {
    let sb = Sandbox::new();
    let (_, wavs) = sb.seed(4);
    let out = sb.dictum(&["history", "--delete-all"]);
    one_error_line(&out, "add --yes to confirm");
    assert!(stderr(&out).contains("all 4 entries"), "{}", stderr(&out));
    assert_eq!(sb.count(), 4, "nothing deleted without --yes");
    assert!(wavs.iter().all(|w| w.exists()));

    let out = sb.dictum(&["history", "--all", "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("deleted 4 entries"));
    assert_eq!(sb.count(), 0);
    assert!(wavs.iter().all(|w| !w.exists()));
}

/// Runs `dictum history --delete-all` on a pseudo-terminal (util-linux `script`), typing
/// `answer`.
fn on_a_terminal(sb: &Sandbox, answer: &str) -> Output {
    let cmd = format!("{} history --delete-all", env!("CARGO_BIN_EXE_dictum"));
    let mut child = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("DICTUM_DATA_DIR", sb.data())
        .env("DICTUM_CONFIG", sb.dir.path().join("config.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    std::thread::sleep(std::time::Duration::from_millis(500));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(format!("{answer}\n").as_bytes())
        .expect("type");
    child.wait_with_output().expect("wait")
}

#[test]
fn delete_all_on_a_terminal_asks_for_a_typed_yes() {
    let script = Command::new("sh")
        .args(["-c", "command -v script"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !script {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but `script` is missing; sudo apt install bsdutils"
        );
        eprintln!("`script` missing: skipped");
        return;
    }
    let sb = Sandbox::new();
    let (_, wavs) = sb.seed(2);
    let out = on_a_terminal(&sb, "no");
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(screen.contains("Type yes to confirm"), "{screen}");
    assert!(screen.contains("nothing deleted"), "{screen}");
    assert_eq!(sb.count(), 2);
    let out = on_a_terminal(&sb, "yes");
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(screen.contains("deleted 2 entries"), "{screen}");
    assert_eq!(sb.count(), 0);
    assert!(wavs.iter().all(|w| !w.exists()));
}

#[test]
fn export_writes_the_listed_entries() {
    let sb = Sandbox::new();
    sb.seed(3);
    for (name, needle) in [
        ("h.csv", "id,created_at"),
        ("h.json", "\"text\": \"private dictation 2\""),
        ("h.md", "| "),
    ] {
        let file = sb.dir.path().join(name);
        let out = sb.dictum(&["history", "--export", &file.display().to_string()]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = std::fs::read_to_string(&file).expect("exported");
        assert!(text.contains(needle), "{name}: {text}");
        assert!(text.contains("private dictation 0"), "{name}");
    }
    let out = sb.dictum(&["history", "--export", "/tmp/x.pdf"]);
    one_error_line(&out, "name it .csv, .json, .md (or .srt, .vtt");
}

#[test]
fn a_damaged_database_is_moved_aside_with_a_warning() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.data()).expect("mkdir");
    std::fs::write(sb.db(), b"definitely not sqlite ".repeat(100)).expect("garbage");
    let out = sb.dictum(&["history"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("dictum: warning: the history database was damaged")
            && err.contains(".corrupt-"),
        "{err}"
    );
    let aside: Vec<_> = std::fs::read_dir(sb.data())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("history.sqlite3.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    let again = sb.dictum(&["history"]);
    assert!(
        again.status.success() && again.stderr.is_empty(),
        "{}",
        stderr(&again)
    );
}

#[test]
fn eight_processes_open_a_fresh_database_at_once() {
    for round in 0..3 {
        let sb = Sandbox::new();
        let children: Vec<_> = (0..8)
            .map(|_| {
                sb.command(&["history", "--json"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().expect("wait");
            assert!(out.status.success(), "round {round}: {}", stderr(&out));
        }
        let h = History::open(&sb.db()).expect("open");
        assert_eq!(
            h.schema_version().expect("version"),
            dictum_engine::store::MIGRATION_FILES.len()
        );
        assert!(Path::new(&sb.db()).exists());
    }
}
