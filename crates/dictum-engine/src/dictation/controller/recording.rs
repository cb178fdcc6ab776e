//! Recording an utterance: a press opens one (`start`: its history row stored at once, with
//! the focused window's profile), `pump` copies new audio from the stream into it (the
//! utterance spools it and lets its segmenter pick chunks for the worker), and `cancel`
//! drops the utterance under way (or keeps the pending ones from being typed).

use super::machine::{Ended, Trigger};
use super::Controller;
use crate::dictation::config::Mode;
use crate::dictation::messages::Job;
use crate::dictation::segmenter::Decision;
use crate::dictation::utterance::Utterance;
use crate::store::row::{RowState, RowUpdate};
use crate::store::spool::Spool;
use crate::store::{Entry, Source};
use crate::timing::ms_since;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Controller {
    pub(super) fn start(&mut self, at: Instant) {
        if self.live.is_some() {
            return;
        }
        if !self.ensure_capture() {
            self.cue(crate::audio::cues::Cue::Error);
            return;
        }
        let Some(capture) = self.mic.stream_mut() else {
            return;
        };
        if let Err(e) = capture.start() {
            self.notice(format!("cannot start recording: {e}"));
            self.cue(crate::audio::cues::Cue::Error);
            return;
        }
        let press_to_capture = ms_since(at);
        let preroll_ms = capture.preroll_ms();
        // Wake the model if it was unloaded; the pre-roll keeps the first words meanwhile.
        self.links.queue.push(Job::Prepare);
        let mut entry = Entry::new(Source::Mic);
        entry.press_to_capture_ms = Some(press_to_capture);
        match self.mic.take_cold_open() {
            // The press opened the stream: recorded from its first buffer, no pre-roll.
            Some(cold) => {
                entry.mic_start = Some("cold".into());
                entry.preroll_ms = Some(0);
                entry.press_to_first_sample_ms = Some(match cold.first_sample {
                    Some(t) => t.saturating_duration_since(at).as_secs_f64() * 1000.0,
                    None => press_to_capture,
                });
            }
            None => {
                entry.mic_start = Some("preroll".into());
                entry.preroll_ms = Some(preroll_ms as i64);
            }
        }
        self.links
            .shared
            .set_key_held(self.config.dictation.mode == Mode::PushToTalk);
        self.open_live(entry);
    }

    /// Copies new audio from the stream and lets the segmenter pick chunks to transcribe.
    pub(super) fn pump(&mut self) {
        if self.hands_free.is_some() {
            self.pump_hands_free();
            return;
        }
        let (Some(live), Some(capture)) = (self.live.as_mut(), self.mic.stream()) else {
            return;
        };
        let from = live.buf.len();
        capture.recorded_since(from, &mut live.buf);
        let decisions = live.absorb(from);
        self.queue_streamed(decisions);
        if self
            .live
            .as_mut()
            .is_some_and(|l| l.reached_limit(&self.config))
        {
            let secs = self.config.dictation.max_utterance_s;
            self.notice(format!(
                "this dictation reached the {secs} s limit ([dictation] max_utterance_s); it ends here"
            ));
            self.step(Trigger::Ended(Ended::LengthLimit), Instant::now());
        }
    }

    /// The worker's jobs for the utterance under way's `decisions`, when it is streamed.
    pub(super) fn queue_streamed(&mut self, decisions: Vec<Decision>) {
        let Some(live) = self.live.as_ref() else {
            return;
        };
        for job in live.streamed_jobs(&self.config, decisions) {
            self.links.queue.push(job);
        }
    }

    /// Makes `entry` the utterance being recorded: its row gets the model, the focused window
    /// and the profile that window picks, and is stored before anything else can fail.
    pub(super) fn open_live(&mut self, mut entry: Entry) {
        let profile = self.apps.describe(&mut entry, &self.config);
        let context = self.apps.press_read(&entry, &profile, &self.config);
        if let Err(e) = self.links.rows.create(&mut entry, RowState::Started) {
            self.notice(format!("could not store the dictation: {e}"));
        }
        let seq = self.flights.next_seq();
        let spool = Spool::for_history(self.history.path())
            .live(entry.id, seq)
            .map_err(|e| tracing::warn!("spool: cannot stream this dictation's audio: {e}"))
            .ok();
        let hands_free = self.hands_free.is_some();
        let mut live = Utterance::new(seq, entry, profile, &self.config, spool, hands_free);
        live.context = context;
        self.live = Some(live);
    }

    pub(super) fn cancel(&mut self) {
        self.links.shared.set_key_held(false);
        // A stored text being typed (retry, "type again") stops at its next word.
        self.links.shared.stop_stored();
        if let Some(live) = self.live.take() {
            let audio = match self.hands_free.as_ref() {
                // Listening goes on; the rest of this utterance is dropped until its pause.
                Some(_) => live.buf.len(),
                None => self
                    .mic
                    .stream_mut()
                    .and_then(|c| c.stop(0).ok())
                    .map_or(0, |c| c.pcm.samples.len()),
            };
            self.links.queue.push(Job::Forget(live.seq));
            let entry = live.cancelled(audio);
            let _ = self.links.rows.apply(RowUpdate::Failed(&entry));
            self.notice("dictation cancelled".into());
        } else if !self.flights.is_empty() {
            // Everything recorded so far is still transcribed and stored, just not typed.
            if let Ok(Some(last)) = self.history.last_id() {
                self.links.shared.cancel_upto.store(last, Ordering::SeqCst);
            }
            self.notice(format!(
                "{} pending dictation(s) will not be typed (they stay in history)",
                self.flights.len()
            ));
        }
    }
}
