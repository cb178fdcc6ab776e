//! The daemon's `--json` event stream as a channel: one thread reads `dictum run`'s standard
//! output and sends each JSON line (other lines are printed); and [`RunningDaemon`], a
//! `dictum run --json --stdin-commands` read through it: the next event of a kind, notices
//! collected on the way, `quit` on drop. Shared by the live tests; each starts the daemon in
//! its own session (`x11_daemon.rs`, `session_daemon.rs`, `live_wayland.rs`,
//! `fault_matrix.rs`) and hands the child to [`RunningDaemon::new`].
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The `dictum` the live tests run: this test's build, or `DICTUM_BIN` (another build, e.g.
/// one copied out of a shared target folder, or `scripts/bench-live --versus-bin`'s).
pub fn dictum_exe() -> std::path::PathBuf {
    std::env::var_os("DICTUM_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_BIN_EXE_dictum")))
}

/// The names of the commands a dictation event says were refused.
pub fn refused(ev: &Value) -> Vec<String> {
    ev["commands_refused"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Checks that the dictation `ev` is ok, typed `text` as text, and refused exactly the
/// command `command`.
pub fn assert_typed_and_refused(ev: &Value, text: &str, command: &str) {
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert!(
        ev["text"].as_str().unwrap_or_default().contains(text),
        "the text is typed as text: {ev}"
    );
    assert_eq!(refused(ev), [command], "{ev}");
}

/// The daemon's log filter unless the caller's `DICTUM_LOG` says otherwise (to see its debug
/// lines in a bench).
pub fn log_filter() -> String {
    std::env::var("DICTUM_LOG")
        .unwrap_or_else(|_| "warn,pulseaudio=off,enigo=error,arboard=error".into())
}

pub fn json_events(stdout: ChildStdout) -> mpsc::Receiver<Value> {
    let (tx, events) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            match serde_json::from_str::<Value>(&line) {
                Ok(v) => {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
                Err(_) => eprintln!("dictum stdout: {line}"),
            }
        }
    });
    events
}

/// A started `dictum run --json --stdin-commands` (stdout and stdin piped; stderr piped
/// or not).
pub struct RunningDaemon {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub events: mpsc::Receiver<Value>,
    pub notices: Vec<String>,
    stderr: Option<mpsc::Receiver<String>>,
    stderr_seen: String,
}

impl RunningDaemon {
    /// Reads `child`'s events from its stdout, and its stderr when that is piped (printed
    /// as it comes, and kept: [`RunningDaemon::stderr`]); its stdin takes commands (`quit` on
    /// drop).
    pub fn new(mut child: Child) -> RunningDaemon {
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take();
        let stderr = child.stderr.take().map(|mut pipe| {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let chunk = String::from_utf8_lossy(&buf[..n]).into_owned();
                    eprint!("{chunk}");
                    let _ = tx.send(chunk);
                }
            });
            rx
        });
        RunningDaemon {
            child,
            stdin,
            events: json_events(stdout),
            notices: Vec::new(),
            stderr,
            stderr_seen: String::new(),
        }
    }

    /// Writes a command line (`press`, `release`, `toggle`, ...) on its standard input.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").expect("write command");
        stdin.flush().expect("flush");
    }

    /// `hands-free on`, then waits for its notice (one seen before counts).
    pub fn hands_free_on(&mut self) {
        self.send("hands-free on");
        self.wait_notice("hands-free on");
    }

    /// Everything the daemon wrote on stderr so far (empty when it was not piped).
    pub fn stderr(&mut self) -> &str {
        if let Some(rx) = &self.stderr {
            while let Ok(chunk) = rx.try_recv() {
                self.stderr_seen.push_str(&chunk);
            }
        }
        &self.stderr_seen
    }

    /// Keeps the message of a notice event.
    fn note(&mut self, ev: &Value) {
        if ev["event"] == "notice" {
            let msg = ev["message"].as_str().unwrap_or_default().to_string();
            eprintln!("notice: {msg}");
            self.notices.push(msg);
        }
    }

    /// The next event of `kind` that `pick` accepts (notices are collected on the way).
    pub fn try_next_where(
        &mut self,
        kind: &str,
        within: Duration,
        pick: impl Fn(&Value) -> bool,
    ) -> Result<Value, String> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = self.events.recv_timeout(left).map_err(|e| {
                format!(
                    "no `{kind}` event within {within:?} ({e}); notices: {:?}",
                    self.notices
                )
            })?;
            self.note(&ev);
            if ev["event"] == kind && pick(&ev) {
                return Ok(ev);
            }
        }
    }

    pub fn next_where(
        &mut self,
        kind: &str,
        within: Duration,
        pick: impl Fn(&Value) -> bool,
    ) -> Value {
        self.try_next_where(kind, within, pick)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The next event of `kind` (notices are collected on the way).
    pub fn try_next(&mut self, kind: &str, within: Duration) -> Result<Value, String> {
        self.try_next_where(kind, within, |_| true)
    }

    pub fn next(&mut self, kind: &str, within: Duration) -> Value {
        self.next_where(kind, within, |_| true)
    }

    /// Every event up to and including the next one of `kind` (notices are collected on the
    /// way too), e.g. the `partial` events before a `dictation`.
    pub fn until(&mut self, kind: &str, within: Duration) -> Vec<Value> {
        self.until_where(&format!("`{kind}` event"), within, |ev| ev["event"] == kind)
    }

    /// Every event up to and including the next one that `last` accepts (notices are
    /// collected on the way too); panics naming `what` when none came within `within`.
    pub fn until_where(
        &mut self,
        what: &str,
        within: Duration,
        last: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let deadline = Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = self.events.recv_timeout(left).unwrap_or_else(|e| {
                panic!(
                    "no {what} within {within:?} ({e}); events {seen:?}, notices: {:?}",
                    self.notices
                )
            });
            self.note(&ev);
            let done = last(&ev);
            seen.push(ev);
            if done {
                return seen;
            }
        }
    }

    /// Waits (`within` at most) for a notice that `pick` accepts (already seen ones count);
    /// the notices so far when none came.
    pub fn until_notice(
        &mut self,
        within: Duration,
        pick: impl Fn(&str) -> bool,
    ) -> Result<String, Vec<String>> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(n) = self.notices.iter().find(|n| pick(n)) {
                return Ok(n.clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(ev) => self.note(&ev),
                Err(_) => return Err(self.notices.clone()),
            }
        }
    }

    /// Waits (10 s at most) until a notice containing `needle` has come.
    pub fn wait_notice(&mut self, needle: &str) {
        if let Err(notices) = self.until_notice(Duration::from_secs(10), |n| n.contains(needle)) {
            panic!("no notice {needle:?}: {notices:?}");
        }
    }

    /// Reads events for `within` (notices collected on the way).
    pub fn drain(&mut self, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        let mut seen = Vec::new();
        while let Ok(ev) = self
            .events
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.note(&ev);
            seen.push(ev);
        }
        seen
    }

    /// Nothing but state/notice events for `within`.
    pub fn try_no_dictation(&mut self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        while let Ok(ev) = self
            .events
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if ev["event"] == "dictation" {
                return Err(format!("unexpected dictation: {ev}"));
            }
        }
        Ok(())
    }

    /// Nothing but state/notice events for `within`.
    pub fn no_dictation(&mut self, within: Duration) {
        if let Err(e) = self.try_no_dictation(within) {
            panic!("{e}");
        }
    }
}

impl Drop for RunningDaemon {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = writeln!(stdin, "quit");
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
