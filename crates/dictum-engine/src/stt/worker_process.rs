//! Whisper on the GPU runs in a child process, so a CUDA failure cannot take Dictum down.
//!
//! whisper.cpp (ggml) does not return CUDA errors: when VRAM runs out it aborts the whole
//! process (`GGML_ASSERT(buffer) failed`, seen on an H100 with another program holding the
//! card). In the child that abort is an ended pipe: the parent notices, and the utterance is
//! redone on the CPU (`resilient.rs`), the model load falls back to the CPU (`pipeline/engine.rs`).
//!
//! The child is this same executable started with `DICTUM_STT_WORKER` set (`dictum` and
//! `dictum-tray` call [`serve_if_requested`] first thing in `main`). Protocol over its
//! stdin/stdout: after loading, the child writes one JSON line `"ready"` (or
//! `{"err":...}`); then per request the parent writes one JSON line (options and the sample
//! count) followed by the samples as f32 little-endian, and the child answers one JSON line
//! `{"ok":{...}}` or `{"err":"..."}`. The child's logs go to stderr, shared with the parent.
//!
//! A worker that stops answering (a driver hang, a stuck kernel) must not hang dictation: every
//! read from it has a deadline (loading: [`LOAD_TIMEOUT`]; a request: the larger of
//! [`MIN_REQUEST_TIMEOUT`] and [`AUDIO_FACTOR`] × the audio's length), and writes go through a
//! thread of their own so a worker that stops reading cannot block either. Past the deadline
//! the worker is killed and reported stalled ([`WorkerProcess::stalled`]): the utterance is
//! redone on the CPU and a fresh worker is started for the next one (`resilient.rs`).

use super::pass::{SttOptions, SttOutput, Window};
use super::whisper::Transcriber;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// whisper.cpp's (ggml-vulkan's) list of Vulkan device indices to use.
const VK_DEVICES_ENV: &str = "GGML_VK_VISIBLE_DEVICES";
/// Set in the child: what to load (JSON [`WorkerSpec`]).
const WORKER_ENV: &str = "DICTUM_STT_WORKER";
/// Test seam: run the CPU model in a worker too (the GPU path, testable without a GPU).
const ISOLATE_ENV: &str = "DICTUM_STT_ISOLATE";
/// Test seam, in the child: abort (as ggml does) when request N arrives; 0 = while loading.
const ABORT_ENV: &str = "DICTUM_STT_WORKER_ABORT_AT";
/// Test seam (debug builds only): start this program as the worker instead of this
/// executable (a stand-in that stalls, `tests/stt_worker_standin.py`). The child gets this
/// executable's path in [`SELF_ENV`], to run the real worker behind it.
#[cfg(any(debug_assertions, feature = "test-hooks"))]
const PROGRAM_ENV: &str = "DICTUM_STT_WORKER_PROGRAM";
/// Set in the child: the path of the executable that serves as a worker.
const SELF_ENV: &str = "DICTUM_STT_WORKER_EXE";
/// Test seam: the minimum per-request deadline in milliseconds (default 30 s).
const TIMEOUT_ENV: &str = "DICTUM_STT_WORKER_TIMEOUT_MS";

/// How long the worker may take to load the model and say it is ready.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(120);
/// The least time a request is given, however short its audio.
pub const MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// A request is given this many times its audio's length when that is more.
pub const AUDIO_FACTOR: u32 = 3;

/// The deadline for a request over `samples` of 16 kHz audio.
pub fn request_timeout(samples: usize) -> Duration {
    let min = std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(MIN_REQUEST_TIMEOUT);
    let audio = Duration::from_secs_f64(samples as f64 / crate::SAMPLE_RATE as f64);
    min.max(audio * AUDIO_FACTOR)
}

#[derive(Serialize, Deserialize)]
struct WorkerSpec {
    model: PathBuf,
    gpu: bool,
}

/// One request line; the samples follow as f32 little-endian.
#[derive(Serialize, Deserialize)]
struct Request {
    samples: usize,
    opts: SttOptions,
    window: Option<Window>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Message {
    Ready,
    Ok(SttOutput),
    Err(String),
}

/// True when the model should load in a worker: always on the GPU, and on the CPU when the
/// test seam asks for it.
pub fn wanted(gpu: bool) -> bool {
    gpu || std::env::var(ISOLATE_ENV).is_ok_and(|v| v == "1")
}

/// The parent's handle on a worker.
pub struct WorkerProcess {
    child: Child,
    /// Requests, written to the child's stdin by a thread of its own.
    requests: Option<mpsc::Sender<Vec<u8>>>,
    /// Lines from the child's stdout, read by a thread of its own (closed at its end).
    lines: mpsc::Receiver<std::io::Result<String>>,
    /// Why it stopped, once it has.
    stopped: Option<String>,
    /// It stopped because it did not answer in time (and was killed).
    stalled: bool,
}

impl WorkerProcess {
    /// Starts a worker for `model` and waits until it has loaded it.
    pub fn spawn(model: &Path, gpu: bool) -> Result<WorkerProcess> {
        let fail = |reason: String| Error::ModelLoad {
            path: model.to_path_buf(),
            reason,
        };
        let exe = std::env::current_exe()
            .map_err(|e| fail(format!("cannot find this program to start a worker: {e}")))?;
        let spec = serde_json::to_string(&WorkerSpec {
            model: model.to_path_buf(),
            gpu,
        })
        .map_err(|e| fail(e.to_string()))?;
        #[cfg(any(debug_assertions, feature = "test-hooks"))]
        let program = std::env::var_os(PROGRAM_ENV)
            .map(PathBuf::from)
            .unwrap_or_else(|| exe.clone());
        #[cfg(not(any(debug_assertions, feature = "test-hooks")))]
        let program = exe.clone();
        let mut command = Command::new(program);
        // The Vulkan device the plan chose (whisper.cpp's default skips integrated and
        // CPU-type devices); a GGML_VK_VISIBLE_DEVICES the user set wins.
        if let Some(index) = crate::gpu::speech_plan::vulkan_device()
            .filter(|_| gpu && std::env::var_os(VK_DEVICES_ENV).is_none())
        {
            command.env(VK_DEVICES_ENV, index.to_string());
        }
        let mut child = command
            .env(WORKER_ENV, spec)
            .env(SELF_ENV, &exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| fail(format!("cannot start the speech worker: {e}")))?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail("the speech worker has no pipes".into()));
        };
        let (requests_tx, requests_rx) = mpsc::channel::<Vec<u8>>();
        let (lines_tx, lines_rx) = mpsc::channel();
        let threads = std::thread::Builder::new()
            .name("dictum-stt-write".into())
            .spawn(move || {
                for bytes in requests_rx {
                    if stdin
                        .write_all(&bytes)
                        .and_then(|()| stdin.flush())
                        .is_err()
                    {
                        break; // the child is gone: the reader reports it
                    }
                }
            })
            .and_then(|_| {
                std::thread::Builder::new()
                    .name("dictum-stt-read".into())
                    .spawn(move || {
                        let mut out = BufReader::new(stdout);
                        loop {
                            let mut line = String::new();
                            match out.read_line(&mut line) {
                                Ok(0) => break, // closed: the channel closes with it
                                Ok(_) => {
                                    if lines_tx.send(Ok(line)).is_err() {
                                        break;
                                    }
                                }
                                Err(e) => {
                                    let _ = lines_tx.send(Err(e));
                                    break;
                                }
                            }
                        }
                    })
            });
        if let Err(e) = threads {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(format!("cannot start the worker's pipe threads: {e}")));
        }
        let mut worker = WorkerProcess {
            child,
            requests: Some(requests_tx),
            lines: lines_rx,
            stopped: None,
            stalled: false,
        };
        match worker.read_message(LOAD_TIMEOUT) {
            Ok(Message::Ready) => Ok(worker),
            Ok(Message::Err(e)) => Err(fail(e)),
            Ok(_) => Err(fail("the speech worker answered out of turn".into())),
            Err(e) => Err(fail(e.to_string())),
        }
    }

    /// Whether the worker has stopped (crashed or was killed).
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// True when it was killed for not answering in time (a fresh one may do better), as
    /// opposed to crashing (ggml aborts when the GPU is out of memory).
    pub fn stalled(&self) -> bool {
        self.stalled
    }

    pub fn decode(
        &mut self,
        pcm: &[f32],
        opts: &SttOptions,
        window: Option<Window>,
    ) -> Result<SttOutput> {
        if let Some(why) = &self.stopped {
            return Err(Error::Transcribe(why.clone()));
        }
        let request = Request {
            samples: pcm.len(),
            opts: opts.clone(),
            window,
        };
        let mut bytes =
            serde_json::to_vec(&request).map_err(|e| Error::Transcribe(e.to_string()))?;
        bytes.push(b'\n');
        bytes.reserve(pcm.len() * 4);
        for s in pcm {
            bytes.extend_from_slice(&s.to_le_bytes());
        }
        let sent = self
            .requests
            .as_ref()
            .is_some_and(|r| r.send(bytes).is_ok());
        if !sent {
            return Err(self.died("cannot write to it"));
        }
        match self.read_message(request_timeout(pcm.len()))? {
            Message::Ok(output) => Ok(output),
            Message::Err(e) => Err(Error::Transcribe(e)),
            Message::Ready => Err(Error::Transcribe(
                "the speech worker answered out of turn".into(),
            )),
        }
    }

    fn read_message(&mut self, within: Duration) -> Result<Message> {
        match self.lines.recv_timeout(within) {
            Ok(Ok(line)) => serde_json::from_str(&line)
                .map_err(|e| Error::Transcribe(format!("the speech worker sent {line:?}: {e}"))),
            Ok(Err(e)) => Err(self.died(&format!("cannot read from it: {e}"))),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(self.died("it closed its output")),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(self.stall(within)),
        }
    }

    /// The worker did not answer within `waited`: kill it and say so.
    fn stall(&mut self, waited: Duration) -> Error {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.requests = None;
        self.stalled = true;
        let why = format!(
            "the speech worker did not answer within {:.0} s (stalled) and was stopped; a \
             fresh one is started for the next dictation",
            waited.as_secs_f64()
        );
        self.stopped = Some(why.clone());
        Error::Transcribe(why)
    }

    /// Records that the child is gone (waiting for its exit status) and returns the error.
    fn died(&mut self, how: &str) -> Error {
        // The child closed its output or its input: it is ending. Wait for its status, but
        // not for ever (a child that closed stdout and hangs on is killed).
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        self.requests = None;
        let status = match self.child.wait() {
            Ok(s) => s.to_string(),
            Err(e) => format!("status unknown: {e}"),
        };
        let why = format!(
            "the speech worker stopped ({how}; {status}); whisper.cpp aborts like this when the \
             GPU runs out of memory"
        );
        self.stopped = Some(why.clone());
        Error::Transcribe(why)
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        if self.stopped.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// In the child: serve requests and return the exit code; `None` when this process is not a
/// worker. Call first thing in `main`.
///
/// Also serves the file decoder's worker (`audio/decode.rs`), and marks this executable as
/// able to: symphonia then runs in a memory-capped child instead of this process.
pub fn serve_if_requested() -> Option<ExitCode> {
    if let Some(code) = crate::audio::decode::serve_if_requested() {
        return Some(code);
    }
    let spec = std::env::var(WORKER_ENV).ok()?;
    Some(match serve(&spec) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dictum speech worker: {e}");
            ExitCode::FAILURE
        }
    })
}

/// [`serve_if_requested`] for a `main` that returns `()`: exits the process when it was a worker.
pub fn exit_if_worker() {
    if let Some(code) = serve_if_requested() {
        std::process::exit(if code == ExitCode::SUCCESS { 0 } else { 1 });
    }
}

fn serve(spec: &str) -> Result<()> {
    let spec: WorkerSpec = serde_json::from_str(spec)
        .map_err(|e| Error::Transcribe(format!("bad {WORKER_ENV}: {e}")))?;
    let abort_at: Option<u64> = std::env::var(ABORT_ENV).ok().and_then(|v| v.parse().ok());
    let mut out = std::io::stdout().lock();
    let mut send = |m: &Message| -> Result<()> {
        let mut line = serde_json::to_vec(m).map_err(|e| Error::Transcribe(e.to_string()))?;
        line.push(b'\n');
        out.write_all(&line)
            .and_then(|()| out.flush())
            .map_err(|e| Error::Transcribe(format!("cannot answer the parent: {e}")))
    };
    if abort_at == Some(0) {
        std::process::abort();
    }
    let mut t = match Transcriber::load_in_process(&spec.model, spec.gpu) {
        Ok(t) => t,
        // The parent wraps the reason in its own "could not load model" error.
        Err(Error::ModelLoad { reason, .. }) => return send(&Message::Err(reason)),
        Err(e) => return send(&Message::Err(e.to_string())),
    };
    send(&Message::Ready)?;
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut served = 0u64;
    loop {
        let mut line = String::new();
        if input
            .read_line(&mut line)
            .map_err(|e| Error::Transcribe(e.to_string()))?
            == 0
        {
            return Ok(()); // the parent closed the pipe: done
        }
        let request: Request = serde_json::from_str(&line)
            .map_err(|e| Error::Transcribe(format!("bad request {line:?}: {e}")))?;
        let mut raw = vec![0u8; request.samples * 4];
        input
            .read_exact(&mut raw)
            .map_err(|e| Error::Transcribe(format!("short request: {e}")))?;
        served += 1;
        if abort_at == Some(served) {
            std::process::abort();
        }
        let pcm: Vec<f32> = raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let reply = match t.decode(&pcm, &request.opts, request.window) {
            Ok(output) => Message::Ok(output),
            Err(e) => Message::Err(e.to_string()),
        };
        send(&reply)?;
    }
}
