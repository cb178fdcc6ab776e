//! `dictum key set` never shows the key: on a terminal (a real pseudo-terminal through
//! util-linux `script`) it asks for the key and reads it with echo off, so the key is not in
//! what the terminal displays; a piped key is read as before. No keyring is reachable here (no
//! session bus), so storing fails after the read with the keyring's message, which proves the
//! key was read (an empty line says "the key is empty" instead). The keyring path itself, with
//! a real gnome-keyring, is in remote_stt.rs.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEY: &str = "sk-dictum-pty-9f3ac1d2e7";

fn script_present() -> bool {
    let ok = Command::new("sh")
        .args(["-c", "command -v script"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but `script` is missing; sudo apt install bsdutils"
        );
        eprintln!("`script` missing: skipped");
    }
    ok
}

/// `dictum key set stt` without a keyring: no session bus, a private runtime dir.
fn without_keyring(c: &mut Command, dir: &std::path::Path) {
    c.env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env("XDG_RUNTIME_DIR", dir)
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .env("DICTUM_DATA_DIR", dir.join("data"))
        .env_remove("DICTUM_LOG");
}

#[test]
fn on_a_terminal_the_key_is_read_without_echo() {
    if !script_present() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let cmd = format!("{} key set stt", env!("CARGO_BIN_EXE_dictum"));
    let mut c = Command::new("script");
    c.args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    without_keyring(&mut c, dir.path());
    let mut child = c.spawn().expect("script (util-linux) runs");
    let screen = Arc::new(Mutex::new(Vec::new()));
    let mut out = child.stdout.take().expect("stdout");
    let reader = {
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().expect("lock").extend_from_slice(&buf[..n]);
            }
        })
    };
    let shown = || String::from_utf8_lossy(&screen.lock().expect("lock")).into_owned();
    // Type only once the prompt is up: the echo is off by then (input typed earlier would be
    // echoed by the terminal whatever Dictum does).
    let deadline = Instant::now() + Duration::from_secs(30);
    while !shown().contains("API key and press Enter") {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("no prompt on the terminal: {}", shown());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(format!("{KEY}\n").as_bytes())
        .expect("type the key");
    let status = child.wait().expect("wait");
    drop(stdin);
    reader.join().expect("reader");
    let screen = shown();
    assert!(
        !status.success(),
        "no keyring here, yet it succeeded: {screen}"
    );
    assert!(
        screen.contains("D-Bus") || screen.contains("keyring"),
        "the key was not read through to the keyring: {screen}"
    );
    assert!(!screen.contains("the key is empty"), "{screen}");
    assert!(!screen.contains(KEY), "the key was shown: {screen}");
    assert!(
        !screen.contains(&KEY[..8]),
        "part of the key was shown: {screen}"
    );
}

#[test]
fn a_piped_key_is_read_without_a_prompt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = Command::new(env!("CARGO_BIN_EXE_dictum"));
    c.args(["key", "set", "stt"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    without_keyring(&mut c, dir.path());
    let mut child = c.spawn().expect("dictum");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(format!("{KEY}\n").as_bytes())
        .expect("pipe the key");
    let o = child.wait_with_output().expect("wait");
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("D-Bus") && !out.contains("the key is empty"),
        "{out}"
    );
    assert!(
        !out.contains("press Enter"),
        "a prompt off a terminal: {out}"
    );
    assert!(!out.contains(KEY), "{out}");
}
