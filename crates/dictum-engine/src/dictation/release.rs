//! The release rule of a push-to-talk dictation, as pure functions: how much post-roll to
//! record after the key goes up, whether whisper starts on the release speculation while it
//! records, whether the text goes out before the post-roll, and which pass gives the tail.
//! The controller (`stop`), the worker (`finish`) and `dictum bench live` all call these, so
//! the benchmark measures the product's rule, not a copy of it.

use crate::dictation::config::DictationConfig;
use std::ops::Range;

/// What is known at the release, from the utterance's segmenter and the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtRelease {
    /// Speech was heard in this utterance (`Segmenter::heard_speech`).
    pub heard_speech: bool,
    /// How long the voice has been silent at the release, in ms
    /// (`Segmenter::trailing_silence_ms`).
    pub silent_ms: u64,
    /// `dictation.streaming`: chunks are transcribed while the key is held.
    pub streaming: bool,
    /// The streamed progress is usable: streaming is on and none of it was lost (a chunk
    /// that could not be queued makes the finish transcribe everything itself).
    pub live_progress: bool,
}

/// What to do at the release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// Audio to record after the release, in ms: `post_roll_ms` after the last speech, the
    /// silence already recorded before the release counting towards it; none without speech.
    pub post_roll_ms: u32,
    /// Start whisper on what was said (`Segmenter::at_release`) while the post-roll is
    /// recorded; speech in the post-roll makes that pass stale and it is stopped.
    pub speculate: bool,
    /// The voice was already silent `type_before_post_roll_ms` at the release: the text goes
    /// out as soon as it is transcribed, and the post-roll, still recorded, becomes a
    /// dictation of its own if it holds speech.
    pub before_post_roll: bool,
}

/// The release rule (`Controller::stop`).
pub fn on_release(config: &DictationConfig, at: AtRelease) -> Release {
    let post_roll_ms = if at.heard_speech {
        let silent = at.silent_ms.min(u64::from(u32::MAX)) as u32;
        config.post_roll_ms.saturating_sub(silent)
    } else {
        0
    };
    let early = config.type_before_post_roll_ms;
    Release {
        post_roll_ms,
        speculate: at.streaming && post_roll_ms > 0,
        before_post_roll: at.live_progress
            && post_roll_ms > 0
            && at.heard_speech
            && early > 0
            && at.silent_ms >= u64::from(early),
    }
}

/// Which whisper pass gives the utterance's tail (everything after the last commit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TailPass {
    /// The speculation over this stretch still covers everything after the last commit
    /// (nothing was said after it): its text is the tail, no new pass.
    Reuse(Range<usize>),
    /// A new pass over this stretch: from the last commit to the end of the audio.
    Transcribe(Range<usize>),
}

/// The tail pass (`Worker::finish`). `speculation`: the stretch of the last speculation the
/// worker transcribed, if it holds one; `committed`: where the not-yet-final part starts;
/// `valid_end`: the end of the speculation the segmenter still holds valid, if any; `len`:
/// the utterance's length in samples.
pub fn tail_pass(
    speculation: Option<Range<usize>>,
    committed: usize,
    valid_end: Option<usize>,
    len: usize,
) -> TailPass {
    match (speculation, valid_end) {
        (Some(s), Some(valid)) if s.start == committed && s.end == valid => TailPass::Reuse(s),
        _ => TailPass::Transcribe(committed.min(len)..len),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(post_roll_ms: u32, type_before_post_roll_ms: u32) -> DictationConfig {
        DictationConfig {
            post_roll_ms,
            type_before_post_roll_ms,
            ..DictationConfig::default()
        }
    }

    fn at(heard_speech: bool, silent_ms: u64, streaming: bool, live_progress: bool) -> AtRelease {
        AtRelease {
            heard_speech,
            silent_ms,
            streaming,
            live_progress,
        }
    }

    fn release(post_roll_ms: u32, speculate: bool, before_post_roll: bool) -> Release {
        Release {
            post_roll_ms,
            speculate,
            before_post_roll,
        }
    }

    /// (post_roll_ms, type_before_post_roll_ms) × what the release finds → what it does.
    #[test]
    fn the_release_rule_table() {
        #[rustfmt::skip]
        let table: &[((u32, u32), AtRelease, Release, &str)] = &[
            // Released while speaking: the whole post-roll, whisper starts meanwhile, the
            // text waits for the post-roll (the last word may go on).
            ((300, 100), at(true, 0, true, true), release(300, true, false), "mid-word"),
            ((300, 100), at(true, 60, true, true), release(240, true, false), "short silence"),
            // Silent long enough: typed before the post-roll, which is still recorded.
            ((300, 100), at(true, 100, true, true), release(200, true, true), "silent 100 ms"),
            ((300, 100), at(true, 250, true, true), release(50, true, true), "silent 250 ms"),
            // The silence already covers the post-roll: nothing to record, nothing to wait for.
            ((300, 100), at(true, 300, true, true), release(0, false, false), "silent = post-roll"),
            ((300, 100), at(true, 5_000, true, true), release(0, false, false), "long silence"),
            ((300, 100), at(true, u64::MAX, true, true), release(0, false, false), "huge silence"),
            // No speech at all: no post-roll.
            ((300, 100), at(false, 0, true, true), release(0, false, false), "no speech"),
            ((300, 100), at(false, 200, true, true), release(0, false, false), "no speech, silent"),
            // Typing early turned off.
            ((300, 0), at(true, 200, true, true), release(100, true, false), "type early off"),
            // No post-roll configured.
            ((0, 100), at(true, 0, true, true), release(0, false, false), "post-roll off"),
            ((0, 100), at(true, 200, true, true), release(0, false, false), "post-roll off, silent"),
            // Without streaming nothing was transcribed ahead: wait for the post-roll.
            ((300, 100), at(true, 200, false, false), release(100, false, false), "no streaming"),
            // Streaming, but progress lost: the speculation still starts; the text waits.
            ((300, 100), at(true, 200, true, false), release(100, true, false), "progress lost"),
            // Longer settings.
            ((800, 400), at(true, 399, true, true), release(401, true, false), "just under"),
            ((800, 400), at(true, 400, true, true), release(400, true, true), "just at"),
        ];
        for &((post, early), at, want, what) in table {
            assert_eq!(on_release(&config(post, early), at), want, "{what}: {at:?}");
        }
    }

    #[test]
    fn released_silent_is_typed_without_waiting_for_the_post_roll() {
        let r = on_release(&DictationConfig::default(), at(true, 150, true, true));
        assert!(r.before_post_roll, "{r:?}");
        assert!(r.post_roll_ms > 0, "the post-roll is still recorded: {r:?}");
    }

    /// (worker's speculation, committed, segmenter's valid end, length) → pass, and why.
    type TailRow = (
        Option<Range<usize>>,
        usize,
        Option<usize>,
        usize,
        TailPass,
        &'static str,
    );

    #[test]
    fn the_tail_pass_table() {
        use TailPass::*;
        #[rustfmt::skip]
        let table: &[TailRow] = &[
            // The speculation over everything since the last commit is still valid: reused.
            (Some(0..16_000), 0, Some(16_000), 20_800, Reuse(0..16_000), "one speculation"),
            (Some(48_000..64_000), 48_000, Some(64_000), 70_000, Reuse(48_000..64_000), "after a commit"),
            // Speech after it (no valid speculation): transcribed from the commit.
            (Some(0..16_000), 0, None, 20_800, Transcribe(0..20_800), "speech after it"),
            // The segmenter speculated further than the worker got (a stale pass dropped).
            (Some(0..16_000), 0, Some(19_000), 20_800, Transcribe(0..20_800), "newer speculation"),
            // The worker's speculation starts before a later commit.
            (Some(0..16_000), 8_000, Some(16_000), 20_800, Transcribe(8_000..20_800), "committed since"),
            // No speculation transcribed (none made, or it failed).
            (None, 0, Some(16_000), 20_800, Transcribe(0..20_800), "none transcribed"),
            (None, 0, None, 20_800, Transcribe(0..20_800), "no streaming"),
            // A commit past the end (nothing left after it) gives an empty tail, not a panic.
            (None, 30_000, None, 20_800, Transcribe(20_800..20_800), "commit past the end"),
        ];
        for (spec, committed, valid, len, want, what) in table {
            assert_eq!(
                tail_pass(spec.clone(), *committed, *valid, *len),
                *want,
                "{what}"
            );
        }
    }
}
