//! Sound cues (issue 29 item 2): `dictum run` on Xvfb with the PulseAudio virtual microphone
//! (the shared live X11 harness) and `[dictation] sound_cues = true`.
//!
//! - The cues reach the output: a second null sink, `dictum_cues`, is made the default
//!   output (the speech clips still go to `dictum_sink`, whose monitor is the microphone), and
//!   its monitor is recorded with `parec` while dictating: the rising start pair
//!   (660 → 880 Hz) sounds after the key-down, the falling stop pair (880 → 660 Hz) after the
//!   key-up, and the text typed is what it is with cues off.
//! - Capture is not delayed: the key-down → capture-start time the daemon stores
//!   (`press_to_capture_ms`) is printed with and without cues (figures in
//!   docs/PERFORMANCE.md; no timing is asserted).
//! - A cue that reaches the microphone (the default output is the microphone's sink, as
//!   with speakers near a microphone) types nothing in a silent dictation.

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;
#[path = "support/speech.rs"]
mod speech;
#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::pulse::play_file_and_wait;
use common::x11::tools_present;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use x11_daemon::{dictate, history_rows, Daemon, Live, HOTKEY};

const RATE: usize = 16_000;
/// 20 ms analysis windows.
const WIN: usize = RATE / 50;

/// `parec` on a sink's monitor: 16 kHz mono s16 samples. Times are sample positions (the
/// monitor of an idle null sink delivers nothing for its first ~2 s, so wall-clock time since
/// the start would be off).
struct Recorder {
    child: Child,
    samples: Arc<Mutex<Vec<f32>>>,
}

impl Recorder {
    fn start(source: &str) -> Recorder {
        let mut child = Command::new("parec")
            .args([
                "-d",
                source,
                "--rate=16000",
                "--channels=1",
                "--format=s16le",
                "--raw",
                "--latency-msec=20",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn parec (pulseaudio-utils)");
        let mut out = child.stdout.take().expect("parec stdout");
        let samples = Arc::new(Mutex::new(Vec::new()));
        let sink = samples.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 3200];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut s = sink.lock().expect("samples");
                s.extend(
                    buf[..n & !1]
                        .chunks_exact(2)
                        .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0),
                );
            }
        });
        let rec = Recorder { child, samples };
        // Samples flowing (for 200 ms) before anything is measured.
        let deadline = Instant::now() + Duration::from_secs(10);
        while rec.ms() < 200.0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(rec.ms() >= 200.0, "parec delivered nothing from {source}");
        rec
    }

    /// Milliseconds recorded so far.
    fn ms(&self) -> f64 {
        self.samples.lock().expect("samples").len() as f64 * 1000.0 / RATE as f64
    }

    fn stop(mut self) -> Vec<f32> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(100));
        let s = self.samples.lock().expect("samples");
        s.clone()
    }
}

/// Power of `freq` in `w` (Goertzel), normalised by the window length.
fn power(w: &[f32], freq: f32) -> f32 {
    let k = 2.0 * (2.0 * std::f32::consts::PI * freq / RATE as f32).cos();
    let (mut s1, mut s2) = (0.0f32, 0.0f32);
    for &x in w {
        let s0 = x + k * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    (s1 * s1 + s2 * s2 - k * s1 * s2) / (w.len() * w.len()) as f32
}

/// The tone heard in each 20 ms window: 660, 880, or 0 (none).
fn tones(samples: &[f32]) -> Vec<u32> {
    samples
        .chunks_exact(WIN)
        .map(|w| {
            let (lo, hi) = (power(w, 660.0), power(w, 880.0));
            // A 0.5-peak sine fills a window with power ~0.06; silence gives ~0.
            let floor = 1e-3;
            if lo.max(hi) < floor {
                0
            } else if lo > hi {
                660
            } else {
                880
            }
        })
        .collect()
}

/// The cues in a run of window tones: (first window, [tones in order, deduplicated]).
fn cues(windows: &[u32]) -> Vec<(usize, Vec<u32>)> {
    let mut out: Vec<(usize, Vec<u32>)> = Vec::new();
    let mut last_tone: Option<usize> = None;
    for (i, &t) in windows.iter().enumerate() {
        if t == 0 {
            continue;
        }
        // More than 100 ms of silence since the last tone: a new cue.
        let new = last_tone.is_none_or(|l| i - l > 5);
        if new {
            out.push((i, vec![t]));
        } else if let Some(c) = out.last_mut() {
            if c.1.last() != Some(&t) {
                c.1.push(t);
            }
        }
        last_tone = Some(i);
    }
    out
}

fn config(dir: &Path, cues: bool) {
    let text = format!(
        "[stt]\nmodel = \"{}\"\nthreads = 2\n\n[inject]\nnotify_on_failure = false\n\n[dictation]\nsound_cues = {cues}\nsound_volume = 0.5\n",
        common::tiny_model().display()
    );
    std::fs::write(dir.join("config.toml"), text).expect("write config");
}

/// The `press_to_capture_ms` of every row in `dir`'s history.
fn press_to_capture(dir: &Path) -> Vec<f64> {
    history_rows(dir)
        .iter()
        .filter_map(|r| r.press_to_capture_ms)
        .collect()
}

fn summary(v: &[f64]) -> String {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mean = s.iter().sum::<f64>() / s.len().max(1) as f64;
    format!(
        "n={} mean={mean:.2} ms median={:.2} ms max={:.2} ms",
        s.len(),
        s.get(s.len() / 2).copied().unwrap_or(f64::NAN),
        s.last().copied().unwrap_or(f64::NAN)
    )
}

#[test]
fn cues_reach_the_output_without_delaying_capture_and_type_nothing() {
    if !(tools_present() && speech::tools()) {
        return;
    }
    let clips = tempfile::tempdir().expect("tempdir");
    let clip = speech::report(clips.path());
    let live = Live::start().expect("tools checked above");
    live.pulse.add_speakers("dictum_cues");
    let x = &live.x;
    let term = live.editor("Dictum cues");
    const ROUNDS: usize = 4;

    // Cues off: the text and the press → capture times to compare with.
    let off_dir = tempfile::tempdir().expect("tempdir");
    config(off_dir.path(), false);
    let mut d = Daemon::start(off_dir.path(), x);
    let mut texts_off = Vec::new();
    for _ in 0..ROUNDS {
        let ev = dictate(x, &mut d, HOTKEY, &clip, 400);
        assert_eq!(ev["outcome"], "ok", "{ev}");
        texts_off.push(ev["text"].as_str().unwrap_or_default().to_string());
    }
    drop(d);
    let off = press_to_capture(off_dir.path());

    // Cues on, played to `dictum_cues` (not the microphone's sink), recorded from its monitor.
    let on_dir = tempfile::tempdir().expect("tempdir");
    config(on_dir.path(), true);
    let mut d = Daemon::start(on_dir.path(), x);
    let rec = Recorder::start("dictum_cues.monitor");
    let mut presses = Vec::new();
    for text_off in &texts_off {
        // `dictate`, with the recording's position at the key-down and the key-up.
        let down = rec.ms();
        x.xdotool(&["keydown", HOTKEY]);
        std::thread::sleep(Duration::from_millis(100));
        play_file_and_wait(&clip);
        std::thread::sleep(Duration::from_millis(400));
        let up = rec.ms();
        x.xdotool(&["keyup", HOTKEY]);
        let ev = d.next("dictation", Duration::from_secs(60));
        presses.push((down, up));
        assert_eq!(ev["outcome"], "ok", "{ev}");
        assert_eq!(
            ev["text"].as_str().unwrap_or_default(),
            text_off.as_str(),
            "the cue changed nothing in the text: {ev}"
        );
        std::thread::sleep(Duration::from_millis(600));
    }
    let recorded = rec.stop();
    drop(d);
    let on = press_to_capture(on_dir.path());
    eprintln!("press -> capture start, cues off: {}", summary(&off));
    eprintln!("press -> capture start, cues on:  {}", summary(&on));
    assert_eq!(off.len(), ROUNDS, "{off:?}");
    assert_eq!(on.len(), ROUNDS, "{on:?}");

    let found = cues(&tones(&recorded));
    eprintln!(
        "cues in the sink (start ms, tones): {:?}",
        found
            .iter()
            .map(|(w, t)| (w * 20, t.clone()))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        found.len(),
        2 * ROUNDS,
        "a start and a stop cue per dictation, nothing else: {found:?}"
    );
    for (i, &(down_ms, up_ms)) in presses.iter().enumerate() {
        let (start_w, start) = &found[2 * i];
        let (stop_w, stop) = &found[2 * i + 1];
        assert_eq!(start, &vec![660, 880], "start cue rises: {found:?}");
        assert_eq!(stop, &vec![880, 660], "stop cue falls: {found:?}");
        let (start_ms, stop_ms) = ((start_w * 20) as f64, (stop_w * 20) as f64);
        eprintln!(
            "dictation {i}: start cue {:.0} ms after the key-down, stop cue {:.0} ms after the key-up (20 ms windows; parec's latency included)",
            start_ms - down_ms,
            stop_ms - up_ms
        );
        assert!(
            start_ms > down_ms - 40.0 && start_ms < up_ms,
            "start cue while the key is held: {presses:?} {found:?}"
        );
        assert!(
            stop_ms > up_ms - 40.0,
            "stop cue after the key-up: {presses:?} {found:?}"
        );
    }

    // Cues into the microphone's own sink: a silent dictation hears only the cues.
    live.pulse.pactl(&["set-default-sink", "dictum_sink"]);
    let mic_dir = tempfile::tempdir().expect("tempdir");
    config(mic_dir.path(), true);
    let mut d = Daemon::start(mic_dir.path(), x);
    let before = term.line(x);
    let rec = Recorder::start("dictum_sink.monitor");
    for _ in 0..3 {
        x.xdotool(&["keydown", HOTKEY]);
        std::thread::sleep(Duration::from_millis(1500));
        x.xdotool(&["keyup", HOTKEY]);
        if let Ok(ev) = d.try_next("dictation", Duration::from_secs(10)) {
            eprintln!("silent dictation with the cue in the microphone: {ev}");
            assert_eq!(
                ev["text"].as_str().unwrap_or_default(),
                "",
                "a cue typed text: {ev}"
            );
        }
        std::thread::sleep(Duration::from_millis(800));
    }
    let heard = cues(&tones(&rec.stop()));
    assert!(
        heard.len() >= 3,
        "the cues did reach the microphone's sink: {heard:?}"
    );
    std::thread::sleep(Duration::from_millis(500));
    // `line` presses Return: that newline, and nothing else.
    assert_eq!(
        term.line(x),
        format!("{before}\n"),
        "nothing typed from the cues"
    );
    drop(d);
}
