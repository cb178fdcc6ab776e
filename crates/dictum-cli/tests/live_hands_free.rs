//! Hands-free, end to end as a user would: `dictum run` in hands-free mode on a real X display
//! (Xvfb) with a real sound server (a private PulseAudio whose virtual microphone is fed by
//! `paplay`). One press of the real hotkey starts listening; a clip built here with sox plays:
//! five sentences from the dev clips, 1 s of silence between them, and 10 s of room noise
//! between the second and the third. Each sentence must become its own history row and be
//! typed into a real xterm, in order; the noise must give nothing (no row, nothing typed);
//! listening must stop by itself after `hands_free_idle_s` without speech; `hands-free on` /
//! `hands-free off` on the command input must start and stop it; and when the microphone
//! goes away while listening and comes back, listening must resume by itself (without a
//! stream of notices meanwhile) and type what is said next.
//!
//! The room noise: sox brown noise at -40 dBFS RMS (a fan or a busy room, 13 dB under the
//! speech) with `alsa-Noise.wav` (a white-noise burst) looped under it at -45 dBFS RMS.
//!
//! `DICTUM_TEST_HF_PAUSE_MS` overrides `hands_free_pause_ms` (700): with 5000 the 1 s gaps no
//! longer cut, and this test fails (fewer rows) — how its power to fail was checked.
//!
//! `soak_hands_free` (ignored; `scripts/soak-hands-free` runs it) keeps hands-free listening
//! for `DICTUM_HF_SOAK_S` seconds (3600) over a looping playlist of the same sentences and
//! noise, samples the daemon's RSS every minute, counts dictations and errors, and writes a
//! TSV (`DICTUM_HF_SOAK_OUT`) and its summary (`.summary`).
//!
//! Skipped only when the tools are missing and `DICTUM_REQUIRE_E2E` is unset (`scripts/test`
//! sets it and installs them).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;

#[path = "support/speech.rs"]
mod speech;
#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::pulse::{play_file_and_wait, reference};
use common::x11::{on_path, tools_present};
use dictum_engine::eval::WerCount;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use x11_daemon::{rss_mb, typed_line, Daemon, Live, HOTKEY};

/// The sentences, in the order played, and the word error rate each may have (tiny model).
/// Over the five: [`TOTAL_WER`]. Each text must also be nearer its own sentence than any
/// other (what catches a sentence typed as another's row, whatever whisper made of it).
///
/// espeak's synthetic fox clip sits at the edge of what tiny hears, and where it starts in
/// whisper's window changes the words: `dictum transcribe` of the file behind 0–600 ms of
/// silence (20 ms steps) gave 4 to 8 errors in 20 ("round-fuck stump, silver malaisy dog …
/// team of Friday"), and one CI run of this test 9 ("fine and steam-life ride day"). Its
/// bound is therefore 0.5: it fails when more than half the words are wrong or missing.
const SENTENCES: [(&str, f64); 5] = [
    ("sns-0880.wav", 0.4),
    ("goforward.wav", 0.35),
    ("espeak-fox.wav", 0.5),
    ("cards-002.wav", 0.5),
    ("sns-0870.wav", 0.3),
];
/// With the fox clip at its worst (9 errors) and the others as usual, the five are at ~0.22.
const TOTAL_WER: f64 = 0.3;
/// Listening stops after this long without speech (longer than the noise stretch).
const IDLE_S: u64 = 15;

fn sox(args: &[&str]) {
    let out = Command::new("sox").args(args).output().expect("run sox");
    assert!(
        out.status.success(),
        "sox {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The clips' format for sox: 16 kHz, mono, 16 bits.
const FMT: [&str; 6] = ["-r", "16000", "-c", "1", "-b", "16"];

/// `dir/name` made by sox from `input` (`-n`: from nothing) with `effects`, in [`FMT`].
fn sox_to(input: &str, dir: &Path, name: &str, effects: &[&str]) -> PathBuf {
    let out = dir.join(name);
    sox(&[&[input][..], &FMT, &[out.to_str().expect("utf-8")], effects].concat());
    out
}

/// 10 s of room noise in `dir` (see the header).
fn build_noise(dir: &Path) -> PathBuf {
    // Brown noise normalised to -40 dBFS RMS (sox `gain -n` works on peaks: measured RMS of
    // sox brown noise sits ~12 dB under its peak, so -28 dB peak ≈ -40 dB RMS).
    let synth = ["synth", "10", "brownnoise", "gain", "-n", "-28"];
    let brown = sox_to("-n", dir, "brown.wav", &synth);
    // alsa-Noise.wav is -30 dBFS RMS: -15 dB puts it at -45; repeated to cover 10 s.
    let alsa = common::clip("alsa-Noise.wav");
    let effects = ["gain", "-15", "repeat", "7", "trim", "0", "10"];
    let burst = sox_to(alsa.to_str().expect("utf-8"), dir, "burst.wav", &effects);
    let noise = dir.join("noise.wav");
    sox(&[
        "-m",
        brown.to_str().expect("utf-8"),
        burst.to_str().expect("utf-8"),
        noise.to_str().expect("utf-8"),
    ]);
    noise
}

/// Builds the played clip in `dir`: sentence, 1 s, sentence, 1 s, 10 s of noise, 1 s,
/// sentence, 1 s, sentence, 1 s, sentence, 1 s.
fn build_clip(dir: &Path) -> PathBuf {
    let gap = sox_to("-n", dir, "gap.wav", &["trim", "0", "1"]);
    let noise = build_noise(dir);
    let mut parts: Vec<PathBuf> = Vec::new();
    for (i, (name, _)) in SENTENCES.iter().enumerate() {
        let s = dir.join(format!("s{i}.wav"));
        sox(&[
            common::clip(name).to_str().expect("utf-8"),
            "-r",
            "16000",
            "-c",
            "1",
            "-b",
            "16",
            s.to_str().expect("utf-8"),
        ]);
        parts.push(s);
        parts.push(gap.clone());
        if i == 1 {
            parts.push(noise.clone());
            parts.push(gap.clone());
        }
    }
    let out = dir.join("hands-free.wav");
    let mut args: Vec<&str> = parts.iter().map(|p| p.to_str().expect("utf-8")).collect();
    args.push(out.to_str().expect("utf-8"));
    sox(&args);
    out
}

fn clip_seconds(path: &Path) -> f64 {
    let d = dictum_engine::audio::read_wav(path).expect("built clip");
    d.samples.len() as f64 / d.channels.max(1) as f64 / d.sample_rate as f64
}

/// The history rows, newest first.
fn history(dir: &Path) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(["history", "--json", "--limit", "0"])
        .env("DICTUM_DATA_DIR", dir)
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .output()
        .expect("dictum history");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).expect("history json")
}

/// Events until a notice containing `needle` (within `within`); returns the others.
fn until_notice(d: &mut Daemon, needle: &str, within: Duration) -> Vec<Value> {
    let mut seen = d.until_where(&format!("notice {needle:?}"), within, |ev| {
        ev["event"] == "notice" && ev["message"].as_str().unwrap_or_default().contains(needle)
    });
    seen.pop();
    seen
}

/// Events up to and including the state `state` (within `within`).
fn until_state(d: &mut Daemon, state: &str, within: Duration) -> Vec<Value> {
    d.until_where(&format!("state {state:?}"), within, |ev| {
        ev["event"] == "state" && ev["state"] == state
    })
}

#[test]
fn hands_free_types_each_sentence_as_its_own_dictation_and_nothing_for_room_noise() {
    if !(tools_present() && common::tools_ready(&["sox"], " (sudo apt install sox)")) {
        return;
    }
    let pause_ms: u32 = std::env::var("DICTUM_TEST_HF_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(700);
    let live = Live::start().expect("tools checked above");
    let (x, dir) = (&live.x, live.path());
    let term = live.term("Dictum target");
    let clip = build_clip(dir);
    let clip_s = clip_seconds(&clip);
    assert!((27.0..40.0).contains(&clip_s), "built clip is {clip_s} s");
    live.append_config(&format!(
        "\n[dictation]\nmode = \"hands-free\"\nhands_free_pause_ms = {pause_ms}\n\
         hands_free_idle_s = {IDLE_S}\ninput_device = \"dictum_mic\"\n"
    ));
    let mut d = live.daemon();

    // 1. One press of the real hotkey starts listening (the release means nothing).
    x.xdotool(&["key", HOTKEY]);
    let before = until_notice(&mut d, "hands-free on", Duration::from_secs(10));
    assert!(
        before.iter().all(|e| e["event"] != "dictation"),
        "{before:?}"
    );
    let state = d.next("state", Duration::from_secs(5));
    assert_eq!(state["state"], "listening", "{state}");

    // 2. The clip: five dictations, in order, and nothing for the noise.
    let started = Instant::now();
    play_file_and_wait(&clip);
    let played = started.elapsed();
    let mut got: Vec<Value> = Vec::new();
    let mut states: Vec<String> = Vec::new();
    let idle_by = Duration::from_secs(IDLE_S + 40);
    let mut evs = until_notice(&mut d, "hands-free stopped", idle_by);
    let stopped_after = started.elapsed();
    // Idle time counts from the last speech, so on a slow machine the last sentence may still
    // be transcribed when listening stops: it is still typed, then the state goes idle.
    evs.extend(until_state(&mut d, "idle", Duration::from_secs(60)));
    for ev in evs {
        match ev["event"].as_str() {
            Some("dictation") => got.push(ev),
            Some("state") => states.push(ev["state"].as_str().unwrap_or_default().into()),
            _ => {}
        }
    }
    assert_eq!(
        states.last().map(String::as_str),
        Some("idle"),
        "{states:?}"
    );
    eprintln!(
        "played {:.1} s; idle stop {:.1} s after the start; states {states:?}",
        played.as_secs_f64(),
        stopped_after.as_secs_f64()
    );
    for ev in &got {
        eprintln!(
            "#{} {} audio {} ms, text ready {:.0} ms after the pause: {:?}",
            ev["id"], ev["outcome"], ev["audio_ms"], ev["release_to_text_ms"], ev["text"]
        );
    }
    assert_eq!(
        got.len(),
        SENTENCES.len(),
        "one dictation a sentence, none for the noise: {got:#?}"
    );
    let rows = history(dir);
    assert_eq!(rows.len(), SENTENCES.len(), "one row a sentence: {rows:#?}");
    let mut total = WerCount::default();
    let mut texts = Vec::new();
    for (ev, (name, bound)) in got.iter().zip(SENTENCES) {
        assert_eq!(ev["outcome"], "ok", "{ev}");
        assert_eq!(ev["inject_method"], "x11_type", "{ev}");
        let text = ev["text"].as_str().unwrap_or_default().to_string();
        let w = WerCount::of(&reference(name), &text);
        total = total.plus(w);
        assert!(w.rate() <= bound, "{name}: {text:?} ({w:?})");
        for (other, _) in SENTENCES.iter().filter(|(o, _)| *o != name) {
            let ow = WerCount::of(&reference(other), &text);
            assert!(
                w.rate() < ow.rate(),
                "{name}'s row is nearer {other}: {text:?} ({w:?} against {ow:?})"
            );
        }
        texts.push(text);
    }
    eprintln!("WER over the five: {:.3}", total.rate());
    assert!(total.rate() <= TOTAL_WER, "{total:?}");
    let ids: Vec<i64> = got.iter().filter_map(|e| e["id"].as_i64()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "in order: {ids:?}");
    let mut seen = 0usize;
    let line = typed_line(&term, x, &mut seen);
    assert_eq!(
        line.trim_end(),
        texts.join(" "),
        "typed, in the order spoken"
    );
    // Listening and recording were visible (and it ended idle, above).
    assert!(states.iter().any(|s| s == "recording"), "{states:?}");
    assert!(states.iter().any(|s| s == "listening"), "{states:?}");
    // The idle stop came after the clip and the idle time, not during the noise.
    assert!(
        stopped_after >= played + Duration::from_secs(IDLE_S) - Duration::from_secs(2),
        "stopped {stopped_after:?} after the start, clip {played:?}"
    );

    // 3. The command input: on, then off (what the tray and `dictum ctl` send).
    d.send("hands-free on");
    until_notice(&mut d, "hands-free on", Duration::from_secs(10));
    d.send("hands-free off");
    let rest = until_notice(&mut d, "hands-free off", Duration::from_secs(10));
    assert!(rest.iter().all(|e| e["event"] != "dictation"), "{rest:?}");
    d.no_dictation(Duration::from_millis(500));
    assert_eq!(history(dir).len(), SENTENCES.len());

    // 4. The microphone goes away while listening and comes back: listening resumes by
    //    itself, with no stream of notices meanwhile.
    d.send("hands-free on");
    until_notice(&mut d, "hands-free on", Duration::from_secs(10));
    live.pulse
        .pactl(&["unload-module", "module-virtual-source"]);
    until_notice(&mut d, "microphone is gone", Duration::from_secs(15));
    let gone_at = d.notices.len();
    let quiet_until = Instant::now() + Duration::from_secs(6);
    while let Ok(ev) = d
        .events
        .recv_timeout(quiet_until.saturating_duration_since(Instant::now()))
    {
        assert_ne!(ev["event"], "dictation", "{ev}");
        if ev["event"] == "notice" {
            d.notices
                .push(ev["message"].as_str().unwrap_or_default().to_string());
        }
    }
    let meanwhile = &d.notices[gone_at..];
    assert!(meanwhile.len() <= 2, "notices while gone: {meanwhile:?}");
    live.pulse.pactl(&[
        "load-module",
        "module-virtual-source",
        "source_name=dictum_mic",
        "master=dictum_sink.monitor",
    ]);
    until_notice(&mut d, "listening again", Duration::from_secs(15));
    std::thread::sleep(Duration::from_millis(500));
    play_file_and_wait(&common::clip("goforward.wav"));
    let back = d.next("dictation", Duration::from_secs(30));
    eprintln!("after the microphone came back: {back}");
    assert_eq!(back["outcome"], "ok", "{back}");
    let text = back["text"].as_str().unwrap_or_default();
    let w = WerCount::of(&reference("goforward.wav"), text);
    assert!(w.rate() <= 0.35, "{text:?} ({w:?})");
    d.send("hands-free off");
    until_notice(&mut d, "hands-free off", Duration::from_secs(10));

    // 5. The spoken command "stop dictation" ends listening (voice commands, issue 16).
    if speech::tools() {
        let clips = tempfile::tempdir().expect("tempdir");
        let stop = speech::speak(clips.path(), "stop", "Stop dictation.");
        d.send("hands-free on");
        until_notice(&mut d, "hands-free on", Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(500));
        play_file_and_wait(&stop);
        let rest = until_notice(
            &mut d,
            "hands-free off (\"stop dictation\")",
            Duration::from_secs(30),
        );
        // The command's own dictation completes after it took effect.
        let said = match rest.into_iter().find(|e| e["event"] == "dictation") {
            Some(ev) => ev,
            None => d.next("dictation", Duration::from_secs(10)),
        };
        assert_eq!(
            said["commands"],
            serde_json::json!(["stop dictation"]),
            "{said}"
        );
        assert_eq!(said["text"], "", "{said}");
    }
}

/// What the soak has seen so far.
#[derive(Default)]
struct Tally {
    dictations: usize,
    ok: usize,
    no_speech: usize,
    /// Rows with outcome error, typing failures, and notices that report a failure.
    errors: usize,
    error_samples: Vec<String>,
}

impl Tally {
    fn take(&mut self, ev: &Value) {
        match ev["event"].as_str() {
            Some("dictation") => {
                self.dictations += 1;
                match ev["outcome"].as_str() {
                    Some("ok") => self.ok += 1,
                    Some("no_speech") => self.no_speech += 1,
                    _ => self.error(format!("dictation {ev}")),
                }
                if !ev["inject_error"].is_null() {
                    self.error(format!("typing: {}", ev["inject_error"]));
                }
            }
            Some("notice") => {
                let m = ev["message"].as_str().unwrap_or_default();
                let failure = ["fail", "error", "could not", "cannot", "stuck", "gone"];
                if failure.iter().any(|f| m.contains(f)) {
                    self.error(format!("notice: {m}"));
                }
            }
            _ => {}
        }
    }

    fn error(&mut self, what: String) {
        eprintln!("soak: error: {what}");
        self.errors += 1;
        if self.error_samples.len() < 5 {
            self.error_samples.push(what);
        }
    }
}

/// One hour (`DICTUM_HF_SOAK_S`) of hands-free listening over a looping playlist: RSS every
/// minute, dictations, errors; fails when RSS after warm-up leaves a ±5 MB band, a sentence
/// is lost, noise gives a dictation, or anything fails.
#[test]
#[ignore]
fn soak_hands_free() {
    let secs: u64 = std::env::var("DICTUM_HF_SOAK_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3600);
    assert!(
        tools_present(),
        "the soak needs Xvfb, xterm, xdotool, xclip"
    );
    assert!(on_path("sox"), "the soak needs sox");
    let live = Live::start().expect("tools checked above");
    let dir = live.path();
    let _term = live.term("Dictum target");
    let noise = build_noise(dir);
    // Never stops by itself: the soak ends it.
    live.append_config("\n[dictation]\nmode = \"hands-free\"\nhands_free_idle_s = 0\n");
    let mut d = live.daemon();
    let pid = d.child.id();
    d.send("hands-free on");
    until_notice(&mut d, "hands-free on", Duration::from_secs(10));
    // The playlist: the five sentences with the noise after the second, 1 s apart.
    let mut playlist: Vec<(PathBuf, bool)> = SENTENCES
        .iter()
        .map(|(n, _)| (common::clip(n), true))
        .collect();
    playlist.insert(2, (noise, false));
    let mut tally = Tally::default();
    let mut rows = vec![
        "minute\telapsed_s\trss_mb\tsentences_played\tdictations\tok\tno_speech\terrors"
            .to_string(),
    ];
    let mut rss = Vec::new();
    let mut played = 0usize;
    let mut noise_played = 0usize;
    let started = Instant::now();
    let mut next_sample = started;
    let mut minute = 0u64;
    let drain = |d: &mut Daemon, tally: &mut Tally| {
        while let Ok(ev) = d.events.try_recv() {
            tally.take(&ev);
        }
    };
    'run: loop {
        for (clip, speech) in &playlist {
            if Instant::now() >= next_sample {
                drain(&mut d, &mut tally);
                let m = rss_mb(pid);
                rss.push(m);
                rows.push(format!(
                    "{minute}\t{:.0}\t{m:.1}\t{played}\t{}\t{}\t{}\t{}",
                    started.elapsed().as_secs_f64(),
                    tally.dictations,
                    tally.ok,
                    tally.no_speech,
                    tally.errors
                ));
                eprintln!("soak: {}", rows.last().map(String::as_str).unwrap_or(""));
                minute += 1;
                next_sample += Duration::from_secs(60);
            }
            if started.elapsed() >= Duration::from_secs(secs) {
                break 'run;
            }
            play_file_and_wait(clip);
            if *speech {
                played += 1;
            } else {
                noise_played += 1;
            }
            std::thread::sleep(Duration::from_secs(1));
            drain(&mut d, &mut tally);
        }
    }
    // The last dictations, then off.
    let deadline = Instant::now() + Duration::from_secs(60);
    while tally.dictations < played && Instant::now() < deadline {
        if let Ok(ev) = d.events.recv_timeout(Duration::from_millis(500)) {
            tally.take(&ev);
        }
    }
    let end_rss = rss_mb(pid);
    d.send("hands-free off");
    let rest = until_notice(&mut d, "hands-free off", Duration::from_secs(30));
    for ev in &rest {
        tally.take(ev);
    }
    drop(d);
    let rows_in_history = history(dir).len();
    // Warm-up: the first 10 minutes (a third of a short run).
    let warm = (rss.len() / 3)
        .clamp(1, 10)
        .min(rss.len().saturating_sub(1));
    let after = &rss[warm..];
    let mut sorted = after.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN);
    let lo = after.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = after.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let band = (hi - median).max(median - lo);
    let elapsed = started.elapsed().as_secs_f64();
    let errors = if tally.error_samples.is_empty() {
        String::new()
    } else {
        format!(" ({})", tally.error_samples.join("; "))
    };
    let summary = format!(
        "hands-free soak: {elapsed:.0} s listening, {played} sentences and {noise_played} \
         noise stretches (10 s) played; {} dictations ({} ok, {} no_speech), \
         {rows_in_history} history rows; errors {}{errors}; RSS {} samples: {:.1} MB at the \
         start, {median:.1} MB median after {warm} min of warm-up, {lo:.1}-{hi:.1} MB after \
         it (±{band:.1} MB around the median), {end_rss:.1} MB at the end",
        tally.dictations,
        tally.ok,
        tally.no_speech,
        tally.errors,
        rss.len(),
        rss.first().copied().unwrap_or(f64::NAN),
    );
    eprintln!("{summary}");
    if let Ok(out) = std::env::var("DICTUM_HF_SOAK_OUT") {
        std::fs::write(&out, rows.join("\n") + "\n").expect("write soak rows");
        std::fs::write(format!("{out}.summary"), summary.clone() + "\n").expect("write summary");
    }
    assert_eq!(tally.errors, 0, "{summary}");
    assert_eq!(tally.ok, played, "one dictation a sentence: {summary}");
    assert_eq!(tally.dictations, played, "nothing for the noise: {summary}");
    assert_eq!(rows_in_history, played, "one row a sentence: {summary}");
    assert!(
        band <= 5.0,
        "RSS leaves the ±5 MB band after warm-up: {summary}"
    );
}
