//! A fake audio server stands in for PulseAudio (a real server cannot be frozen, or made
//! to answer at a chosen moment, in a unit test): every open attempt waits until the test
//! answers it, or forever (a frozen server). The real server's cases are in
//! `tests/capture_pulse.rs` and the CLI's `fault_matrix`.
use super::*;
use crate::audio::capture::{Attempt, CaptureError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

struct FakeStream {
    device: String,
    failed: Arc<AtomicBool>,
    missing: Arc<Mutex<Option<String>>>,
    recording: Arc<AtomicBool>,
    opened: Instant,
}

impl Stream for FakeStream {
    fn has_failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }
    fn device(&self) -> &str {
        &self.device
    }
    fn device_error(&self) -> Option<String> {
        self.has_failed()
            .then(|| "input stream error: No such entity".into())
    }
    fn source_missing(&self) -> Option<String> {
        self.missing.lock().unwrap().clone()
    }
    fn is_recording(&self) -> bool {
        self.recording.load(Ordering::SeqCst)
    }
    fn first_frames_at(&self) -> Option<Instant> {
        Some(self.opened)
    }
    fn disarm(&mut self) {
        self.recording.store(false, Ordering::SeqCst);
    }
}

type Answer = mpsc::Sender<Result<FakeStream, CaptureError>>;
/// One attempt: the options it was asked with, and how to answer it (once).
type Asked = (CaptureOptions, Option<Answer>);

/// The fake server: the attempts it was asked for, each with its options and the way to
/// answer it.
#[derive(Clone, Default)]
struct Server {
    attempts: Arc<Mutex<Vec<Asked>>>,
    /// Streams handed out at once, oldest first (a server that answers at once).
    ready: Arc<Mutex<Vec<FakeStream>>>,
}

impl Server {
    fn count(&self) -> usize {
        self.attempts.lock().unwrap().len()
    }
    fn device_asked(&self, n: usize) -> Option<String> {
        self.attempts.lock().unwrap()[n].0.device.clone()
    }
    fn preroll_asked(&self, n: usize) -> u32 {
        self.attempts.lock().unwrap()[n].0.preroll_ms
    }
    fn answer(&self, n: usize, result: Result<FakeStream, CaptureError>) {
        let tx = self.attempts.lock().unwrap()[n]
            .1
            .take()
            .expect("answered once");
        tx.send(result).expect("the microphone still waits");
    }
    /// The attempt's thread ended without an answer.
    fn vanish(&self, n: usize) {
        self.attempts.lock().unwrap()[n].1.take();
    }
}

struct FakeOpener(Server);

impl Open for FakeOpener {
    type Stream = FakeStream;
    fn begin(&mut self, opts: CaptureOptions) -> Result<Attempt<FakeStream>, String> {
        let (tx, rx) = mpsc::channel();
        let mut ready = self.0.ready.lock().unwrap();
        if ready.is_empty() {
            self.0.attempts.lock().unwrap().push((opts, Some(tx)));
        } else {
            let s = ready.remove(0);
            s.recording.store(opts.record_from_open, Ordering::SeqCst);
            self.0.attempts.lock().unwrap().push((opts, None));
            tx.send(Ok(s)).expect("the receiver is returned below");
        }
        Ok(rx)
    }
}

/// A stream and the switches to break it.
struct Handle {
    failed: Arc<AtomicBool>,
    missing: Arc<Mutex<Option<String>>>,
}

fn stream(device: &str) -> (FakeStream, Handle) {
    let failed = Arc::new(AtomicBool::new(false));
    let missing = Arc::new(Mutex::new(None));
    let handle = Handle {
        failed: failed.clone(),
        missing: missing.clone(),
    };
    let s = FakeStream {
        device: device.into(),
        failed,
        missing,
        recording: Arc::new(AtomicBool::new(false)),
        opened: Instant::now(),
    };
    (s, handle)
}

/// `microphone = "always"`: the stream is kept, and these tests are about keeping it.
fn config(device: &str) -> DictationConfig {
    DictationConfig {
        input_device: device.into(),
        microphone: MicSetting::Always,
        ..DictationConfig::default()
    }
}

fn mic(device: &str) -> (Microphone<FakeOpener>, Server, Handle) {
    let server = Server::default();
    let (s, handle) = stream(device);
    let mic = Microphone::with_opener(s, &config(device), FakeOpener(server.clone()));
    (mic, server, handle)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn no_device() -> CaptureError {
    CaptureError::NoDevice {
        wanted: Some("usb-mic".into()),
        available: vec![],
    }
}

#[test]
fn a_working_stream_is_used_and_nothing_is_opened() {
    let (mut mic, server, _h) = mic("usb-mic");
    let t0 = Instant::now();
    assert!(mic.ensure(t0));
    mic.keep_open(t0 + ms(1000));
    assert_eq!(server.count(), 0);
    assert!(mic.take_notices().is_empty());
    assert_eq!(mic.stream().map(|s| s.device()), Some("usb-mic"));
}

#[test]
fn lost_source_is_told_once_retried_with_backoff_and_comes_back() {
    let (mut mic, server, h) = mic("usb-mic");
    let t0 = Instant::now();
    h.failed.store(true, Ordering::SeqCst);
    assert_eq!(mic.why_missing(), "input stream error: No such entity");

    // Housekeeping lets the dead stream go and starts one attempt.
    mic.keep_open(t0);
    assert!(mic.stream().is_none());
    assert_eq!(server.count(), 1);
    assert_eq!(server.device_asked(0).as_deref(), Some("usb-mic"));
    assert!(mic.take_notices().is_empty());

    // The device is not there: told once.
    server.answer(0, Err(no_device()));
    mic.keep_open(t0 + ms(100));
    let told = mic.take_notices();
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].starts_with("no microphone: no input device named \"usb-mic\""));
    // No new attempt within the retry time of the failure.
    mic.keep_open(t0 + ms(2099));
    assert_eq!(server.count(), 1);
    mic.keep_open(t0 + ms(2100));
    assert_eq!(server.count(), 2);

    // Failing the same way again is not told again.
    server.answer(1, Err(no_device()));
    mic.keep_open(t0 + ms(2200));
    assert!(mic.take_notices().is_empty());

    // A press meanwhile is refused with the reason and starts nothing within the backoff.
    assert!(!mic.ensure(t0 + ms(2300)));
    let told = mic.take_notices();
    assert_eq!(told.len(), 1);
    assert!(told[0].starts_with("no microphone: no input device named"));
    assert!(told[0].ends_with("this press was not recorded, try again once it is back"));
    assert_eq!(server.count(), 2);

    // The device is back.
    mic.keep_open(t0 + ms(4200));
    assert_eq!(server.count(), 3);
    let (back, _h2) = stream("usb-mic");
    server.answer(2, Ok(back));
    assert!(mic.ensure(t0 + ms(4300)));
    assert_eq!(mic.take_notices(), ["microphone usb-mic is back"]);
    assert!(mic.is_working());
    mic.keep_open(t0 + ms(9000));
    assert_eq!(server.count(), 3);
}

#[test]
fn frozen_server_is_told_and_never_blocks_the_caller() {
    let (mut mic, server, h) = mic("usb-mic");
    let t0 = Instant::now();
    h.failed.store(true, Ordering::SeqCst);

    // The press returns at once: the attempt waits in the background.
    assert!(!mic.ensure(t0));
    assert_eq!(
        mic.take_notices(),
        [
            "no microphone: it is being re-opened; this press was not recorded, try again \
          once it is back"
        ]
    );
    assert!(!mic.ensure(t0 + ms(1999)));
    assert!(mic.take_notices()[0].contains("it is being re-opened"));
    // The server has not answered for 3 s: said so, and still one attempt (one thread).
    assert!(!mic.ensure(t0 + ms(3000)));
    let told = mic.take_notices();
    assert!(
        told[0].starts_with("no microphone: the audio server has not answered for 3 s"),
        "{told:?}"
    );
    mic.keep_open(t0 + ms(60_000));
    assert_eq!(server.count(), 1);

    // It times out at last: told, and retried after the backoff.
    server.answer(
        0,
        Err(CaptureError::OpenTimeout {
            device: "usb-mic".into(),
            waited: ms(5000),
        }),
    );
    mic.keep_open(t0 + ms(61_000));
    let told = mic.take_notices();
    assert_eq!(told.len(), 1);
    assert!(told[0].starts_with("no microphone: the audio system did not answer"));
    assert_eq!(server.count(), 1);
    mic.keep_open(t0 + ms(63_000));
    assert_eq!(server.count(), 2);

    // An attempt whose thread died without an answer counts as a failure.
    server.vanish(1);
    mic.keep_open(t0 + ms(63_100));
    let told = mic.take_notices();
    assert_eq!(told.len(), 1);
    assert!(told[0].contains("the re-open attempt ended unexpectedly"));
}

#[test]
fn retry_backoff_as_data() {
    // (ms after the failure, a new attempt starts)
    let table = [
        (0, false),
        (1, false),
        (1999, false),
        (2000, true),
        (60_000, true),
    ];
    for (after, starts) in table {
        let server = Server::default();
        let mut r = Reopener::new(FakeOpener(server.clone()));
        let t0 = Instant::now();
        r.request(CaptureOptions::default(), t0);
        assert_eq!(server.count(), 1);
        // Under way: nothing new, however long it waits.
        r.request(CaptureOptions::default(), t0 + ms(10_000));
        assert_eq!(server.count(), 1);
        assert_eq!(r.waiting_since(), Some(t0));
        assert!(r.poll(t0 + ms(10_000)).is_none());
        server.answer(0, Err(no_device()));
        let failed_at = t0 + ms(10_000);
        assert!(matches!(r.poll(failed_at), Some(Err(_))));
        assert_eq!(r.waiting_since(), None);
        r.request(CaptureOptions::default(), failed_at + ms(after));
        assert_eq!(server.count() == 2, starts, "{after} ms after the failure");
    }
}

#[test]
fn a_device_change_reopens_and_the_old_stream_records_until_the_new_one_delivers() {
    let (mut mic, server, _h) = mic("usb-mic");
    let t0 = Instant::now();
    // Unchanged settings: nothing opened.
    mic.reconfigure(&config("usb-mic"), t0);
    assert_eq!(server.count(), 0);

    mic.reconfigure(&config("headset"), t0);
    assert_eq!(server.count(), 1);
    assert_eq!(server.device_asked(0).as_deref(), Some("headset"));
    // A press meanwhile is recorded with the old stream.
    assert!(mic.ensure(t0 + ms(10)));
    assert_eq!(mic.stream().map(|s| s.device()), Some("usb-mic"));

    let (new, _h2) = stream("headset");
    server.answer(0, Ok(new));
    mic.poll(t0 + ms(20));
    assert_eq!(
        mic.take_notices(),
        ["microphone headset opened with the new settings"]
    );
    assert_eq!(mic.stream().map(|s| s.device()), Some("headset"));
}

#[test]
fn a_preroll_change_reopens_and_a_failed_change_keeps_the_old_stream() {
    let (mut mic, server, _h) = mic("usb-mic");
    let t0 = Instant::now();
    let mut d = config("usb-mic");
    d.preroll_ms = 500;
    mic.reconfigure(&d, t0);
    assert_eq!(server.count(), 1);
    assert_eq!(server.preroll_asked(0), 500);
    server.answer(0, Err(no_device()));
    mic.poll(t0 + ms(10));
    let told = mic.take_notices();
    assert_eq!(told.len(), 1);
    assert!(
        told[0].starts_with("the new microphone settings could not be applied (no input")
            && told[0].ends_with("recording goes on with usb-mic"),
        "{told:?}"
    );
    assert!(mic.is_working());
    assert_eq!(mic.stream().map(|s| s.device()), Some("usb-mic"));
}

#[test]
fn a_change_during_an_attempt_reopens_once_more_with_the_new_settings() {
    let (mut mic, server, h) = mic("usb-mic");
    let t0 = Instant::now();
    h.failed.store(true, Ordering::SeqCst);
    mic.keep_open(t0);
    assert_eq!(server.count(), 1);
    mic.reconfigure(&config("headset"), t0 + ms(10));
    // The attempt under way goes on (one at a time)...
    assert_eq!(server.count(), 1);
    let (old, _h1) = stream("usb-mic");
    server.answer(0, Ok(old));
    // ...and what it opened with the old settings is not used.
    mic.poll(t0 + ms(20));
    assert!(mic.stream().is_none());
    assert_eq!(server.count(), 2);
    assert_eq!(server.device_asked(1).as_deref(), Some("headset"));
    let (new, _h2) = stream("headset");
    server.answer(1, Ok(new));
    mic.poll(t0 + ms(30));
    assert_eq!(mic.take_notices(), ["microphone headset is back"]);
    assert_eq!(mic.stream().map(|s| s.device()), Some("headset"));
}

#[test]
fn a_change_during_a_failing_attempt_is_applied_after_the_retry_wait() {
    let (mut mic, server, _h) = mic("usb-mic");
    let t0 = Instant::now();
    // A working stream; a first change starts an attempt, a second comes during it.
    mic.reconfigure(&config("headset"), t0);
    assert_eq!(server.count(), 1);
    mic.reconfigure(&config("webcam"), t0 + ms(10));
    server.answer(
        0,
        Err(CaptureError::Open {
            device: "headset".into(),
            reason: "busy".into(),
        }),
    );
    mic.poll(t0 + ms(20));
    // The attempt for "webcam" falls inside the 2 s wait after the failure...
    assert_eq!(server.count(), 1);
    mic.keep_open(t0 + ms(1000));
    assert_eq!(server.count(), 1);
    // ...and is made once the wait is over, not dropped.
    mic.keep_open(t0 + ms(2100));
    assert_eq!(server.count(), 2);
    assert_eq!(server.device_asked(1).as_deref(), Some("webcam"));
    let (new, _h2) = stream("webcam");
    server.answer(1, Ok(new));
    mic.poll(t0 + ms(2200));
    assert_eq!(mic.stream().map(|s| s.device()), Some("webcam"));
}

#[test]
fn a_result_nobody_wants_is_dropped_silently() {
    let (mut mic, server, h) = mic("usb-mic");
    let t0 = Instant::now();
    h.failed.store(true, Ordering::SeqCst);
    mic.keep_open(t0);
    assert!(mic.stream().is_none());
    // A working stream is there before the attempt lands (not reachable through the
    // controller today, but the rule holds): it stays, and the result is let go.
    let (s, _h1) = stream("usb-mic");
    mic.stream = Some(s);
    let (dup, _h2) = stream("other");
    server.answer(0, Ok(dup));
    mic.poll(t0 + ms(10));
    assert!(mic.take_notices().is_empty());
    assert_eq!(mic.stream().map(|s| s.device()), Some("usb-mic"));
}

#[test]
fn a_source_gone_from_the_server_lets_the_stream_go() {
    let (mut mic, server, h) = mic("usb-mic");
    let t0 = Instant::now();
    assert_eq!(mic.check_source(), None);
    assert!(mic.stream().is_some());
    *h.missing.lock().unwrap() = Some("source usb-mic is gone".into());
    assert_eq!(
        mic.check_source().as_deref(),
        Some("source usb-mic is gone")
    );
    assert!(mic.stream().is_none());
    assert_eq!(mic.why_missing(), "input device usb-mic is gone");
    // Nothing left to ask about; housekeeping re-opens.
    assert_eq!(mic.check_source(), None);
    mic.keep_open(t0);
    assert_eq!(server.count(), 1);
}

fn mic_in(mode: &str, keep_s: u32) -> (Microphone<FakeOpener>, Server) {
    let server = Server::default();
    let (s, _h) = stream("usb-mic");
    let d = DictationConfig {
        input_device: "usb-mic".into(),
        microphone: match mode {
            "on_demand" => MicSetting::OnDemand,
            "always" => MicSetting::Always,
            _ => MicSetting::Auto,
        },
        microphone_keep_s: keep_s,
        ..DictationConfig::default()
    };
    let mic = Microphone::with_opener(s, &d, FakeOpener(server.clone()));
    (mic, server)
}

fn ready(server: &Server, device: &str) {
    let (s, _h) = stream(device);
    server.ready.lock().unwrap().push(s);
}

#[test]
fn on_demand_closes_after_start_up_opens_at_a_press_and_closes_after_it() {
    let (mut mic, server) = mic_in("on_demand", 180);
    let t0 = Instant::now();
    // Start-up opened it (device and format settled); idle, it is closed.
    mic.settle(false, false, t0);
    assert!(!mic.is_open());
    assert_eq!(mic.describe(t0), "closed: nothing is being dictated");
    // Housekeeping does not re-open a stream closed on purpose.
    mic.keep_open(t0 + ms(5000));
    assert_eq!(server.count(), 0);

    // The press opens it, recording from its first buffer.
    ready(&server, "usb-mic");
    assert!(mic.ensure(t0 + ms(6000)));
    assert_eq!(server.count(), 1);
    assert!(mic.stream().is_some_and(|s| s.is_recording()));
    assert!(mic.take_cold_open().is_some());
    assert!(mic.take_notices().is_empty());
    assert_eq!(mic.describe(t0 + ms(6000)), "open: dictating");
    // Under the utterance it stays, whatever the rule says.
    mic.settle(true, false, t0 + ms(7000));
    assert!(mic.is_open());
    // Recorded (stop): closed at the next round.
    mic.stream_mut().unwrap().disarm();
    mic.settle(false, false, t0 + ms(8000));
    assert!(!mic.is_open());
}

#[test]
fn always_never_closes_and_a_press_takes_the_pre_roll() {
    let (mut mic, server) = mic_in("always", 180);
    let t0 = Instant::now();
    mic.settle(false, false, t0);
    assert!(mic.is_open());
    assert!(mic.ensure(t0 + ms(10)));
    assert!(mic.take_cold_open().is_none(), "a pre-roll start");
    mic.settle(false, false, t0 + ms(10_000_000));
    assert!(mic.is_open());
    assert_eq!(server.count(), 0);
}

#[test]
fn auto_keeps_it_after_a_dictation_then_closes_and_bluetooth_closes_at_once() {
    let (mut mic, server) = mic_in("auto", 60);
    let t0 = Instant::now();
    mic.settle(false, false, t0);
    assert!(!mic.is_open(), "closed before the first dictation");
    ready(&server, "usb-mic");
    assert!(mic.ensure(t0 + ms(1000)));
    mic.stream_mut().unwrap().disarm();
    mic.settle(false, false, t0 + ms(2000));
    assert!(mic.is_open(), "kept for the next dictation's pre-roll");
    assert!(mic
        .describe(t0 + ms(2000))
        .starts_with("open: kept 60 s more"));
    // A second press within the keep time takes the pre-roll.
    assert!(mic.ensure(t0 + ms(30_000)));
    assert!(mic.take_cold_open().is_none());
    mic.settle(false, false, t0 + ms(31_000));
    mic.settle(false, false, t0 + ms(31_000 + 59_999));
    assert!(mic.is_open());
    mic.settle(false, false, t0 + ms(31_000 + 60_000));
    assert!(!mic.is_open());

    // A Bluetooth headset: closed right after each dictation.
    ready(&server, "bluez_input.00:1B:66:AA:BB:CC.0");
    assert!(mic.ensure(t0 + ms(200_000)));
    mic.stream_mut().unwrap().disarm();
    mic.settle(false, false, t0 + ms(201_000));
    assert!(!mic.is_open());
    assert!(mic.describe(t0 + ms(201_000)).contains("Bluetooth"));
}

#[test]
fn hands_free_opens_a_closed_microphone_and_holds_it_while_it_listens() {
    let (mut mic, server) = mic_in("on_demand", 180);
    let t0 = Instant::now();
    mic.settle(false, false, t0);
    ready(&server, "usb-mic");
    mic.listen(t0 + ms(100));
    assert!(mic.is_open());
    mic.stream_mut().unwrap().disarm();
    mic.settle(false, true, t0 + ms(10_000_000));
    assert!(mic.is_open());
    assert_eq!(mic.describe(t0), "open: hands-free is listening");
    mic.settle(false, false, t0 + ms(10_000_001));
    assert!(!mic.is_open());
}

#[test]
fn a_cold_open_that_does_not_answer_in_time_refuses_the_press_and_lands_later() {
    let (mut mic, server) = mic_in("on_demand", 180);
    mic.cold_wait = ms(50);
    let t0 = Instant::now();
    mic.settle(false, false, t0);
    // The server does not answer within the wait.
    assert!(!mic.ensure(t0 + ms(100)));
    let told = mic.take_notices();
    assert_eq!(told.len(), 1);
    assert!(
        told[0].starts_with("the microphone did not open within 0.05 s")
            && told[0].contains("this press was not recorded"),
        "{told:?}"
    );
    // It lands: kept without its early recording, closed by the next idle round.
    let (late, _h) = stream("usb-mic");
    late.recording.store(true, Ordering::SeqCst);
    server.answer(0, Ok(late));
    mic.poll(t0 + ms(5000));
    assert!(mic.stream().is_some_and(|s| !s.is_recording()));
    assert!(
        mic.take_notices().is_empty(),
        "no \"is back\" for a closed microphone"
    );
    mic.settle(false, false, t0 + ms(5100));
    assert!(!mic.is_open());
}

/// A cold open slow to answer (a Bluetooth profile switch): past `SLOW_OPEN_AFTER` the
/// press says so once and goes on waiting; it records once the stream is there. A fast
/// one says nothing.
#[test]
fn a_slow_cold_open_is_told_once_and_still_recorded() {
    let (mut mic, server) = mic_in("on_demand", 180);
    let t0 = Instant::now();
    mic.settle(false, false, t0);
    let answering = server.clone();
    let late = std::thread::spawn(move || {
        // Answer the attempt the press starts, 400 ms after it started.
        let t = Instant::now();
        while answering.count() == 0 {
            assert!(t.elapsed() < Duration::from_secs(5), "no attempt");
            std::thread::sleep(ms(5));
        }
        std::thread::sleep(ms(400));
        let (s, _h) = stream("usb-mic");
        answering.answer(0, Ok(s));
    });
    let mut told = 0;
    let started = Instant::now();
    assert!(mic.ensure_telling(t0 + ms(10), &mut || told += 1));
    let waited = started.elapsed();
    late.join().expect("answer");
    assert_eq!(told, 1, "told once, after {SLOW_OPEN_AFTER:?}");
    assert!(waited >= ms(400), "{waited:?}");
    assert!(mic.take_cold_open().is_some());
    // Closed again, then a server that answers at once: nothing told.
    mic.stream_mut().unwrap().disarm();
    mic.settle(false, false, t0 + ms(10_000_000));
    assert!(!mic.is_open());
    ready(&server, "usb-mic");
    let mut told_fast = 0;
    assert!(mic.ensure_telling(t0 + ms(10_000_010), &mut || told_fast += 1));
    assert_eq!(told_fast, 0);
}

#[test]
fn a_settings_change_while_closed_opens_nothing() {
    let (mut mic, server) = mic_in("on_demand", 180);
    let t0 = Instant::now();
    mic.settle(false, false, t0);
    let headset = DictationConfig {
        microphone: MicSetting::OnDemand,
        ..config("headset")
    };
    mic.reconfigure(&headset, t0 + ms(10));
    assert_eq!(server.count(), 0);
    ready(&server, "headset");
    assert!(mic.ensure(t0 + ms(20)));
    assert_eq!(server.device_asked(0).as_deref(), Some("headset"));
}
