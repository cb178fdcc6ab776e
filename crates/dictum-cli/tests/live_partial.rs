//! The words while you speak (issue 29): `dictum run --json` publishes `partial` events while
//! the dictation is recorded, in each mode, end to end as a user would: `dictum run` on a
//! real X display (Xvfb) with a real sound server (a private PulseAudio whose virtual
//! microphone is fed by `paplay`), over a ~20 s clip of four sentences
//! (`support/long_clip.rs`), the words typed into a real xterm, read back from a file.
//!
//! - Push-to-talk (the hotkey held with XTEST over the clip): the partials come while the key
//!   is held, the first before half the clip has played; their numbers go 1, 2, 3…; each
//!   one's committed words are the start of the typed text (after `eval::normalize`: no
//!   snippets, replacements or LLM here); none comes after the dictation's event; and the
//!   typed text is the event's, as without partials.
//! - Toggle (one press starts, the next stops): the same, between the two presses.
//! - Hands-free (one press starts listening; each pause ends a dictation): partials come while
//!   the clip plays, the first before half of it, and each belongs to a dictation whose event
//!   comes after it and whose text its committed words start.
//! - `[dictation] live_words = false`: push-to-talk over jfk.wav (11 s, with pauses that give
//!   partials when it is on) sends no partial at all, and the words are typed as usual.
//!
//! Skipped only when the tools are missing and `DICTUM_REQUIRE_E2E` is unset (`scripts/test`
//! sets it and installs them).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;

#[path = "support/x11_daemon.rs"]
mod x11_daemon;

#[path = "support/long_clip.rs"]
mod long_clip;

use common::pulse::play_file;
use dictum_engine::eval::{normalize, WerCount};
use long_clip::{clip_ms, long_clip};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};
use x11_daemon::{
    append_config, dictate_collecting, dictate_collecting_with, typed_line, write_initial_config,
    Live, Press, HOTKEY,
};

fn text<'a>(ev: &'a Value, field: &str) -> &'a str {
    ev[field].as_str().unwrap_or_default()
}

/// A fresh config in `dir` with `[dictation] mode = mode` and the `extra` lines below it.
fn config_with_mode(dir: &Path, mode: &str, extra: &str) {
    write_initial_config(dir);
    append_config(dir, &format!("\n[dictation]\nmode = \"{mode}\"\n{extra}"));
}

/// The partials of the dictation `ev` (in the order they came) are numbered 1, 2, 3…, carry
/// its id, and their committed words start its text and never go back.
fn check_partials(mode: &str, partials: &[&Value], ev: &Value) {
    let finale = normalize(text(ev, "text"));
    let mut committed_words = 0;
    for (i, p) in partials.iter().enumerate() {
        assert_eq!(p["seq"], i as u64 + 1, "{mode}: {p}");
        assert_eq!(p["id"], ev["id"], "{mode}: {p}");
        let committed = normalize(text(p, "committed"));
        assert!(
            finale.starts_with(&committed),
            "{mode}: committed words {committed:?} do not start the final {finale:?}"
        );
        assert!(
            committed.len() >= committed_words,
            "{mode}: committed words went back: {p}"
        );
        committed_words = committed.len();
    }
}

/// Some partial in `timed` came before `half` (since the press).
fn one_before(mode: &str, timed: &[(Duration, Value)], half: Duration) {
    assert!(
        timed
            .iter()
            .any(|(at, e)| e["event"] == "partial" && *at < half),
        "{mode}: no partial before {half:?}: {timed:?}"
    );
}

#[test]
fn partial_words_come_while_recording_in_every_mode_and_lead_to_the_typed_text() {
    let Some(live) = Live::start() else {
        return;
    };
    let clips = tempfile::tempdir().expect("tempdir");
    let clip = long_clip(clips.path());
    let length = clip_ms(&clip);
    assert!(length >= 15_000, "the joined clip is {length} ms");
    // Playback starts 100 ms after the press.
    let half = Duration::from_millis(100 + length / 2);

    let (x, dir) = (&live.x, live.path());
    let term = live.term("Dictum target");
    let mut seen = 0usize;

    // Push-to-talk: the key held over the clip.
    config_with_mode(dir, "push_to_talk", "");
    let mut d = live.daemon();
    let held = dictate_collecting(x, &mut d, HOTKEY, &clip, 500);
    let ev = held.dictation().clone();
    let line = typed_line(&term, x, &mut seen);
    eprintln!("push-to-talk dictation: {ev}\ntyped: {line:?}");
    for (at, p) in held
        .while_held
        .iter()
        .filter(|(_, e)| e["event"] == "partial")
    {
        eprintln!("held +{} ms: {p}", at.as_millis());
    }
    // Typed as before: the event's text, close to what was said.
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert_eq!(line.trim_end(), text(&ev, "text"), "{ev}");
    let w = WerCount::of(&long_clip::reference(), &line);
    assert!(w.rate() <= 0.25, "{line:?} ({w:?})");
    one_before("push-to-talk", &held.while_held, half);
    let partials = held.all("partial");
    check_partials("push-to-talk", &partials, &ev);
    assert!(
        partials
            .iter()
            .any(|p| !normalize(text(p, "committed")).is_empty()),
        "no words were committed while the key was held: {partials:?}"
    );
    // Nothing about this dictation after its event.
    let later = d.drain(Duration::from_millis(1500));
    assert!(
        !later.iter().any(|e| e["event"] == "partial"),
        "a partial after the dictation: {later:?}"
    );
    drop(d);

    // Toggle: one press starts, the next one (after the clip) stops.
    config_with_mode(dir, "toggle", "");
    let mut d = live.daemon();
    let tap = ["key", HOTKEY];
    let held = dictate_collecting_with(
        x,
        &mut d,
        Press {
            down: &tap,
            up: &tap,
        },
        &clip,
        500,
    );
    let ev = held.dictation().clone();
    let line = typed_line(&term, x, &mut seen);
    let partials = held.all("partial");
    eprintln!(
        "toggle dictation: {ev}\ntyped: {line:?}\n{} partials",
        partials.len()
    );
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert_eq!(line.trim_end(), text(&ev, "text"), "{ev}");
    one_before("toggle", &held.while_held, half);
    check_partials("toggle", &partials, &ev);
    let later = d.drain(Duration::from_millis(1500));
    assert!(
        !later.iter().any(|e| e["event"] == "partial"),
        "toggle: a partial after the dictation: {later:?}"
    );
    drop(d);

    // Hands-free: one press starts listening; each pause of the speech ends a dictation.
    config_with_mode(dir, "hands-free", "");
    let d = live.daemon();
    x.xdotool(&["key", HOTKEY]);
    let started = Instant::now();
    std::thread::sleep(Duration::from_millis(100));
    let mut player = play_file(&clip);
    let mut timed: Vec<(Duration, Value)> = Vec::new();
    let mut stopped_at: Option<Instant> = None;
    while started.elapsed() < Duration::from_secs(120) {
        if stopped_at.is_none() {
            if let Some(status) = player.try_wait().expect("paplay") {
                assert!(status.success(), "paplay: {status}");
                std::thread::sleep(Duration::from_millis(1500));
                x.xdotool(&["key", HOTKEY]); // stop listening
                stopped_at = Some(Instant::now());
            }
        }
        if let Ok(ev) = d.events.recv_timeout(Duration::from_millis(20)) {
            let idle = ev["event"] == "state" && ev["state"] == "idle";
            timed.push((started.elapsed(), ev));
            if idle && stopped_at.is_some() {
                break;
            }
        }
    }
    // Ended by then (or killed here, on the 120 s limit): reaped.
    let _ = player.kill();
    let _ = player.wait();
    let dictations: Vec<&Value> = timed
        .iter()
        .map(|(_, e)| e)
        .filter(|e| e["event"] == "dictation")
        .collect();
    eprintln!(
        "hands-free: {} dictations, {} partials",
        dictations.len(),
        timed
            .iter()
            .filter(|(_, e)| e["event"] == "partial")
            .count()
    );
    assert!(
        !dictations.is_empty(),
        "hands-free: no dictation: {timed:?}"
    );
    one_before("hands-free", &timed, half);
    for (i, (_, p)) in timed.iter().enumerate() {
        if p["event"] != "partial" {
            continue;
        }
        // Its dictation's event comes after it.
        let ev = timed[i..]
            .iter()
            .map(|(_, e)| e)
            .find(|e| e["event"] == "dictation" && e["id"] == p["id"]);
        assert!(
            ev.is_some(),
            "hands-free: no dictation event after the partial {p}: {timed:?}"
        );
    }
    for ev in dictations {
        let mine: Vec<&Value> = timed
            .iter()
            .map(|(_, e)| e)
            .filter(|e| e["event"] == "partial" && e["id"] == ev["id"])
            .collect();
        check_partials("hands-free", &mine, ev);
    }
    let _ = typed_line(&term, x, &mut seen); // what hands-free typed, not checked here
    drop(d);

    // Live words off: no partial, the words typed as usual.
    config_with_mode(dir, "push_to_talk", "live_words = false\n");
    let mut d = live.daemon();
    let held = dictate_collecting(x, &mut d, HOTKEY, &common::clip("jfk.wav"), 300);
    let ev = held.dictation().clone();
    let line = typed_line(&term, x, &mut seen);
    eprintln!("live words off: {ev}\ntyped: {line:?}");
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert_eq!(line.trim_end(), text(&ev, "text"), "{ev}");
    let w = WerCount::of(&common::pulse::reference("jfk.wav"), &line);
    assert!(w.rate() <= 0.25, "{line:?} ({w:?})");
    let later = d.drain(Duration::from_millis(500));
    assert!(
        held.all("partial").is_empty() && !later.iter().any(|e| e["event"] == "partial"),
        "live_words = false, yet partials: {:?}",
        held.all("partial")
    );
}
