//! The words while you speak (issue 29): `dictum run --json` publishes `partial` events while
//! the key is held, end to end as a user would: `dictum run` on a real X display (Xvfb) with
//! a real sound server (a private PulseAudio whose virtual microphone is fed by `paplay`),
//! the hotkey held with XTEST over a ~20 s clip of four sentences (jfk.wav, sns-0870.wav,
//! sns-0880.wav and espeak-fox.wav with 0.4 s gaps, as `scripts/bench-live` joins them), and
//! the words typed into a real xterm, read back from a file.
//!
//! The partials come while the key is held, the first before half the clip has played; their
//! numbers go 1, 2, 3…; each one's committed words are the start of the typed text (after
//! `eval::normalize`: no snippets, replacements or LLM here); none comes after the
//! dictation's event; and the typed text is the event's, as without partials.
//!
//! Skipped only when the tools are missing and `DICTUM_REQUIRE_E2E` is unset (`scripts/test`
//! sets it and installs them).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;

#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::x11::{tools_present, Xterm, Xvfb};
use dictum_engine::eval::{normalize, WerCount};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use x11_daemon::{dictate_collecting, typed_line, write_initial_config, Daemon, HOTKEY};

const CLIPS: [&str; 4] = ["jfk.wav", "sns-0870.wav", "sns-0880.wav", "espeak-fox.wav"];

fn sox(args: &[&std::ffi::OsStr]) {
    let ok = Command::new("sox")
        .args(args)
        .status()
        .expect("sox (apt-get install sox)")
        .success();
    assert!(ok, "sox {args:?} failed");
}

/// The four clips as one 16 kHz mono clip, 0.4 s of silence between them.
fn long_clip(dir: &Path) -> PathBuf {
    let gap = dir.join("gap.wav");
    sox(&[
        "-n".as_ref(),
        "-r".as_ref(),
        "16000".as_ref(),
        "-c".as_ref(),
        "1".as_ref(),
        "-b".as_ref(),
        "16".as_ref(),
        gap.as_os_str(),
        "trim".as_ref(),
        "0".as_ref(),
        "0.4".as_ref(),
    ]);
    let mut parts: Vec<PathBuf> = Vec::new();
    for (i, name) in CLIPS.iter().enumerate() {
        let part = dir.join(format!("part{i}.wav"));
        sox(&[
            common::clip(name).as_os_str(),
            "-r".as_ref(),
            "16000".as_ref(),
            "-c".as_ref(),
            "1".as_ref(),
            "-b".as_ref(),
            "16".as_ref(),
            part.as_os_str(),
        ]);
        if i > 0 {
            parts.push(gap.clone());
        }
        parts.push(part);
    }
    let out = dir.join("four-sentences.wav");
    let mut args: Vec<&std::ffi::OsStr> = parts.iter().map(|p| p.as_os_str()).collect();
    args.push(out.as_os_str());
    sox(&args);
    out
}

fn clip_ms(clip: &Path) -> u64 {
    let d = dictum_engine::audio::read_wav(clip).expect("read the joined clip");
    d.samples.len() as u64 / d.channels.max(1) as u64 * 1000 / d.sample_rate as u64
}

fn text<'a>(ev: &'a Value, field: &str) -> &'a str {
    ev[field].as_str().unwrap_or_default()
}

#[test]
fn partial_words_come_while_the_key_is_held_and_lead_to_the_typed_text() {
    if !tools_present() {
        return;
    }
    let clips = tempfile::tempdir().expect("tempdir");
    let clip = long_clip(clips.path());
    let length = clip_ms(&clip);
    assert!(length >= 15_000, "the joined clip is {length} ms");

    let _pulse = common::pulse::Pulse::start();
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum target");
    let dir = tempfile::tempdir().expect("tempdir");
    write_initial_config(dir.path());
    let mut d = Daemon::start(dir.path(), &x);
    let mut seen = 0usize;

    let held = dictate_collecting(&x, &mut d, HOTKEY, &clip, 500);
    let ev = held.dictation().clone();
    let line = typed_line(&term, &x, &mut seen);
    eprintln!("dictation: {ev}\ntyped: {line:?}");
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
    let said: Vec<String> = CLIPS.iter().map(|c| common::pulse::reference(c)).collect();
    let w = WerCount::of(&said.join(" "), &line);
    assert!(w.rate() <= 0.25, "{line:?} ({w:?})");

    // Partials while the key is held, one before half the clip had played (playback starts
    // 100 ms after the press).
    let half = Duration::from_millis(100 + length / 2);
    let held_partials: Vec<&(Duration, Value)> = held
        .while_held
        .iter()
        .filter(|(_, e)| e["event"] == "partial")
        .collect();
    assert!(
        held_partials.iter().any(|(at, _)| *at < half),
        "no partial before {half:?}: {:?}",
        held.while_held
    );

    // Numbered 1, 2, 3… for this dictation; each one's committed words start the typed text.
    let partials = held.all("partial");
    let finale = normalize(text(&ev, "text"));
    let mut committed_words = 0;
    for (i, p) in partials.iter().enumerate() {
        assert_eq!(p["seq"], i as u64 + 1, "{p}");
        assert_eq!(p["id"], ev["id"], "{p}");
        let committed = normalize(text(p, "committed"));
        assert!(
            finale.starts_with(&committed),
            "committed words {committed:?} do not start the final {finale:?}"
        );
        assert!(
            committed.len() >= committed_words,
            "committed words went back: {p}"
        );
        committed_words = committed.len();
    }
    assert!(
        committed_words > 0,
        "no words were committed while the key was held: {partials:?}"
    );

    // Nothing about this dictation after its event.
    let later = d.drain(Duration::from_millis(1500));
    assert!(
        !later.iter().any(|e| e["event"] == "partial"),
        "a partial after the dictation: {later:?}"
    );
}
