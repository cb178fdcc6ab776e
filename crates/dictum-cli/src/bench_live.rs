//! `dictum bench live`: the accuracy of the live path on the dev clips, in-process and
//! deterministic. Each clip is fed as if it were being spoken (20 ms pieces through the real
//! [`Segmenter`]); its commits are transcribed with the text before them as the prompt, as
//! the worker does; the key goes up `tail` ms after the clip's last word; the tail is the
//! speculation still valid at the release (or, when none is, everything after the last
//! commit including the post-roll). The release (post-roll, typed before it or not) and the
//! tail are chosen by the product's own rule, `dictation::release`, which the controller's
//! `stop` and the worker's `finish` call. Beside it, one pass over the whole clip (`dictum
//! transcribe`'s path) in the same run. Timing is not measured here (`scripts/bench-live` does that from outside).

use dictum_engine::config::Config;
use dictum_engine::dictation::release::{self, TailPass};
use dictum_engine::dictation::segmenter::{Decision, Segmenter};
use dictum_engine::eval::WerCount;
use dictum_engine::pipeline::Engine;
use dictum_engine::SAMPLE_RATE;
use std::fmt::Write as _;

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

/// What the live path types for `clip` released `tail_ms` after its last word, and how
/// many whisper passes it took.
fn live_text(
    engine: &mut Engine,
    config: &Config,
    clip: &[f32],
    tail_ms: u32,
) -> anyhow::Result<(String, usize)> {
    let ms = |v: u32| v as usize * SAMPLE_RATE as usize / 1000;
    let release = last_word_end(clip) + ms(tail_ms);
    // The clip's own room tone after the last word where it has one, then digital silence.
    let mut audio = clip.to_vec();
    audio.resize(
        audio.len().max(release + ms(config.dictation.post_roll_ms)),
        0.0,
    );

    let mut seg = Segmenter::new(&config.dictation, config.vad.threshold);
    let mut texts: Vec<String> = Vec::new();
    let mut speculation = None;
    let mut passes = 0;
    let mut apply = |d: Decision,
                     texts: &mut Vec<String>,
                     engine: &mut Engine,
                     speculation: &mut Option<(usize, usize)>|
     -> anyhow::Result<()> {
        match d {
            Decision::Commit { start, end } => {
                passes += 1;
                let s = engine.transcribe_segment(&audio[start..end], &texts.join(" "))?;
                if !s.text.is_empty() {
                    texts.push(s.text);
                }
                *speculation = None;
            }
            // Transcribed (if still valid) at the release: the text is the same.
            Decision::Speculate { start, end } => *speculation = Some((start, end)),
            Decision::Stale => *speculation = None,
        }
        Ok(())
    };
    let mut fed = 0;
    while fed < release {
        let to = (fed + 320).min(release);
        for d in seg.push(&audio[fed..to]) {
            apply(d, &mut texts, engine, &mut speculation)?;
        }
        fed = to;
    }
    // The release, by the product's rule (`dictation::release`, as the controller's `stop`
    // applies it), with streaming on and no progress lost.
    let rule = release::on_release(
        &config.dictation,
        release::AtRelease {
            heard_speech: seg.heard_speech(),
            silent_ms: seg.trailing_silence_ms(),
            streaming: true,
            live_progress: true,
        },
    );
    let post = ms(rule.post_roll_ms);
    if rule.speculate {
        if let Some(d) = seg.at_release() {
            apply(d, &mut texts, engine, &mut speculation)?;
        }
    }
    let end = if rule.before_post_roll {
        release
    } else {
        for d in seg.push(&audio[release..release + post]) {
            apply(d, &mut texts, engine, &mut speculation)?;
        }
        release + post
    };
    // The tail, by the worker's rule: a still-valid speculation's text (the same as a pass
    // over its stretch), else a pass from the last commit.
    let tail = match release::tail_pass(
        speculation.map(|(start, end)| start..end),
        seg.committed(),
        seg.valid_speculation(),
        end,
    ) {
        TailPass::Reuse(r) | TailPass::Transcribe(r) => r,
    };
    passes += 1;
    let s = engine.transcribe_segment(&audio[tail], &texts.join(" "))?;
    if !s.text.is_empty() {
        texts.push(s.text);
    }
    Ok((texts.join(" "), passes))
}

pub fn run(config: Config, clips: &[LiveClip], tails: &[u32]) -> anyhow::Result<String> {
    let mut engine = Engine::new(config.clone(), vec![]);
    engine.ensure_model()?;
    let d = &config.dictation;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Model `{}`, {} threads; [dictation] pause_ms {}, speculate_after_ms {}, commit_min_ms {}, \
         post_roll_ms {}, type_before_post_roll_ms {}; the key released `tail` ms after the last word.\n",
        config.stt.model,
        engine.stt_options().threads,
        d.pause_ms,
        d.speculate_after_ms,
        d.commit_min_ms,
        d.post_roll_ms,
        d.type_before_post_roll_ms
    );
    let heads: Vec<String> = tails.iter().map(|t| format!("live, {t} ms tail")).collect();
    let _ = writeln!(out, "| clip | one pass | {} |", heads.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(tails.len()));
    let mut whole = WerCount::default();
    let mut live = vec![WerCount::default(); tails.len()];
    for c in clips {
        let one = engine.transcribe_segment(c.samples, "")?.text;
        let w = WerCount::of(c.reference, &one);
        whole = whole.plus(w);
        let mut cells = vec![format!("{one} ({}/{})", w.errors, w.words)];
        for (i, &tail) in tails.iter().enumerate() {
            let (text, passes) = live_text(&mut engine, &config, c.samples, tail)?;
            let w = WerCount::of(c.reference, &text);
            live[i] = live[i].plus(w);
            cells.push(format!(
                "{text} ({}/{}, {passes} passes)",
                w.errors, w.words
            ));
        }
        let _ = writeln!(out, "| {} | {} |", c.name, cells.join(" | "));
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
