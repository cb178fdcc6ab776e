//! Any audio or video file to 16 kHz mono, streamed: [`decode_file_16k_blocks`].
//!
//! - WAV: hound, in this process (`wav.rs`: every header field checked before a buffer is
//!   sized).
//! - FLAC, MP3, AAC/ALAC in MP4/M4A, Ogg Vorbis, Matroska/WebM: symphonia
//!   (`decode_symphonia.rs`), in a *decode worker*: this same executable started again with
//!   [`WORKER_ENV`] set, its data segment capped at [`WORKER_MEMORY`] (`RLIMIT_DATA`).
//!   symphonia sizes some buffers from headers (a Matroska element's length, an MP4 sample
//!   table's count); a hostile one then fails inside the worker (its allocation refused, or a
//!   panic) and is reported as a damaged file, where in this process it would abort Dictum or
//!   take gigabytes. The worker writes framed messages on its stdout ([`Frame`]).
//! - Opus, and whatever else symphonia does not read (other containers, video): ffmpeg
//!   (`decode_ffmpeg.rs`), when it is installed, as a child process limited to local files.
//!
//! Every path streams: the sink gets 16 kHz blocks as they are decoded, and memory does not
//! grow with the file's length. A file cut short is decoded as far as it goes and
//! [`StreamInfo::truncated`] says so.

use super::decode_symphonia::{self as sym, End, Fail, Header};
use super::wav::StreamInfo;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Set in the decode worker: what to decode (JSON [`Job`]).
pub const WORKER_ENV: &str = "DICTUM_DECODE_WORKER";
/// The decode worker's data segment (heap and anonymous mappings) at most: a real file needs a
/// few megabytes; a header asking for more is refused there.
pub const WORKER_MEMORY: u64 = 512 << 20;
/// A decoder (worker or ffmpeg) silent this long is taken as hung and stopped.
const STALL: Duration = Duration::from_secs(120);
/// Largest frame the parent accepts from the worker.
const MAX_FRAME: usize = 4 << 20;

/// True once this executable has shown it can serve as a decode worker
/// ([`crate::stt::worker_process::serve_if_requested`] was called in `main`); otherwise (a
/// test binary, an embedding program) symphonia runs in this process.
static SERVES: AtomicBool = AtomicBool::new(false);

#[derive(Serialize, Deserialize)]
struct Job {
    path: PathBuf,
    max_seconds: u32,
}

/// One message from the worker: a tag byte, a u32 LE length, the payload.
#[derive(Debug)]
enum Frame {
    /// JSON [`Header`].
    Header(Header),
    /// f32 LE 16 kHz mono samples.
    Samples(Vec<f32>),
    /// JSON [`End`].
    End(End),
    /// JSON [`Fail`].
    Fail(Fail),
}

#[derive(PartialEq)]
enum Kind {
    Wav,
    Other,
}

fn sniff(path: &Path) -> Option<Kind> {
    let mut head = [0u8; 12];
    let mut f = std::fs::File::open(path).ok()?;
    let n = f.read(&mut head).ok()?;
    Some(
        if n >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WAVE" {
            Kind::Wav
        } else {
            Kind::Other
        },
    )
}

/// Decodes any audio (or video) file to 16 kHz mono block by block, like
/// [`super::decode_16k_blocks`] does WAV (module docs: which decoder reads what). `sink` gets
/// the blocks in order with the number of 16 kHz samples the header promises (0 when unknown).
pub fn decode_file_16k_blocks(
    path: &Path,
    max_seconds: u32,
    sink: &mut dyn FnMut(&[f32], u64) -> Result<()>,
) -> Result<StreamInfo> {
    let meta = std::fs::metadata(path).map_err(|e| Error::AudioUnreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    if meta.is_dir() {
        return Err(Error::AudioUnreadable {
            path: path.to_path_buf(),
            reason: "it is a folder".into(),
        });
    }
    if meta.len() == 0 {
        return Err(Error::AudioEmpty {
            path: path.to_path_buf(),
        });
    }
    if sniff(path) == Some(Kind::Wav) {
        return super::decode_16k_blocks(path, max_seconds, sink);
    }
    let decoded = if SERVES.load(Ordering::Relaxed) {
        via_worker(path, max_seconds, sink)
    } else {
        in_process(path, max_seconds, sink)
    };
    let result = match decoded {
        Err(Failed::Fail(Fail::Unsupported(why))) => {
            super::decode_ffmpeg::decode(path, max_seconds, &why, sink)
        }
        Err(Failed::Fail(fail)) => Err(fail.into_error(path, max_seconds)),
        Err(Failed::Error(e)) => return Err(e),
        Ok(info) => Ok(info),
    };
    let named_wav = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("wav") || e.eq_ignore_ascii_case("wave"));
    match result {
        // A `.wav` that is not RIFF and nothing else reads either: the WAV reader's message
        // (what is wrong with it as a WAV, and how to convert it) says the most.
        Err(_) if named_wav => super::decode_16k_blocks(path, max_seconds, sink),
        other => other,
    }
}

/// A failure from a decoder, or from the sink (passed on as it is).
enum Failed {
    Fail(Fail),
    Error(Error),
}

/// symphonia in this process (no worker executable to start).
fn in_process(
    path: &Path,
    max_seconds: u32,
    sink: &mut dyn FnMut(&[f32], u64) -> Result<()>,
) -> std::result::Result<StreamInfo, Failed> {
    let mut header: Option<Header> = None;
    let mut sink_error: Option<Error> = None;
    let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sym::decode(path, max_seconds, &mut |event| match event {
            sym::Event::Header(h) => {
                header = Some(h.clone());
                Ok(())
            }
            sym::Event::Samples(s) => {
                let total = header.as_ref().and_then(|h| h.total_16k).unwrap_or(0);
                sink(s, total).map_err(|e| {
                    let why = e.to_string();
                    sink_error = Some(e);
                    why
                })
            }
        })
    }))
    .unwrap_or_else(|_| {
        Err(Fail::Format(
            "the decoder failed on this file (damaged?)".into(),
        ))
    });
    if let Some(e) = sink_error {
        return Err(Failed::Error(e));
    }
    let end = ended.map_err(Failed::Fail)?;
    Ok(info_of(header, end))
}

fn info_of(header: Option<Header>, end: End) -> StreamInfo {
    let (rate, channels) = header.map_or((crate::SAMPLE_RATE, 1), |h| (h.rate, h.channels));
    StreamInfo {
        source_rate: rate,
        source_channels: channels,
        source_frames: end.frames,
        resample: Duration::from_secs_f64(end.resample_ms.max(0.0) / 1000.0),
        truncated: end.truncated,
    }
}

/// symphonia in a decode worker (module docs).
fn via_worker(
    path: &Path,
    max_seconds: u32,
    sink: &mut dyn FnMut(&[f32], u64) -> Result<()>,
) -> std::result::Result<StreamInfo, Failed> {
    let spawn_error = |e: String| {
        Failed::Error(Error::AudioDecode {
            path: path.to_path_buf(),
            reason: format!("could not start the decoder: {e}"),
        })
    };
    let exe = std::env::current_exe().map_err(|e| spawn_error(e.to_string()))?;
    let job = serde_json::to_string(&Job {
        path: path.to_path_buf(),
        max_seconds,
    })
    .map_err(|e| spawn_error(e.to_string()))?;
    let mut child = Command::new(exe)
        .env(WORKER_ENV, job)
        .env_remove("DICTUM_STT_WORKER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_error(e.to_string()))?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    // Frames come through a thread, so a worker that stops writing cannot hang the file.
    let (tx, rx) = mpsc::sync_channel::<std::io::Result<Option<Frame>>>(4);
    let reader = std::thread::spawn(move || {
        let Some(mut out) = stdout else { return };
        loop {
            let frame = read_frame(&mut out);
            let last = !matches!(frame, Ok(Some(Frame::Samples(_)) | Some(Frame::Header(_))));
            if tx.send(frame).is_err() || last {
                return;
            }
        }
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(err) = stderr {
            let _ = err.take(64 * 1024).read_to_string(&mut text);
        }
        text
    });
    let mut header: Option<Header> = None;
    let result = loop {
        match rx.recv_timeout(STALL) {
            Ok(Ok(Some(Frame::Header(h)))) => header = Some(h),
            Ok(Ok(Some(Frame::Samples(s)))) => {
                let total = header.as_ref().and_then(|h| h.total_16k).unwrap_or(0);
                if let Err(e) = sink(&s, total) {
                    break Err(Failed::Error(e));
                }
            }
            Ok(Ok(Some(Frame::End(end)))) => break Ok(info_of(header.take(), end)),
            Ok(Ok(Some(Frame::Fail(fail)))) => break Err(Failed::Fail(fail)),
            Ok(Ok(None)) | Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Err(Failed::Fail(Fail::Format(String::new())))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                break Err(Failed::Fail(Fail::Format(format!(
                    "the decoder made no progress for {} s",
                    STALL.as_secs()
                ))))
            }
        }
    };
    let _ = child.kill();
    let status = child.wait();
    drop(rx);
    let _ = reader.join();
    let said = errors.join().unwrap_or_default();
    match result {
        Err(Failed::Fail(Fail::Format(why))) if why.is_empty() => {
            // The worker died: a refused allocation (a header asking for too much memory), a
            // panic in the decoder, or a signal.
            let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
            let said = crate::text_safety::strip_control(said.trim(), false);
            let last = said.lines().last().unwrap_or("").chars().take(300);
            Err(Failed::Fail(Fail::Format(format!(
                "the file is damaged: the decoder stopped ({status}{}{})",
                if said.is_empty() { "" } else { ": " },
                last.collect::<String>()
            ))))
        }
        other => other,
    }
}

fn read_frame(r: &mut impl Read) -> std::io::Result<Option<Frame>> {
    let mut head = [0u8; 5];
    match r.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::other("frame too large"));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    fn json<T: serde::de::DeserializeOwned>(b: &[u8]) -> std::io::Result<T> {
        serde_json::from_slice(b).map_err(std::io::Error::other)
    }
    Ok(Some(match head[0] {
        b'H' => Frame::Header(json(&body)?),
        b'S' => Frame::Samples(
            body.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        b'E' => Frame::End(json(&body)?),
        b'X' => Frame::Fail(json(&body)?),
        _ => return Err(std::io::Error::other("unknown frame")),
    }))
}

fn write_frame(w: &mut impl Write, tag: u8, body: &[u8]) -> std::io::Result<()> {
    let len = u32::try_from(body.len()).map_err(std::io::Error::other)?;
    w.write_all(&[tag])?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(body)
}

/// Marks this executable as able to serve decode workers, and serves when it is one (the
/// caller exits with the code). Called by [`crate::stt::worker_process::serve_if_requested`].
pub fn serve_if_requested() -> Option<ExitCode> {
    SERVES.store(true, Ordering::Relaxed);
    let job = std::env::var(WORKER_ENV).ok()?;
    limit_memory();
    Some(match serve(&job) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dictum decode worker: {e}");
            ExitCode::FAILURE
        }
    })
}

/// Caps this process's data segment at [`WORKER_MEMORY`]: an allocation past it fails, and the
/// worker stops (the parent reports a damaged file).
fn limit_memory() {
    #[cfg(unix)]
    {
        let limit = libc::rlimit {
            rlim_cur: WORKER_MEMORY as libc::rlim_t,
            rlim_max: WORKER_MEMORY as libc::rlim_t,
        };
        // SAFETY: setrlimit reads the struct given; no other effect on memory.
        let rc = unsafe { libc::setrlimit(libc::RLIMIT_DATA, &limit) };
        if rc != 0 {
            eprintln!("dictum decode worker: could not cap its memory");
        }
    }
}

fn serve(job: &str) -> std::io::Result<()> {
    let job: Job = serde_json::from_str(job).map_err(std::io::Error::other)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, stdout.lock());
    let mut pending: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut io_error: Option<std::io::Error> = None;
    let ended = sym::decode(&job.path, job.max_seconds, &mut |event| {
        let written = match event {
            sym::Event::Header(h) => serde_json::to_vec(h)
                .map_err(std::io::Error::other)
                .and_then(|b| write_frame(&mut out, b'H', &b)),
            sym::Event::Samples(s) => {
                for v in s {
                    pending.extend_from_slice(&v.to_le_bytes());
                }
                if pending.len() >= 64 * 1024 {
                    let r = write_frame(&mut out, b'S', &pending);
                    pending.clear();
                    r
                } else {
                    Ok(())
                }
            }
        };
        written.map_err(|e| {
            let why = e.to_string();
            io_error = Some(e);
            why
        })
    });
    if let Some(e) = io_error {
        return Err(e);
    }
    if !pending.is_empty() {
        write_frame(&mut out, b'S', &pending)?;
    }
    match ended {
        Ok(end) => write_frame(
            &mut out,
            b'E',
            &serde_json::to_vec(&end).map_err(std::io::Error::other)?,
        )?,
        Err(fail) => write_frame(
            &mut out,
            b'X',
            &serde_json::to_vec(&fail).map_err(std::io::Error::other)?,
        )?,
    }
    out.flush()
}
