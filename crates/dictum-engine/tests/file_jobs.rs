//! The file queue behind the tray's "Transcribe a file…" window (`filejobs`), on the real
//! tiny.en model and real speech: the text arrives piece by piece, Cancel stops a piece in
//! the middle of whisper's pass and keeps the pieces before, subtitles come from the
//! segments, each file has its history row, and a dictation in the same process goes first
//! (the file's pass stops and the file waits; its words all come out, once).

mod common;

use dictum_engine::config::Config;
use dictum_engine::filejobs::{FileJobs, JobOptions, JobState, JobView, SaveFormat, Setup};
use dictum_engine::store::History;
use dictum_engine::stt::priority::Claim;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn samples(name: &str) -> Vec<f32> {
    dictum_engine::audio::decode_16k(&common::clip(name), 60)
        .expect("clip")
        .samples
}

fn silence(s: f32) -> Vec<f32> {
    vec![0.0; (s * 16_000.0) as usize]
}

/// Pieces of about a minute, each full of speech (the JFK clip back to back with short
/// pauses), so a pass takes seconds and a stop lands inside it.
fn speech_minutes(n: usize) -> Vec<f32> {
    let jfk = samples("jfk.wav");
    let mut audio = Vec::new();
    for _ in 0..n {
        for _ in 0..5 {
            audio.extend(&jfk);
            audio.extend(silence(0.6));
        }
        audio.extend(silence(1.5));
    }
    audio
}

struct Queue {
    jobs: FileJobs,
    events: mpsc::Receiver<(Instant, JobView)>,
    config: Config,
    history: PathBuf,
}

fn queue(dir: &Path) -> Queue {
    let mut config = Config::default();
    config.stt.model = common::tiny_model().display().to_string();
    config.stt.language = "en".into();
    let history = dir.join("history.sqlite3");
    let (tx, events) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let for_jobs = config.clone();
    let jobs = FileJobs::start(Setup {
        config: Box::new(move || for_jobs.clone()),
        model_dirs: Vec::new(),
        audio_dir: None,
        history_path: history.clone(),
        changed: Box::new(move |v| {
            let _ = tx.lock().expect("tx").send((Instant::now(), v.clone()));
        }),
    })
    .expect("start the queue");
    Queue {
        jobs,
        events,
        config,
        history,
    }
}

impl Queue {
    /// Events until `until` says stop (or 120 s).
    fn until(&self, mut until: impl FnMut(&JobView) -> bool) -> Vec<(Instant, JobView)> {
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            let Ok((at, v)) = self.events.recv_timeout(Duration::from_secs(1)) else {
                continue;
            };
            let stop = until(&v);
            seen.push((at, v));
            if stop {
                return seen;
            }
        }
        panic!("no such event in 120 s; seen: {:?}", seen.last());
    }
}

fn words(s: &str) -> String {
    s.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn files_queue_arrive_piece_by_piece_cancel_keeps_what_was_done_and_dictation_goes_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let q = queue(dir.path());
    let long = dir.path().join("talk.wav");
    common::write_wav(&long, &speech_minutes(3));
    let copy = dir.path().join("again.wav");
    std::fs::copy(&long, &copy).expect("copy");

    // 1. Two files queue up; the first is transcribed piece by piece.
    let added = q.jobs.add(
        &[long.clone(), copy.clone()],
        &JobOptions::default(),
        &q.config,
    );
    assert_eq!(added.len(), 2);
    assert!(added.iter().all(|v| v.state == JobState::Queued));
    let first = added[0].id;
    let seen = q.until(|v| v.id == first && v.state == JobState::Done);
    let progress: Vec<&JobView> = seen
        .iter()
        .map(|(_, v)| v)
        .filter(|v| v.id == first && v.state == JobState::Running && v.done_ms > 0)
        .collect();
    assert!(progress.len() >= 2, "{} progress events", progress.len());
    assert!(
        progress
            .windows(2)
            .all(|w| w[0].text.len() <= w[1].text.len() && w[0].done_ms < w[1].done_ms),
        "the text grows as the pieces come"
    );
    assert!(
        !progress[0].text.is_empty(),
        "the first piece's words arrive before the end"
    );
    assert!(progress[0].remaining_ms.is_some_and(|ms| ms > 0.0));
    let done = &seen.last().expect("done").1;
    let whole = words(&done.text);
    assert_eq!(
        whole.matches("my fellow americans").count(),
        15,
        "every one of the 15 sentences: {whole}"
    );
    assert_eq!(done.done_ms, done.total_ms);
    let srt = q.jobs.render(first, SaveFormat::Srt).expect("srt");
    assert!(srt.starts_with("1\n00:00:0"), "{srt}");
    assert!(srt.contains(" --> "), "{srt}");
    let vtt = q.jobs.render(first, SaveFormat::Vtt).expect("vtt");
    assert!(vtt.starts_with("WEBVTT"), "{vtt}");
    let history = History::open(&q.history).expect("history");
    let row = history
        .get(done.entry_id.expect("a row"))
        .expect("read")
        .expect("row");
    assert_eq!(row.text.as_deref(), Some(done.text.as_str()));
    assert_eq!(
        row.source_path.as_deref(),
        Some(long.display().to_string().as_str())
    );

    // 2. Cancel the second in the middle of a pass: the window says so at once; whisper's
    // pass ends at its next look at the flag (after an encoder window or a decoder step),
    // well before the piece would have ended; the pieces before are kept, and the row says
    // where it stopped.
    let second = added[1].id;
    let piece_one = q.until(|v| v.id == second && v.done_ms > 0);
    let piece_one = &piece_one.last().expect("first piece").1;
    // The first piece's wall time: about what the next one takes to the end.
    let piece_ms = piece_one.elapsed_ms;
    let piece_one = words(&piece_one.text);
    // Into the next piece's pass (a minute of speech: seconds of whisper on tiny.en).
    std::thread::sleep(Duration::from_millis(400));
    let asked = Instant::now();
    assert!(q.jobs.cancel(second));
    let seen = q.until(|v| v.id == second && v.entry_id.is_some());
    let shown = seen
        .iter()
        .find(|(_, v)| v.id == second && v.state == JobState::Cancelled)
        .map(|(at, _)| at.duration_since(asked))
        .expect("a cancelled event");
    let (at, cancelled) = seen.last().expect("ended");
    let stopped = at.duration_since(asked);
    eprintln!(
        "cancel → shown cancelled: {} ms; → whisper stopped and the row written: {} ms (a piece takes {piece_ms:.0} ms here)",
        shown.as_millis(),
        stopped.as_millis()
    );
    assert_eq!(cancelled.state, JobState::Cancelled);
    assert!(shown < Duration::from_millis(500), "{shown:?}");
    assert!(
        stopped.as_secs_f64() * 1000.0 < piece_ms * 0.8,
        "the pass was not stopped: {stopped:?} for a {piece_ms:.0} ms piece"
    );
    assert!(
        cancelled
            .note
            .as_deref()
            .is_some_and(|n| n.contains("cancelled at 0:")),
        "{:?}",
        cancelled.note
    );
    let kept = words(&cancelled.text);
    assert!(kept.contains("my fellow americans"), "{kept}");
    assert_eq!(
        kept, piece_one,
        "the first piece's words kept, nothing of the stopped one"
    );
    let row = history
        .get(cancelled.entry_id.expect("a row"))
        .expect("read")
        .expect("row");
    assert_eq!(row.error_kind.as_deref(), Some("cancelled"));
    assert_eq!(words(row.text.as_deref().unwrap_or_default()), kept);
    assert!(
        q.jobs.render(second, SaveFormat::Srt).is_ok(),
        "what was done saves"
    );

    // 3. A dictation goes first: raised while the file's pass runs, the pass stops and the
    // file waits; lowered, the file goes on and every sentence comes out once.
    let third = q.jobs.add(
        std::slice::from_ref(&long),
        &JobOptions::default(),
        &q.config,
    )[0]
    .id;
    q.until(|v| v.id == third && v.done_ms > 0);
    std::thread::sleep(Duration::from_millis(400));
    let mut claim = Claim::new();
    let raised = Instant::now();
    claim.set(true);
    let seen = q.until(|v| v.id == third && v.waiting_for_dictation);
    let yielded = seen.last().expect("waiting").0.duration_since(raised);
    eprintln!(
        "dictation raised → the file's pass stopped and waiting: {} ms",
        yielded.as_millis()
    );
    assert!(
        yielded.as_secs_f64() * 1000.0 < piece_ms * 0.8,
        "the pass did not yield: {yielded:?} for a {piece_ms:.0} ms piece"
    );
    let during = seen.last().expect("waiting").1.done_ms;
    std::thread::sleep(Duration::from_secs(2));
    let held: Vec<JobView> = q.events.try_iter().map(|(_, v)| v).collect();
    assert!(
        held.iter().all(|v| v.done_ms == during),
        "no piece done while the dictation held the cores: {held:?}"
    );
    claim.set(false);
    let seen = q.until(|v| v.id == third && v.state == JobState::Done);
    assert!(seen.iter().any(|(_, v)| !v.waiting_for_dictation));
    // Every sentence, none twice (the stopped piece redone from the state before it, not
    // appended again). Word for word it may differ a little: whisper takes fewer threads
    // when the cores are busy, and its sums then round otherwise.
    let again = words(&seen.last().expect("done").1.text);
    assert_eq!(again.matches("my fellow americans").count(), 15, "{again}");
}
