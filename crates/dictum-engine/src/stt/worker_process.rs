//! Whisper on the GPU runs in a child process, so a CUDA failure cannot take Dictum down.
//!
//! whisper.cpp (ggml) does not return CUDA errors: when VRAM runs out it aborts the whole
//! process (`GGML_ASSERT(buffer) failed`, seen on an H100 with another program holding the
//! card). In the child that abort is an ended pipe: the parent notices, and the utterance is
//! redone on the CPU (`resilient.rs`), the model load falls back to the CPU (`pipeline.rs`).
//!
//! The child is this same executable started with `DICTUM_STT_WORKER` set (`dictum` and
//! `dictum-tray` call [`serve_if_requested`] first thing in `main`). Protocol over its
//! stdin/stdout: after loading, the child writes one JSON line `"ready"` (or
//! `{"err":...}`); then per request the parent writes one JSON line (options and the sample
//! count) followed by the samples as f32 little-endian, and the child answers one JSON line
//! `{"ok":{...}}` or `{"err":"..."}`. The child's logs go to stderr, shared with the parent.

use super::whisper::{SttOptions, SttOutput, Transcriber, Window};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};

/// Set in the child: what to load (JSON [`WorkerSpec`]).
const WORKER_ENV: &str = "DICTUM_STT_WORKER";
/// Test seam: run the CPU model in a worker too (the GPU path, testable without a GPU).
const ISOLATE_ENV: &str = "DICTUM_STT_ISOLATE";
/// Test seam, in the child: abort (as ggml does) when request N arrives; 0 = while loading.
const ABORT_ENV: &str = "DICTUM_STT_WORKER_ABORT_AT";

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
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Why it stopped, once it has.
    stopped: Option<String>,
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
        let mut child = Command::new(exe)
            .env(WORKER_ENV, spec)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| fail(format!("cannot start the speech worker: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(fail("the speech worker has no pipes".into()));
        };
        let mut worker = WorkerProcess {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            stopped: None,
        };
        match worker.read_message() {
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
        if let Err(e) = self
            .stdin
            .write_all(&bytes)
            .and_then(|()| self.stdin.flush())
        {
            return Err(self.died(&format!("cannot write to it: {e}")));
        }
        match self.read_message()? {
            Message::Ok(output) => Ok(output),
            Message::Err(e) => Err(Error::Transcribe(e)),
            Message::Ready => Err(Error::Transcribe(
                "the speech worker answered out of turn".into(),
            )),
        }
    }

    fn read_message(&mut self) -> Result<Message> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) => Err(self.died("it closed its output")),
            Ok(_) => serde_json::from_str(&line)
                .map_err(|e| Error::Transcribe(format!("the speech worker sent {line:?}: {e}"))),
            Err(e) => Err(self.died(&format!("cannot read from it: {e}"))),
        }
    }

    /// Records that the child is gone (waiting for its exit status) and returns the error.
    fn died(&mut self, how: &str) -> Error {
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
pub fn serve_if_requested() -> Option<ExitCode> {
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
