//! The real `dictum run --json --stdin-commands` in a headless sway session
//! (`dictum-engine/tests/common/sway.rs`'s [`Session`]), run as the session's user with the
//! private PulseAudio: the binary and model where that user can reach them, the config in the
//! session's home, and `dictum ctl`. Shared by `live_wayland.rs` and `live_gate_wayland.rs`,
//! which include `common` and `support/events.rs` at their root.
#![allow(dead_code)]

use crate::common::sway::Session;
use crate::events::RunningDaemon;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The dictum binary ([`crate::events::dictum_exe`]) and the tiny model where the session's
/// user can use them (the build directory may be in root's home).
pub fn prepare(s: &Session) -> (PathBuf, PathBuf) {
    (
        s.reachable(&crate::events::dictum_exe()),
        s.reachable(&crate::common::tiny_model()),
    )
}

/// `dictum run --json --stdin-commands` as the session's user, ready.
pub fn start(s: &Session, exe: &Path) -> RunningDaemon {
    let child = s
        .command(exe)
        .args(["run", "--json", "--stdin-commands"])
        .env(
            "PULSE_SERVER",
            std::env::var("PULSE_SERVER").expect("PULSE_SERVER"),
        )
        .env("DICTUM_LOG", crate::events::log_filter())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn();
    let mut d = RunningDaemon::new(child);
    let ready = d.next("ready", Duration::from_secs(90));
    eprintln!("ready: {ready}");
    d
}

/// The session user's config file, where `dictum` looks by default.
pub fn config_path(s: &Session) -> PathBuf {
    s.home.join(".config/dictum/config.toml")
}

/// Writes `text` as the config, whole and renamed (the daemon never reads half a file), owned
/// by the session's user.
pub fn write_config(s: &Session, text: &str) {
    let path = config_path(s);
    let dir = path.parent().expect("parent");
    std::fs::create_dir_all(dir).expect("mkdir config");
    let tmp = dir.join("config.toml.tmp");
    std::fs::write(&tmp, text).expect("write config");
    s.give(dir);
    std::fs::rename(&tmp, &path).expect("rename config");
}

/// `dictum ctl WORD` as the session's user (what a compositor binding runs).
pub fn ctl(s: &Session, exe: &Path, word: &str) {
    let out = s.command(exe).args(["ctl", word]).output();
    assert!(
        out.status.success(),
        "dictum ctl {word}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
