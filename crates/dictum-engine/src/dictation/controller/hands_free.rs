//! Hands-free listening from the controller's side: turning it on and off (whether the
//! command, the key or "stop dictation" does so is `machine.rs`'s decision), reading the
//! stream into the cutter (`dictation/hands_free.rs`), which opens, feeds and closes
//! utterances, and following the microphone when it goes away and comes back. Every end of
//! an utterance here is a trigger (`Ended::HandsFree`, `Ended::LengthLimit`) through the
//! machine.

use super::machine::{Ended, Trigger};
use super::Controller;
use crate::dictation::hands_free::{Cut, Listening};
use crate::dictation::messages::{Event, Job};
use crate::store::{Entry, Source};
use std::time::Instant;

impl Controller {
    /// Starts listening: the microphone records from now on (its pre-roll first) and each
    /// stretch of speech becomes a dictation. A push-to-talk utterance under way was
    /// finished first (the machine's `StopAndDispatch`). Without a microphone, listening
    /// starts once one is back.
    pub(super) fn hands_free_on(&mut self) {
        self.links.shared.set_key_held(false);
        self.open_for_listening();
        let d = &self.config.dictation;
        let idle = match d.hands_free_idle_s {
            0 => String::new(),
            s => format!("; it stops after {s} s without speech"),
        };
        let message = format!(
            "hands-free on: listening; a pause of {} ms ends each dictation{idle}",
            d.hands_free_pause_ms
        );
        self.hands_free = Some(Listening::new(&self.config));
        self.notice_info(message);
        let _ = self.links.events.send(Event::HandsFree { on: true });
        // Starts the stream's recording now (or says the microphone is missing).
        self.pump_hands_free();
    }

    /// Stops listening; the dictation under way is finished (transcribed and typed).
    /// `message`: what to tell the user (none at quit).
    pub(super) fn hands_free_off(&mut self, at: Instant, message: Option<String>) {
        if self.hands_free.is_none() {
            return;
        }
        self.pump_hands_free();
        self.step(Trigger::Ended(Ended::HandsFree), at);
        self.hands_free = None;
        if let Some(c) = self.mic.stream_mut() {
            if c.is_recording() {
                let _ = c.stop(0);
            }
        }
        if let Some(m) = message {
            self.notice_info(m);
        }
        let _ = self.links.events.send(Event::HandsFree { on: false });
    }

    /// Hands-free: reads what the microphone recorded and lets the cutter open, feed and
    /// close utterances. Watches the microphone: gone, the utterance under way is finished
    /// and listening waits (housekeeping re-opens the device in the background); back, it
    /// listens again.
    pub(super) fn pump_hands_free(&mut self) {
        let Some(mic_lost) = self.hands_free.as_ref().map(|hf| hf.mic_lost) else {
            return;
        };
        if !self.mic.is_working() {
            let why = self.mic.why_missing();
            if let Some(live) = self.live.as_mut() {
                live.entry.error_kind = Some("device_lost".into());
                live.entry.error = Some(format!(
                    "the microphone failed during this dictation ({why}); what was captured \
                     was transcribed"
                ));
                self.step(Trigger::Ended(Ended::HandsFree), Instant::now());
            }
            if !mic_lost {
                self.notice(format!(
                    "hands-free: the microphone is gone ({why}); listening resumes when it is back"
                ));
            }
            if let Some(hf) = self.hands_free.as_mut() {
                hf.mic_lost = true;
            }
            return;
        }
        let (Some(hf), Some(capture)) = (self.hands_free.as_mut(), self.mic.stream_mut()) else {
            return;
        };
        if !capture.is_recording() {
            // A fresh stream (first start, or the microphone came back).
            if let Err(e) = capture.start() {
                let message = format!("hands-free: cannot start recording: {e}");
                self.notice(message);
                return;
            }
            hf.cutter.reset();
            if std::mem::take(&mut hf.mic_lost) {
                hf.last_activity = Instant::now();
                let _ = self.links.events.send(Event::Notice {
                    message: "hands-free: listening again".into(),
                });
            }
        }
        hf.scratch.clear();
        capture.take_recorded(&mut hf.scratch);
        if hf.scratch.is_empty() {
            return;
        }
        let rejected = hf.cutter.rejected();
        let cuts = hf.cutter.push(&hf.scratch);
        if hf.cutter.rejected() > rejected {
            tracing::debug!("hands-free: a burst too short to be speech was dropped");
        }
        for cut in cuts {
            match cut {
                Cut::Open(samples) => self.open_hands_free(samples),
                Cut::More(samples) => self.feed_hands_free(&samples),
                Cut::Close => {
                    if let Some(hf) = self.hands_free.as_mut() {
                        hf.last_activity = Instant::now();
                    }
                    self.step(Trigger::Ended(Ended::HandsFree), Instant::now());
                }
            }
        }
    }

    /// Speech: a new utterance starts with `samples` (its pre-roll and first speech); its
    /// history row is stored now.
    fn open_hands_free(&mut self, samples: Vec<f32>) {
        self.step(Trigger::Ended(Ended::HandsFree), Instant::now());
        if let Some(hf) = self.hands_free.as_mut() {
            hf.last_activity = Instant::now();
        }
        // Wake the model if it was unloaded.
        self.links.queue.push(Job::Prepare);
        let mut entry = Entry::new(Source::Mic);
        // No key press: the row's pre-roll is the cutter's (before the VAD's onset).
        entry.preroll_ms = self
            .hands_free
            .as_ref()
            .map(|hf| hf.cutter.preroll_ms() as i64);
        // The window focused when the speech began picks the profile.
        self.open_live(entry);
        self.feed_hands_free(&samples);
    }

    /// The next samples of the hands-free utterance under way, through its segmenter (the
    /// streamed chunks); at `max_utterance_s` it is ended and the next one goes on.
    fn feed_hands_free(&mut self, samples: &[f32]) {
        let Some(live) = self.live.as_mut() else {
            return;
        };
        let decisions = live.record(samples);
        self.queue_streamed(decisions);
        let full = self.live.as_ref().is_some_and(|l| {
            l.buf.len()
                >= self.config.dictation.max_utterance_s as usize * crate::SAMPLE_RATE as usize
        });
        if full {
            let secs = self.config.dictation.max_utterance_s;
            self.notice(format!(
                "this dictation reached the {secs} s limit ([dictation] max_utterance_s); \
                 it ends here and the next one starts"
            ));
            self.step(Trigger::Ended(Ended::LengthLimit), Instant::now());
            self.open_hands_free(Vec::new());
        }
    }
}
