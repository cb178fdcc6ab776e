//! Ending an utterance and handing it to the worker: the release (`stop`: the post-roll, or
//! typing before it when the voice was already silent), the hands-free end
//! (`finish_recorded`), and the `Finish` job with its deadline (`send_finish`), or, when
//! too many wait, the audio kept and the row failed (`overflow`). What the release decides
//! is the utterance's (`Utterance::release`, the rule `dictum bench live` measures); this
//! file records the post-roll and sends what it says.

use super::flights::{budget, Flight};
use super::Controller;
use crate::dictation::messages::{Finish, Job};
use crate::dictation::segmenter::Segmenter;
use crate::dictation::utterance::Utterance;
use crate::store::row::{RowUpdate, WholeRow};
use crate::store::spool::{retry_hint, Spool};
use crate::store::{Entry, Outcome, Source};
use crate::SAMPLE_RATE;
use std::sync::Arc;
use std::time::Instant;

impl Controller {
    /// Ends the utterance under way: only `step` calls this (every stop is a trigger
    /// through `machine::decide`).
    pub(super) fn stop(&mut self, at: Instant) {
        if self.hands_free.is_some() {
            self.finish_recorded(at);
            return;
        }
        self.pump();
        self.links.shared.set_key_held(false);
        let Some(mut live) = self.live.take() else {
            return;
        };
        if self.mic.stream_mut().is_none() {
            return;
        }
        // Post-roll keeps the last word: `post_roll_ms` of audio after the last speech. The
        // silence already recorded before the release counts, so only the rest is recorded.
        // Whisper starts on what was said while the post-roll is recorded; speech in the
        // post-roll makes this pass stale and it is stopped (worker: abort).
        let (rule, speculation) = live.release(&self.config);
        if let Some(d) = speculation {
            for job in live.jobs(vec![d], &live.buf) {
                self.links.queue.push(job);
            }
        }
        if rule.before_post_roll {
            let silent_ms = live.segmenter().trailing_silence_ms();
            self.type_before_post_roll(live, rule.post_roll_ms, silent_ms, at);
            return;
        }
        let Some(capture) = self.mic.stream_mut() else {
            return;
        };
        let captured = match capture.stop(rule.post_roll_ms) {
            Ok(c) => c,
            Err(e) => {
                self.notice(format!("recording failed: {e}"));
                self.cue(crate::audio::cues::Cue::Error);
                live.entry.outcome = Outcome::Error;
                live.entry.error_kind = Some("capture".into());
                live.entry.error = Some(e.to_string());
                let _ = self.links.rows.apply(RowUpdate::Failed(&live.entry));
                return;
            }
        };
        live.entry.post_roll_ms = Some(rule.post_roll_ms as i64);
        if let Some(err) = &captured.device_error {
            self.notice(format!(
                "the microphone failed during this dictation ({err}); what was captured is transcribed and the device will be re-opened when it is back"
            ));
            live.entry.error_kind = Some("device_lost".into());
            live.entry.error = Some(err.clone());
            // PulseAudio may have moved the stream to another source: drop it, so that
            // housekeeping re-opens the configured device once it is there again.
            self.mic.discard();
        }
        let samples = captured.pcm.samples;
        // The last bit of audio (post-roll) through the segmenter too.
        let decisions = live.post_roll(&samples);
        if live.streamed(&self.config) {
            for job in live.jobs(decisions, &samples) {
                self.links.queue.push(job);
            }
        }
        let finish = live.into_finish(samples, at, &self.config, false);
        self.send_finish(finish);
    }

    /// The voice had been silent `silent_ms` at the release: the last word is over, so the
    /// text goes out as soon as it is transcribed (the release speculation, started above,
    /// usually is the tail) instead of after the post-roll. The post-roll is still recorded,
    /// and speech in it (the user went on after letting go) becomes a dictation of its own,
    /// stored and typed after this one: nothing said is dropped.
    fn type_before_post_roll(
        &mut self,
        mut live: Utterance,
        post: u32,
        silent_ms: u64,
        at: Instant,
    ) {
        let released_at = live.buf.len();
        // This dictation's audio ends at the release: no post-roll in it.
        live.entry.post_roll_ms = Some(0);
        let samples = live.take_samples();
        let finish = live.into_finish(samples, at, &self.config, true);
        self.send_finish(finish);
        let Some(capture) = self.mic.stream_mut() else {
            return;
        };
        let captured = match capture.stop(post) {
            Ok(c) => c,
            Err(e) => {
                self.notice(format!("recording the post-roll failed: {e}"));
                return;
            }
        };
        if let Some(err) = &captured.device_error {
            self.notice(format!(
                "the microphone failed after this dictation ({err}); it will be re-opened when it is back"
            ));
            self.mic.discard();
        }
        let samples = captured.pcm.samples;
        // The post-roll, led in by the silence before the release (no word of the first
        // dictation is in it).
        let lead = (silent_ms as usize * SAMPLE_RATE as usize / 1000).min(released_at);
        let Some(after) = samples.get(released_at - lead..) else {
            return;
        };
        let mut probe = Segmenter::new(&self.config.dictation, self.config.vad.threshold);
        probe.push(after);
        if !probe.heard_speech() {
            return;
        }
        tracing::info!("speech in the post-roll: transcribed as a dictation of its own");
        self.open_live(Entry::new(Source::Mic));
        let decisions = match self.live.as_mut() {
            Some(next) => {
                next.entry.preroll_ms = Some((lead * 1000 / SAMPLE_RATE as usize) as i64);
                next.record(after)
            }
            None => return,
        };
        if self.config.dictation.streaming {
            if let Some(next) = self.live.as_ref() {
                for job in next.jobs(decisions, &next.buf) {
                    self.links.queue.push(job);
                }
            }
        }
        self.finish_recorded(Instant::now());
    }

    /// The utterance under way is finished with what is recorded, like a released
    /// push-to-talk one, its trailing silence as its post-roll: hands-free at the pause after
    /// speech (or hands-free off, or the microphone gone), and the dictation made of speech
    /// in a post-roll (`type_before_post_roll`).
    fn finish_recorded(&mut self, at: Instant) {
        let Some(mut live) = self.live.take() else {
            return;
        };
        if let Some(d) = live.end_hands_free(&self.config) {
            for job in live.jobs(vec![d], &live.buf) {
                self.links.queue.push(job);
            }
        }
        let samples = live.take_samples();
        let finish = live.into_finish(samples, at, &self.config, false);
        self.send_finish(finish);
    }

    /// Queues `f` for the worker with its deadline (or stores it when too many wait).
    fn send_finish(&mut self, mut f: Finish) {
        f.entry.audio_ms = Some((f.samples.len() as u64 * 1000 / SAMPLE_RATE as u64) as i64);
        if self.flights.len() >= self.config.dictation.queue_max as usize {
            let samples = Arc::try_unwrap(f.samples).unwrap_or_else(|shared| (*shared).clone());
            self.overflow(f.seq, f.entry, samples);
            return;
        }
        self.flights.insert(
            f.seq,
            Flight {
                id: f.entry.id,
                samples: f.samples.clone(),
                budget: budget(f.samples.len(), &self.config, &f.profile),
            },
        );
        self.links.queue.push(Job::Finish(Box::new(f)));
    }

    /// Too many utterances waiting: store this one's audio and row instead of queueing it.
    fn overflow(&mut self, seq: u64, mut entry: Entry, samples: Vec<f32>) {
        let id = entry.id.unwrap_or(0);
        self.links.queue.push(Job::Forget(seq));
        // The audio goes to the spool whatever history.keep_audio says: it is the only copy.
        let where_ = match Spool::for_history(self.history.path()).keep(entry.id, seq, &samples) {
            Ok(file) => {
                entry.audio_path = Some(file.display().to_string());
                match entry.id {
                    Some(id) => retry_hint(id),
                    None => format!("its audio is kept at {}", file.display()),
                }
            }
            Err(e) => format!("its audio could not be kept: {e}"),
        };
        entry.outcome = Outcome::Error;
        entry.error_kind = Some("queue_full".into());
        let message = format!(
            "{} dictations are already waiting ([dictation] queue_max); this one was not transcribed: {where_}",
            self.flights.len()
        );
        entry.error = Some(message.clone());
        if let Err(e) = self
            .links
            .rows
            .write_or_journal(&mut entry, WholeRow::Failed)
        {
            tracing::warn!("could not store dictation {id}: {e}");
        }
        self.notice(message);
    }
}
