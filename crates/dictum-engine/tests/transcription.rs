//! Real whisper on real speech: accuracy, silence and noise, history rows, audio formats.

mod common;

use dictum_engine::config::Config;
use dictum_engine::eval::WerCount;
use dictum_engine::pipeline::Engine;
use dictum_engine::store::{History, Outcome, Query};

fn engine() -> Engine {
    let mut config = Config::default();
    config.stt.model = common::tiny_model().display().to_string();
    Engine::new(config, vec![])
}

#[test]
fn dev_clips_wer_within_bound_and_no_speech_gives_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("h.sqlite3")).expect("history");
    let mut engine = engine();
    let mut total = WerCount::default();
    let mut report = String::new();
    for (file, reference) in common::refs() {
        let u = engine
            .transcribe_file(&history, &common::clip(&file))
            .expect("stored");
        assert!(u.error.is_none(), "{file}: {:?}", u.error);
        let text = u.entry.text.clone().unwrap_or_default();
        if reference.is_empty() {
            assert_eq!(text, "", "{file}: no speech must type nothing");
            assert_eq!(u.entry.outcome, Outcome::NoSpeech, "{file}");
            continue;
        }
        assert_eq!(u.entry.outcome, Outcome::Ok, "{file}");
        let wer = WerCount::of(&reference, &text);
        report.push_str(&format!("{file}: {:.0}% {text:?}\n", wer.rate() * 100.0));
        total = total.plus(wer);
    }
    eprintln!("{report}corpus WER {:.1}%", total.rate() * 100.0);
    assert!(total.words > 80, "refs too small: {total:?}");
    assert!(
        total.rate() <= 0.15,
        "corpus WER {:.1}% > 15%:\n{report}",
        total.rate() * 100.0
    );
}

#[test]
fn digital_silence_gives_nothing_and_is_stored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wav = dir.path().join("silence.wav");
    common::write_wav(&wav, &vec![0.0; 48_000]);
    let history = History::open(&dir.path().join("h.sqlite3")).expect("history");
    let u = engine().transcribe_file(&history, &wav).expect("stored");
    assert_eq!(u.entry.outcome, Outcome::NoSpeech);
    assert_eq!(u.entry.text.as_deref(), Some(""));
    let stored = history
        .get(u.entry.id.expect("id"))
        .expect("get")
        .expect("row");
    assert_eq!(stored.outcome, Outcome::NoSpeech);
    assert_eq!(stored.audio_ms, Some(3000));
    assert!(stored.vad_ms.expect("vad timed") > 0.0);
    assert!(stored.stt_ms.is_none(), "whisper must not run on silence");
}

#[test]
fn history_rows_carry_stage_timings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("h.sqlite3")).expect("history");
    let mut engine = engine();
    let first = engine
        .transcribe_file(&history, &common::clip("goforward.wav"))
        .expect("stored");
    let second = engine
        .transcribe_file(&history, &common::clip("cards-001.wav"))
        .expect("stored");
    let rows = history.list(&Query::default()).expect("list");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].id, second.entry.id, "newest first");
    for row in &rows {
        assert_eq!(row.outcome, Outcome::Ok);
        for (name, v) in [
            ("decode", row.decode_ms),
            ("vad", row.vad_ms),
            ("stt", row.stt_ms),
            ("total", row.total_ms),
        ] {
            assert!(v.expect(name) > 0.0, "{name} timing missing: {row:?}");
        }
        assert!(row.resample_ms.is_some());
        assert_eq!(row.device.as_deref(), Some("cpu"));
        assert!(row.model.as_deref().unwrap_or("").contains("tiny.en"));
        assert!(row.total_ms >= row.stt_ms);
        assert!(row.llm_reloaded.is_none() && row.llm_tokens_per_sec.is_none());
        assert!(row.app_class.is_none() && row.window_title.is_none());
    }
    // The VRAM plan ran before the load and says why the model is on the CPU here.
    let plan = engine.plan.as_ref().expect("planned before loading");
    assert_eq!(plan.device, "cpu");
    if cfg!(feature = "cuda") {
        assert!(!plan.reason.is_empty());
    } else {
        assert!(plan.reason.contains("no CUDA support"), "{plan:?}");
    }
    // The model loads once per engine: only the first row paid for it.
    assert!(first.entry.model_load_ms.expect("first load") > 0.0);
    assert!(first.entry.warmup_ms.expect("first warm-up") > 0.0);
    assert!(second.entry.model_load_ms.is_none());
    // Full-text search over what was said.
    let hits = history
        .list(&Query {
            limit: 10,
            search: Some("forwa".into()),
        })
        .expect("search");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].id, first.entry.id);
}

#[test]
fn wav_formats_rates_and_channels_all_transcribe() {
    let src = hound::WavReader::open(common::clip("goforward.wav")).expect("open");
    let spec = src.spec();
    assert_eq!((spec.sample_rate, spec.channels), (16_000, 1));
    let samples: Vec<f32> = src
        .into_samples::<i16>()
        .map(|s| s.expect("sample") as f32 / 32768.0)
        .collect();
    // Upsample crudely to 48 kHz (repeat) and make stereo / 24-bit / float variants.
    let up: Vec<f32> = samples.iter().flat_map(|&s| [s, s, s]).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let variants: Vec<(&str, hound::WavSpec, Vec<f32>)> = vec![
        (
            "f32_48k_stereo.wav",
            hound::WavSpec {
                channels: 2,
                sample_rate: 48_000,
                bits_per_sample: 32,
                sample_format: hound::SampleFormat::Float,
            },
            up.iter().flat_map(|&s| [s, s]).collect(),
        ),
        (
            "i24_16k_mono.wav",
            hound::WavSpec {
                channels: 1,
                sample_rate: 16_000,
                bits_per_sample: 24,
                sample_format: hound::SampleFormat::Int,
            },
            samples.clone(),
        ),
        (
            "i32_48k_4ch.wav",
            hound::WavSpec {
                channels: 4,
                sample_rate: 48_000,
                bits_per_sample: 32,
                sample_format: hound::SampleFormat::Int,
            },
            up.iter().flat_map(|&s| [s, s, s, s]).collect(),
        ),
    ];
    let history = History::open(&dir.path().join("h.sqlite3")).expect("history");
    let mut engine = engine();
    for (name, spec, data) in variants {
        let path = dir.path().join(name);
        let mut w = hound::WavWriter::create(&path, spec).expect("create");
        for s in data {
            match (spec.sample_format, spec.bits_per_sample) {
                (hound::SampleFormat::Float, _) => w.write_sample(s).expect("write"),
                (_, bits) => w
                    .write_sample((s * ((1i64 << (bits - 1)) - 1) as f32) as i32)
                    .expect("write"),
            }
        }
        w.finalize().expect("finalize");
        let u = engine.transcribe_file(&history, &path).expect("stored");
        let text = u.entry.text.unwrap_or_default();
        let wer = WerCount::of("go forward ten meters", &text);
        assert!(wer.errors == 0, "{name}: {text:?}");
        assert_eq!(u.entry.audio_ms, Some(2786), "{name}");
    }
}

#[test]
fn gpu_failures_are_redone_on_cpu_and_then_pinned_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("h.sqlite3")).expect("history");
    let mut engine = engine();
    engine.ensure_model().expect("model");
    let speech = engine.resilient_mut().expect("loaded");
    speech.simulate_gpu_faults(dictum_engine::stt::MAX_GPU_FAILURES);
    for i in 0..dictum_engine::stt::MAX_GPU_FAILURES + 1 {
        let u = engine
            .transcribe_file(&history, &common::clip("goforward.wav"))
            .expect("stored");
        assert_eq!(u.entry.outcome, Outcome::Ok, "utterance {i} delivered");
        assert_eq!(
            WerCount::of(
                "go forward ten meters",
                u.entry.text.as_deref().unwrap_or("")
            )
            .errors,
            0
        );
        assert_eq!(u.entry.device.as_deref(), Some("cpu"));
        assert_eq!(
            u.entry.error_kind.as_deref(),
            Some("gpu_fallback"),
            "row says what happened"
        );
    }
    assert!(engine.resilient_mut().expect("loaded").is_cpu_only());
    let rows = history.list(&Query::default()).expect("list");
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.outcome == Outcome::Ok));
}

/// A live stretch holding the end of one sentence, a 0.4 s pause and a whole second sentence:
/// tiny can stop its text at the pause and drop the second sentence, with a segment whose
/// timestamps span the whole stretch (seen live with 6 s commit stretches: this stretch came
/// back as its first 8 words). `transcribe_segment` redoes a stretch that says far too little
/// for its speech in two halves.
#[test]
fn a_sentence_after_a_pause_inside_a_live_stretch_is_not_dropped() {
    let decode = |name: &str| {
        dictum_engine::audio::decode_16k(&common::clip(name), 60)
            .expect("clip")
            .samples
    };
    let jfk = decode("jfk.wav");
    // From jfk's pause before "ask what you can do for your country".
    let from = dictum_engine::audio::cut::quietest_point(&jfk, 7 * 16_000, 9 * 16_000);
    let mut stretch = jfk[from..].to_vec();
    stretch.extend(std::iter::repeat_n(0.0, 16_000 * 4 / 10));
    let sns = decode("sns-0870.wav");
    let loud = |v: &&f32| v.abs() > 0.01;
    let first = sns.iter().position(|v| loud(&v)).unwrap_or(0);
    stretch.extend_from_slice(&sns[first.saturating_sub(800)..]);
    let mut engine = engine();
    let seg = engine
        .transcribe_segment(
            &stretch,
            "And so my fellow Americans ask not what your country can do for you.",
        )
        .expect("transcribed");
    let text = seg.text.to_lowercase();
    eprintln!("{:.1} s of speech: {text:?}", seg.speech_ms as f64 / 1000.0);
    assert!(
        text.contains("your country"),
        "first sentence lost: {text:?}"
    );
    assert!(
        text.contains("dashwood") && text.contains("for them"),
        "the sentence after the pause was dropped: {text:?}"
    );
}

/// Hands-free listens all the time, so what a room makes besides speech must type nothing:
/// music, keyboard clicks, a cough. Each goes through the hands-free cutter (the VAD that opens
/// dictations) and every dictation it opens through the live transcription step with its
/// silence/noise guard (`Engine::transcribe_segment`). The same path must still hear speech:
/// jfk.wav, as a control, comes out as words.
#[test]
fn hands_free_types_nothing_for_music_keyboard_clicks_or_a_cough() {
    use dictum_engine::dictation::hands_free::{Cut, Cutter};
    let rate = 16_000usize;
    let mut seed = 0x2545_f491_u32;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as f32 / u32::MAX as f32 * 2.0 - 1.0
    };
    // Music: a melody of plucked notes with harmonics and a held chord under it, 8 s.
    let notes = [220.0f32, 277.2, 329.6, 440.0, 392.0, 329.6, 293.7, 246.9];
    let music: Vec<f32> = (0..rate * 8)
        .map(|i| {
            let t = i as f32 / rate as f32;
            let n = notes[(t / 0.35) as usize % notes.len()];
            let since = t % 0.35;
            let env = (-since * 6.0).exp();
            let pi2 = std::f32::consts::TAU;
            let melody: f32 = (1..=4)
                .map(|h| (pi2 * n * h as f32 * t).sin() / h as f32)
                .sum();
            let chord = [110.0f32, 164.8, 220.0]
                .iter()
                .map(|f| (pi2 * f * t).sin())
                .sum::<f32>();
            0.25 * env * melody + 0.05 * chord
        })
        .collect();
    // Typing: short decaying clicks 80-250 ms apart, 8 s.
    let mut keys = vec![0.0f32; rate * 8];
    let mut at = 0usize;
    while at + rate / 100 < keys.len() {
        for k in 0..rate * 8 / 1000 {
            keys[at + k] = 0.4 * rnd() * (-(k as f32) / 20.0).exp();
        }
        at += rate * (80 + (rnd().abs() * 170.0) as usize) / 1000;
    }
    // A cough: 350 ms of noise, loud then fading, between silences.
    let mut cough = vec![0.0f32; rate];
    for (k, s) in cough
        .iter_mut()
        .skip(rate / 4)
        .take(rate * 35 / 100)
        .enumerate()
    {
        *s = 0.5 * rnd() * (-(k as f32) / (rate as f32 * 0.08)).exp();
    }
    cough.extend(std::iter::repeat_n(0.0, rate));
    let jfk = dictum_engine::audio::decode_16k(&common::clip("jfk.wav"), 60)
        .expect("clip")
        .samples;

    let mut engine = engine();
    let config = Config::default();
    let mut hear = |name: &str, audio: &[f32]| -> (usize, String) {
        let mut cutter = Cutter::new(700, config.dictation.preroll_ms, config.vad.threshold);
        let mut opened = 0;
        let mut texts = Vec::new();
        let mut open: Option<Vec<f32>> = None;
        let mut silence = audio.to_vec();
        silence.extend(std::iter::repeat_n(0.0, rate * 2));
        for chunk in silence.chunks(rate / 50) {
            for cut in cutter.push(chunk) {
                match cut {
                    Cut::Open(s) => {
                        opened += 1;
                        open = Some(s);
                    }
                    Cut::More(s) => open.get_or_insert_with(Vec::new).extend(s),
                    Cut::Close => {
                        if let Some(utt) = open.take() {
                            let seg = engine.transcribe_segment(&utt, "").expect("transcribe");
                            texts.push(seg.text);
                        }
                    }
                }
            }
        }
        let text = texts.join(" ").trim().to_string();
        eprintln!("{name}: {opened} dictation(s) opened, text {text:?}");
        (opened, text)
    };
    for (name, audio) in [("music", &music), ("keyboard", &keys), ("cough", &cough)] {
        let (_, text) = hear(name, audio);
        assert!(text.is_empty(), "{name} typed {text:?}");
    }
    let (opened, text) = hear("jfk", &jfk);
    assert!(opened >= 1, "the speech opened no dictation");
    let w = WerCount::of(&common::pulse::reference("jfk.wav"), &text);
    assert!(
        w.rate() <= 0.2,
        "jfk through the hands-free path: {text:?} ({w:?})"
    );
}
