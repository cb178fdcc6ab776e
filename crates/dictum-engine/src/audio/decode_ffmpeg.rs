//! What symphonia does not read (Opus, most video containers, ...) decoded by ffmpeg, when it
//! is installed: a child process that reads the one local file (`-protocol_whitelist
//! file,pipe`, the path given as `file:`, no stdin), drops video, subtitles and data
//! (`-vn -sn -dn`), takes the first audio stream, and writes 16 kHz mono s16le to a pipe,
//! read as it comes. Its stderr gives the duration (progress, cut-short files) and the
//! reason when it fails.

use super::decode_symphonia::Fail;
use super::wav::StreamInfo;
use crate::{Error, Result};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// ffmpeg silent this long (no samples) is taken as hung and stopped.
const STALL: Duration = Duration::from_secs(120);
/// Lines of ffmpeg's stderr kept (the last ones), and characters of each.
const KEPT_LINES: usize = 40;
const LINE_CHARS: usize = 400;

/// The `ffmpeg` on `PATH`, if any.
pub fn find_ffmpeg() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ffmpeg"))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// ffmpeg's data segment at most (`RLIMIT_DATA`): audio decoding needs tens of megabytes.
const FFMPEG_MEMORY: u64 = 1 << 30;

/// Caps the child's memory at [`FFMPEG_MEMORY`].
fn limit_memory(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec only setrlimit runs (a system call, async-signal-safe),
        // on a struct built before the fork; nothing allocates or takes a lock.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: FFMPEG_MEMORY as libc::rlim_t,
                    rlim_max: FFMPEG_MEMORY as libc::rlim_t,
                };
                if libc::setrlimit(libc::RLIMIT_DATA, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// What the file is, in words, for the message when ffmpeg is missing.
fn describe(path: &Path, why_not_symphonia: &str) -> String {
    let mut head = vec![0u8; 4096];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let head = &head[..n];
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    if has(b"OpusHead") {
        "is Opus audio".into()
    } else {
        format!("is not in a format Dictum reads itself ({why_not_symphonia})")
    }
}

/// Decodes `path` with ffmpeg (module docs); `why_not_symphonia` is said when ffmpeg is
/// missing.
pub(super) fn decode(
    path: &Path,
    max_seconds: u32,
    why_not_symphonia: &str,
    sink: &mut dyn FnMut(&[f32], u64) -> Result<()>,
) -> Result<StreamInfo> {
    let Some(ffmpeg) = find_ffmpeg() else {
        return Err(Error::NeedsFfmpeg {
            path: path.to_path_buf(),
            what: describe(path, why_not_symphonia),
        });
    };
    let fail = |why: String| Error::AudioDecode {
        path: path.to_path_buf(),
        reason: why,
    };
    let absolute = std::path::absolute(path).map_err(|e| fail(e.to_string()))?;
    let mut input = std::ffi::OsString::from("file:");
    input.push(absolute.as_os_str());
    let mut command = Command::new(&ffmpeg);
    limit_memory(&mut command);
    let mut child = command
        .args(["-nostdin", "-hide_banner", "-nostats", "-v", "info"])
        // No single allocation over 256 MiB, whatever a header says.
        .args(["-max_alloc", "268435456"])
        .args(["-protocol_whitelist", "file,pipe", "-i"])
        .arg(&input)
        .args([
            "-map", "0:a:0", "-vn", "-sn", "-dn", "-ac", "1", "-ar", "16000",
        ])
        .args(["-f", "s16le", "-acodec", "pcm_s16le", "pipe:1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("could not start {}: {e}", ffmpeg.display())))?;
    let duration_ms = Arc::new(AtomicU64::new(u64::MAX));
    let lines: Arc<Mutex<Vec<String>>> = Arc::default();
    let errors = {
        let (duration_ms, lines) = (duration_ms.clone(), lines.clone());
        let stderr = child.stderr.take();
        std::thread::spawn(move || {
            if let Some(err) = stderr {
                read_stderr(err, &duration_ms, &lines);
            }
        })
    };
    let (tx, rx) = mpsc::sync_channel::<std::io::Result<Vec<f32>>>(4);
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let Some(mut out) = stdout else { return };
        let mut buf = vec![0u8; 64 * 1024];
        let mut odd: Option<u8> = None;
        loop {
            let n = match out.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            let mut bytes: Vec<u8> = Vec::with_capacity(n + 1);
            bytes.extend(odd.take());
            bytes.extend_from_slice(&buf[..n]);
            if bytes.len() % 2 == 1 {
                odd = bytes.pop();
            }
            let samples = bytes
                .chunks_exact(2)
                .map(|c| f32::from(i16::from_le_bytes([c[0], c[1]])) / 32768.0)
                .collect();
            if tx.send(Ok(samples)).is_err() {
                return;
            }
        }
    });
    let max_samples = u64::from(max_seconds) * u64::from(crate::SAMPLE_RATE);
    let mut samples: u64 = 0;
    let total = |d: &AtomicU64| {
        let ms = d.load(Ordering::Relaxed);
        if ms == u64::MAX {
            0
        } else {
            ms * u64::from(crate::SAMPLE_RATE) / 1000
        }
    };
    let result: Result<()> = loop {
        let ms = duration_ms.load(Ordering::Relaxed);
        if ms != u64::MAX && ms / 1000 > u64::from(max_seconds) {
            break Err(Fail::TooLong(ms.div_ceil(1000)).into_error(path, max_seconds));
        }
        match rx.recv_timeout(STALL) {
            Ok(Ok(block)) => {
                samples += block.len() as u64;
                if samples > max_samples {
                    break Err(
                        (Fail::TooLong(samples.div_ceil(u64::from(crate::SAMPLE_RATE))))
                            .into_error(path, max_seconds),
                    );
                }
                if let Err(e) = sink(&block, total(&duration_ms)) {
                    break Err(e);
                }
            }
            Ok(Err(e)) => break Err(fail(format!("reading ffmpeg's output: {e}"))),
            Err(mpsc::RecvTimeoutError::Disconnected) => break Ok(()),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                break Err(fail(format!(
                    "ffmpeg made no progress for {} s",
                    STALL.as_secs()
                )))
            }
        }
    };
    if result.is_err() {
        let _ = child.kill();
    }
    let status = child.wait();
    drop(rx);
    let _ = reader.join();
    let _ = errors.join();
    result?;
    let said: Vec<String> = lines.lock().map(|l| l.clone()).unwrap_or_default();
    let last_error = said
        .iter()
        .rev()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error")
                || l.contains("invalid")
                || l.contains("matches no streams")
                || l.contains("does not contain")
        })
        .or(said.last())
        .cloned()
        .unwrap_or_default();
    let ok = status.as_ref().is_ok_and(|s| s.success());
    let secs = samples as f64 / f64::from(crate::SAMPLE_RATE);
    let mut truncated = None;
    if samples == 0 {
        let all = said.join("\n");
        return Err(if all.contains("matches no streams") {
            Fail::NoAudio("ffmpeg found no audio stream in it; a video without sound?".into())
                .into_error(path, max_seconds)
        } else if ok {
            Error::AudioEmpty {
                path: path.to_path_buf(),
            }
        } else {
            fail(format!("ffmpeg could not read it: {last_error}"))
        });
    }
    if !ok {
        truncated = Some(format!("ffmpeg stopped after {secs:.1} s: {last_error}"));
    } else {
        let ms = duration_ms.load(Ordering::Relaxed);
        if ms != u64::MAX && samples * 1000 / u64::from(crate::SAMPLE_RATE) + 1000 < ms {
            truncated = Some(format!(
                "the file ends after {secs:.1} s of the {:.1} s its header announces (cut short?)",
                ms as f64 / 1000.0
            ));
        }
    }
    Ok(StreamInfo {
        source_rate: crate::SAMPLE_RATE,
        source_channels: 1,
        source_frames: samples,
        resample: Duration::ZERO,
        truncated,
    })
}

/// Reads ffmpeg's stderr to its end: the first `Duration: HH:MM:SS.cc` into `duration_ms`,
/// the last [`KEPT_LINES`] lines (control characters dropped, each cut at [`LINE_CHARS`])
/// into `lines`.
fn read_stderr(mut err: impl Read, duration_ms: &AtomicU64, lines: &Mutex<Vec<String>>) {
    let mut buf = [0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let push = |raw: &[u8]| {
        let text = String::from_utf8_lossy(raw);
        let text: String = text
            .chars()
            .filter(|c| !c.is_control())
            .take(LINE_CHARS)
            .collect();
        if duration_ms.load(Ordering::Relaxed) == u64::MAX {
            if let Some(ms) = parse_duration(&text) {
                duration_ms.store(ms, Ordering::Relaxed);
            }
        }
        if let Ok(mut l) = lines.lock() {
            if l.len() == KEPT_LINES {
                l.remove(0);
            }
            l.push(text.trim().to_string());
        }
    };
    loop {
        let n = match err.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b == b'\n' || b == b'\r' {
                if !line.is_empty() {
                    push(&line);
                    line.clear();
                }
            } else if line.len() < LINE_CHARS * 4 {
                line.push(b);
            }
        }
    }
    if !line.is_empty() {
        push(&line);
    }
}

/// `  Duration: 00:01:02.50, start: ...` → 62 500.
fn parse_duration(line: &str) -> Option<u64> {
    let rest = line.trim_start().strip_prefix("Duration: ")?;
    let stamp = rest.split(',').next()?.trim();
    let mut parts = stamp.split(':');
    let h: u64 = parts.next()?.parse().ok()?;
    let m: u64 = parts.next()?.parse().ok()?;
    let s: f64 = parts.next()?.parse().ok()?;
    if !(0.0..60.0).contains(&s) {
        return None;
    }
    Some(h * 3_600_000 + m * 60_000 + (s * 1000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn ffmpegs_duration_line_is_read() {
        assert_eq!(
            parse_duration("  Duration: 00:01:02.50, start: 0.000000, bitrate: 64 kb/s"),
            Some(62_500)
        );
        assert_eq!(parse_duration("  Duration: N/A, bitrate: N/A"), None);
        assert_eq!(parse_duration("Stream #0:0: Audio: opus"), None);
    }
}
