//! The output muted while recording (issue 29 item 3's alternative to pausing players):
//! `dictum run` on Xvfb with the PulseAudio virtual microphone (the shared live X11 harness)
//! and `[dictation] mute_output = true`. The microphone hears the harness's `dictum_sink`;
//! the default OUTPUT is a second null sink, `dictum_speakers`, loaded here (as on a desktop,
//! the speakers are not what the microphone records: muting the sink the microphone hears
//! would silence the dictation). The sink is watched with `pactl get-sink-mute`, an observer
//! independent of Dictum's own PulseAudio client.
//!
//! - Unmuted → muted at the press, still muted after the key-up while the text is
//!   transcribed, unmuted once the text is in the xterm; no state file left.
//! - An output the user had muted stays muted through a dictation and after it.
//! - Dictum killed (SIGKILL) while the key is held leaves the output muted; the next start
//!   unmutes it.

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
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use x11_daemon::{release_typed, Live, HOTKEY};

/// The default output in this test (the microphone's sink is `dictum_sink`).
const SPEAKERS: &str = "dictum_speakers";

/// `pactl get-sink-mute SPEAKERS`.
fn muted() -> bool {
    let out = Command::new("pactl")
        .args(["get-sink-mute", SPEAKERS])
        .output()
        .expect("pactl");
    let text = String::from_utf8_lossy(&out.stdout);
    match text.trim() {
        "Mute: yes" => true,
        "Mute: no" => false,
        other => panic!(
            "pactl get-sink-mute {SPEAKERS}: {other} {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn wait_muted(want: bool, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if muted() == want {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    muted() == want
}

/// Polls the sink's mute state on a thread of its own: every answer, with when it came.
struct Watch {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<(Instant, bool)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    fn start() -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (stop, seen) = (stop.clone(), seen.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let m = muted();
                    seen.lock().expect("watch").push((Instant::now(), m));
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        };
        // One answer before anything happens: the state before.
        while seen.lock().expect("watch").is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
        Watch {
            stop,
            seen,
            thread: Some(thread),
        }
    }

    /// Stops it; the answers.
    fn finish(mut self) -> Vec<(Instant, bool)> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().expect("watch thread");
        }
        std::mem::take(&mut *self.seen.lock().expect("watch"))
    }
}

/// The changes in `seen`: (when first seen, the new state).
fn changes(seen: &[(Instant, bool)]) -> Vec<(Instant, bool)> {
    let mut out: Vec<(Instant, bool)> = Vec::new();
    let mut last = None;
    for &(at, m) in seen {
        if last != Some(m) {
            out.push((at, m));
            last = Some(m);
        }
    }
    out
}

#[test]
fn output_muted_at_the_press_and_unmuted_once_the_text_is_typed() {
    if !(tools_present() && speech::tools() && common::pulse::available("live_mute")) {
        return;
    }
    let clips = tempfile::tempdir().expect("tempdir");
    let clip = speech::report(clips.path());

    let live = Live::start().expect("tools checked above");
    live.pulse.add_speakers(SPEAKERS);
    let (x, dir) = (&live.x, live.path());
    let term = live.editor("Dictum mute");
    live.append_config("\n[dictation]\nmute_output = true\n");
    let state = dir.join(dictum_engine::media::mute::STATE_FILE);
    let mut d = live.daemon();
    assert!(!muted(), "nothing muted before the press");

    // 1. Muted at the press, unmuted once the text is typed.
    let watch = Watch::start();
    let pressed = Instant::now();
    x.xdotool(&["keydown", HOTKEY]);
    assert!(
        wait_muted(true, Duration::from_secs(5)),
        "the output is muted at the press"
    );
    eprintln!(
        "muted {} ms after the key-down",
        pressed.elapsed().as_millis()
    );
    assert!(state.exists(), "the muted sink is on disk while muted");
    play_file_and_wait(&clip);
    std::thread::sleep(Duration::from_millis(300));
    assert!(muted(), "still muted while the key is held");
    // Taken before the key-up: the daemon's release is later still.
    let (released, ev) = release_typed(x, &mut d, &term, HOTKEY, "report");
    assert!(
        wait_muted(false, Duration::from_secs(5)),
        "unmuted after the typing"
    );
    let seen = watch.finish();
    let ch = changes(&seen);
    assert_eq!(
        ch.iter().map(|c| c.1).collect::<Vec<_>>(),
        [false, true, false],
        "unmuted, muted once, unmuted once"
    );
    // Not before the typing ended: the unmute was first seen later after the key-up than the
    // text was typed (release_to_typed_ms is counted from the daemon's key-up, after
    // `released`; an answer is timed when it came, at most one poll after the change).
    let typed_ms = ev["release_to_typed_ms"]
        .as_f64()
        .expect("release_to_typed_ms");
    let unmuted_ms = ch[2].0.duration_since(released).as_secs_f64() * 1000.0;
    eprintln!(
        "typed {typed_ms:.0} ms after the key-up, unmute seen at {unmuted_ms:.0} ms ({} polls): {ev}",
        seen.len()
    );
    assert!(
        unmuted_ms >= typed_ms,
        "unmuted before the text was typed: {ev}"
    );
    assert!(!state.exists(), "state file removed once unmuted");

    // 2. The user had muted the output: it stays muted through a dictation and after it.
    live.pulse.pactl(&["set-sink-mute", SPEAKERS, "1"]);
    let watch = Watch::start();
    x.xdotool(&["keydown", HOTKEY]);
    std::thread::sleep(Duration::from_millis(100));
    play_file_and_wait(&clip);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!state.exists(), "nothing for Dictum to undo");
    x.xdotool(&["keyup", HOTKEY]);
    let ev = d.next("dictation", Duration::from_secs(60));
    assert_eq!(ev["outcome"], "ok", "{ev}");
    std::thread::sleep(Duration::from_millis(500));
    let seen = watch.finish();
    assert!(
        seen.iter().all(|s| s.1),
        "muted by the user: never unmuted ({} polls)",
        seen.len()
    );
    assert!(muted(), "still muted after the dictation");
    live.pulse.pactl(&["set-sink-mute", SPEAKERS, "0"]);

    // 3. Killed while the key is held: muted until the next start.
    x.xdotool(&["keydown", HOTKEY]);
    assert!(wait_muted(true, Duration::from_secs(5)));
    assert!(
        state.exists(),
        "the muted sink is on disk before a crash can lose it"
    );
    d.child.kill().expect("kill dictum");
    d.child.wait().expect("reap dictum");
    x.xdotool(&["keyup", HOTKEY]);
    drop(d);
    std::thread::sleep(Duration::from_millis(300));
    assert!(muted(), "nothing unmuted it: Dictum was killed");
    let _d = live.daemon();
    assert!(
        wait_muted(false, Duration::from_secs(5)),
        "the next start unmutes what the killed one muted"
    );
    assert!(!state.exists(), "state file removed");
}
