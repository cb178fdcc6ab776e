//! One recorded utterance and everything it owns (issue 39): its history row (`entry`), its
//! samples, its streaming segmenter, the writer that spools its audio, the per-app profile
//! its window picked, the `partial` events published for it and, in edit mode, the edit's
//! request. The controller holds at most one; what happens to it (recorded, released with
//! its post-roll, finished, cancelled) is decided here from its own state, and handed out as
//! data: the segmenter's decisions, the worker's jobs, the finished [`Finish`], the
//! cancelled row. `dictum bench live` drives the same type, so the release it measures is
//! the controller's.

use crate::config::Config;
use crate::dictation::messages::{Finish, Job, Partial};
use crate::dictation::release::{self, AtRelease, Release};
use crate::dictation::segmenter::{Decision, Segmenter};
use crate::profile::Profile;
use crate::store::spool::LiveWriter;
use crate::store::{Entry, Outcome};
use crate::timing::StageTimings;
use crate::SAMPLE_RATE;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The utterance being recorded.
pub struct Utterance {
    /// Sequence number in this process (the row id may be missing: database locked).
    pub seq: u64,
    /// Its history row, stored when it was opened.
    pub entry: Entry,
    /// Samples recorded so far (index 0 = first pre-roll sample).
    pub buf: Vec<f32>,
    seg: Segmenter,
    limit_told: bool,
    /// The worker that had this utterance's streamed chunks was replaced (stuck): no more
    /// chunks, and the release transcribes it whole.
    pub progress_lost: bool,
    /// Streams the samples to the spool as they are captured (`store::spool`): a kill
    /// mid-utterance leaves its audio behind.
    spool: Option<LiveWriter>,
    /// The per-app profile the focused window picked at the press; it goes with every job
    /// of this utterance.
    pub profile: Arc<Profile>,
    /// Opened by hands-free listening (no key held): its key commands need more care
    /// (`commands::trust`).
    pub hands_free: bool,
    partial: Published,
    /// Edit mode: what the edit key's press captured; it goes with the utterance's finish.
    pub edit: Option<crate::edit::Request>,
    /// The text around the cursor, being read since the press for the LLM
    /// (`dictation/caret.rs`); it goes with the utterance's finish.
    pub(crate) context: Option<Arc<crate::dictation::llm_context::PressRead>>,
}

impl Utterance {
    /// A new utterance for `entry` (already stored), with a fresh segmenter.
    pub fn new(
        seq: u64,
        entry: Entry,
        profile: Arc<Profile>,
        config: &Config,
        spool: Option<LiveWriter>,
        hands_free: bool,
    ) -> Utterance {
        let partial = Published::new(entry.press_to_capture_ms);
        Utterance {
            seq,
            entry,
            buf: Vec::with_capacity(SAMPLE_RATE as usize * 30),
            seg: Segmenter::new(&config.dictation, config.vad.threshold),
            limit_told: false,
            progress_lost: false,
            spool,
            profile,
            hands_free,
            partial,
            edit: None,
            context: None,
        }
    }

    /// This utterance is transcribed while it is recorded: `[dictation] streaming` is on and
    /// the worker that had its chunks was not replaced (`progress_lost`).
    pub fn streamed(&self, config: &Config) -> bool {
        config.dictation.streaming && !self.progress_lost
    }

    /// The segmenter, for what it knows (committed, a valid speculation, silence).
    pub fn segmenter(&self) -> &Segmenter {
        &self.seg
    }

    /// Samples `from..` were just appended to `buf`: spooled, and through the segmenter.
    pub fn absorb(&mut self, from: usize) -> Vec<Decision> {
        if from >= self.buf.len() {
            return Vec::new();
        }
        if let Some(w) = self.spool.as_mut() {
            w.sync(&self.buf);
        }
        self.seg.push(&self.buf[from..])
    }

    /// Appends `samples` and lets the segmenter see them ([`Utterance::absorb`]).
    pub fn record(&mut self, samples: &[f32]) -> Vec<Decision> {
        let from = self.buf.len();
        self.buf.extend_from_slice(samples);
        self.absorb(from)
    }

    /// True once, when the utterance reaches `[dictation] max_utterance_s`.
    pub fn reached_limit(&mut self, config: &Config) -> bool {
        let max = config.dictation.max_utterance_s as usize * SAMPLE_RATE as usize;
        if self.buf.len() >= max && !self.limit_told {
            self.limit_told = true;
            return true;
        }
        false
    }

    /// The worker's jobs for the segmenter's `decisions` over `samples` (the utterance so
    /// far): commits and speculations to transcribe, stale speculations to stop.
    pub(crate) fn jobs(&self, decisions: Vec<Decision>, samples: &[f32]) -> Vec<Job> {
        decisions
            .into_iter()
            .map(|d| match d {
                Decision::Stale => Job::Stale(self.seq),
                Decision::Commit { start, end } | Decision::Speculate { start, end } => {
                    Job::Chunk {
                        utt: self.seq,
                        start,
                        end,
                        samples: samples[start..end].to_vec(),
                        commit: matches!(d, Decision::Commit { .. }),
                        profile: self.profile.clone(),
                        context: self.context.clone(),
                    }
                }
            })
            .collect()
    }

    /// [`Utterance::jobs`] when the utterance is streamed, none otherwise.
    pub(crate) fn streamed_jobs(&self, config: &Config, decisions: Vec<Decision>) -> Vec<Job> {
        if self.streamed(config) {
            self.jobs(decisions, &self.buf)
        } else {
            Vec::new()
        }
    }

    /// The key went up: how much post-roll to record and whether to type before it, by the
    /// product's one rule (`dictation::release`), and the speculation to start on what was
    /// said while the post-roll is recorded (when the rule says so and there is one).
    pub fn release(&mut self, config: &Config) -> (Release, Option<Decision>) {
        let rule = release::on_release(
            &config.dictation,
            AtRelease {
                heard_speech: self.seg.heard_speech(),
                silent_ms: self.seg.trailing_silence_ms(),
                streaming: config.dictation.streaming,
                live_progress: self.streamed(config),
            },
        );
        let speculation = if rule.speculate {
            self.seg.at_release()
        } else {
            None
        };
        (rule, speculation)
    }

    /// The post-roll arrived: `samples` is the whole recording (what `buf` holds and the
    /// post-roll after it); the segmenter sees the part after `buf`.
    pub fn post_roll(&mut self, samples: &[f32]) -> Vec<Decision> {
        match samples.get(self.buf.len()..) {
            Some(rest) if !rest.is_empty() => self.seg.push(rest),
            _ => Vec::new(),
        }
    }

    /// Hands-free's end (a pause, hands-free off, the microphone gone): the last speculation
    /// to start, with the trailing silence as the post-roll.
    pub fn end_hands_free(&mut self, config: &Config) -> Option<Decision> {
        let last = if self.streamed(config) {
            self.seg.at_release()
        } else {
            None
        };
        let silent = self.seg.trailing_silence_ms().min(i64::MAX as u64) as i64;
        self.entry.post_roll_ms = Some(silent);
        last
    }

    /// The finished utterance for the worker: `samples` is everything recorded (the spool
    /// is completed with it), with the streamed progress when there is one.
    /// `before_post_roll`: released while the voice was already silent, the post-roll not
    /// in it (its streamed progress is always used then: the rule requires it).
    pub(crate) fn into_finish(
        mut self,
        samples: Vec<f32>,
        release_at: Instant,
        config: &Config,
        before_post_roll: bool,
    ) -> Finish {
        if let Some(w) = self.spool.take() {
            w.finish(&samples);
        }
        let (committed, speculation_end) = if before_post_roll || self.streamed(config) {
            (self.seg.committed(), self.seg.valid_speculation())
        } else {
            (0, None)
        };
        Finish {
            seq: self.seq,
            entry: self.entry,
            samples: Arc::new(samples),
            committed,
            speculation_end,
            release_at,
            timings: StageTimings::default(),
            profile: self.profile,
            before_post_roll,
            hands_free: self.hands_free,
            edit: self.edit,
            context: self.context,
        }
    }

    /// Everything recorded so far, leaving the utterance empty.
    pub fn take_samples(&mut self) -> Vec<f32> {
        std::mem::take(&mut self.buf)
    }

    /// Dropped with the cancel key after `audio_samples` of audio: its spooled audio is
    /// deleted and its row says so (nothing is typed).
    pub fn cancelled(mut self, audio_samples: usize) -> Entry {
        if let Some(w) = self.spool.take() {
            w.discard();
        }
        let mut entry = self.entry;
        entry.outcome = Outcome::Error;
        entry.error_kind = Some("cancelled".into());
        entry.error = Some("cancelled with the cancel key; nothing was typed".into());
        entry.audio_ms = Some((audio_samples as u64 * 1000 / SAMPLE_RATE as u64) as i64);
        entry
    }

    /// The worker's words so far for utterance `seq`, as a `partial` event when they are
    /// this utterance's, its progress is intact, and they are new.
    pub fn partial(&mut self, seq: u64, committed: String, speculative: String) -> Option<Partial> {
        if self.seq != seq || self.progress_lost {
            return None;
        }
        self.partial
            .next(self.seq, self.entry.id, (committed, speculative))
    }
}

/// The `partial` events published for one dictation: numbered from 1, timed from the press
/// (the capture's start lag counted), and never the same words twice in a row.
struct Published {
    since: Instant,
    count: u64,
    last: Option<(String, String)>,
}

impl Published {
    fn new(press_to_capture_ms: Option<f64>) -> Published {
        let now = Instant::now();
        let lag = Duration::from_secs_f64(press_to_capture_ms.unwrap_or(0.0).max(0.0) / 1000.0);
        Published {
            since: now.checked_sub(lag).unwrap_or(now),
            count: 0,
            last: None,
        }
    }

    fn next(
        &mut self,
        dictation: u64,
        id: Option<i64>,
        words: (String, String),
    ) -> Option<Partial> {
        if self.last.as_ref() == Some(&words) {
            return None;
        }
        self.count += 1;
        let (committed, speculative) = words.clone();
        self.last = Some(words);
        Some(Partial {
            seq: self.count,
            dictation,
            id,
            committed,
            speculative,
            ms: self.since.elapsed().as_secs_f64() * 1000.0,
        })
    }
}

#[cfg(test)]
mod tests;
