//! Loopback belongs to its user or the system (issue 38 item 7). A second local account,
//! created by the test (as the sway tests create theirs), listens on the port of the LLM
//! server and of the speech server with a tiny python HTTP server bound to `::` (so it serves
//! 127.0.0.1 too, as `::ffff:127.0.0.1` in `/proc/net/tcp6`) that records every request and
//! answers "touch pwned". The real `dictum transcribe` of jfk.wav:
//!
//! - the same stand-in run by this test's own user gets the requests (the record can see
//!   them);
//! - run by the other account, with `--clean`: it records no request; the output is whisper's
//!   raw words, and the row's LLM error says who runs the server and what to do;
//! - as the speech server (`--stt-backend openai`): no request; the local model transcribes
//!   the clip and the row says why the server was skipped.
//!
//! Needs root (to create the account and run as it: `useradd`, `runuser`); otherwise skipped,
//! and failed when `DICTUM_REQUIRE_E2E` is set.

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "support/dictum_cmd.rs"]
mod dictum_cmd;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The other person's account (a normal user: uid at or above UID_MIN).
const PEER: &str = "dictum-peer";

const STANDIN: &str = r#"
import http.server, json, socket, sys
port, log = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def answer(self, body):
        with open(log, "a") as f:
            f.write(f"{self.command} {self.path} {len(body)}\n")
        out = json.dumps({"message": {"role": "assistant", "content": "touch pwned"},
                          "done": True, "text": "touch pwned", "models": [], "data": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    def do_GET(self):
        self.answer(b"")
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.answer(self.rfile.read(n))
    def log_message(self, *a):
        pass
class S(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()
s = S(("::", port), H)
print("listening", flush=True)
s.serve_forever()
"#;

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn uid_of(user: &str) -> Option<u32> {
    let o = Command::new("id").args(["-u", user]).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .flatten()
}

/// The peer account, created (a normal user, not --system) when missing.
fn peer_uid() -> u32 {
    if uid_of(PEER).is_none() {
        let status = Command::new("useradd")
            .args(["--create-home", "--shell", "/bin/sh", PEER])
            .status()
            .expect("run useradd");
        assert!(
            status.success() || uid_of(PEER).is_some(),
            "useradd {PEER}: {status}"
        );
    }
    uid_of(PEER).expect("uid of the peer account")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The stand-in on `port`, run as `user` (None: this test's user); stopped on drop.
struct Standin {
    child: Child,
    log: PathBuf,
}

impl Standin {
    fn start(dir: &Path, port: u16, user: Option<&str>) -> Standin {
        let script = dir.join("standin.py");
        std::fs::write(&script, STANDIN).expect("script");
        let log = dir.join(format!("requests-{port}.log"));
        std::fs::write(&log, "").expect("log");
        let mut cmd = match user {
            Some(u) => {
                // The peer may read the script and write its record, nothing else of ours.
                for p in [&script, &log] {
                    std::os::unix::fs::chown(p, uid_of(u), None).expect("chown");
                }
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--", "python3"]);
                c
            }
            None => Command::new("python3"),
        };
        let mut child = cmd
            .arg(&script)
            .arg(port.to_string())
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the stand-in");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("stand-in");
        assert_eq!(line.trim(), "listening", "stand-in said {line:?}");
        Standin { child, log }
    }

    fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        // runuser passes SIGTERM on to python (a SIGKILL would leave python running).
        // SAFETY: a signal to our own child, still unreaped (its pid cannot be reused).
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

fn transcribe(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let clip = common::assets().join("audio/dev/jfk.wav");
    let clip = clip.to_str().expect("utf-8 path");
    let mut args = vec!["transcribe", clip, "--json", "--model", "tiny.en-q8_0"];
    args.extend_from_slice(extra);
    let out = dictum_cmd::dictum(dir, &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn another_accounts_server_on_loopback_gets_nothing() {
    if !is_root() {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set, but creating a second account needs root"
        );
        eprintln!("SKIPPED: needs root to create a second local account");
        return;
    }
    let peer = peer_uid();
    assert!(
        peer >= 1000,
        "{PEER} must be a person's account (uid {peer})"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    // The peer must reach the script and its record inside the test folder.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o711),
    )
    .expect("chmod");

    // Our own server: it gets the cleanup request (so the record below can see one).
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    {
        let ours = Standin::start(dir.path(), port, None);
        let v = transcribe(dir.path(), &["--clean", "--llm-url", &url]);
        assert!(
            ours.requests().contains("POST /api/chat"),
            "our own server got no request: {:?} {v}",
            ours.requests()
        );
    }

    // The same server run by another person: nothing reaches it, the raw words are kept.
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let theirs = Standin::start(dir.path(), port, Some(PEER));
    let v = transcribe(dir.path(), &["--clean", "--llm-url", &url]);
    assert_eq!(theirs.requests(), "", "the other account's server got: {v}");
    let text = v["text"].as_str().unwrap_or_default().to_lowercase();
    assert!(text.contains("ask not what your country"), "{v}");
    assert!(!text.contains("pwned"), "{v}");
    assert_eq!(v["llm"]["outcome"], "failed", "{v}");
    let error = v["llm"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(PEER)
            && error.contains("another account")
            && error.contains("sent it nothing"),
        "{error}"
    );

    // As the speech server: skipped, the local model transcribes, the row says why.
    let v = transcribe(dir.path(), &["--stt-backend", "openai", "--stt-url", &url]);
    assert_eq!(theirs.requests(), "", "the other account's server got: {v}");
    let text = v["text"].as_str().unwrap_or_default().to_lowercase();
    assert!(text.contains("ask not what your country"), "{v}");
    let fallback = v["stt_fallback"].as_str().unwrap_or_default();
    assert!(
        fallback.contains("another account") && fallback.contains("transcribed locally"),
        "{v}"
    );
    eprintln!("refused: {error}");
}
