//! Hands-free listening: the microphone records all along and this decides where each
//! dictation starts and ends, so the controller can treat every one like a push-to-talk
//! utterance whose "release" is the pause.
//!
//! The [`Cutter`] follows the stream with the same streaming VAD as the segmenter (earshot,
//! 16 ms frames, a run of 3 voiced frames counts as speech):
//! - **quiet**: only the last `preroll_ms` are kept (the pre-roll of the next dictation);
//! - **candidate**: speech began; the audio is held back until the speech adds up to
//!   [`MIN_SPEECH_MS`]. A shorter burst (a cough, a click, a door) followed by a pause is
//!   dropped: no history row, nothing typed;
//! - **open**: the dictation is under way ([`Cut::Open`] gave its pre-roll and speech so far,
//!   [`Cut::More`] gives what follows) until `hands_free_pause_ms` of silence after the last
//!   speech ([`Cut::Close`]). The pre-roll ring keeps running, so the next dictation starts
//!   with the audio just before it: nothing said between two dictations is lost.
//!
//! Stretches the VAD never calls speech (room noise, hum, fans) never open anything; what it
//! does call speech but whisper finds empty is caught later by the silence/noise guard
//! (`Engine::transcribe_segment`), which makes the row `no_speech` and types nothing.

use crate::config::Config;
use crate::vad::FRAME;
use crate::SAMPLE_RATE;
use std::time::{Duration, Instant};

/// Speech (in frames the VAD calls speech) a burst must hold before it becomes a dictation.
pub const MIN_SPEECH_MS: u32 = 200;
/// The least pre-roll hands-free keeps before the VAD's onset: the VAD calls speech up to
/// ~300 ms after it began (measured on the dev clips, later right after other speech), and
/// no key press comes earlier to make up for it.
pub const MIN_PREROLL_MS: u32 = 500;
/// Consecutive voiced frames that count as speech (shorter runs are blips), as in the
/// segmenter.
const MIN_RUN_FRAMES: usize = 3;

/// What the stream means for the dictations.
#[derive(Debug, Clone, PartialEq)]
pub enum Cut {
    /// A dictation starts with these samples: its pre-roll, then the speech so far.
    Open(Vec<f32>),
    /// The next samples of the open dictation.
    More(Vec<f32>),
    /// The open dictation ended (speech, then the pause); everything it holds was given.
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Quiet,
    /// `held` holds pre-roll + the burst; `speech` frames of it were speech.
    Candidate {
        speech: usize,
        last_speech: u64,
    },
    Open {
        last_speech: u64,
    },
}

pub struct Cutter {
    vad: Box<earshot::Detector>,
    threshold: f32,
    pause_frames: u64,
    min_speech_frames: usize,
    preroll: usize,
    /// Samples not yet a whole frame.
    partial: Vec<f32>,
    /// Quiet: the recent audio (at least the pre-roll). Candidate: pre-roll + the burst.
    held: Vec<f32>,
    /// Open: samples of the dictation not yet given out.
    out: Vec<f32>,
    phase: Phase,
    frames: u64,
    voiced_run: usize,
    /// Bursts dropped as too short (coughs, clicks), for the log and the soak.
    rejected: u64,
}

fn ms_to_samples(ms: u32) -> usize {
    ms as usize * SAMPLE_RATE as usize / 1000
}

impl Cutter {
    /// `preroll_ms` is raised to [`MIN_PREROLL_MS`] and kept 100 ms under `pause_ms`, so a
    /// dictation's pre-roll never reaches back into the speech of the one before.
    pub fn new(pause_ms: u32, preroll_ms: u32, threshold: f32) -> Cutter {
        let preroll_ms = preroll_ms
            .max(MIN_PREROLL_MS)
            .min(pause_ms.saturating_sub(100));
        let preroll = ms_to_samples(preroll_ms);
        Cutter {
            vad: earshot::Detector::default_boxed(),
            threshold,
            pause_frames: ms_to_samples(pause_ms).div_ceil(FRAME) as u64,
            min_speech_frames: ms_to_samples(MIN_SPEECH_MS).div_ceil(FRAME),
            preroll,
            partial: Vec::with_capacity(FRAME),
            held: Vec::with_capacity(preroll * 2 + FRAME * 64),
            out: Vec::with_capacity(SAMPLE_RATE as usize),
            phase: Phase::Quiet,
            frames: 0,
            voiced_run: 0,
            rejected: 0,
        }
    }

    /// Feeds the next samples of the stream; returns what they mean, in order.
    pub fn push(&mut self, samples: &[f32]) -> Vec<Cut> {
        let mut cuts = Vec::new();
        let mut partial = std::mem::take(&mut self.partial);
        crate::vad::for_each_frame(&mut partial, samples, |frame| self.frame(frame, &mut cuts));
        self.partial = partial;
        if !self.out.is_empty() {
            cuts.push(Cut::More(std::mem::take(&mut self.out)));
        }
        cuts
    }

    /// True while a dictation is open (between [`Cut::Open`] and [`Cut::Close`]).
    pub fn is_open(&self) -> bool {
        matches!(self.phase, Phase::Open { .. })
    }

    /// The pre-roll each dictation starts with (before the VAD's onset), in ms.
    pub fn preroll_ms(&self) -> u32 {
        (self.preroll * 1000 / SAMPLE_RATE as usize) as u32
    }

    /// Bursts dropped as too short to be a dictation.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// Forgets the stream (a new microphone stream starts): quiet, nothing held.
    pub fn reset(&mut self) {
        self.vad.reset();
        self.partial.clear();
        self.held.clear();
        self.out.clear();
        self.phase = Phase::Quiet;
        self.voiced_run = 0;
    }

    fn frame(&mut self, frame: &[f32], cuts: &mut Vec<Cut>) {
        let score = self.vad.predict_f32(frame);
        self.frames += 1;
        if score >= self.threshold {
            self.voiced_run += 1;
        } else {
            self.voiced_run = 0;
        }
        let speech = self.voiced_run >= MIN_RUN_FRAMES;
        let now = self.frames;
        match self.phase {
            Phase::Quiet => {
                self.held.extend_from_slice(frame);
                if speech {
                    // The run began MIN_RUN_FRAMES ago: keep the pre-roll before that.
                    self.keep_last(self.preroll + MIN_RUN_FRAMES * FRAME);
                    self.phase = Phase::Candidate {
                        speech: 1,
                        last_speech: now,
                    };
                    self.confirm(cuts);
                } else {
                    self.trim_quiet();
                }
            }
            Phase::Candidate {
                speech: n,
                last_speech,
            } => {
                self.held.extend_from_slice(frame);
                if speech {
                    self.phase = Phase::Candidate {
                        speech: n + 1,
                        last_speech: now,
                    };
                    self.confirm(cuts);
                } else if now - last_speech >= self.pause_frames {
                    // Too little speech before a pause: a cough or a click, not a dictation.
                    self.rejected += 1;
                    self.phase = Phase::Quiet;
                    self.trim_quiet();
                }
            }
            Phase::Open { last_speech } => {
                self.out.extend_from_slice(frame);
                self.held.extend_from_slice(frame);
                self.trim_quiet();
                let last_speech = if speech { now } else { last_speech };
                self.phase = Phase::Open { last_speech };
                if now - last_speech >= self.pause_frames {
                    if !self.out.is_empty() {
                        cuts.push(Cut::More(std::mem::take(&mut self.out)));
                    }
                    cuts.push(Cut::Close);
                    self.phase = Phase::Quiet;
                }
            }
        }
    }

    /// A candidate with enough speech opens a dictation.
    fn confirm(&mut self, cuts: &mut Vec<Cut>) {
        if let Phase::Candidate {
            speech,
            last_speech,
        } = self.phase
        {
            if speech >= self.min_speech_frames {
                let mut first = Vec::with_capacity(self.held.len() + SAMPLE_RATE as usize);
                first.extend_from_slice(&self.held);
                cuts.push(Cut::Open(first));
                self.phase = Phase::Open { last_speech };
                self.trim_quiet();
            }
        }
    }

    /// Keeps the ring small: the pre-roll (trimmed in bulk, not every frame).
    fn trim_quiet(&mut self) {
        if self.held.len() > self.preroll * 2 + FRAME * 64 {
            self.keep_last(self.preroll);
        }
    }

    fn keep_last(&mut self, n: usize) {
        let excess = self.held.len().saturating_sub(n);
        if excess > 0 {
            self.held.drain(..excess);
        }
    }
}

/// Hands-free listening as the controller holds it: the microphone records all along, the
/// cutter opens an utterance at speech and ends it at the pause.
pub(crate) struct Listening {
    pub cutter: Cutter,
    /// Last speech (or the start, or the microphone coming back): idle stop counts from here.
    pub last_activity: Instant,
    /// The microphone is gone: said once; listening resumes when it is back.
    pub mic_lost: bool,
    /// Samples read from the stream (reused).
    pub scratch: Vec<f32>,
    /// When the audio server was last asked whether the source is still there.
    pub source_checked: Instant,
}

impl Listening {
    pub(crate) fn new(config: &Config) -> Listening {
        Listening {
            cutter: Listening::cutter(config),
            last_activity: Instant::now(),
            mic_lost: false,
            scratch: Vec::with_capacity(SAMPLE_RATE as usize),
            source_checked: Instant::now(),
        }
    }

    /// A cutter with the config's pause, pre-roll and VAD threshold.
    pub(crate) fn cutter(config: &Config) -> Cutter {
        Cutter::new(
            config.dictation.hands_free_pause_ms,
            config.dictation.preroll_ms,
            config.vad.threshold,
        )
    }
}

/// True when hands-free has heard no speech for `idle_s` seconds (0 = never stops).
pub fn idle_expired(idle_s: u32, quiet_for: Duration) -> bool {
    idle_s > 0 && quiet_for >= Duration::from_secs(idle_s as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real speech from the test assets (`$DICTUM_TEST_ASSETS`, default `../shared`).
    fn clip(name: &str) -> Vec<f32> {
        let dir = std::env::var_os("DICTUM_TEST_ASSETS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
            });
        let path = dir.join("audio/dev").join(name);
        match crate::audio::decode_16k(&path, 60) {
            Ok(d) => d.samples,
            Err(e) => panic!(
                "test asset {}: {e} (set DICTUM_TEST_ASSETS)",
                path.display()
            ),
        }
    }

    fn silence(ms: u32) -> Vec<f32> {
        vec![0.0; ms_to_samples(ms)]
    }

    /// Deterministic brown-ish noise at about `rms` (a fan, a room), no speech in it.
    fn room_noise(ms: u32, rms: f32) -> Vec<f32> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut v = 0.0f32;
        let out: Vec<f32> = (0..ms_to_samples(ms))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let white = (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                v = 0.98 * v + white;
                v
            })
            .collect();
        let now = (out.iter().map(|s| s * s).sum::<f32>() / out.len().max(1) as f32).sqrt();
        out.iter().map(|s| s * rms / now.max(1e-9)).collect()
    }

    /// Runs the cutter over `stream` fed in pieces of `piece`; returns the dictations.
    fn dictations(cutter: &mut Cutter, stream: &[f32], piece: usize) -> Vec<Vec<f32>> {
        let mut done = Vec::new();
        let mut open: Option<Vec<f32>> = None;
        for chunk in stream.chunks(piece) {
            for cut in cutter.push(chunk) {
                match cut {
                    Cut::Open(s) => {
                        assert!(open.is_none(), "opened twice");
                        open = Some(s);
                    }
                    Cut::More(s) => open.as_mut().expect("More while open").extend(s),
                    Cut::Close => done.push(open.take().expect("Close while open")),
                }
            }
        }
        done.extend(open);
        done
    }

    fn join(parts: &[&[f32]]) -> Vec<f32> {
        parts.iter().flat_map(|p| p.iter().copied()).collect()
    }

    /// The five sentences of the live hands-free test (`live_hands_free.rs`).
    const LIVE_SENTENCES: [&str; 5] = [
        "sns-0880.wav",
        "goforward.wav",
        "espeak-fox.wav",
        "cards-002.wav",
        "sns-0870.wav",
    ];

    #[test]
    fn sentences_with_one_second_gaps_are_cut_one_dictation_each() {
        let gap = silence(1000);
        let clips: Vec<Vec<f32>> = LIVE_SENTENCES.iter().map(|n| clip(n)).collect();
        let mut parts: Vec<&[f32]> = vec![&gap];
        for c in &clips {
            parts.push(c);
            parts.push(&gap);
        }
        let stream = join(&parts);
        let mut c = Cutter::new(700, 300, 0.5);
        let got = dictations(&mut c, &stream, 320);
        let lens: Vec<usize> = got.iter().map(|d| d.len() / 16).collect();
        assert_eq!(got.len(), 5, "one dictation a sentence; got {lens:?} ms");
        // Each holds its sentence whole (pre-roll before, the pause after).
        for (d, s) in got.iter().zip(&clips) {
            assert!(
                d.len() >= s.len() * 3 / 4 && d.len() <= s.len() + ms_to_samples(2000),
                "dictation of {} samples for a sentence of {}",
                d.len(),
                s.len()
            );
        }
    }

    #[test]
    fn a_pause_longer_than_the_gaps_keeps_them_in_one_dictation() {
        let a = clip("cards-002.wav");
        let gap = silence(1000);
        let stream = join(&[&gap, &a, &gap, &a, &silence(6000)]);
        let mut c = Cutter::new(5000, 300, 0.5);
        assert_eq!(dictations(&mut c, &stream, 1024).len(), 1);
    }

    #[test]
    fn silence_and_room_noise_open_nothing() {
        let mut c = Cutter::new(700, 300, 0.5);
        let stream = join(&[
            &silence(2000),
            &room_noise(10_000, 0.01),
            &room_noise(5000, 0.03),
        ]);
        assert!(dictations(&mut c, &stream, 320).is_empty());
        assert!(!c.is_open());
    }

    #[test]
    fn a_short_burst_is_not_a_dictation() {
        let a = clip("cards-002.wav");
        // The loudest 100 ms of the sentence: a "cough" of speech-like sound.
        let start = loudest(&a, ms_to_samples(100));
        let burst = &a[start..start + ms_to_samples(100)];
        let stream = join(&[&silence(1000), burst, &silence(2000)]);
        let mut c = Cutter::new(700, 300, 0.5);
        assert!(dictations(&mut c, &stream, 320).is_empty());
        assert_eq!(
            c.rejected(),
            1,
            "the VAD called it speech, the cutter dropped it"
        );
    }

    fn loudest(s: &[f32], len: usize) -> usize {
        (0..s.len().saturating_sub(len))
            .step_by(FRAME)
            .max_by(|&x, &y| {
                let e = |i: usize| s[i..i + len].iter().map(|v| v * v).sum::<f32>();
                e(x).total_cmp(&e(y))
            })
            .unwrap_or(0)
    }

    /// Where `d` (a dictation) starts in `stream`, searching from `from`.
    fn start_in(stream: &[f32], d: &[f32], from: usize) -> usize {
        let k = d.iter().position(|v| v.abs() > 0.02).expect("speech in it");
        let found = (from..stream.len() - FRAME)
            .find(|&i| stream[i..i + FRAME] == d[k..k + FRAME])
            .expect("the dictation is a stretch of the stream");
        assert_eq!(
            &stream[found - k..found - k + d.len()],
            d,
            "contiguous, nothing dropped"
        );
        found - k
    }

    #[test]
    fn no_sample_is_lost_between_two_dictations() {
        let a = clip("cards-002.wav");
        let b = clip("cards-001.wav");
        // A sentence 800 ms after another, with a 700 ms pause: the first dictation closes
        // just before the second sentence, whose dictation still starts with a pre-roll
        // before its first sound (the VAD calls speech ~275 ms after it there).
        let loud = |s: &[f32]| s.iter().position(|v| v.abs() > 0.02).unwrap_or(0);
        let stream = join(&[&silence(500), &a, &silence(800), &b, &silence(1000)]);
        let got = dictations(&mut Cutter::new(700, 300, 0.5), &stream, 777);
        assert_eq!(got.len(), 2);
        let sound = 500 * 16 + a.len() + 800 * 16 + loud(&b);
        let before = sound as isize - start_in(&stream, &got[1], 0) as isize;
        assert!(
            before >= ms_to_samples(150) as isize,
            "the second dictation starts only {before} samples before its first sound"
        );
        // And the first holds its whole sentence.
        let first = start_in(&stream, &got[0], 0);
        assert!(first < 500 * 16 && first + got[0].len() >= 500 * 16 + a.len() - 3200);
    }

    #[test]
    fn pieces_of_any_size_cut_the_same() {
        let a = clip("cards-002.wav");
        let stream = join(&[&silence(700), &a, &silence(1200), &a, &silence(900)]);
        let x = dictations(&mut Cutter::new(700, 300, 0.5), &stream, 160);
        let y = dictations(&mut Cutter::new(700, 300, 0.5), &stream, 4096);
        assert_eq!(x, y);
    }

    #[test]
    fn idle_expires_only_when_asked_to() {
        assert!(!idle_expired(0, Duration::from_secs(100_000)));
        assert!(!idle_expired(30, Duration::from_secs(29)));
        assert!(idle_expired(30, Duration::from_secs(30)));
    }
}
