//! `dictum bench live`: the accuracy of the live path on the dev clips, in-process and
//! deterministic. Each clip is fed as if it were being spoken (20 ms pieces through the real
//! segmenter); its commits are transcribed with the text before them as the prompt, as
//! the worker does; the key goes up `tail` ms after the clip's last word; the tail is the
//! speculation still valid at the release (or, when none is, everything after the last
//! commit including the post-roll). The clip is recorded into the controller's own
//! [`Utterance`], whose release (post-roll, typed before it or not) is the one the
//! controller's `stop` applies; the tail is the worker's rule, `release::tail_pass`. Beside it, one pass over the whole clip (`dictum
//! transcribe`'s path) in the same run. Timing is not measured here (`scripts/bench-live` does that from outside).

use dictum_engine::config::Config;
use dictum_engine::dictation::release::{self, TailPass};
use dictum_engine::dictation::segmenter::Decision;
use dictum_engine::dictation::utterance::Utterance;
use dictum_engine::eval::WerCount;
use dictum_engine::pipeline::Engine;
use dictum_engine::SAMPLE_RATE;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// A clip with speech and its reference text.
pub struct LiveClip<'a> {
    pub name: &'a str,
    pub reference: &'a str,
    pub samples: &'a [f32],
}

/// Where the last word ends: just after the last sample above 0.3 % of full scale, the
/// threshold `scripts/bench-live` trims the clips with (sox `silence ... 0.3%`).
fn last_word_end(samples: &[f32]) -> usize {
    samples
        .iter()
        .rposition(|v| v.abs() > 0.003)
        .map_or(samples.len(), |i| i + 1)
}

/// Whisper's text for a stretch with a prompt, and the ms the pass took, remembered: the
/// tails of one clip share the commits made before their releases, and a pass over the same
/// samples with the same prompt gives the same text (greedy decoding), so each is computed
/// once.
pub(crate) type Memo = HashMap<(usize, usize, String), (String, f64)>;

fn pass(
    engine: &mut Engine,
    memo: &mut Memo,
    audio: &[f32],
    range: std::ops::Range<usize>,
    context: &str,
) -> anyhow::Result<(String, f64)> {
    let key = (range.start, range.end, context.to_string());
    if let Some(done) = memo.get(&key) {
        return Ok(done.clone());
    }
    let t = std::time::Instant::now();
    let text = engine.transcribe_segment(&audio[range], context)?.text;
    let done = (text, t.elapsed().as_secs_f64() * 1000.0);
    memo.insert(key, done.clone());
    Ok(done)
}

/// What the live path typed for a clip, its passes, and the ms from the release to the words:
/// the post-roll waited for and the tail pass, or what is left of a reused speculation's pass
/// (in-process, with the worker taken as free; `scripts/bench-live` measures from outside).
pub(crate) struct LiveText {
    pub text: String,
    pub pieces: Vec<Piece>,
    pub release_ms: f64,
}

/// One whisper pass of the live path: `commit` or the tail, its stretch (ms) and its text.
pub struct Piece {
    pub commit: bool,
    pub from_ms: usize,
    pub to_ms: usize,
    pub text: String,
}

/// What the live path types for `clip` released `tail_ms` after its last word, the passes
/// that gave it, and the whisper time after the release.
pub(crate) fn live_text(
    engine: &mut Engine,
    memo: &mut Memo,
    config: &Config,
    clip: &[f32],
    tail_ms: u32,
    prompt: bool,
) -> anyhow::Result<LiveText> {
    let ms = |v: u32| v as usize * SAMPLE_RATE as usize / 1000;
    let release = last_word_end(clip) + ms(tail_ms);
    // The clip's own room tone after the last word where it has one, then digital silence.
    let mut audio = clip.to_vec();
    audio.resize(
        audio.len().max(release + ms(config.dictation.post_roll_ms)),
        0.0,
    );

    // Recorded as the controller records: its utterance, streaming on, no spool.
    let mut streaming = config.clone();
    streaming.dictation.streaming = true;
    let profile = dictum_engine::profile::Profiles::default().default_profile();
    let entry = dictum_engine::store::Entry::new(dictum_engine::store::Source::Mic);
    let mut utt = Utterance::new(0, entry, profile, &streaming, None, false);
    let mut texts: Vec<String> = Vec::new();
    let mut speculation = None;
    let mut pieces = Vec::new();
    let at_ms = |v: usize| v * 1000 / SAMPLE_RATE as usize;
    let mut apply = |d: Decision,
                     texts: &mut Vec<String>,
                     engine: &mut Engine,
                     speculation: &mut Option<(usize, usize, usize)>,
                     at: usize|
     -> anyhow::Result<()> {
        match d {
            Decision::Commit { start, end } => {
                let context = if prompt {
                    texts.join(" ")
                } else {
                    String::new()
                };
                let (text, _) = pass(engine, memo, &audio, start..end, &context)?;
                pieces.push(Piece {
                    commit: true,
                    from_ms: at_ms(start),
                    to_ms: at_ms(end),
                    text: text.clone(),
                });
                if !text.is_empty() {
                    texts.push(text);
                }
                *speculation = None;
            }
            // Transcribed (if still valid) at the release: the text is the same.
            Decision::Speculate { start, end } => *speculation = Some((start, end, at)),
            Decision::Stale => *speculation = None,
        }
        Ok(())
    };
    let mut fed = 0;
    while fed < release {
        let to = (fed + 320).min(release);
        for d in utt.record(&audio[fed..to]) {
            apply(d, &mut texts, engine, &mut speculation, to)?;
        }
        fed = to;
    }
    // The release, as the controller's `stop` makes it (`Utterance::release`).
    let (rule, at_release) = utt.release(&streaming);
    let post = ms(rule.post_roll_ms);
    if let Some(d) = at_release {
        apply(d, &mut texts, engine, &mut speculation, release)?;
    }
    let end = if rule.before_post_roll {
        release
    } else {
        for d in utt.post_roll(&audio[..release + post]) {
            apply(d, &mut texts, engine, &mut speculation, release + post)?;
        }
        release + post
    };
    // The tail, by the worker's rule: a still-valid speculation's text (the same as a pass
    // over its stretch), else a pass from the last commit.
    let issued = speculation.map(|(_, _, at)| at);
    let (tail, reused) = match release::tail_pass(
        speculation.map(|(start, end, _)| start..end),
        utt.segmenter().committed(),
        utt.segmenter().valid_speculation(),
        end,
    ) {
        TailPass::Reuse(r) => (r, true),
        TailPass::Transcribe(r) => (r, false),
    };
    let (from_ms, to_ms) = (at_ms(tail.start), at_ms(tail.end));
    let context = if prompt {
        texts.join(" ")
    } else {
        String::new()
    };
    let (text, ms) = pass(engine, memo, &audio, tail, &context)?;
    pieces.push(Piece {
        commit: false,
        from_ms,
        to_ms,
        text: text.clone(),
    });
    if !text.is_empty() {
        texts.push(text);
    }
    // When the words can be typed: a reused speculation's pass ran from when it was issued
    // (if the worker was free), the tail's from the end of the audio it needs.
    let ms_at = |v: usize| v as f64 * 1000.0 / SAMPLE_RATE as f64;
    let began = match (reused, issued) {
        (true, Some(at)) => at,
        _ => end,
    };
    Ok(LiveText {
        text: texts.join(" "),
        pieces,
        release_ms: (ms_at(began) + ms - ms_at(release)).max(0.0),
    })
}

/// Up to this many clips the report shows every text; past it, the errors only (the texts
/// go to `--details`).
const TEXTS_IN_REPORT: usize = 12;

/// `--details`: one row per clip and path, the live rows with their passes
/// (`C` commit or `T` tail, stretch in ms, text).
fn detail_row(clip: &str, path: &str, w: WerCount, text: &str, pieces: &[Piece]) -> String {
    let clean = |t: &str| t.replace(['\t', '\n'], " ");
    let pieces: Vec<String> = pieces
        .iter()
        .map(|p| {
            let kind = if p.commit { "C" } else { "T" };
            format!("{kind} {}-{} {}", p.from_ms, p.to_ms, clean(&p.text))
        })
        .collect();
    format!(
        "{clip}\t{path}\t{}\t{}\t{}\t{}\n",
        w.errors,
        w.words,
        clean(text),
        pieces.join(" | ")
    )
}

/// What `run` measures and where it writes the passes.
pub struct Options<'a> {
    /// Release the key this many ms after each clip's last word (one column each).
    pub tails: &'a [u32],
    /// Write every clip's passes here (`detail_row`).
    pub details: Option<&'a Path>,
    /// Give each live pass the text before it as its prompt, as the worker does.
    pub prompt: bool,
}

pub fn run(config: Config, clips: &[LiveClip], opts: &Options) -> anyhow::Result<String> {
    // The same threads for every pass, whatever else runs: whisper's words can depend on
    // the thread count, and this bench must give the same figures every time.
    let mut config = config;
    config.stt.adapt_threads = false;
    let tails = opts.tails;
    let mut engine = Engine::new(config.clone(), vec![]);
    engine.ensure_model()?;
    let d = &config.dictation;
    let mut out = String::new();
    let seconds: usize =
        clips.iter().map(|c| c.samples.len()).sum::<usize>() / SAMPLE_RATE as usize;
    let _ = writeln!(
        out,
        "Model `{}`, {} threads{}; [dictation] pause_ms {}, speculate_after_ms {}, commit_min_ms {}, \
         post_roll_ms {}, type_before_post_roll_ms {}; the key released `tail` ms after the last word. \
         {} clips, {seconds} s.\n",
        config.stt.model,
        engine.stt_options().threads,
        if opts.prompt { "" } else { ", live passes without the text before as prompt" },
        d.pause_ms,
        d.speculate_after_ms,
        d.commit_min_ms,
        d.post_roll_ms,
        d.type_before_post_roll_ms,
        clips.len()
    );
    let texts = clips.len() <= TEXTS_IN_REPORT;
    let heads: Vec<String> = tails.iter().map(|t| format!("live, {t} ms tail")).collect();
    let _ = writeln!(out, "| clip | one pass | {} |", heads.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(tails.len()));
    let mut rows = String::from("clip\tpath\terrors\twords\ttext\tpasses\n");
    let mut whole = WerCount::default();
    let mut live = vec![WerCount::default(); tails.len()];
    for c in clips {
        let mut memo = Memo::new();
        let one = engine.transcribe_segment(c.samples, "")?.text;
        let w = WerCount::of(c.reference, &one);
        whole = whole.plus(w);
        rows.push_str(&detail_row(c.name, "one", w, &one, &[]));
        let mut cells = vec![if texts {
            format!("{one} ({}/{})", w.errors, w.words)
        } else {
            format!("{}/{}", w.errors, w.words)
        }];
        for (i, &tail) in tails.iter().enumerate() {
            let LiveText { text, pieces, .. } = live_text(
                &mut engine,
                &mut memo,
                &config,
                c.samples,
                tail,
                opts.prompt,
            )?;
            let w = WerCount::of(c.reference, &text);
            live[i] = live[i].plus(w);
            rows.push_str(&detail_row(
                c.name,
                &format!("live{tail}"),
                w,
                &text,
                &pieces,
            ));
            let passes = pieces.len();
            cells.push(if texts {
                format!("{text} ({}/{}, {passes} passes)", w.errors, w.words)
            } else {
                format!("{}/{}, {passes} passes", w.errors, w.words)
            });
        }
        let _ = writeln!(out, "| {} | {} |", c.name, cells.join(" | "));
    }
    if let Some(path) = opts.details {
        std::fs::write(path, rows)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    let pct = |w: WerCount| format!("{:.1} % ({}/{})", w.rate() * 100.0, w.errors, w.words);
    let _ = writeln!(out, "\nCorpus WER (`eval.rs` normalizer):\n");
    let _ = writeln!(out, "| path | corpus WER |");
    let _ = writeln!(out, "|---|---:|");
    let _ = writeln!(out, "| one pass over each clip | {} |", pct(whole));
    for (i, t) in tails.iter().enumerate() {
        let _ = writeln!(
            out,
            "| live, released {t} ms after the last word | {} |",
            pct(live[i])
        );
    }
    Ok(out)
}
