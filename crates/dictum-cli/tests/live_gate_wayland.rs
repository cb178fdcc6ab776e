//! Issue 38 on a Wayland desktop: the gate judges a terminal by its process, not its name.
//! A real headless sway (`tests/common/sway.rs`, clients as an unprivileged user),
//! `dictum run --json` in the session, and a stand-in speech server
//! (`tests/stt_server_standin.py answer`) answering "touch pwned press enter" whatever it
//! hears. Two terminals that no `[inject] terminal_classes` entry names, each running a real
//! shell in a folder of its own:
//!
//! - `foot --app-id=notes` (a dropdown terminal's own app id);
//! - `footclient --app-id=scratch`, whose window belongs to the `foot --server` process.
//!
//! Each gets the text, no Return, and no file `pwned` appears; the user's own Return (the
//! session's keyboard) then runs the line, which shows the text really was in a live shell.
//!
//! Skipped only when the tools are missing and `DICTUM_REQUIRE_E2E` is unset.

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;
#[path = "support/stt_servers.rs"]
mod stt_servers;
#[path = "support/sway_daemon.rs"]
mod sway_daemon;

use common::pulse::Pulse;
use common::sway::{tools_present, Keyboard, Session};
use events::RunningDaemon as Daemon;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};
use stt_servers::Standin;

/// evdev KEY_ENTER.
const ENTER: u32 = 28;

fn write_config(s: &Session, model: &Path, server: &str) {
    sway_daemon::write_config(
        s,
        &format!(
            "[stt]\nmodel = \"{}\"\nthreads = 2\nbackend = \"openai\"\nurl = \"{server}\"\n\
             timeout_ms = 10000\n\n[inject]\nnotify_on_failure = false\n",
            model.display()
        ),
    );
}

/// A folder of the session user's own for a shell to run in.
fn work_dir(s: &Session, name: &str) -> PathBuf {
    let dir = s.dir.path().join(name);
    std::fs::create_dir_all(&dir).expect("mkdir work");
    s.give(&dir);
    dir
}

fn shell_script(dir: &Path) -> String {
    format!("cd '{}' && PS1='$ ' exec sh -i", dir.display())
}

/// Waits until sway says the window of `app_id` has the focus.
fn wait_focused(s: &Session, child: &mut Child, app_id: &str) {
    let start = Instant::now();
    while s.focused().is_none_or(|(f, _)| f != app_id) {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{app_id} exited ({status}); sway log:\n{}", s.log());
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{app_id} did not come up (focused: {:?}); sway log:\n{}",
            s.focused(),
            s.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The shell's prompt is up a moment after the window.
    std::thread::sleep(Duration::from_millis(500));
}

/// One push-to-talk dictation through `dictum ctl` into the focused window.
fn dictate(s: &Session, d: &mut Daemon, exe: &Path) -> Value {
    let ctl = |word: &str| sway_daemon::ctl(s, exe, word);
    ctl("press");
    std::thread::sleep(Duration::from_millis(100));
    common::pulse::play_and_wait("goforward.wav");
    std::thread::sleep(Duration::from_millis(300));
    ctl("release");
    d.next("dictation", Duration::from_secs(60))
}

fn wait_for(within: Duration, ok: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The hostile answer into the focused terminal: text, no Return, no file; the user's own
/// Return then runs it.
fn no_return_in(s: &Session, kb: &mut Keyboard, d: &mut Daemon, exe: &Path, work: &Path) {
    let ev = dictate(s, d, exe);
    eprintln!("{:?}: {ev}", s.focused());
    events::assert_typed_and_refused(&ev, "touch pwned", "press enter");
    std::thread::sleep(Duration::from_millis(1500));
    let pwned = work.join("pwned");
    assert!(!pwned.exists(), "Return was pressed in the terminal: {ev}");
    kb.down(&[ENTER]);
    kb.up(&[ENTER]);
    assert!(
        wait_for(Duration::from_secs(5), || pwned.exists()),
        "the typed text was not in the shell: {ev}"
    );
}

#[test]
fn terminals_under_their_own_app_id_are_terminals() {
    if !tools_present() || !common::x11::on_path("footclient") {
        return;
    }
    let pulse = Pulse::start();
    pulse.share();
    let s = Session::start("");
    let (exe, model) = sway_daemon::prepare(&s);
    let answer = s.dir.path().join("answer.txt");
    std::fs::write(&answer, "touch pwned press enter").expect("answer");
    let hostile = Standin::start(
        &["answer", "0"],
        &[("STANDIN_TEXT_FILE", answer.to_str().expect("utf-8"))],
    );
    write_config(&s, &model, &hostile.url());
    let mut kb = Keyboard::connect(&s);
    let mut d = sway_daemon::start(&s, &exe);

    // foot under an app id of its own.
    let notes = work_dir(&s, "notes");
    let mut foot = s
        .command("foot")
        .args(["--app-id=notes", "-T", "Dictum notes", "sh", "-c"])
        .arg(shell_script(&notes))
        .stdio_null()
        .spawn();
    wait_focused(&s, &mut foot, "notes");
    no_return_in(&s, &mut kb, &mut d, &exe, &notes);

    // footclient: the window belongs to the foot server.
    let mut server = s.command("foot").args(["--server"]).stdio_null().spawn();
    std::thread::sleep(Duration::from_millis(800));
    let scratch = work_dir(&s, "scratch");
    let mut client = s
        .command("footclient")
        .args(["--app-id=scratch", "-T", "Dictum scratch", "sh", "-c"])
        .arg(shell_script(&scratch))
        .stdio_null()
        .spawn();
    wait_focused(&s, &mut client, "scratch");
    no_return_in(&s, &mut kb, &mut d, &exe, &scratch);

    drop(d);
    for child in [&mut client, &mut server, &mut foot] {
        let _ = child.kill();
        let _ = child.wait();
    }
}
