//! Long files through `dictum transcribe`: cut into pieces at quiet points and transcribed as
//! they are decoded, with progress on stderr, no word lost at a cut, and memory that does not
//! grow with the file's length (an hour's MP3 within 20 % of the same hour's WAV). Real
//! whisper model, real speech clips.

use serde_json::Value;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::thread::JoinHandle;

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
use common::assets;

fn clip(name: &str) -> Vec<i16> {
    let path = assets().join("audio/dev").join(name);
    let mut r = hound::WavReader::open(&path).expect("clip");
    assert_eq!(r.spec().sample_rate, 16_000, "{name}");
    r.samples::<i16>().map(|s| s.expect("sample")).collect()
}

fn reference(name: &str) -> String {
    let refs = std::fs::read_to_string(assets().join("audio/dev/refs.tsv")).expect("refs");
    refs.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}\t")))
        .expect("reference")
        .to_string()
}

fn write_wav(path: &Path, samples: &[i16]) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).expect("wav");
    for &s in samples {
        w.write_sample(s).expect("write");
    }
    w.finalize().expect("finalize");
}

fn silence(seconds: f32) -> Vec<i16> {
    vec![0; (seconds * 16_000.0) as usize]
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dictum"));
    c.args(args)
        .env("DICTUM_DATA_DIR", dir.join("data"))
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .env("DICTUM_MODELS_DIR", assets().join("models"))
        .env_remove("DICTUM_LOG");
    c
}

fn dictum(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("run dictum")
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric() || *c == '\'')
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word error rate of `hyp` against `reference` (Levenshtein over words).
fn wer(reference: &[String], hyp: &[String]) -> f64 {
    let mut prev: Vec<usize> = (0..=hyp.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut row = vec![i + 1; hyp.len() + 1];
        for (j, h) in hyp.iter().enumerate() {
            let sub = prev[j] + usize::from(r != h);
            row[j + 1] = sub.min(prev[j + 1] + 1).min(row[j] + 1);
        }
        prev = row;
    }
    prev[hyp.len()] as f64 / reference.len().max(1) as f64
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "dictum failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// Progress lines: (done seconds, percent).
fn progress_lines(stderr: &str) -> Vec<(String, u32)> {
    stderr
        .lines()
        .filter(|l| l.contains(" transcribed ("))
        .map(|l| {
            let done = l
                .split(": ")
                .nth(2)
                .and_then(|r| r.split(" of ").next())
                .unwrap_or_default()
                .to_string();
            let pct = l
                .split('(')
                .nth(1)
                .and_then(|r| r.split('%').next())
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            (done, pct)
        })
        .collect()
}

#[test]
fn a_long_recording_is_transcribed_piece_by_piece_without_losing_words_at_the_cuts() {
    let names = [
        "jfk.wav",
        "sns-0870.wav",
        "goforward.wav",
        "espeak-fox.wav",
        "sns-0880.wav",
        "cards-002.wav",
        "espeak-meet.wav",
        "jfk.wav",
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let mut audio = Vec::new();
    let mut reference_words = Vec::new();
    for name in names {
        audio.extend(clip(name));
        audio.extend(silence(1.2));
        reference_words.extend(words(&reference(name)));
    }
    let secs = audio.len() / 16_000;
    assert!(secs > 45, "the recording is {secs} s");
    let file = dir.path().join("meeting.wav");
    write_wav(&file, &audio);
    let file = file.display().to_string();

    // Pieces of at most 12 s: four or more cuts, each of which must fall in a pause.
    let pieces = dictum(
        dir.path(),
        &["transcribe", "--json", "--piece-s", "12", &file],
    );
    let stderr = String::from_utf8_lossy(&pieces.stderr).to_string();
    let pieced = json(&pieces);
    let progress = progress_lines(&stderr);
    assert!(
        progress.len() >= 4,
        "expected a progress line per piece on stderr, got: {stderr}"
    );
    let pcts: Vec<u32> = progress.iter().map(|p| p.1).collect();
    assert!(
        pcts.windows(2).all(|w| w[0] <= w[1]) && pcts.last() == Some(&100),
        "progress must rise to 100 %: {pcts:?}"
    );
    // One pass over the whole file, as short files are done.
    let whole = json(&dictum(
        dir.path(),
        &["transcribe", "--json", "--piece-s", "600", &file],
    ));
    assert!(
        !String::from_utf8_lossy(&pieces.stdout).is_empty()
            && progress_lines(&String::from_utf8_lossy(
                &dictum(dir.path(), &["transcribe", "--piece-s", "600", &file]).stderr
            ))
            .is_empty(),
        "a file shorter than one piece reports no progress"
    );

    let pieced_words = words(pieced["text"].as_str().unwrap_or_default());
    let whole_words = words(whole["text"].as_str().unwrap_or_default());
    let (wer_pieced, wer_whole) = (
        wer(&reference_words, &pieced_words),
        wer(&reference_words, &whole_words),
    );
    eprintln!(
        "{secs} s: WER in pieces {:.1} %, in one pass {:.1} %",
        wer_pieced * 100.0,
        wer_whole * 100.0
    );
    assert!(
        wer_pieced <= wer_whole + 0.03,
        "cutting into pieces lost words: WER {wer_pieced:.3} vs {wer_whole:.3}\n{pieced}\n{whole}"
    );
    // The last clip's last words (the end of the file) and a clip in the middle are there.
    let text = pieced_words.join(" ");
    for needle in [
        "ask not what your country",
        "quarterly report",
        "meet tomorrow",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from: {text}");
    }
    assert!(
        text.ends_with("you can do for your country"),
        "the end was cut: {text}"
    );
    let audio_ms = pieced["audio_ms"].as_i64().unwrap_or_default();
    assert_eq!(audio_ms / 1000, secs as i64, "audio_ms is the whole file");
}

/// A pipe of a child read to its end on a thread of its own, so that neither pipe fills while
/// the child is being waited for.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            pipe.read_to_end(&mut bytes).expect("read the child's pipe");
        }
        bytes
    })
}

/// `dictum ARGS` as [`dictum`] runs it, and the peak resident memory of that run alone, in MB.
///
/// The child is reaped with `wait4` (not `Child::wait`), whose `ru_maxrss` is that child's
/// own: `getrusage(RUSAGE_CHILDREN)` gives the largest of every child this process has waited
/// for so far (the other test's runs included), so it cannot compare two runs. Linux folds a
/// child's reaped descendants into what `wait4` reports, and that is what must be counted
/// here: `dictum` decodes an MP3 in a decode worker, a subprocess it starts and waits for.
/// It is the larger of the two peaks, not their sum (the worker runs while `dictum`
/// transcribes); the worker's data segment is capped at 512 MB besides.
// clippy cannot see the `wait4` below, which reaps the child.
#[allow(clippy::zombie_processes)]
fn dictum_peak_rss(dir: &Path, args: &[&str]) -> (Output, f64) {
    let mut child = command(dir, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run dictum");
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let (stdout, stderr) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let mut status = 0;
    // SAFETY: rusage is plain integers, for which all zeroes is a value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: wait4 writes only the status and the struct it is given.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "wait4: {e}");
    }
    let out = Output {
        status: ExitStatus::from_raw(status),
        stdout: stdout.join().expect("stdout thread"),
        stderr: stderr.join().expect("stderr thread"),
    };
    (out, usage.ru_maxrss as f64 / 1024.0)
}

/// `file` (the hour [`an_hour_long_file_is_transcribed_in_flat_memory`] builds) transcribed
/// with `--json`: the words of the start, the middle and the end are there, and a progress
/// line came at least every two minutes of audio. Returns `audio_ms` and the peak RSS (MB).
fn transcribe_the_hour(dir: &Path, file: &Path, label: &str) -> (i64, f64) {
    let (out, peak) = dictum_peak_rss(dir, &["transcribe", "--json", &file.display().to_string()]);
    let row = json(&out);
    let text = words(row["text"].as_str().unwrap_or_default()).join(" ");
    eprintln!("1 h {label}: peak RSS {peak:.0} MB; text: {text}");
    assert!(
        text.starts_with("and so my fellow americans"),
        "{label}: {text}"
    );
    assert!(text.contains("quarterly report"), "{label}: {text}");
    assert!(text.ends_with("for your country"), "{label}: {text}");
    let progress = progress_lines(&String::from_utf8_lossy(&out.stderr));
    assert!(
        progress.len() >= 30,
        "{label}: {} progress lines",
        progress.len()
    );
    // The whole hour at 16 kHz would be 230 MB of samples alone (and whisper's mel of it
    // another 115 MB): a piece at a time stays far below.
    assert!(
        peak < 400.0,
        "{label}: peak RSS {peak:.0} MB for a 1 h file"
    );
    (row["audio_ms"].as_i64().unwrap_or_default(), peak)
}

#[test]
fn an_hour_long_file_is_transcribed_in_flat_memory() {
    // One hour: speech at the start, in the middle and at the end, silence between (the VAD
    // skips silent pieces, so the test stays quick; decoding and cutting cover the hour).
    let dir = tempfile::tempdir().expect("tempdir");
    let jfk = clip("jfk.wav");
    let fox = clip("espeak-fox.wav");
    let mut audio = silence(5.0);
    audio.extend(&jfk);
    audio.extend(silence(1790.0));
    audio.extend(&fox);
    let tail = 3600 * 16_000 - audio.len() - jfk.len() - 16_000 * 3;
    audio.extend(vec![0i16; tail]);
    audio.extend(&jfk);
    audio.extend(silence(3.0));
    let wav = dir.path().join("hour.wav");
    write_wav(&wav, &audio);
    drop(audio);

    let (audio_ms, wav_peak) = transcribe_the_hour(dir.path(), &wav, "WAV");
    assert_eq!(audio_ms, 3_600_000);

    // The same hour as an MP3 (issue 40): decoded in the decode worker, streamed as the WAV
    // is, so its memory must be the WAV's give or take the worker and the decoder.
    if !common::tools_ready(&["lame"], "; sudo apt-get install lame") {
        return;
    }
    let mp3 = dir.path().join("hour.mp3");
    let (w, m) = (wav.to_str().expect("utf-8"), mp3.to_str().expect("utf-8"));
    let lame = Command::new("lame")
        .args(["--quiet", "-b", "64", w, m])
        .stdin(Stdio::null())
        .output()
        .expect("run lame");
    assert!(
        lame.status.success(),
        "lame: {}",
        String::from_utf8_lossy(&lame.stderr)
    );
    let (audio_ms, mp3_peak) = transcribe_the_hour(dir.path(), &mp3, "MP3");
    // LAME adds its encoder delay (576 samples) in front and pads the end to whole 576-sample
    // frames (about 100 ms in all, measured on a 10 min file), and a decoder adds 529 samples
    // of its own. LAME writes delay and padding in its tag, and symphonia's gapless mode
    // (`enable_gapless`) drops them, so the hour comes back sample for sample: a window of
    // 100 ms would let an untrimmed decode pass, so only the rounding to milliseconds is
    // allowed.
    assert!(
        (audio_ms - 3_600_000).abs() <= 1,
        "the MP3 decoded to {audio_ms} ms (LAME's delay and padding not trimmed?)"
    );
    let ratio = mp3_peak / wav_peak;
    eprintln!("1 h file: peak RSS WAV {wav_peak:.0} MB, MP3 {mp3_peak:.0} MB ({ratio:.2}×)");
    assert!(
        mp3_peak <= 1.2 * wav_peak,
        "the MP3 took {mp3_peak:.0} MB at its peak, the WAV {wav_peak:.0} MB ({ratio:.2}×)"
    );
}
