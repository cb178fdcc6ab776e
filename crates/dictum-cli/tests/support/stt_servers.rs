//! Speech servers for the remote-STT tests: the real whisper.cpp `whisper-server` (built by
//! `scripts/whisper-cpp-baseline --build-only`) on the test model, and the declared stand-ins of
//! `tests/stt_server_standin.py` (an API-key gateway in front of it, a server that hangs).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The whisper-server binary: `$DICTUM_WHISPER_SERVER`, else the baseline script's cache.
/// None (test skipped) when absent, unless `DICTUM_REQUIRE_E2E` is set: then the test fails.
pub fn whisper_server_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DICTUM_WHISPER_SERVER") {
        return Some(PathBuf::from(p));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|c| c.join("dictum/whisper-cpp"));
    let found = cache
        .and_then(|c| std::fs::read_dir(c).ok())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin/whisper-server"))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but whisper-server is not built (scripts/whisper-cpp-baseline --build-only)"
        );
        eprintln!("SKIPPED: whisper-server not built (scripts/whisper-cpp-baseline --build-only)");
    }
    found
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// whisper-server on the tiny test model, `--inference-path /v1/audio/transcriptions`,
/// `-nlp` (no language probabilities: verbose_json would otherwise run a second encoder pass).
pub struct WhisperServer {
    child: Option<Child>,
    pub port: u16,
}

impl WhisperServer {
    pub fn start(bin: &std::path::Path, model: &std::path::Path) -> WhisperServer {
        WhisperServer::start_with(bin, model, "/v1/audio/transcriptions", &[])
    }

    /// [`WhisperServer::start`] on another inference path, with more arguments (a translating
    /// server: `/v1/audio/translations`, `--translate -l auto`).
    pub fn start_with(
        bin: &std::path::Path,
        model: &std::path::Path,
        inference_path: &str,
        extra: &[&str],
    ) -> WhisperServer {
        let port = free_port();
        let child = Command::new(bin)
            .args(["-m"])
            .arg(model)
            .args([
                "-t",
                "2",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .args(["--inference-path", inference_path, "-nlp"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start whisper-server");
        let s = WhisperServer {
            child: Some(child),
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !s.healthy() {
            assert!(Instant::now() < deadline, "whisper-server did not come up");
            std::thread::sleep(Duration::from_millis(100));
        }
        s
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn healthy(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let mut s = String::new();
        let _ = c.read_to_string(&mut s);
        s.starts_with("HTTP/1.1 200")
    }

    /// Kills the server (SIGKILL) and waits until its port refuses connections.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for WhisperServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `tests/stt_server_standin.py` in one of its modes.
pub struct Standin {
    child: Child,
    pub port: u16,
}

impl Standin {
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Standin {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/stt_server_standin.py");
        let mut cmd = Command::new("python3");
        cmd.arg(script).args(args).stdout(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start python3 stand-in");
        let out = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(out).read_line(&mut line).expect("stand-in");
        let port = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("stand-in said {line:?}"));
        Standin { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
