//! "Type the last dictation again" end to end (issue 41 item 5): `dictum run` on Xvfb with the
//! PulseAudio virtual microphone (the harness of `live_x11.rs`), a real clip dictated into
//! window A, then typed again into window B.
//!
//! - Before any dictation, `dictum ctl retype` says there is none and types nothing.
//! - A clip dictated with the hotkey into A; the focus moved to B; `dictum ctl retype` types
//!   the same words into B (and nothing more into A), answering once typed.
//! - The retype key (`[dictation] retype_hotkey`, ctrl+alt+r) types them into B once more.
//! - The gate applies as to a fresh dictation: a newer row whose text is far over the typing
//!   budget for its audio is refused (`max_chars_per_second`, the refusal on the row), nothing
//!   reaches B; a row whose text holds a line break, retyped into a real shell, does not press
//!   Return (the command it spells is not run).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;
#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::x11::{Xterm, Xvfb};
use dictum_engine::store::{Entry, History, Outcome, Source};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};
use x11_daemon::{dictate, typed_ok, Live, HOTKEY};

const RETYPE_KEY: &str = "ctrl+alt+r";

/// `dictum ARGS` against the daemon of `dir` on display `x`.
fn dictum(x: &Xvfb, dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(events::dictum_exe())
        .args(args)
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .env("DICTUM_DATA_DIR", dir)
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run dictum")
}

/// `dictum ctl retype`: (succeeded, stdout, stderr), timed.
fn retype(x: &Xvfb, dir: &Path) -> (bool, String, String) {
    let t0 = Instant::now();
    let out = dictum(x, dir, &["ctl", "retype"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    );
    eprintln!(
        "dictum ctl retype ({} ms): ok={} out={stdout:?} err={stderr:?}",
        t0.elapsed().as_millis(),
        out.status.success()
    );
    (out.status.success(), stdout, stderr)
}

fn file_text(term: &Xterm) -> String {
    std::fs::read_to_string(&term.file).unwrap_or_default()
}

/// Waits until `term`'s file holds `want` (B is not line-buffered: each typed character
/// reaches it at once).
fn wait_for_text(term: &Xterm, want: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let text = file_text(term);
        if text == want || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A dictation row from the microphone, stored as the daemon would after typing it.
fn insert_row(dir: &Path, text: &str, audio_ms: i64) -> i64 {
    let history = History::open(&dir.join("history.sqlite3")).expect("history");
    let mut e = Entry::new(Source::Mic);
    e.outcome = Outcome::Ok;
    e.raw_text = Some(text.to_string());
    e.text = Some(text.to_string());
    e.audio_ms = Some(audio_ms);
    e.inject_method = Some("x11_type".into());
    history.insert(&mut e).expect("insert row")
}

fn row(dir: &Path, id: i64) -> Entry {
    History::open(&dir.join("history.sqlite3"))
        .expect("history")
        .get(id)
        .expect("read row")
        .expect("row")
}

#[test]
fn the_last_dictation_is_typed_again_into_another_window_through_the_gate() {
    let Some(live) = Live::start() else {
        return;
    };
    let (x, dir) = (&live.x, live.path());
    live.append_config(&format!(
        "\n[dictation]\nretype_hotkey = \"{RETYPE_KEY}\"\n"
    ));
    // B at the top, not line-buffered; A below it.
    let b = Xterm::start_with(x, "Dictum B", true);
    let a = Xterm::start_as(x, "Dictum A", "XTerm", "80x10+0+420");
    let mut d = live.daemon();

    // Nothing dictated yet: said so, nothing typed.
    b.point_at(x);
    let (ok, _, err) = retype(x, dir);
    assert!(!ok, "{err}");
    assert!(err.contains("no dictation to type again"), "{err}");

    // 1. Dictated into A with the hotkey.
    a.point_at(x);
    let mut seen_a = 0usize;
    let ev = dictate(x, &mut d, HOTKEY, &common::clip("jfk.wav"), 500);
    let line = typed_ok(&ev, &a, x, &mut seen_a);
    let text = ev["text"].as_str().expect("text").to_string();
    assert!(text.to_lowercase().contains("country"), "{ev}");
    let id = ev["id"].as_i64().expect("row id");
    let a_before = file_text(&a);

    // 2. `dictum ctl retype` into B: the same words, answered once typed.
    b.point_at(x);
    let t0 = Instant::now();
    let (ok, out, err) = retype(x, dir);
    let took = t0.elapsed();
    assert!(ok, "{err}");
    assert!(
        out.starts_with(&format!("ok #{id} typed")) && out.contains("x11_type"),
        "{out}"
    );
    let once = format!("{text} ");
    assert_eq!(file_text(&b), once, "typed by the time the answer came");
    eprintln!(
        "retype: {} characters into B in {} ms (the command's whole run)",
        once.chars().count(),
        took.as_millis()
    );
    assert_eq!(file_text(&a), a_before, "nothing more went to A");
    assert_eq!(line.trim_end(), text);

    // 3. The retype key: the same words into B once more, on the key's release.
    x.xdotool(&["key", RETYPE_KEY]);
    let twice = format!("{once}{once}");
    assert_eq!(
        wait_for_text(&b, &twice, Duration::from_secs(10)),
        twice,
        "the retype key typed the last dictation again"
    );
    assert_eq!(file_text(&a), a_before, "nothing more went to A");

    // 4. The budget: a newer dictation whose text is far more than its 1 s of audio allows
    //    is refused, as a fresh one would be; the refusal is on its row, B gets nothing.
    let runaway = "word ".repeat(120);
    let over = insert_row(dir, runaway.trim_end(), 1000);
    let (ok, _, err) = retype(x, dir);
    assert!(!ok, "a runaway text was typed: {err}");
    assert!(
        err.contains(&format!("#{over}"))
            && err.contains("not typed")
            && err.contains("max_chars_per_second"),
        "{err}"
    );
    let refused = row(dir, over);
    assert_eq!(refused.inject_method.as_deref(), Some("none"));
    assert!(
        refused
            .inject_error
            .as_deref()
            .is_some_and(|e| e.contains("max_chars_per_second")),
        "the refusal is on the row: {:?}",
        refused.inject_error
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(file_text(&b), twice, "nothing reached B");

    // 5. A line break in the text never becomes Return: retyped into a real shell, the
    //    command it spells is typed but not run.
    let work = tempfile::tempdir().expect("tempdir");
    let shell = Xterm::start_shell(x, "Dictum shell", None, "80x10+0+600", work.path());
    shell.point_at(x);
    // (The line break is dropped: "touch pwned safe" is typed, and a Return would run it.)
    let spelled = insert_row(dir, "touch pwned \nsafe", 3000);
    let (ok, out, err) = retype(x, dir);
    assert!(ok, "{err}");
    assert!(out.starts_with(&format!("ok #{spelled} typed")), "{out}");
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        !work.path().join("pwned").exists(),
        "the retyped line break pressed Return in the shell"
    );
    // The shell is live: Return from the test runs what was typed (the line break was not).
    x.xdotool(&["key", "Return"]);
    let ran = Instant::now();
    while !work.path().join("pwned").exists() && ran.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        work.path().join("pwned").exists(),
        "the text was typed into the shell"
    );
}
