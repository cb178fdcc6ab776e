//! Voice activity detection: trims leading/trailing silence and rejects utterances with no
//! speech, so whisper never sees pure silence or noise (where it "hears" `you` or
//! `(water splashing)`).
//!
//! The detector is earshot, a small pure-Rust neural VAD that works on 16 ms frames and ships
//! its weights inside the crate (nothing to download). It was chosen over an energy gate and
//! over whisper's own no-speech probability by measurement: `dictum bench vad` and
//! `docs/PERFORMANCE.md`. The energy gate is kept here as the measured alternative.

use crate::config::VadConfig;

/// Samples per VAD frame (16 ms at 16 kHz), fixed by the earshot model.
pub const FRAME: usize = 256;

/// Cuts a stream into whole VAD frames: `samples` are appended to `partial` (what was left
/// over last time) and each full frame is passed to `each`; the rest stays in `partial`.
pub(crate) fn for_each_frame(
    partial: &mut Vec<f32>,
    samples: &[f32],
    mut each: impl FnMut(&[f32]),
) {
    let mut rest = samples;
    while !rest.is_empty() {
        let take = (FRAME - partial.len()).min(rest.len());
        partial.extend_from_slice(&rest[..take]);
        rest = &rest[take..];
        if partial.len() == FRAME {
            each(partial);
            partial.clear();
        }
    }
}
const FRAME_MS: u32 = 16;
/// A speech run shorter than this many frames is a blip (click, breath), not speech.
const MIN_RUN_FRAMES: usize = 3;

/// Which detector to use. `Earshot` is the product's; `Energy` exists for the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detector {
    Earshot,
    /// Frame RMS above -40 dBFS counts as speech.
    Energy,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VadResult {
    /// Milliseconds of frames judged speech (after dropping blips).
    pub speech_ms: u32,
    /// Sample range to keep (speech plus padding); empty when there is no speech.
    pub keep: std::ops::Range<usize>,
    /// True when the utterance holds too little speech to transcribe.
    pub no_speech: bool,
    /// Highest frame score seen (0–1 for earshot), for diagnostics.
    pub max_score: f32,
}

/// Per-frame speech scores.
pub fn frame_scores(samples: &[f32], detector: Detector) -> Vec<f32> {
    match detector {
        Detector::Earshot => {
            let mut vad = earshot::Detector::default_boxed();
            samples
                .chunks_exact(FRAME)
                .map(|frame| vad.predict_f32(frame))
                .collect()
        }
        Detector::Energy => samples
            .chunks_exact(FRAME)
            .map(|frame| {
                let rms = (frame.iter().map(|v| v * v).sum::<f32>() / FRAME as f32).sqrt();
                let dbfs = 20.0 * rms.max(1e-9).log10();
                // Map -40 dBFS to 0.5 so the same threshold applies.
                (1.0 / (1.0 + (-(dbfs + 40.0) / 3.0).exp())).clamp(0.0, 1.0)
            })
            .collect(),
    }
}

/// Decides what to keep from a 16 kHz mono utterance.
pub fn analyze(samples: &[f32], cfg: &VadConfig, detector: Detector) -> VadResult {
    let scores = frame_scores(samples, detector);
    let max_score = scores.iter().copied().fold(0.0f32, f32::max);
    let voiced: Vec<bool> = scores.iter().map(|&s| s >= cfg.threshold).collect();

    // Keep runs of speech frames that are long enough to be speech.
    let mut first = None;
    let mut last = None;
    let mut speech_frames = 0usize;
    let mut i = 0;
    while i < voiced.len() {
        if !voiced[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < voiced.len() && voiced[i] {
            i += 1;
        }
        if i - start >= MIN_RUN_FRAMES {
            speech_frames += i - start;
            first.get_or_insert(start);
            last = Some(i);
        }
    }
    let speech_ms = speech_frames as u32 * FRAME_MS;
    match (first, last) {
        (Some(first), Some(last)) if speech_ms >= cfg.min_speech_ms => {
            let pad = (cfg.pad_ms as usize * crate::SAMPLE_RATE as usize) / 1000;
            let start = (first * FRAME).saturating_sub(pad);
            let end = (last * FRAME + pad).min(samples.len());
            VadResult {
                speech_ms,
                keep: start..end,
                no_speech: false,
                max_score,
            }
        }
        _ => VadResult {
            speech_ms,
            keep: 0..0,
            no_speech: true,
            max_score,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digital_silence_is_no_speech() {
        let r = analyze(&vec![0.0; 48_000], &VadConfig::default(), Detector::Earshot);
        assert!(r.no_speech);
        assert_eq!(r.keep, 0..0);
    }

    #[test]
    fn a_steady_tone_is_not_speech() {
        let tone: Vec<f32> = (0..48_000)
            .map(|i| (i as f32 * 2.0 * std::f32::consts::PI * 1000.0 / 16_000.0).sin() * 0.3)
            .collect();
        let r = analyze(&tone, &VadConfig::default(), Detector::Earshot);
        assert!(r.no_speech, "{r:?}");
        // The energy gate cannot tell a tone from a voice: that is why it is not used.
        assert!(!analyze(&tone, &VadConfig::default(), Detector::Energy).no_speech);
    }
}
