//! The control socket with real Unix sockets: commands reach the dictation, typos and a second
//! owner are refused with the reason, a stale socket is replaced, the socket is private.
#![cfg(unix)]

use dictum_engine::dictation::{control, Command};
use std::os::unix::fs::PermissionsExt;
use std::sync::mpsc;
use std::time::Duration;

type IsCommand = fn(&Command) -> bool;

#[test]
fn ctl_commands_reach_the_dictation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("run").join("control.sock");
    // One test function: the socket path is process-wide.
    std::env::set_var("DICTUM_CONTROL_SOCKET", &path);

    let err = control::send("toggle").expect_err("nobody listening");
    assert!(err.to_string().contains("no Dictum is running"), "{err}");

    // A socket file left by a crashed Dictum: nobody answers it, so it is replaced.
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    // The socket's folder must be private (an existing one open to others is refused).
    std::fs::set_permissions(
        path.parent().expect("parent"),
        std::fs::Permissions::from_mode(0o700),
    )
    .expect("chmod");
    drop(std::os::unix::net::UnixListener::bind(&path).expect("stale"));
    assert!(path.exists());

    let (tx, rx) = mpsc::channel();
    let server = control::serve(tx).expect("serve");
    let mode = std::fs::metadata(&path)
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "private to the user");

    let cases: [(&str, IsCommand); 5] = [
        ("press", |c: &Command| matches!(c, Command::Press)),
        ("release", |c: &Command| matches!(c, Command::Release)),
        ("toggle", |c: &Command| matches!(c, Command::Toggle)),
        ("pause", |c: &Command| {
            matches!(c, Command::PauseHotkey(true))
        }),
        ("cancel", |c: &Command| matches!(c, Command::Cancel)),
    ];
    for (word, ok) in cases {
        control::send(word).unwrap_or_else(|e| panic!("{word}: {e}"));
        let got = rx.recv_timeout(Duration::from_secs(2)).expect("forwarded");
        assert!(ok(&got), "{word} gave {got:?}");
    }
    let err = control::send("tgogle").expect_err("typo");
    assert!(
        err.to_string().contains("unknown command `tgogle`"),
        "{err}"
    );
    assert!(rx.try_recv().is_err(), "nothing forwarded for a typo");

    let (tx2, _rx2) = mpsc::channel();
    let err = control::serve(tx2).err().expect("second owner refused");
    assert!(
        err.to_string().contains("another Dictum is running"),
        "{err}"
    );
    control::send("toggle").expect("the first one still answers");
    assert!(matches!(
        rx.recv_timeout(Duration::from_secs(2)),
        Ok(Command::Toggle)
    ));

    // The dictation has stopped: the client hears so.
    drop(rx);
    let err = control::send("toggle").expect_err("stopped");
    assert!(err.to_string().contains("dictation has stopped"), "{err}");

    drop(server);
    assert!(!path.exists(), "removed on exit");
}
