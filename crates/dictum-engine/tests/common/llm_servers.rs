//! LLM servers for the live cleanup tests: the real llama.cpp `llama-server` (built by
//! `scripts/llama-server`) on a GGUF from the test assets, and the declared stand-in of
//! `tests/llm_drop_word_standin.py` (an OpenAI-compatible server whose "cleanup" drops one word).
//! One copy for the engine's and the CLI's tests (`common::llm_servers`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    buf.split_whitespace().nth(1)?.parse().ok()
}

/// llama-server (OpenAI-compatible API), killed on drop.
pub struct Llama {
    child: Child,
    pub log: PathBuf,
    pub url: String,
}

impl Drop for Llama {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The llama-server binary (building it on first use: ~8-11 min on 2 cores). A build that
/// fails fails the test.
pub fn llama_server_bin() -> PathBuf {
    let out = Command::new(repo_root().join("scripts/llama-server"))
        .stderr(Stdio::inherit())
        .output()
        .expect("run scripts/llama-server");
    assert!(
        out.status.success(),
        "scripts/llama-server failed ({}); see its log under ~/.cache/dictum/llama-server/",
        out.status
    );
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(path.is_file(), "scripts/llama-server printed {path:?}");
    path
}

/// The test model, SmolLM2-135M-Instruct (Q4_1), from the test assets.
pub fn smollm2() -> PathBuf {
    let p = super::assets().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(p.is_file(), "missing {}", p.display());
    p
}

impl Llama {
    /// The last 30 lines of the server's log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// The real LLM: llama-server with `gguf`, one thread, a 2048-token context, on a free
    /// port; waits until `/health` answers 200. A server that cannot be built or started
    /// fails the test.
    pub fn start(dir: &Path, gguf: &Path) -> Llama {
        let bin = llama_server_bin();
        assert!(gguf.is_file(), "missing {}", gguf.display());
        let port = free_port();
        let log = dir.join("llama-server.log");
        let child = Command::new(bin)
            .arg("-m")
            .arg(gguf)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-c", "2048", "--threads", "1", "-np", "1"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start llama-server");
        let llama = Llama {
            child,
            log,
            url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if http_status(port, "/health") == Some(200) {
                return llama;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("llama-server did not become healthy:\n{}", llama.log_tail());
    }
}

/// `tests/llm_drop_word_standin.py`: answers every chat request with the user's text minus
/// one word (a declared stand-in for a model that drops a negation). Killed on drop.
pub struct DropWordStandin {
    child: Child,
    pub url: String,
}

impl DropWordStandin {
    pub fn start(word: &str) -> DropWordStandin {
        let (child, url) = standin("tests/llm_drop_word_standin.py", &["--drop", word]);
        DropWordStandin { child, url }
    }
}

/// Starts `python3 SCRIPT ARGS` (a stand-in built on `tests/openai_standin.py`) and waits for
/// its `listening PORT` line: the child and its URL.
fn standin(script: &str, args: &[&str]) -> (Child, String) {
    let mut child = Command::new("python3")
        .arg(repo_root().join(script))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start python3 {script}: {e}"));
    let out = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line).expect("stand-in");
    let port: u16 = line
        .trim()
        .strip_prefix("listening ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{script} said {line:?}"));
    (child, format!("http://127.0.0.1:{port}"))
}

/// `tests/llm_record_standin.py`: answers every chat request with its transcript unchanged
/// and records each request (model, messages) as a JSON line. Killed on drop.
pub struct RecordStandin {
    child: Child,
    pub url: String,
    pub record: PathBuf,
}

impl RecordStandin {
    pub fn start(dir: &Path) -> RecordStandin {
        RecordStandin::start_on(dir, "127.0.0.1")
    }

    /// [`start`](Self::start) listening on `host` ("0.0.0.0": every address of this
    /// machine); `url` still names 127.0.0.1, [`port`](Self::port) says the port.
    pub fn start_on(dir: &Path, host: &str) -> RecordStandin {
        let record = dir.join("llm-requests.jsonl");
        let path = record.to_string_lossy().to_string();
        let (child, url) = standin(
            "tests/llm_record_standin.py",
            &["--record", &path, "--host", host],
        );
        RecordStandin { child, url, record }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port in the URL")
    }

    /// The requests so far, oldest first.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }
}

impl Drop for RecordStandin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for DropWordStandin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
