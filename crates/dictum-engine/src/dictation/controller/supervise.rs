//! Supervision of the utterances in flight: each has a deadline (`budget`) counted from when
//! it is the oldest; past it the utterance is given up on (its audio kept, its row failed),
//! a stuck worker is replaced by a fresh one, and at quit the grace period's leftovers are
//! marked interrupted.

use super::flights::Flight;
use super::Controller;
use crate::dictation::messages::Job;
use crate::dictation::queue::Queue;
use crate::store::row::RowUpdate;
use crate::store::spool::{retry_hint, Spool};
use crate::store::Outcome;
use std::sync::Arc;

impl Controller {
    /// Gives up on the oldest utterance once it is past its deadline: its audio is kept, its
    /// row failed (unless a result got there first), and it no longer counts, so a stuck
    /// stage cannot fill the queue. A result that still comes is stored, never typed.
    pub(super) fn supervise(&mut self) {
        let Some((seq, flight, waited)) = self.flights.overdue() else {
            return;
        };
        self.links.shared.abandon(seq);
        let what = format!(
            "dictation {} got no result within {} s (a stage is stuck; see the log)",
            flight
                .id
                .map_or("(unsaved)".to_string(), |id| format!("#{id}")),
            waited.as_secs()
        );
        let kept = self.give_up(seq, &flight, Outcome::Error, "timeout", &what);
        // A worker that has been on one job for this whole budget is stuck (a whisper or LLM
        // call that never returns cannot be interrupted): without a fresh one, every later
        // dictation would wait behind it and time out too.
        let stuck = self
            .links
            .queue
            .busy_for()
            .is_some_and(|busy| busy >= flight.budget);
        let fresh = if stuck {
            match self.restart_worker(seq) {
                Ok(()) => "; a fresh transcription stage was started",
                Err(e) => {
                    self.notice(format!("could not start a fresh transcription stage: {e}"));
                    ""
                }
            }
        } else {
            ""
        };
        self.notice(format!("{what}; {kept}{fresh}; new dictations go on"));
    }

    /// Replaces a stuck worker: a new queue and worker (its own engine, model loaded again)
    /// take the waiting utterances; the stuck thread is left to end by itself and cannot
    /// type (its utterance, `abandoned`, was given up on). The worker's progress on the
    /// utterances it had not finished is lost with it, so they are redone whole.
    pub(super) fn restart_worker(&mut self, abandoned: u64) -> Result<(), String> {
        let fresh = Arc::new(Queue::default());
        // Started first: if no worker can start, the old queue keeps its jobs.
        self.links.seed.spawn(&self.config, fresh.clone())?;
        let old = std::mem::replace(&mut self.links.queue, fresh.clone());
        let waiting = old.retire();
        for job in waiting {
            match job {
                Job::Finish(mut f) if f.seq != abandoned => {
                    f.committed = 0;
                    f.speculation_end = None;
                    fresh.push(Job::Finish(f));
                }
                // Chunks fed the old worker's progress, which is gone; the new worker was
                // started with the current config.
                _ => {}
            }
        }
        if let Some(live) = &mut self.live {
            live.progress_lost = true;
        }
        Ok(())
    }

    /// Quit's grace is over: what is still in flight is marked `interrupted`, audio kept.
    pub(super) fn interrupt_flights(&mut self) {
        for (seq, flight) in self.flights.take_all() {
            self.links.shared.abandon(seq);
            let what = "Dictum quit before this dictation was finished";
            let kept = self.give_up(seq, &flight, Outcome::Interrupted, "interrupted", what);
            self.notice(format!(
                "{what} ({}); {kept}",
                flight
                    .id
                    .map_or("unsaved".to_string(), |id| format!("#{id}"))
            ));
        }
    }

    /// Keeps a flight's audio and fails its row if it is still `pending`. Returns what to
    /// tell the user about the audio.
    pub(super) fn give_up(
        &mut self,
        seq: u64,
        flight: &Flight,
        outcome: Outcome,
        kind: &str,
        what: &str,
    ) -> String {
        let pending = match flight.id {
            Some(id) => self
                .history
                .get(id)
                .ok()
                .flatten()
                .is_none_or(|e| e.outcome == Outcome::Pending),
            None => true,
        };
        if !pending {
            return "its text is in history (`dictum history`)".into();
        }
        let (kept, path) =
            match Spool::for_history(self.history.path()).keep(flight.id, seq, &flight.samples) {
                Ok(file) => (
                    match flight.id {
                        Some(id) => retry_hint(id),
                        None => format!("its audio is kept at {}", file.display()),
                    },
                    Some(file.display().to_string()),
                ),
                Err(e) => (format!("its audio could not be kept: {e}"), None),
            };
        if let Some(id) = flight.id {
            let message = format!("{what}; {kept}");
            let gave_up = RowUpdate::GaveUp {
                outcome,
                kind,
                message: &message,
                audio_path: path.as_deref(),
            };
            if let Err(e) = self.links.rows.update(id, gave_up) {
                tracing::warn!("could not mark dictation #{id}: {e}");
            }
        }
        kept
    }
}
