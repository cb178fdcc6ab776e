//! The file decoder's entry (`audio::decode_file_16k_blocks`) on garbled input: real MP3,
//! M4A, Ogg Vorbis, FLAC, WebM and Opus files (encoded by the Debian tools) with bytes flipped,
//! runs overwritten with 0xFF, chunks cut out or repeated, and header fields set to their
//! largest values (an MP4 sample table claiming 4 billion entries, a Matroska element
//! claiming petabytes). Every case must come back (an error or audio, never a panic or a
//! hang), within its time, with this process's memory flat and the audio bounded by the cap.
//!
//! No test harness (`harness = false`): this binary is also the decode worker that the
//! decoder starts for symphonia (`audio/decode.rs`), as `dictum` is. Skipped when the tools
//! are missing unless `DICTUM_REQUIRE_E2E` is set.

use dictum_engine::audio::decode_file_16k_blocks;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Cases per seed file.
const MUTANTS: usize = 120;
/// The duration cap given to the decoder (seconds).
const CAP_S: u32 = 30;

/// A small deterministic generator (xorshift64*), so a failure names a reproducible case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(3) {
        if v.is_empty() {
            break;
        }
        // Headers sit near the start: half the edits land in the first 4 KiB.
        let span = if rng.below(2) == 0 {
            v.len().min(4096)
        } else {
            v.len()
        };
        let at = rng.below(span);
        match rng.below(6) {
            0 => {
                for _ in 0..1 + rng.below(16) {
                    let i = rng.below(span);
                    v[i] ^= 1 << rng.below(8);
                }
            }
            1 => {
                let end = (at + 1 + rng.below(8)).min(v.len());
                v[at..end].fill(0xFF);
            }
            2 => {
                let end = (at + 1 + rng.below(4)).min(v.len());
                v[at..end].fill(0);
            }
            3 => v.truncate(at),
            4 => {
                let end = (at + rng.below(2048)).min(v.len());
                v.drain(at..end);
            }
            _ => {
                let end = (at + rng.below(512)).min(v.len());
                let chunk = v[at..end].to_vec();
                let to = rng.below(v.len());
                v.splice(to..to, chunk);
            }
        }
    }
    v
}

/// `tag`'s 4-byte size field (big-endian, just before it) and the `n` u32 fields after it
/// set to u32::MAX: an MP4 atom claiming the most it can.
fn max_atom(seed: &[u8], tag: &[u8; 4], skip: usize, n: usize) -> Option<Vec<u8>> {
    let at = seed.windows(4).position(|w| w == tag)?;
    let mut v = seed.to_vec();
    for k in 0..n {
        let i = at + 4 + skip + 4 * k;
        v.get_mut(i..i + 4)?
            .copy_from_slice(&u32::MAX.to_be_bytes());
    }
    Some(v)
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

fn encode(dir: &Path, wav: &Path, ext: &str) -> std::path::PathBuf {
    let out = dir.join(format!("seed.{ext}"));
    let (w, o) = (wav.to_str().expect("utf-8"), out.to_str().expect("utf-8"));
    let mut c = match ext {
        "mp3" => {
            let mut c = Command::new("lame");
            c.args(["--quiet", "-b", "64", w, o]);
            c
        }
        "flac" => {
            let mut c = Command::new("flac");
            c.args(["--silent", "-f", w, "-o", o]);
            c
        }
        "opus" => {
            let mut c = Command::new("opusenc");
            c.args(["--quiet", "--bitrate", "24", w, o]);
            c
        }
        _ => {
            let codec = match ext {
                "m4a" => "aac",
                "ogg" | "webm" => "libvorbis",
                _ => unreachable!(),
            };
            let mut c = Command::new("ffmpeg");
            c.args(["-nostdin", "-v", "error", "-y", "-i", w, "-c:a", codec, o]);
            c
        }
    };
    let status = c.stdin(Stdio::null()).status().expect("encoder");
    assert!(status.success(), "encoding {ext}");
    out
}

fn main() -> ExitCode {
    // The decode worker, when this process was started as one.
    if let Some(code) = dictum_engine::stt::worker_process::serve_if_requested() {
        return code;
    }
    let tools = ["ffmpeg", "lame", "flac", "opusenc"];
    if let Some(missing) = tools.iter().find(|t| !on_path(t)) {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but {missing} is not installed"
        );
        eprintln!("SKIPPED: {missing} not installed; sudo apt install ffmpeg lame flac opus-tools");
        return ExitCode::SUCCESS;
    }
    let assets = std::env::var_os("DICTUM_TEST_ASSETS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        std::path::PathBuf::from,
    );
    let jfk = assets.join("audio/dev/jfk.wav");
    assert!(
        jfk.is_file(),
        "no {} (set DICTUM_TEST_ASSETS)",
        jfk.display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    // 3 s of jfk keeps each case short.
    let short = dir.path().join("short.wav");
    let d = dictum_engine::audio::decode_16k(&jfk, 60).expect("jfk");
    dictum_engine::audio::write_wav_16k(&short, &d.samples[..48_000]).expect("wav");

    let started = Instant::now();
    let rss_before = peak_rss_kb();
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let mut rng = Rng(0x5EED_F00D_u64);
    for ext in ["mp3", "m4a", "ogg", "flac", "webm", "opus"] {
        let seed = std::fs::read(encode(dir.path(), &short, ext)).expect("seed");
        // The seed itself decodes.
        cases.push((format!("{ext} seed"), seed.clone()));
        for i in 0..MUTANTS {
            cases.push((format!("{ext} mutant {i}"), mutate(&seed, &mut rng)));
        }
        if ext == "m4a" {
            // Sample size table: version/flags, sample size, sample count.
            for (tag, skip, n) in [
                (b"stsz", 4, 2),
                (b"stco", 4, 1),
                (b"stts", 4, 1),
                (b"stsc", 4, 1),
            ] {
                if let Some(v) = max_atom(&seed, tag, skip, n) {
                    cases.push((
                        format!("m4a {} at its largest", String::from_utf8_lossy(tag)),
                        v,
                    ));
                }
            }
        }
        if ext == "webm" {
            // EBML sizes of 8 bytes (0x01 then 7 bytes) claiming 2^56 - 2 bytes, at each of
            // the first element headers.
            for at in [4usize, 16, 40, 60] {
                let mut v = seed.clone();
                if at + 8 < v.len() {
                    v[at] = 0x01;
                    v[at + 1..at + 8].fill(0xFF);
                    v[at + 7] = 0xFE;
                    cases.push((format!("webm size at {at} at its largest"), v));
                }
            }
        }
    }
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    let mut slowest = (Duration::ZERO, String::new());
    for (name, bytes) in &cases {
        let path = dir
            .path()
            .join(format!("case.{}", name.split(' ').next().unwrap_or("bin")));
        std::fs::write(&path, bytes).expect("write case");
        let t = Instant::now();
        let mut samples: u64 = 0;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            decode_file_16k_blocks(&path, CAP_S, &mut |block, _| {
                samples += block.len() as u64;
                Ok(())
            })
        }));
        let took = t.elapsed();
        let result = match result {
            Ok(r) => r,
            Err(_) => panic!("{name}: the decoder panicked in this process"),
        };
        assert!(took < Duration::from_secs(20), "{name}: took {took:?}");
        if took > slowest.0 {
            slowest = (took, name.clone());
        }
        assert!(
            samples <= u64::from(CAP_S) * 16_000 + 16_000,
            "{name}: {samples} samples past the cap"
        );
        let kind = match &result {
            Ok(info) if info.truncated.is_some() => "ok (truncated)".to_string(),
            Ok(_) => "ok".to_string(),
            Err(e) => e.kind().to_string(),
        };
        if name.ends_with("seed") {
            assert!(
                result.as_ref().is_ok_and(|i| i.truncated.is_none()) && samples > 40_000,
                "{name}: {result:?}, {samples} samples"
            );
        }
        if let Err(e) = &result {
            assert!(
                e.kind().starts_with("audio")
                    || e.kind() == "needs_ffmpeg"
                    || e.kind() == "resample",
                "{name}: unexpected error kind {}: {e}",
                e.kind()
            );
        }
        if name.contains("largest") {
            let said = result
                .as_ref()
                .map_or_else(|e| e.to_string(), |i| format!("{i:?}"));
            eprintln!("{name}: {took:?}: {said}");
        }
        *outcomes.entry(kind).or_default() += 1;
    }
    let grown_kb = peak_rss_kb().saturating_sub(rss_before);
    eprintln!(
        "decode_fuzz: {} cases in {:.1} s (slowest {:?}: {}), outcomes {outcomes:?}, peak RSS grew {} MiB",
        cases.len(),
        started.elapsed().as_secs_f64(),
        slowest.0,
        slowest.1,
        grown_kb / 1024
    );
    assert!(
        grown_kb < 128 * 1024,
        "this process's memory grew {grown_kb} KiB"
    );
    ExitCode::SUCCESS
}
