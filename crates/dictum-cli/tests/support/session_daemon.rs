//! The real `dictum run --json --stdin-commands` inside a desktop session started by a test
//! harness (GNOME, KDE): the session's environment over a cleared one, JSON events read on a
//! thread, `quit` on drop. Shared by `live_gnome.rs` and `live_kde.rs`.

use serde_json::Value;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub struct Daemon {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    events: mpsc::Receiver<Value>,
    pub notices: Vec<String>,
}

impl Daemon {
    /// Starts the daemon with `session_env` over a cleared environment (plus PATH, HOME, USER,
    /// LANG and the private PulseAudio's address), extra arguments from the variable
    /// `extra_args_var`, and waits for its `ready` event.
    pub fn start(
        session_env: Vec<(&'static str, OsString)>,
        dir: &Path,
        extra_args_var: &str,
    ) -> (Daemon, Value) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dictum"));
        cmd.env_clear();
        for (k, v) in std::env::vars_os() {
            let name = k.to_string_lossy();
            if ["PATH", "HOME", "USER", "LANG"].contains(&name.as_ref())
                || name.starts_with("PULSE_")
            {
                cmd.env(&k, v);
            }
        }
        let extra = std::env::var(extra_args_var).unwrap_or_default();
        let mut child = cmd
            .envs(session_env)
            .env("DICTUM_DATA_DIR", dir.join("data"))
            .env("DICTUM_CONFIG", dir.join("config.toml"))
            .env(
                "DICTUM_LOG",
                std::env::var("DICTUM_LOG")
                    .unwrap_or_else(|_| "warn,pulseaudio=off,enigo=error,arboard=error".into()),
            )
            .args(["run", "--json", "--stdin-commands"])
            .args(extra.split_whitespace())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start dictum run");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take();
        let events = super::events::json_events(stdout);
        let mut d = Daemon {
            child,
            stdin,
            events,
            notices: Vec::new(),
        };
        let ready = d.next("ready", Duration::from_secs(90), |_| true);
        eprintln!("ready: {ready}");
        (d, ready)
    }

    /// The next event of `kind` that `pick` accepts (notices are collected on the way).
    pub fn next(&mut self, kind: &str, within: Duration, pick: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = match self.events.recv_timeout(left) {
                Ok(ev) => ev,
                Err(e) => panic!(
                    "no `{kind}` event within {within:?} ({e}); notices: {:?}",
                    self.notices
                ),
            };
            if ev["event"] == "notice" {
                let msg = ev["message"].as_str().unwrap_or_default().to_string();
                eprintln!("notice: {msg}");
                self.notices.push(msg);
            }
            if ev["event"] == kind && pick(&ev) {
                return ev;
            }
        }
    }

    /// Waits (10 s at most) until a notice containing `needle` has come.
    #[allow(dead_code)] // used by live_kde only
    pub fn wait_notice(&mut self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.notices.iter().any(|n| n.contains(needle)) {
            assert!(
                Instant::now() < deadline,
                "no notice {needle:?}: {:?}",
                self.notices
            );
            let left = deadline.saturating_duration_since(Instant::now());
            if let Ok(ev) = self.events.recv_timeout(left) {
                if ev["event"] == "notice" {
                    self.notices
                        .push(ev["message"].as_str().unwrap_or_default().to_string());
                }
            }
        }
    }
}

impl Drop for Daemon {
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
