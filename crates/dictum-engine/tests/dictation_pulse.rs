//! The live dictation engine (`dictation::Dictation`, what `dictum run` and the tray app run)
//! against real parts: a private PulseAudio daemon with a virtual microphone, clips played
//! into it with `paplay`, whisper tiny.en, a real SQLite history. Commands stand in for the
//! hotkey (the X11 hotkey and the typing into a window are proven in the CLI's end-to-end
//! test under Xvfb); the sink here records what would have been typed, in order.
//!
//! One test function on purpose: the PulseAudio address lives in the process environment and
//! clips played into one sink would mix if tests ran in parallel.

mod common;

use common::pulse::{play_and_wait, reference, Pulse};
use dictum_engine::config::Config;
use dictum_engine::dictation::{
    Command, Dictation, Event, Report, Sink, SinkReport, StartOptions, State,
};
use dictum_engine::eval::WerCount;
use dictum_engine::store::{History, Outcome, Query};
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Records what would be typed.
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Sink for Recorder {
    fn deliver(&mut self, text: &str) -> SinkReport {
        self.0.lock().expect("lock").push(text.to_string());
        SinkReport {
            method: "test".into(),
            ..SinkReport::default()
        }
    }
}

struct Harness {
    dictation: Dictation,
    events: mpsc::Receiver<Event>,
    typed: Arc<Mutex<Vec<String>>>,
    notices: Vec<String>,
    states: Vec<State>,
}

impl Harness {
    /// Waits for the next finished dictation (other events are collected on the way).
    fn next_dictation(&mut self, within: Duration) -> Report {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(Event::Dictation(r)) => return r,
                Ok(Event::Notice { message }) => self.notices.push(message),
                Ok(Event::State { state }) => self.states.push(state),
                Ok(_) => {}
                Err(e) => panic!(
                    "no dictation within {within:?} ({e}); notices {:?}",
                    self.notices
                ),
            }
        }
    }

    fn wait_notice(&mut self, needle: &str, within: Duration) {
        if self.notices.iter().any(|n| n.contains(needle)) {
            return;
        }
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(Event::Notice { message }) => {
                    let hit = message.contains(needle);
                    self.notices.push(message);
                    if hit {
                        return;
                    }
                }
                Ok(Event::State { state }) => self.states.push(state),
                Ok(_) => {}
                Err(e) => panic!(
                    "no notice {needle:?} within {within:?} ({e}); got {:?}",
                    self.notices
                ),
            }
        }
    }

    /// Holds the "key" while `clip` plays, releases `tail_ms` after it ends.
    fn dictate(&mut self, clip: &str, tail_ms: u64) {
        self.dictation.send(Command::Press);
        std::thread::sleep(Duration::from_millis(100));
        play_and_wait(clip);
        std::thread::sleep(Duration::from_millis(tail_ms));
        self.dictation.send(Command::Release);
    }

    fn typed(&self) -> Vec<String> {
        self.typed.lock().expect("lock").clone()
    }
}

/// Word errors of one dictation; also added to the run's total, which must stay within the
/// corpus bound the file tests use (a single short clip can miss one word of three).
fn wer(clip: &str, text: &str) -> f64 {
    let w = WerCount::of(&reference(clip), text);
    let mut total = TOTAL.lock().expect("lock");
    *total = total.plus(w);
    w.rate()
}

static TOTAL: Mutex<WerCount> = Mutex::new(WerCount {
    errors: 0,
    words: 0,
});

fn start(dir: &Path, config: Config) -> Harness {
    let typed = Arc::new(Mutex::new(Vec::new()));
    let sink_typed = typed.clone();
    let (tx, events) = mpsc::channel();
    let opts = StartOptions {
        config,
        config_path: None,
        history_path: dir.join("history.sqlite3"),
        model_dirs: vec![common::assets().join("models")],
        audio_dir: Some(dir.join("audio")),
        hotkeys: false,
        sink: Box::new(move |_c: &Config| -> Result<Box<dyn Sink>, String> {
            Ok(Box::new(Recorder(sink_typed.clone())))
        }),
        window_probe: None,
        overrides: None,
    };
    let t0 = Instant::now();
    let dictation = Dictation::start(opts, tx).expect("dictation starts");
    let ready = events
        .recv_timeout(Duration::from_secs(5))
        .expect("ready event");
    match &ready {
        Event::Ready(info) => {
            eprintln!("ready in {:?}: {info:?}", t0.elapsed());
            assert!(info.model_load_ms > 0.0 && info.warmup_ms > 0.0, "{info:?}");
            assert_eq!(info.input, "dictum_mic");
        }
        other => panic!("first event should be ready, got {other:?}"),
    }
    Harness {
        dictation,
        events,
        typed,
        notices: Vec::new(),
        states: Vec::new(),
    }
}

#[test]
fn live_dictation_through_a_real_sound_server() {
    let pulse = Pulse::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = Config::default();
    // A stream kept open: this test's lost-and-back source is that of an open stream (issue
    // 42's closed microphone is the CLI's `live_mic.rs`).
    config.dictation.microphone = dictum_engine::config::dictation::MicrophoneMode::Always;
    config.stt.model = common::tiny_model().display().to_string();
    config.stt.threads = 2;
    let mut h = start(dir.path(), config.clone());
    let history = History::open(&dir.path().join("history.sqlite3")).expect("history");

    // 1. One dictation: text, timings and the row.
    h.dictate("jfk.wav", 500);
    let r = h.next_dictation(Duration::from_secs(30));
    eprintln!("jfk: {r:?}");
    assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
    assert!(wer("jfk.wav", &r.text) <= 0.15, "{:?}", r.text);
    assert_eq!(h.typed(), vec![r.text.clone()]);
    let row = history.get(r.id).expect("get").expect("row");
    assert_eq!(row.outcome, Outcome::Ok);
    assert!(
        row.press_to_capture_ms.is_some_and(|ms| ms < 50.0),
        "{row:?}"
    );
    assert!(row.audio_ms.is_some_and(|ms| ms >= 11_000), "{row:?}");
    assert!(row.release_to_text_ms.is_some() && row.release_to_typed_ms.is_some());
    assert!(
        row.stt_ms.is_some() && row.chunks.is_some_and(|c| c >= 1),
        "{row:?}"
    );
    assert_eq!(row.inject_method.as_deref(), Some("test"));
    assert!(h.states.contains(&State::Recording), "{:?}", h.states);

    // 2. A press while the previous utterance is still processing starts a new recording;
    //    results come out in the order spoken.
    h.dictation.send(Command::Press);
    std::thread::sleep(Duration::from_millis(100));
    play_and_wait("sns-0880.wav");
    h.dictation.send(Command::Release);
    h.dictate("goforward.wav", 400);
    let first = h.next_dictation(Duration::from_secs(30));
    let second = h.next_dictation(Duration::from_secs(30));
    assert!(first.id < second.id);
    assert!(wer("sns-0880.wav", &first.text) <= 0.4, "{first:?}");
    assert!(wer("goforward.wav", &second.text) <= 0.25, "{second:?}");
    let typed = h.typed();
    assert_eq!(
        typed[typed.len() - 2..],
        [first.text.clone(), second.text.clone()]
    );

    // 3. Silence and noise: nothing is typed, the rows say no_speech.
    let before = h.typed().len();
    h.dictation.send(Command::Press);
    std::thread::sleep(Duration::from_millis(1500));
    h.dictation.send(Command::Release);
    let silent = h.next_dictation(Duration::from_secs(10));
    assert_eq!(silent.outcome, Outcome::NoSpeech, "{silent:?}");
    h.dictate("alsa-Noise.wav", 200);
    let noise = h.next_dictation(Duration::from_secs(10));
    assert_eq!(noise.outcome, Outcome::NoSpeech, "{noise:?}");
    assert_eq!(
        h.typed().len(),
        before,
        "something was typed for silence/noise"
    );
    assert!(
        h.states.contains(&State::Idle) && h.states.contains(&State::Processing),
        "{:?}",
        h.states
    );

    // 4. Cancel while recording: nothing typed, the row says cancelled.
    h.dictation.send(Command::Press);
    std::thread::sleep(Duration::from_millis(100));
    play_and_wait("cards-001.wav");
    h.dictation.send(Command::Cancel);
    h.wait_notice("cancelled", Duration::from_secs(5));
    let newest = history
        .list(&Query {
            limit: 1,
            search: None,
        })
        .expect("list");
    assert_eq!(newest[0].error_kind.as_deref(), Some("cancelled"));
    assert_eq!(h.typed().len(), before);

    // 5. 200 dictations in a row in one process: every one ends with a row and an event
    //    (the "busy flag never reset" failure would stop this after the first).
    let t0 = Instant::now();
    for i in 0..200 {
        h.dictation.send(Command::Press);
        std::thread::sleep(Duration::from_millis(60));
        h.dictation.send(Command::Release);
        let r = h.next_dictation(Duration::from_secs(10));
        assert_eq!(r.outcome, Outcome::NoSpeech, "cycle {i}: {r:?}");
    }
    eprintln!("200 press/release cycles in {:?}", t0.elapsed());
    h.dictate("cards-001.wav", 400);
    let after = h.next_dictation(Duration::from_secs(20));
    assert!(wer("cards-001.wav", &after.text) <= 0.34, "{after:?}");

    // 6. Toggle via command, and reconfigure without a restart: queue cap of 1 means a second
    //    utterance released while one is processing is stored (row + audio), not dropped.
    let mut capped = config.clone();
    capped.dictation.queue_max = 1;
    // Without streaming the whole of jfk is left for after the release (~0.6-1 s here), so
    // the second utterance is released while the first still waits.
    capped.dictation.streaming = false;
    // The overflow's audio goes to the spool whatever history.keep_audio says (default off).
    assert!(!capped.history.keep_audio);
    h.dictation.send(Command::Reconfigure(Box::new(capped)));
    h.wait_notice("config applied", Duration::from_secs(5));
    h.dictation.send(Command::Toggle);
    std::thread::sleep(Duration::from_millis(100));
    play_and_wait("jfk.wav");
    h.dictation.send(Command::Toggle);
    h.dictation.send(Command::Toggle);
    std::thread::sleep(Duration::from_millis(150));
    h.dictation.send(Command::Toggle);
    h.wait_notice("queue_max", Duration::from_secs(10));
    let done = h.next_dictation(Duration::from_secs(30));
    assert!(wer("jfk.wav", &done.text) <= 0.15, "{done:?}");
    let rows = history
        .list(&Query {
            limit: 3,
            search: None,
        })
        .expect("list");
    let over = rows
        .iter()
        .find(|e| e.error_kind.as_deref() == Some("queue_full"))
        .expect("a queue_full row");
    let kept = over.audio_path.as_deref().expect("overflow audio kept");
    assert!(Path::new(kept).is_file(), "{kept}");
    assert!(kept.contains("/spool/"), "{kept}");
    assert!(
        over.error
            .as_deref()
            .unwrap_or("")
            .contains("dictum history --retry"),
        "{over:?}"
    );

    // 7. Idle unload: the model goes after the idle time and comes back on the next press,
    //    the first words kept.
    let mut idle = config.clone();
    assert!(idle.dictation.streaming);
    idle.dictation.idle_unload_min = 0.05; // 3 s
    h.dictation.send(Command::Reconfigure(Box::new(idle)));
    h.wait_notice("unloaded", Duration::from_secs(15));
    h.dictate("goforward.wav", 400);
    let reloaded = h.next_dictation(Duration::from_secs(30));
    assert!(wer("goforward.wav", &reloaded.text) <= 0.25, "{reloaded:?}");
    let row = history.get(reloaded.id).expect("get").expect("row");
    assert!(row.model_load_ms.is_some(), "reload not recorded: {row:?}");

    // 8. The microphone disappears mid-utterance: what was captured is still transcribed, the
    //    row says so, and the device is re-opened when it comes back.
    let mut pinned = config.clone();
    pinned.dictation.input_device = "dictum_mic".into();
    h.dictation.send(Command::Reconfigure(Box::new(pinned)));
    h.wait_notice("config applied", Duration::from_secs(5));
    h.notices.clear();
    h.dictation.send(Command::Press);
    std::thread::sleep(Duration::from_millis(100));
    play_and_wait("jfk.wav");
    pulse.pactl(&["unload-module", "module-virtual-source"]);
    h.dictation.send(Command::Release);
    let lost = h.next_dictation(Duration::from_secs(30));
    assert!(
        h.notices.iter().any(|n| n.contains("microphone failed")),
        "{:?}",
        h.notices
    );
    assert_eq!(lost.outcome, Outcome::Ok, "{lost:?}");
    assert!(wer("jfk.wav", &lost.text) <= 0.15, "{lost:?}");
    let row = history.get(lost.id).expect("get").expect("row");
    assert_eq!(row.error_kind.as_deref(), Some("device_lost"), "{row:?}");
    pulse.pactl(&[
        "load-module",
        "module-virtual-source",
        "source_name=dictum_mic",
        "master=dictum_sink.monitor",
    ]);
    h.wait_notice("is back", Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(1500)); // the new stream's first frames
    h.dictate("goforward.wav", 400);
    let back = h.next_dictation(Duration::from_secs(30));
    assert!(wer("goforward.wav", &back.text) <= 0.25, "{back:?}");

    let total = *TOTAL.lock().expect("lock");
    eprintln!(
        "WER over the dictations: {total:?} = {:.1} %",
        total.rate() * 100.0
    );
    assert!(total.rate() <= 0.15, "{total:?}");
    h.dictation.shutdown();
}
