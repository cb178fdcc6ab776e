//! The control socket under hostile or careless clients (issue 12, item 8), with real Unix
//! sockets: an over-long line gets an error and its connection closed while the server keeps
//! serving; a client that connects and says nothing delays nobody else; the socket's folder
//! is made private (0700) or, when it is not ours to change, refused.
#![cfg(unix)]

use dictum_engine::dictation::{control, Command};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).expect("stat").permissions().mode() & 0o7777
}

/// Sends raw bytes and returns everything the server answers before closing.
fn raw(path: &Path, bytes: &[u8]) -> String {
    let mut s = UnixStream::connect(path).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    // The server may close before reading it all: a failed write is part of the answer.
    let _ = s.write_all(bytes);
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

// One test function: the socket path is process-wide (DICTUM_CONTROL_SOCKET).
#[test]
fn hostile_clients_and_folders() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = dir.path().join("run");
    let path = run.join("control.sock");
    std::env::set_var("DICTUM_CONTROL_SOCKET", &path);

    // The folder exists, ours, but open to others (umask 022): tightened to 0700.
    std::fs::create_dir(&run).expect("mkdir");
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (tx, rx) = mpsc::channel();
    let server = control::serve(tx).expect("serve");
    assert_eq!(mode(&run), 0o700, "socket folder made private");
    assert_eq!(mode(&path) & 0o777, 0o600);

    // --- Line limit: 255 bytes + newline is a line (an unknown word here), 256 + newline
    // is too long; the connection is closed and the server goes on.
    let long_ok = format!("{}\n", "x".repeat(control::MAX_LINE - 1));
    let reply = raw(&path, long_ok.as_bytes());
    assert!(reply.starts_with("error: unknown command"), "{reply:?}");
    let reply = raw(
        &path,
        format!("{}\n", "x".repeat(control::MAX_LINE)).as_bytes(),
    );
    assert!(reply.starts_with("error: command too long"), "{reply:?}");
    assert_eq!(reply.lines().count(), 1, "one line, then closed: {reply:?}");
    // A megabyte with no newline at all: refused after 256 bytes, not read to the end.
    let t = Instant::now();
    let reply = raw(&path, &vec![b'a'; 1 << 20]);
    assert!(reply.starts_with("error: command too long"), "{reply:?}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // Binary junk and a valid command after the first line: neither is taken.
    let reply = raw(&path, b"\xff\xfe\x00press\n");
    assert!(
        reply.starts_with("error: the command is not UTF-8"),
        "{reply:?}"
    );
    let reply = raw(&path, b"bogus\npress\n");
    assert!(
        reply.starts_with("error: unknown command `bogus`"),
        "{reply:?}"
    );
    assert!(rx.try_recv().is_err(), "nothing forwarded so far");
    // The server is fine.
    control::send("press").expect("press after the junk");
    assert!(matches!(
        rx.recv_timeout(Duration::from_secs(2)),
        Ok(Command::Press)
    ));

    // --- Concurrency: silent clients (connected, nothing sent) do not block the others.
    let silent: Vec<UnixStream> = (0..3)
        .map(|_| UnixStream::connect(&path).expect("silent client"))
        .collect();
    let t = Instant::now();
    let status = control::send("status").expect("status while others are silent");
    let took = t.elapsed();
    assert!(status.starts_with("ok running (pid "), "{status}");
    assert!(
        took < Duration::from_millis(500),
        "status waited {took:?} behind silent clients"
    );
    control::send("toggle").expect("toggle too");
    assert!(matches!(
        rx.recv_timeout(Duration::from_secs(2)),
        Ok(Command::Toggle)
    ));
    // The silent ones are let go after the read deadline, with the reason.
    for mut s in silent {
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(
            out.starts_with("error: no complete command within"),
            "{out:?}"
        );
    }
    eprintln!("status behind 3 silent clients: {took:?}");

    // A client that trickles bytes cannot hold its thread past the deadline either.
    let mut slow = UnixStream::connect(&path).expect("slow");
    let t = Instant::now();
    for _ in 0..4 {
        if slow.write_all(b"p").is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(800));
    }
    slow.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let mut out = String::new();
    let _ = slow.read_to_string(&mut out);
    assert!(out.starts_with("error: no complete command"), "{out:?}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());

    // A flood of silent connections: beyond MAX_CLIENTS they are told at once to retry, no
    // thread for them; once the silent ones time out, the socket answers again.
    let flood: Vec<UnixStream> = (0..control::MAX_CLIENTS)
        .map(|_| UnixStream::connect(&path).expect("flood"))
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let reply = raw(&path, b"status\n");
    assert!(reply.starts_with("error: busy"), "{reply:?}");
    drop(flood);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match control::send("status") {
            Ok(s) if s.starts_with("ok running") => break,
            other => assert!(Instant::now() < deadline, "never answered again: {other:?}"),
        }
        std::thread::sleep(Duration::from_millis(100));
    }

    // Dropping the server ends its accept thread (a tray restarting its dictation used to
    // leave one thread and one descriptor behind per restart).
    let accept_threads = || {
        std::fs::read_dir("/proc/self/task")
            .expect("tasks")
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|c| c.trim() == "dictum-control")
            .count()
    };
    assert_eq!(accept_threads(), 1, "one accept thread while serving");
    drop(server);
    assert!(!path.exists(), "removed on exit");
    let deadline = Instant::now() + Duration::from_secs(2);
    while accept_threads() > 0 {
        assert!(
            Instant::now() < deadline,
            "the accept thread outlived its server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // --- Folders that are not ours to use.
    // Another user's folder: refused, left as it is.
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).expect("mkdir");
    std::os::unix::fs::chown(&theirs, Some(4242), Some(4242)).expect("chown (tests run as root)");
    std::env::set_var("DICTUM_CONTROL_SOCKET", theirs.join("control.sock"));
    let (tx, _rx) = mpsc::channel();
    let err = control::serve(tx).err().expect("another user's folder");
    assert!(err.to_string().contains("belongs to another user"), "{err}");
    assert!(!theirs.join("control.sock").exists());

    // A shared sticky folder such as /tmp: never chmodded, refused.
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    std::env::set_var("DICTUM_CONTROL_SOCKET", shared.join("control.sock"));
    let (tx, _rx) = mpsc::channel();
    let err = control::serve(tx).err().expect("shared folder");
    assert!(err.to_string().contains("shared folder"), "{err}");
    assert_eq!(mode(&shared), 0o1777, "left alone");

    // A symbolic link where the folder should be (planted by someone else): refused.
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&run, &link).expect("symlink");
    std::env::set_var("DICTUM_CONTROL_SOCKET", link.join("control.sock"));
    let (tx, _rx) = mpsc::channel();
    let err = control::serve(tx).err().expect("symlink");
    assert!(err.to_string().contains("symbolic link"), "{err}");

    // A missing folder is created 0700 (parents too).
    let fresh = dir.path().join("a/b/dictum");
    std::env::set_var("DICTUM_CONTROL_SOCKET", fresh.join("control.sock"));
    let (tx, _rx) = mpsc::channel();
    let server = control::serve(tx).expect("fresh folder");
    for d in ["a", "a/b", "a/b/dictum"] {
        assert_eq!(mode(&dir.path().join(d)), 0o700, "{d}");
    }
    drop(server);
}
