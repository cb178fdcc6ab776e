//! Decides, while the key is held, which stretches of the utterance to transcribe ahead of
//! the release, so that after the release only the tail is left.
//!
//! The audio is fed in as it arrives; a streaming VAD (earshot, 16 ms frames) follows it.
//! At each pause (`pause_ms` of silence after speech) the audio since the last committed
//! point is sent for transcription:
//! - as a **commit** when it holds at least `commit_min_ms` (its text is final and the next
//!   chunk starts after it), or
//! - as a **speculation** otherwise: transcribed now, and used as the tail's text if no new
//!   speech comes before the release (the common case: the user stops, then lets go).
//!
//! A shorter silence (`speculate_after_ms`, well under the 100–400 ms people wait before
//! letting go) already starts a speculation, so that the pass the release needs is under way
//! before the key goes up. When speech resumes, the segmenter says so ([`Decision::Stale`])
//! and the worker stops that pass at once instead of letting it run.
//!
//! Speech that runs `chunk_max_ms` without a pause is cut at its quietest frame in the last
//! 3 s and committed, so whisper never sees more than one window.

use crate::dictation::config::DictationConfig;
use crate::vad::FRAME;
use crate::SAMPLE_RATE;

/// Something to transcribe now: samples `start..end` of the utterance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Commit {
        start: usize,
        end: usize,
    },
    Speculate {
        start: usize,
        end: usize,
    },
    /// Speech resumed after the last speculation: it can no longer be the tail.
    Stale,
}

pub struct Segmenter {
    vad: Box<earshot::Detector>,
    threshold: f32,
    pause_frames: usize,
    /// Silence after speech that starts a speculation (0: only at a pause).
    speculate_frames: usize,
    commit_min: usize,
    chunk_max: usize,
    /// Samples not yet a whole frame.
    partial: Vec<f32>,
    /// Frames seen so far.
    frames: usize,
    /// Per-frame RMS, for choosing a cut point.
    energy: Vec<f32>,
    /// Consecutive voiced frames (a run shorter than 3 is a blip).
    voiced_run: usize,
    /// Frame index just after the last frame of real speech.
    last_speech_end: Option<usize>,
    /// Sample index the next chunk starts at.
    committed: usize,
    /// Speech since the last decision (commit or speculation) that is not yet sent.
    fresh_speech: bool,
    /// Speech since the last pause (`pause_ms`), which decides on a commit.
    unpaused: bool,
    /// End of the last speculation (samples).
    speculated_to: Option<usize>,
}

const MIN_RUN_FRAMES: usize = 3;

fn ms_to_samples(ms: u32) -> usize {
    ms as usize * SAMPLE_RATE as usize / 1000
}

impl Segmenter {
    pub fn new(cfg: &DictationConfig, threshold: f32) -> Segmenter {
        Segmenter {
            vad: earshot::Detector::default_boxed(),
            threshold,
            pause_frames: ms_to_samples(cfg.pause_ms).div_ceil(FRAME),
            speculate_frames: ms_to_samples(cfg.speculate_after_ms).div_ceil(FRAME),
            commit_min: ms_to_samples(cfg.commit_min_ms),
            chunk_max: ms_to_samples(cfg.chunk_max_ms),
            partial: Vec::with_capacity(FRAME),
            frames: 0,
            energy: Vec::new(),
            voiced_run: 0,
            last_speech_end: None,
            committed: 0,
            fresh_speech: false,
            unpaused: false,
            speculated_to: None,
        }
    }

    /// Feeds the next samples of the utterance; returns what to transcribe now.
    pub fn push(&mut self, samples: &[f32]) -> Vec<Decision> {
        let mut out = Vec::new();
        let mut partial = std::mem::take(&mut self.partial);
        crate::vad::for_each_frame(&mut partial, samples, |frame| self.frame(frame, &mut out));
        self.partial = partial;
        out
    }

    fn frame(&mut self, frame: &[f32], out: &mut Vec<Decision>) {
        let score = self.vad.predict_f32(frame);
        let rms = (frame.iter().map(|v| v * v).sum::<f32>() / FRAME as f32).sqrt();
        self.energy.push(rms);
        self.frames += 1;
        if score >= self.threshold {
            self.voiced_run += 1;
            if self.voiced_run >= MIN_RUN_FRAMES {
                self.last_speech_end = Some(self.frames);
                if !self.fresh_speech && self.speculated_to.is_some() {
                    out.push(Decision::Stale);
                }
                self.fresh_speech = true;
                self.unpaused = true;
            }
        } else {
            self.voiced_run = 0;
        }
        let now = self.frames * FRAME;
        let pending = now - self.committed;

        if let Some(end) = self.last_speech_end {
            let silent = self.frames - end;
            // A pause: what is pending becomes final if it is long enough, else it is
            // speculated on (unless that was done already at a shorter silence).
            if self.unpaused && silent >= self.pause_frames {
                self.unpaused = false;
                if pending >= self.commit_min {
                    // Cut in the quietest part of the pause, not at its end: the VAD hears
                    // a new word late, so the pause's end may already hold its onset.
                    let cut = self.quietest_frame(end, self.frames) * FRAME;
                    out.push(Decision::Commit {
                        start: self.committed,
                        end: cut,
                    });
                    self.committed = cut;
                    self.speculated_to = None;
                    self.fresh_speech = false;
                    return;
                }
                if self.fresh_speech {
                    self.speculate(now, out);
                    return;
                }
            } else if self.fresh_speech
                && self.speculate_frames > 0
                && silent >= self.speculate_frames
            {
                self.speculate(now, out);
                return;
            }
        }
        // Speech running too long without a pause: cut at the quietest recent frame.
        if pending >= self.chunk_max {
            let window = ms_to_samples(3000) / FRAME;
            let first = (self.frames.saturating_sub(window)).max(self.committed / FRAME + 1);
            let cut = self.quietest_frame(first, self.frames) * FRAME;
            out.push(Decision::Commit {
                start: self.committed,
                end: cut,
            });
            self.committed = cut;
            self.speculated_to = None;
            // Whatever follows the cut is fresh for the next decision.
            self.fresh_speech = self.last_speech_end.is_some_and(|e| e * FRAME > cut);
            self.unpaused = self.fresh_speech;
        }
    }

    /// The quietest frame in `from..to` (the first of equals); `to` when that is empty.
    fn quietest_frame(&self, from: usize, to: usize) -> usize {
        (from..to)
            .min_by(|&a, &b| self.energy[a].total_cmp(&self.energy[b]))
            .unwrap_or(to)
    }

    /// Speculates on everything since the last commit, up to `now`.
    fn speculate(&mut self, now: usize, out: &mut Vec<Decision>) {
        self.fresh_speech = false;
        self.speculated_to = Some(now);
        out.push(Decision::Speculate {
            start: self.committed,
            end: now,
        });
    }

    /// The key went up: speech not yet covered by a decision is sent now, as a speculation
    /// over everything since the last commit, so whisper works while the post-roll is
    /// recorded. It stays valid unless the post-roll holds more speech (then the finish
    /// stops it and transcribes the tail itself).
    pub fn at_release(&mut self) -> Option<Decision> {
        // What was said before the release is not committed at a pause in the post-roll:
        // its speculation (this one, or one sent at a short silence) is the tail.
        self.unpaused = false;
        if !self.fresh_speech {
            return None;
        }
        let mut out = Vec::new();
        self.speculate(self.frames * FRAME, &mut out);
        out.pop()
    }

    /// Where the not-yet-final part of the utterance starts.
    pub fn committed(&self) -> usize {
        self.committed
    }

    /// End of the speculation covering `committed()..`, if one is still valid: no speech
    /// has been heard after it.
    pub fn valid_speculation(&self) -> Option<usize> {
        let to = self.speculated_to?;
        let speech_after = self.last_speech_end.is_some_and(|e| e * FRAME > to);
        (!speech_after && !self.fresh_speech).then_some(to)
    }

    /// Silence since the last speech, in ms (all of it when there was no speech).
    pub fn trailing_silence_ms(&self) -> u64 {
        let since = self.frames - self.last_speech_end.unwrap_or(0);
        (since * FRAME) as u64 * 1000 / SAMPLE_RATE as u64
    }

    /// True once any speech has been heard.
    pub fn heard_speech(&self) -> bool {
        self.last_speech_end.is_some()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn cfg() -> DictationConfig {
        DictationConfig::default()
    }

    /// Stretches of 1 s are final (the test clip is ~2 s).
    fn commit_after_1s() -> DictationConfig {
        DictationConfig {
            commit_min_ms: 1000,
            ..cfg()
        }
    }

    /// No speculation before a pause (`pause_ms`) or the release.
    fn only_at_pauses() -> DictationConfig {
        DictationConfig {
            speculate_after_ms: 0,
            ..cfg()
        }
    }

    #[test]
    fn silence_gives_no_decisions() {
        let mut s = Segmenter::new(&cfg(), 0.5);
        assert!(s.push(&vec![0.0; 16_000 * 5]).is_empty());
        assert!(!s.heard_speech());
        assert!(s.trailing_silence_ms() >= 4900);
        assert_eq!(s.valid_speculation(), None);
    }

    /// Real speech from the test assets (`$DICTUM_TEST_ASSETS`, default `../shared`); the
    /// utterance's tests use it too.
    pub(crate) fn speech() -> Vec<f32> {
        let dir = std::env::var_os("DICTUM_TEST_ASSETS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
            });
        let path = dir.join("audio/dev/cards-002.wav");
        match crate::audio::decode_16k(&path, 60) {
            Ok(d) => d.samples,
            Err(e) => panic!(
                "test asset {}: {e} (set DICTUM_TEST_ASSETS)",
                path.display()
            ),
        }
    }

    #[test]
    fn release_right_after_speech_speculates_at_once_and_silence_after_keeps_it_valid() {
        let clip = speech();
        let mut s = Segmenter::new(&only_at_pauses(), 0.5);
        // Up to the end of the speech only: no pause yet, so no decision.
        let end = s_end_of_speech(&clip);
        s.push(&clip[..end]);
        let d = s.at_release();
        let Some(Decision::Speculate { start: 0, end: to }) = d else {
            panic!("expected a speculation at the release, got {d:?}");
        };
        assert_eq!(s.at_release(), None, "nothing new to send twice");
        // The post-roll: silence keeps the speculation.
        assert!(s.push(&vec![0.0; 16_000 / 4]).is_empty());
        assert_eq!(s.valid_speculation(), Some(to));
    }

    #[test]
    fn speech_in_the_post_roll_makes_the_release_speculation_stale() {
        let clip = speech();
        let mut s = Segmenter::new(&only_at_pauses(), 0.5);
        let half = s_end_of_speech(&clip) / 2;
        s.push(&clip[..half]);
        assert!(s.at_release().is_some());
        s.push(&clip[half..]);
        assert_eq!(s.valid_speculation(), None);
    }

    /// Feeds `samples` in 20 ms pieces (as the controller does), with the sample count
    /// reached after each decision.
    fn feed(s: &mut Segmenter, samples: &[f32]) -> Vec<(usize, Decision)> {
        let mut fed = 0;
        let mut out = Vec::new();
        for piece in samples.chunks(320) {
            fed += piece.len();
            out.extend(s.push(piece).into_iter().map(|d| (fed, d)));
        }
        out
    }

    #[test]
    fn a_short_silence_starts_a_speculation_and_the_pause_does_not_repeat_it() {
        let clip = speech();
        let end = s_end_of_speech(&clip);
        let mut s = Segmenter::new(&cfg(), 0.5);
        // The speech, then 150 ms of silence: past speculate_after_ms (48), short of
        // pause_ms (250).
        let mut d = feed(&mut s, &clip[..end]);
        d.extend(feed(&mut s, &vec![0.0; 16 * 150]));
        // Gaps between words start speculations too; each is made stale by the next word.
        let kinds: Vec<Decision> = d.iter().map(|(_, d)| *d).collect();
        for pair in kinds.windows(2) {
            if let [Decision::Speculate { .. }, next] = pair {
                assert_eq!(*next, Decision::Stale, "{kinds:?}");
            }
        }
        let Some(&(sent, Decision::Speculate { start: 0, end: to })) = d.last() else {
            panic!("the last decision speculates on everything: {d:?}");
        };
        assert!(
            sent <= end + 16 * 100,
            "sent {} ms after the speech, not at the pause",
            (sent - end.min(sent)) / 16
        );
        assert_eq!(s.valid_speculation(), Some(to));
        assert_eq!(s.at_release(), None, "the release has it already");
        // The pause (the clip is under commit_min_ms): nothing more to send.
        assert!(feed(&mut s, &vec![0.0; 16 * 300]).is_empty());
        assert_eq!(s.valid_speculation(), Some(to));
    }

    #[test]
    fn the_post_roll_does_not_commit_what_the_speculation_before_the_release_covers() {
        let clip = speech();
        let end = s_end_of_speech(&clip);
        let mut s = Segmenter::new(&commit_after_1s(), 0.5);
        feed(&mut s, &clip[..end]);
        feed(&mut s, &vec![0.0; 16 * 100]);
        let to = s
            .valid_speculation()
            .expect("speculated at the short silence");
        assert_eq!(s.at_release(), None);
        // The post-roll reaches the pause: the stretch is over 1 s, but it stays the tail.
        assert!(feed(&mut s, &vec![0.0; 16 * 300]).is_empty());
        assert_eq!(s.valid_speculation(), Some(to));
        assert_eq!(s.committed(), 0);
    }

    #[test]
    fn speech_after_a_speculation_makes_it_stale_at_once() {
        let clip = speech();
        let end = s_end_of_speech(&clip);
        let mut s = Segmenter::new(&cfg(), 0.5);
        feed(&mut s, &clip[..end]);
        feed(&mut s, &vec![0.0; 16 * 100]);
        assert!(s.valid_speculation().is_some());
        // The speaker goes on: the first thing said is that the speculation is stale, as
        // soon as the VAD hears the voice (earshot needs ~200 ms of it here), before any
        // pause.
        let voiced = clip.iter().position(|v| v.abs() > 0.02).unwrap_or(0);
        let again = feed(&mut s, &clip[voiced..end]);
        let (at, first) = again.first().copied().expect("a decision");
        assert_eq!(first, Decision::Stale, "{again:?}");
        assert!(at <= 16 * 300, "stale {} ms in", at / 16);
    }

    #[test]
    fn speculate_after_ms_0_waits_for_the_pause() {
        let clip = speech();
        let end = s_end_of_speech(&clip);
        let mut s = Segmenter::new(&only_at_pauses(), 0.5);
        feed(&mut s, &clip[..end]);
        assert!(feed(&mut s, &vec![0.0; 16 * 150]).is_empty());
        let d = feed(&mut s, &vec![0.0; 16 * 150]);
        assert!(matches!(d[..], [(_, Decision::Speculate { .. })]), "{d:?}");
    }

    #[test]
    fn a_long_stretch_is_committed_at_the_pause_after_its_speculation() {
        let clip = speech();
        let end = s_end_of_speech(&clip);
        let mut s = Segmenter::new(&commit_after_1s(), 0.5);
        let mut d = feed(&mut s, &clip[..end]);
        d.extend(feed(&mut s, &vec![0.0; 16 * 400]));
        let kinds: Vec<_> = d.iter().map(|(_, d)| d).collect();
        assert!(
            matches!(
                kinds[kinds.len().saturating_sub(2)..],
                [
                    Decision::Speculate { .. },
                    Decision::Commit { start: 0, .. }
                ]
            ),
            "{kinds:?}"
        );
        assert_eq!(s.valid_speculation(), None);
        // Cut where the silence begins (the quietest frames), not 250 ms into it where the
        // pause was noticed.
        let cut = s.committed();
        assert!(
            (end..=end + 2 * FRAME).contains(&cut),
            "cut {cut}, speech to {end}"
        );
    }

    /// Index just after the last loud sample (the clip's own trailing silence cut off).
    fn s_end_of_speech(clip: &[f32]) -> usize {
        clip.iter()
            .rposition(|v| v.abs() > 0.02)
            .map_or(clip.len(), |i| i + 1)
    }

    #[test]
    fn fed_in_odd_sized_pieces_or_at_once_gives_the_same_frames() {
        let noise: Vec<f32> = (0..16_000)
            .map(|i| ((i * 7919 % 1000) as f32 / 1000.0 - 0.5) * 0.01)
            .collect();
        let mut a = Segmenter::new(&cfg(), 0.5);
        let mut b = Segmenter::new(&cfg(), 0.5);
        a.push(&noise);
        for piece in noise.chunks(333) {
            b.push(piece);
        }
        assert_eq!(a.frames, b.frames);
        assert_eq!(a.energy, b.energy);
    }
}
