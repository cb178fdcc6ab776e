//! Live dictation: hotkey → microphone → streaming transcription → LLM cleanup → injection,
//! with a history row for every utterance. The `dictum run` daemon and the tray app both run
//! exactly this; neither has a dictation loop of its own.
//!
//! Threads, each owning what it alone touches:
//! - the **controller** ([`controller`]): the one owner of the state; the microphone stream
//!   (open while `[dictation] microphone` says: `microphone.rs`), the hotkeys, the utterance being recorded and its
//!   streaming segmenter. It inserts each utterance's history row at the key press.
//! - the **worker** ([`worker`]): the speech model and the LLM client; transcribes chunks
//!   while the key is held and the tail after the release, in order.
//! - the **injector** ([`injector`]): types or pastes each result, in order, and completes
//!   its row.
//!
//! Starting returns only once everything is warm: stream delivering, model loaded and warmed,
//! LLM warmed (when on), injector and hotkey ready.
//!
//! Supervision (nothing one utterance does can stop the next):
//! - a panic in the worker (speech or LLM stage) or the injector is caught per job: the
//!   utterance's row keeps the raw transcript (LLM) or its audio (speech) with the error, and
//!   the thread goes on with the next job;
//! - every utterance in flight has a deadline (from its audio length and the LLM timeout): past
//!   it the controller stops waiting, keeps its audio and counts it out, so a stuck stage can
//!   neither block new dictations (`queue_max`) nor quit; a worker that has been on one job
//!   for that whole deadline is stuck (a whisper or LLM call cannot be interrupted) and is
//!   replaced: a fresh worker with its own engine takes the waiting utterances (redone whole),
//!   the stuck thread ends by itself whenever its call returns and types nothing;
//! - quit finishes the utterance under way within [`SHUTDOWN_GRACE`], then marks what is left
//!   `interrupted` with its audio kept, and returns; [`Dictation::shutdown`] never waits longer
//!   than [`SHUTDOWN_BOUND`];
//! - at start the history's `pending` rows left by a crash are marked `interrupted`
//!   (`store::recovery`), under a lock that lets one dictation process run per history.

pub mod caret;
pub mod config;
pub mod control;
mod controller;
pub mod hands_free;
mod injector;
pub mod live_clean;
pub mod llm_context;
pub mod messages;
pub mod microphone;
pub mod options;
mod queue;
pub mod release;
pub mod retry;
pub mod retype;
pub mod segmenter;
mod shared;
pub mod sink;
pub mod state;
pub mod utterance;
mod worker;

pub use messages::{
    Command, Event, Partial, ReadyInfo, ReleasePath, Report, SinkReport, StoredRow, TypeStored,
};
pub use options::{ConfigOverrides, StartOptions, SHUTDOWN_BOUND, SHUTDOWN_GRACE};
pub use sink::{injector_sink, window_probe, Sink, SinkFactory, StdoutSink, WindowProbe};
pub use state::State;

use messages::Input;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running dictation engine.
pub struct Dictation {
    inputs: mpsc::Sender<Input>,
    thread: Option<JoinHandle<()>>,
    /// Closed when the controller thread ends.
    ended: mpsc::Receiver<()>,
}

impl Dictation {
    /// Starts everything and returns once it is warm and ready (the `Ready` event has been
    /// sent), or with the reason it cannot run.
    pub fn start(opts: StartOptions, events: mpsc::Sender<Event>) -> Result<Dictation, String> {
        let (inputs_tx, inputs_rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let (ended_tx, ended_rx) = mpsc::channel::<()>();
        let tx = inputs_tx.clone();
        let thread = std::thread::Builder::new()
            .name("dictum-controller".into())
            .spawn(move || {
                controller::startup::run(opts, tx, inputs_rx, events, ready_tx);
                drop(ended_tx);
            })
            .map_err(|e| format!("cannot start the dictation thread: {e}"))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Dictation {
                inputs: inputs_tx,
                thread: Some(thread),
                ended: ended_rx,
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err("the dictation thread ended during start-up".into())
            }
        }
    }

    pub fn send(&self, command: Command) {
        let _ = self.inputs.send(Input::Command(command, Instant::now()));
    }

    /// A sender usable from other threads (stdin reader, tray menu).
    pub fn command_sender(&self) -> mpsc::Sender<Command> {
        let (tx, rx) = mpsc::channel::<Command>();
        let inputs = self.inputs.clone();
        std::thread::spawn(move || {
            for cmd in rx {
                if inputs.send(Input::Command(cmd, Instant::now())).is_err() {
                    break;
                }
            }
        });
        tx
    }

    /// Stops recording (the utterance under way is still transcribed and typed, within
    /// [`SHUTDOWN_GRACE`]) and ends the dictation; returns within [`SHUTDOWN_BOUND`] even
    /// when a stage hangs (a thread stuck in a stage is left behind).
    pub fn shutdown(mut self) {
        self.stop_within(SHUTDOWN_BOUND);
    }

    /// True once the dictation has ended (quit from `dictum ctl`, or a failure).
    pub fn has_ended(&self) -> bool {
        matches!(self.ended.try_recv(), Err(mpsc::TryRecvError::Disconnected))
    }

    fn stop_within(&mut self, bound: Duration) {
        let Some(t) = self.thread.take() else {
            return;
        };
        let _ = self
            .inputs
            .send(Input::Command(Command::Shutdown, Instant::now()));
        match self.ended.recv_timeout(bound) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                tracing::warn!(
                    "dictation did not stop within {} s; leaving its threads behind",
                    bound.as_secs()
                );
            }
            _ => {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Dictation {
    fn drop(&mut self) {
        self.stop_within(SHUTDOWN_BOUND);
    }
}
