//! Ending an utterance and handing it to the worker: the release (`stop`: the post-roll, or
//! typing before it when the voice was already silent), the hands-free end
//! (`finish_recorded`), and the `Finish` job with its deadline (`dispatch`, `send_finish`),
//! or, when too many wait, the audio kept and the row failed (`overflow`).

use super::recording::queue_chunks;
use super::supervise::budget;
use super::{Controller, Flight, Live};
use crate::dictation::release::{self, AtRelease};
use crate::dictation::segmenter::Segmenter;
use crate::dictation::worker::{Finish, Job};
use crate::store::journal;
use crate::store::row::{RowUpdate, RowWriter, WholeRow};
use crate::store::spool::{retry_hint, Spool};
use crate::store::{Entry, Outcome, Source};
use crate::timing::StageTimings;
use crate::SAMPLE_RATE;
use std::sync::Arc;
use std::time::Instant;

impl Controller {
    pub(super) fn stop(&mut self, at: Instant) {
        if self.hands_free.is_some() {
            self.finish_recorded(at);
            return;
        }
        self.pump();
        self.shared.set_key_held(false);
        let Some(mut live) = self.live.take() else {
            return;
        };
        let Some(capture) = self.mic.stream_mut() else {
            return;
        };
        // Post-roll keeps the last word: `post_roll_ms` of audio after the last speech. The
        // silence already recorded before the release counts, so only the rest is recorded.
        // The rule is `dictation::release` (`dictum bench live` applies the same one).
        let silent_ms = live.seg.trailing_silence_ms();
        let rule = release::on_release(
            &self.config.dictation,
            AtRelease {
                heard_speech: live.seg.heard_speech(),
                silent_ms,
                streaming: self.config.dictation.streaming,
                live_progress: live.streamed(&self.config),
            },
        );
        let post = rule.post_roll_ms;
        // Whisper starts on what was said while the post-roll is recorded; speech in the
        // post-roll makes this pass stale and it is stopped (worker: abort).
        if rule.speculate {
            if let Some(d) = live.seg.at_release() {
                queue_chunks(&self.queue, live.seq, &live.profile, vec![d], &live.buf);
            }
        }
        if rule.before_post_roll {
            self.type_before_post_roll(live, post, silent_ms, at);
            return;
        }
        let captured = match capture.stop(post) {
            Ok(c) => c,
            Err(e) => {
                self.notice(format!("recording failed: {e}"));
                self.cue(crate::audio::cues::Cue::Error);
                live.entry.outcome = Outcome::Error;
                live.entry.error_kind = Some("capture".into());
                live.entry.error = Some(e.to_string());
                let _ = RowWriter::new(&self.history).apply(RowUpdate::Failed(&live.entry));
                return;
            }
        };
        live.entry.post_roll_ms = Some(post as i64);
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
        if samples.len() > live.buf.len() {
            let decisions = live.seg.push(&samples[live.buf.len()..]);
            if live.streamed(&self.config) {
                queue_chunks(&self.queue, live.seq, &live.profile, decisions, &samples);
            }
        }
        self.dispatch(live, samples, at);
    }

    /// The voice had been silent `silent_ms` at the release: the last word is over, so the
    /// text goes out as soon as it is transcribed (the release speculation, started above,
    /// usually is the tail) instead of after the post-roll. The post-roll is still recorded,
    /// and speech in it (the user went on after letting go) becomes a dictation of its own,
    /// stored and typed after this one: nothing said is dropped.
    pub(super) fn type_before_post_roll(
        &mut self,
        mut live: Live,
        post: u32,
        silent_ms: u64,
        at: Instant,
    ) {
        let released_at = live.buf.len();
        // This dictation's audio ends at the release: no post-roll in it.
        live.entry.post_roll_ms = Some(0);
        if let Some(w) = live.spool.take() {
            w.finish(&live.buf);
        }
        self.send_finish(Finish {
            seq: live.seq,
            committed: live.seg.committed(),
            speculation_end: live.seg.valid_speculation(),
            entry: live.entry,
            samples: Arc::new(live.buf),
            release_at: at,
            timings: StageTimings::default(),
            profile: live.profile,
            before_post_roll: true,
            hands_free: live.hands_free,
        });
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
        if let Some(next) = self.live.as_mut() {
            next.entry.preroll_ms = Some((lead * 1000 / SAMPLE_RATE as usize) as i64);
            next.buf.extend_from_slice(after);
            let decisions = next.seg.push(after);
            if self.config.dictation.streaming {
                queue_chunks(&self.queue, next.seq, &next.profile, decisions, &next.buf);
            }
        }
        self.finish_recorded(Instant::now());
    }

    /// The utterance under way is finished with what is recorded, like a released
    /// push-to-talk one, its trailing silence as its post-roll: hands-free at the pause after
    /// speech (or hands-free off, or the microphone gone), and the dictation made of speech
    /// in a post-roll (`type_before_post_roll`).
    pub(super) fn finish_recorded(&mut self, at: Instant) {
        let Some(mut live) = self.live.take() else {
            return;
        };
        if live.streamed(&self.config) {
            if let Some(d) = live.seg.at_release() {
                queue_chunks(&self.queue, live.seq, &live.profile, vec![d], &live.buf);
            }
        }
        live.entry.post_roll_ms = Some(live.seg.trailing_silence_ms().min(i64::MAX as u64) as i64);
        let samples = std::mem::take(&mut live.buf);
        self.dispatch(live, samples, at);
    }

    /// Hands the finished utterance (`samples`, everything recorded) to the worker: its
    /// streamed progress, its deadline, its `Finish` job.
    pub(super) fn dispatch(&mut self, mut live: Live, samples: Vec<f32>, at: Instant) {
        if let Some(w) = live.spool.take() {
            w.finish(&samples);
        }
        let (committed, speculation_end) = if live.streamed(&self.config) {
            (live.seg.committed(), live.seg.valid_speculation())
        } else {
            (0, None)
        };
        self.send_finish(Finish {
            seq: live.seq,
            entry: live.entry,
            samples: Arc::new(samples),
            committed,
            speculation_end,
            release_at: at,
            timings: StageTimings::default(),
            profile: live.profile,
            before_post_roll: false,
            hands_free: live.hands_free,
        });
    }

    /// Queues `f` for the worker with its deadline (or stores it when too many wait).
    pub(super) fn send_finish(&mut self, mut f: Finish) {
        f.entry.audio_ms = Some((f.samples.len() as u64 * 1000 / SAMPLE_RATE as u64) as i64);
        if self.flights.len() >= self.config.dictation.queue_max as usize {
            let samples = Arc::try_unwrap(f.samples).unwrap_or_else(|shared| (*shared).clone());
            self.overflow(f.seq, f.entry, samples);
            return;
        }
        if self.flights.is_empty() {
            self.oldest_since = Instant::now();
        }
        self.flights.insert(
            f.seq,
            Flight {
                id: f.entry.id,
                samples: f.samples.clone(),
                budget: budget(f.samples.len(), &self.config, &f.profile),
            },
        );
        self.queue.push(Job::Finish(Box::new(f)));
    }

    /// Too many utterances waiting: store this one's audio and row instead of queueing it.
    pub(super) fn overflow(&mut self, seq: u64, mut entry: Entry, samples: Vec<f32>) {
        let id = entry.id.unwrap_or(0);
        self.queue.push(Job::Forget(seq));
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
        if let Err(e) =
            journal::write_or_journal(&RowWriter::new(&self.history), &mut entry, WholeRow::Failed)
        {
            tracing::warn!("could not store dictation {id}: {e}");
        }
        self.notice(message);
    }
}
