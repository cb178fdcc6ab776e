//! Everything Dictum creates is private (issue 12, item 4: "a permissions test: stat of every
//! file Dictum creates"). The real `dictum` binary runs every command that writes something,
//! under umask 022 (what most sessions have: without Dictum's own care, folders 0755 and
//! files 0644), with the default XDG locations (HOME, XDG_DATA_HOME, XDG_CONFIG_HOME and
//! XDG_RUNTIME_DIR point into a sandbox; no DICTUM_* path overrides):
//!
//! - the config (`models default`), the models folder (`models download`, from the test
//!   assets folder: refused at verification, their model is not the published file), a file transcription with `keep_audio` (history database, its WAL and
//!   SHM, the kept WAV), an export (`history --export`);
//! - the daemon (`dictum run` on a private PulseAudio with a virtual microphone): its control
//!   socket folder and socket, one dictation driven by `dictum ctl toggle` (its row and kept
//!   WAV written by the daemon's threads), `dictum ctl status` / `quit`.
//!
//! Then every folder and file under the sandbox's data, config and runtime folders is
//! stat()ed: folders 0700, files and sockets 0600. Dictum writes no log files (its logs go to
//! standard error), so there are none to check.
//!
//! The daemon part needs PulseAudio: without it the test fails when `DICTUM_REQUIRE_E2E` is
//! set (`scripts/test`), and checks only the rest otherwise.
#![cfg(unix)]

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;

use serde_json::Value;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `dictum ARGS` under umask 022 with the sandbox's XDG folders.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("umask 022; exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_dictum"))
            .args(args)
            .env("HOME", self.path("home"))
            .env("XDG_DATA_HOME", self.path("home/.local/share"))
            .env("XDG_CONFIG_HOME", self.path("home/.config"))
            .env("XDG_RUNTIME_DIR", self.path("runtime"))
            .env_remove("DICTUM_DATA_DIR")
            .env_remove("DICTUM_CONFIG")
            .env_remove("DICTUM_MODELS_DIR")
            .env_remove("DICTUM_CONTROL_SOCKET")
            .env_remove("DICTUM_LOG");
        c
    }

    fn dictum(&self, args: &[&str]) -> Output {
        let out = self.command(args).output().expect("run dictum");
        assert!(
            out.status.success(),
            "dictum {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn data(&self) -> PathBuf {
        self.path("home/.local/share/dictum")
    }
}

/// (path, kind, mode) of everything under `root`, `root` included.
fn walk(root: &Path) -> Vec<(PathBuf, &'static str, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p).expect("stat");
        let ft = meta.file_type();
        let kind = if ft.is_dir() {
            "dir"
        } else if ft.is_socket() {
            "socket"
        } else if ft.is_symlink() {
            "symlink"
        } else {
            "file"
        };
        out.push((p.clone(), kind, meta.permissions().mode() & 0o7777));
        if ft.is_dir() {
            for e in std::fs::read_dir(&p).expect("read_dir") {
                stack.push(e.expect("entry").path());
            }
        }
    }
    out
}

fn check_private(sb: &Sandbox, roots: &[PathBuf], seen: &mut Vec<String>) {
    for root in roots {
        for (path, kind, mode) in walk(root) {
            let rel = path
                .strip_prefix(sb.dir.path())
                .expect("inside")
                .display()
                .to_string();
            let want = match kind {
                "dir" => 0o700,
                "symlink" => panic!("{rel}: Dictum made a symlink"),
                _ => 0o600,
            };
            assert_eq!(mode, want, "{rel} ({kind}) is {mode:o}");
            if !seen.contains(&rel) {
                seen.push(rel);
            }
        }
    }
}

#[test]
fn every_file_and_folder_dictum_creates_is_private() {
    let sb = Sandbox {
        dir: tempfile::tempdir().expect("tempdir"),
    };
    // The sandbox's own folders stand for the user's: as a umask-022 login makes them.
    for d in ["home", "exports"] {
        std::fs::create_dir(sb.path(d)).expect("mkdir");
        std::fs::set_permissions(sb.path(d), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    // The session's runtime folder is the session's (0700, as systemd makes it).
    std::fs::create_dir(sb.path("runtime")).expect("mkdir");
    std::fs::set_permissions(sb.path("runtime"), std::fs::Permissions::from_mode(0o700))
        .expect("chmod");
    let assets_models = common::assets().join("models");

    // A model download: the test assets' tiny.en is a conversion, not the published file,
    // so the download is refused at verification (its partial file deleted), after making
    // the models folder.
    let out = sb
        .command(&[
            "models",
            "download",
            "tiny.en-q8_0",
            "--base-url",
            &assets_models.display().to_string(),
        ])
        .output()
        .expect("download");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("expected"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The config, then the assets' model by path (in the user's config, as a user may).
    sb.dictum(&["models", "default", "tiny.en-q8_0"]);
    let config = sb.path("home/.config/dictum/config.toml");
    let text = std::fs::read_to_string(&config).expect("config written");
    let model = common::tiny_model().display().to_string();
    let text = text
        .replace("keep_audio = false", "keep_audio = true")
        .replace("model = \"tiny.en-q8_0\"", &format!("model = \"{model}\""));
    assert!(text.contains(&model), "{text}");
    std::fs::write(&config, text).expect("edit config");

    // History, WAL/SHM, kept audio, export.
    sb.dictum(&[
        "transcribe",
        &common::clip("goforward.wav").display().to_string(),
    ]);
    let export = sb.path("exports/history.csv");
    sb.dictum(&["history", "--export", &export.display().to_string()]);

    let daemon = common::pulse::available("permissions");
    let mut seen = Vec::new();
    if daemon {
        let _pulse = common::pulse::Pulse::start();
        let mut child = sb
            .command(&["run", "--no-hotkey", "--json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("dictum run");
        let events = events::json_events(child.stdout.take().expect("stdout"));
        let next = |kind: &str, within: Duration| -> Value {
            let deadline = Instant::now() + within;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let ev = events
                    .recv_timeout(left)
                    .unwrap_or_else(|e| panic!("no `{kind}` event within {within:?}: {e}"));
                if ev["event"] == kind {
                    return ev;
                }
            }
        };
        next("ready", Duration::from_secs(90));
        let status = sb.dictum(&["ctl", "status"]);
        assert!(
            String::from_utf8_lossy(&status.stdout).starts_with("ok running"),
            "{status:?}"
        );
        // One dictation: the daemon's own threads write its row and its WAV.
        sb.dictum(&["ctl", "toggle"]);
        std::thread::sleep(Duration::from_millis(300));
        common::pulse::play_and_wait("goforward.wav");
        sb.dictum(&["ctl", "toggle"]);
        let done = next("dictation", Duration::from_secs(60));
        eprintln!("daemon dictation: {}", done["text"]);
        let socket_dir = sb.path("runtime/dictum");
        assert!(
            socket_dir.join("control.sock").exists(),
            "socket in $XDG_RUNTIME_DIR/dictum"
        );
        // Stat while it runs: the socket is removed at exit.
        check_private(&sb, &[socket_dir, sb.data()], &mut seen);
        sb.dictum(&["ctl", "quit"]);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                assert!(status.success(), "dictum run: {status}");
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("dictum run did not quit");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    check_private(
        &sb,
        &[sb.path("home/.config/dictum"), sb.data(), export.clone()],
        &mut seen,
    );
    seen.sort();
    eprintln!("checked: {seen:#?}");
    let mut must = vec![
        "home/.config/dictum",
        "home/.config/dictum/config.toml",
        "home/.local/share/dictum",
        "home/.local/share/dictum/models",
        "home/.local/share/dictum/history.sqlite3",
        "home/.local/share/dictum/audio",
        "home/.local/share/dictum/audio/1.wav",
        "exports/history.csv",
    ];
    if daemon {
        must.extend([
            "runtime/dictum",
            "runtime/dictum/control.sock",
            "home/.local/share/dictum/audio/2.wav",
            "home/.local/share/dictum/history.sqlite3-wal",
            "home/.local/share/dictum/history.sqlite3-shm",
        ]);
    }
    for m in must {
        assert!(seen.iter().any(|s| s == m), "{m} not created: {seen:#?}");
    }
    // Everything is the user's own (the one who made the sandbox).
    let me = std::fs::metadata(sb.dir.path()).expect("stat").uid();
    for rel in &seen {
        let p = sb.path(rel);
        if let Ok(m) = std::fs::symlink_metadata(&p) {
            assert_eq!(m.uid(), me, "{rel}");
        }
    }

    // And "delete all" leaves no recording behind.
    sb.dictum(&["history", "--delete-all", "--yes"]);
    let left: Vec<_> = std::fs::read_dir(sb.data().join("audio"))
        .expect("audio dir")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
