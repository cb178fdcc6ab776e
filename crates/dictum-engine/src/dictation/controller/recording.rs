//! Recording an utterance: a press opens one (`start`: its history row stored at once, with
//! the focused window's profile), `pump` copies new audio from the stream into it, spools it
//! and lets the segmenter pick chunks for the worker (`queue_chunks`), and `cancel` drops the
//! utterance under way (or keeps the pending ones from being typed).

use super::{Controller, Live};
use crate::dictation::config::Mode;
use crate::dictation::segmenter::{Decision, Segmenter};
use crate::dictation::worker::{Job, Queue};
use crate::profile::Profile;
use crate::store::row::{RowState, RowUpdate, RowWriter};
use crate::store::spool::Spool;
use crate::store::{Entry, Outcome, Source};
use crate::timing::ms_since;
use crate::SAMPLE_RATE;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// Sends the segmenter's decisions to the worker; `samples` is the utterance so far.
pub(super) fn queue_chunks(
    queue: &Queue,
    utt: u64,
    profile: &Arc<Profile>,
    decisions: Vec<Decision>,
    samples: &[f32],
) {
    for d in decisions {
        let (start, end, commit) = match d {
            Decision::Commit { start, end } => (start, end, true),
            Decision::Speculate { start, end } => (start, end, false),
            Decision::Stale => {
                queue.push(Job::Stale(utt));
                continue;
            }
        };
        queue.push(Job::Chunk {
            utt,
            start,
            end,
            samples: samples[start..end].to_vec(),
            commit,
            profile: profile.clone(),
        });
    }
}

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
        // Wake the model if it was unloaded; the pre-roll keeps the first words meanwhile.
        self.queue.push(Job::Prepare);
        let mut entry = Entry::new(Source::Mic);
        entry.press_to_capture_ms = Some(press_to_capture);
        entry.preroll_ms = Some(capture.preroll_ms() as i64);
        self.shared
            .set_key_held(self.config.dictation.mode == Mode::PushToTalk);
        self.open_live(entry);
    }

    /// The profile for the window focused at the press (the row's class and title). An app
    /// that cannot be known (no X11, a Wayland compositor that does not tell) gets the
    /// default profile, said once in the log.
    pub(super) fn pick_profile(&mut self, entry: &Entry) -> Arc<Profile> {
        let (class, title) = (entry.app_class.as_deref(), entry.window_title.as_deref());
        if class.is_none() && title.is_none() {
            if !std::mem::replace(&mut self.unknown_app_told, true) {
                tracing::info!("unknown app → default profile");
            }
            return self.profiles.default_profile();
        }
        let profile = self.profiles.pick(class, title);
        // A title can name a document: only at debug level (`dictum --verbose`).
        tracing::info!(profile = %profile.name, class = class.unwrap_or(""), "profile picked");
        tracing::debug!(
            title = title.unwrap_or(""),
            "profile picked for this window"
        );
        profile
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
        let fresh = from..live.buf.len();
        if fresh.is_empty() {
            return;
        }
        if let Some(w) = live.spool.as_mut() {
            w.sync(&live.buf);
        }
        let decisions = live.seg.push(&live.buf[fresh]);
        if live.streamed(&self.config) {
            queue_chunks(&self.queue, live.seq, &live.profile, decisions, &live.buf);
        }
        let max = self.config.dictation.max_utterance_s as usize * SAMPLE_RATE as usize;
        if live.buf.len() >= max && !live.limit_told {
            live.limit_told = true;
            let secs = self.config.dictation.max_utterance_s;
            self.notice(format!(
                "this dictation reached the {secs} s limit ([dictation] max_utterance_s); it ends here"
            ));
            self.stop(Instant::now());
        }
    }

    /// Makes `entry` the utterance being recorded: its row gets the model, the focused window
    /// and the profile that window picks, and is stored before anything else can fail.
    pub(super) fn open_live(&mut self, mut entry: Entry) {
        let profile = self.describe_and_store(&mut entry);
        let seg = Segmenter::new(&self.config.dictation, self.config.vad.threshold);
        let seq = self.next_seq;
        self.next_seq += 1;
        let spool = Spool::for_history(self.history.path())
            .live(entry.id, seq)
            .map_err(|e| tracing::warn!("spool: cannot stream this dictation's audio: {e}"))
            .ok();
        let partial = super::partial::Published::new(entry.press_to_capture_ms);
        self.live = Some(Live {
            seq,
            spool,
            entry,
            buf: Vec::with_capacity(SAMPLE_RATE as usize * 30),
            seg,
            limit_told: false,
            progress_lost: false,
            profile,
            hands_free: self.hands_free.is_some(),
            partial,
        });
    }

    /// Fills a new utterance's row with the model, the focused window and the profile that
    /// window picks (its language), and stores it.
    pub(super) fn describe_and_store(&mut self, entry: &mut Entry) -> Arc<Profile> {
        entry.model = Some(self.config.stt.model.clone());
        if let Some(probe) = &self.window_probe {
            let (class, title) = probe();
            entry.app_class = class;
            entry.window_title = title;
        }
        let profile = self.pick_profile(entry);
        entry.language = Some(profile.language(&self.config).to_string());
        entry.profile = Some(profile.name.clone());
        if let Err(e) = RowWriter::new(&self.history).create(entry, RowState::Started) {
            self.notice(format!("could not store the dictation: {e}"));
        }
        profile
    }

    pub(super) fn cancel(&mut self) {
        self.shared.set_key_held(false);
        // A stored text being typed (retry, "type again") stops at its next word.
        self.shared.stop_stored();
        if let Some(mut live) = self.live.take() {
            let audio = match self.hands_free.as_ref() {
                // Listening goes on; the rest of this utterance is dropped until its pause.
                Some(_) => live.buf.len(),
                None => self
                    .mic
                    .stream_mut()
                    .and_then(|c| c.stop(0).ok())
                    .map_or(0, |c| c.pcm.samples.len()),
            };
            self.queue.push(Job::Forget(live.seq));
            if let Some(w) = live.spool.take() {
                w.discard();
            }
            live.entry.outcome = Outcome::Error;
            live.entry.error_kind = Some("cancelled".into());
            live.entry.error = Some("cancelled with the cancel key; nothing was typed".into());
            live.entry.audio_ms = Some((audio as u64 * 1000 / SAMPLE_RATE as u64) as i64);
            let _ = RowWriter::new(&self.history).apply(RowUpdate::Failed(&live.entry));
            self.notice("dictation cancelled".into());
        } else if !self.flights.is_empty() {
            // Everything recorded so far is still transcribed and stored, just not typed.
            if let Ok(Some(last)) = self.history.last_id() {
                self.shared.cancel_upto.store(last, Ordering::SeqCst);
            }
            self.notice(format!(
                "{} pending dictation(s) will not be typed (they stay in history)",
                self.flights.len()
            ));
        }
    }
}
