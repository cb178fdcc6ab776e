//! Live dictation: hotkey → microphone → streaming transcription → LLM cleanup → injection,
//! with a history row for every utterance. The `dictum run` daemon and the tray app both run
//! exactly this; neither has a dictation loop of its own.
//!
//! Threads, each owning what it alone touches:
//! - the **controller** ([`controller`]): the one owner of the state; the microphone stream
//!   (opened at start-up and kept), the hotkeys, the utterance being recorded and its
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

pub mod config;
pub mod control;
mod controller;
pub mod hands_free;
mod injector;
pub mod live_clean;
pub mod messages;
pub mod microphone;
pub mod release;
pub mod retry;
pub mod segmenter;
pub mod state;
mod worker;

pub use injector::{injector_sink, window_probe, Sink, SinkFactory, StdoutSink};
pub use messages::SinkReport;
pub use state::State;
pub use worker::ReleasePath;

use crate::config::Config;
use crate::store::Outcome;
use serde::Serialize;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long quit waits for the utterance under way (transcribed, cleaned, typed) before it
/// marks what is left `interrupted` (audio kept) and stops.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(4);
/// The longest [`Dictation::shutdown`] takes, whatever a stage is doing.
pub const SHUTDOWN_BOUND: Duration = Duration::from_secs(5);

/// What a face (CLI, tray) can ask of a running dictation.
#[derive(Debug, Clone)]
pub enum Command {
    /// The same as the hotkey going down / up (tray menu, tests, `dictum toggle`).
    Press,
    Release,
    /// Start if idle, stop if recording, whatever the mode (in hands-free mode, or while
    /// hands-free listens: hands-free on/off).
    Toggle,
    /// Hands-free listening on (`Some(true)`), off (`Some(false)`: the dictation under way is
    /// finished and typed first) or toggled (`None`), whatever the configured mode: the tray
    /// menu, `dictum ctl hands-free on|off|toggle`, and the spoken "stop dictation" (which
    /// sends `HandsFree(Some(false))`, see [`Command::stop_hands_free`]).
    HandsFree(Option<bool>),
    Cancel,
    /// Let go of the hotkey (true) or take it again (false).
    PauseHotkey(bool),
    /// Apply a new config without a restart.
    Reconfigure(Box<Config>),
    /// The edit hotkey going down / up (`crate::edit`): the selection rewritten by the LLM
    /// on the instruction said while it is held.
    EditPress,
    EditRelease,
    /// Types a stored row's text (a retry, "type again") through this dictation's injector,
    /// so the gate applies: the character budget of its audio, the cancel key, the focus
    /// check. `dictum history --retry`, `dictum ctl type ID`, the history window.
    TypeStored(TypeStored),
    Shutdown,
}

/// A stored row to type ([`Command::TypeStored`]) and who waits for how it went.
#[derive(Debug, Clone)]
pub struct TypeStored {
    /// The history row whose text is typed; its `inject_method`/`inject_error` record how.
    pub id: i64,
    /// Told once it is typed (`Ok`: what was done) or not (`Err`: why; the text stays in
    /// history, and the rest of a stopped typing on the clipboard).
    pub reply: Option<mpsc::Sender<Result<String, String>>>,
}

impl Command {
    /// What stops hands-free listening (the spoken "stop dictation", the tray's "Stop
    /// hands-free"); nothing happens when it is not on.
    pub fn stop_hands_free() -> Command {
        Command::HandsFree(Some(false))
    }
}

/// What a running dictation tells its face.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Ready(ReadyInfo),
    State {
        state: State,
    },
    /// Something the user should know (limit reached, queue full, device gone, config error).
    Notice {
        message: String,
    },
    Dictation(Report),
    /// The words transcribed so far while a dictation is recorded (see [`Partial`]).
    Partial(Partial),
    /// Hands-free listening went on or off (the state says listening vs recording vs
    /// processing while it is on).
    HandsFree {
        on: bool,
    },
    Stopped,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReadyInfo {
    pub model: String,
    pub device: String,
    /// Why the speech model runs where it does (the VRAM plan).
    pub plan: String,
    pub model_load_ms: f64,
    pub warmup_ms: f64,
    pub input: String,
    pub input_backend: String,
    pub first_frames_ms: Option<f64>,
    pub hotkey: Option<String>,
    /// How the hotkey is had: `x11_grab`, `portal`, `compositor` (a compositor shortcut runs
    /// `dictum ctl`), or `none` (`--no-hotkey`).
    pub hotkey_path: String,
    /// The session, e.g. "Wayland (sway), XWayland running".
    pub session: String,
    /// The injection route for a native/unknown window (e.g. "virtual_keyboard"), or
    /// "none: why" when nothing can type.
    pub inject_route: Option<String>,
    pub mode: String,
    pub llm: bool,
    pub startup_ms: f64,
    /// What start-up has to say about speech: with a speech server and no local model,
    /// [`crate::pipeline::NO_LOCAL_FALLBACK`].
    pub stt_note: Option<String>,
}

/// The words of the dictation being recorded, as the live path has them (push-to-talk,
/// toggle and hands-free, with `[dictation] streaming` on): published after each stretch
/// is committed and each speculation finishes, from text the worker already computed (no
/// extra whisper pass). Only while the dictation is recorded: never after its release, so
/// never after its `dictation` event. A preview: the typed text is what the release
/// produces. `committed` is whisper's words before snippets, replacements and the LLM, so
/// it is a prefix of the final text (after `eval::normalize`) only when those leave the
/// words alone; `speculative` may change or vanish in the next one.
#[derive(Debug, Clone, Serialize)]
pub struct Partial {
    /// 1, 2, 3… within the dictation: a later one replaces an earlier one.
    pub seq: u64,
    /// The dictation's sequence number in this process.
    pub dictation: u64,
    /// Its history row (the `dictation` event's `id`); None when the row could not be stored.
    pub id: Option<i64>,
    /// Final words of the stretches committed so far (whisper's words, in order).
    pub committed: String,
    /// The current speculation over what follows them; empty when there is none.
    pub speculative: String,
    /// Milliseconds since the press (or, hands-free, since speech opened the dictation).
    pub ms: f64,
}

/// One finished dictation, as published (the history row has everything).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub id: i64,
    pub outcome: Outcome,
    pub text: String,
    pub audio_ms: Option<i64>,
    pub release_to_text_ms: Option<f64>,
    pub release_to_typed_ms: Option<f64>,
    pub tail_stt_ms: Option<f64>,
    pub chunks: Option<i64>,
    pub inject_method: Option<String>,
    pub inject_error: Option<String>,
    pub error: Option<String>,
    /// Live dictations: which whisper passes the release waited for (issue 13).
    pub release: Option<worker::ReleasePath>,
    /// Voice commands executed (names), in the order said.
    pub commands: Vec<String>,
    /// Voice commands heard but not done, with why (`commands::trust`).
    pub commands_refused: Vec<crate::commands::trust::Refused>,
    /// The per-app profile the focused window picked at the press ("default": none matched,
    /// or the app could not be known).
    pub profile: String,
    /// What the LLM stage did: "cleaned", "rejected", "failed", "disabled" (a profile turned
    /// it off); None when the stage is off.
    pub llm_outcome: Option<String>,
}

/// Re-applies command-line overrides to a re-read config file.
pub type ConfigOverrides = Box<dyn Fn(&mut Config) + Send>;

/// Focused window (class, title) at the key press, for the history row.
pub type WindowProbe = Box<dyn Fn() -> (Option<String>, Option<String>) + Send>;

pub struct StartOptions {
    pub config: Config,
    /// Watched: a change is applied without a restart.
    pub config_path: Option<PathBuf>,
    pub history_path: PathBuf,
    pub model_dirs: Vec<PathBuf>,
    pub audio_dir: Option<PathBuf>,
    /// Register the global hotkey (off: only [`Command`]s drive it).
    pub hotkeys: bool,
    /// Builds the text sink on the injector thread, from the config (called again when the
    /// config changes).
    pub sink: SinkFactory,
    pub window_probe: Option<WindowProbe>,
    /// Applied to the config file each time it is re-read (command-line overrides stay in
    /// force when the file changes).
    pub overrides: Option<ConfigOverrides>,
}

pub(crate) enum Input {
    Key {
        id: u32,
        pressed: bool,
        at: Instant,
    },
    Command(Command, Instant),
    /// A GlobalShortcuts portal shortcut (`dictate`, `cancel`) activated or deactivated.
    PortalKey {
        id: String,
        pressed: bool,
        at: Instant,
    },
    ModelLoaded {
        load_ms: f64,
        warmup_ms: f64,
        device: String,
        plan: String,
    },
    Problem(String),
    Notice(String),
    /// The spoken command "stop dictation" was said.
    VoiceStop,
    StateChanged,
    /// The worker's words so far for utterance `seq` (published as [`Event::Partial`] while
    /// it is recorded).
    Partial {
        seq: u64,
        committed: String,
        speculative: String,
    },
    /// Utterance `seq` is finished with (typed, stored, or given up on by the injector).
    Done {
        seq: u64,
        report: Box<Report>,
    },
}

/// Facts shared between the threads (each a single atomic, nothing to leave stale).
#[derive(Default)]
pub(crate) struct Shared {
    shutdown: AtomicBool,
    injecting: AtomicBool,
    /// Dictations with an id up to this are not injected (cancel key while processing).
    cancel_upto: AtomicI64,
    /// Stored texts ([`Command::TypeStored`]) handed to the injector and not typed yet: the
    /// cancel key is armed while there are any.
    stored: AtomicUsize,
    /// The cancel key was pressed since the stored text now typed began.
    stored_stop: AtomicBool,
    /// The push-to-talk key is held for the next utterance: typing now would combine the
    /// text with its modifiers, so earlier results wait for the release.
    key_held: AtomicBool,
    /// Utterances (by sequence number) the controller stopped waiting for: never typed late.
    abandoned: Mutex<HashSet<u64>>,
    /// Edits being recorded or transcribed (by sequence number): what their press captured,
    /// taken by the injector, which completes them instead of typing the instruction.
    edits: Mutex<std::collections::HashMap<u64, crate::edit::Request>>,
}

impl Shared {
    fn shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }
    fn set_injecting(&self, on: bool) {
        self.injecting.store(on, Ordering::SeqCst)
    }
    fn injecting(&self) -> bool {
        self.injecting.load(Ordering::SeqCst)
    }
    fn set_key_held(&self, held: bool) {
        self.key_held.store(held, Ordering::SeqCst)
    }
    fn key_held(&self) -> bool {
        self.key_held.load(Ordering::SeqCst)
    }
    fn cancelled(&self, id: i64) -> bool {
        id <= self.cancel_upto.load(Ordering::SeqCst)
    }
    fn typing_stored(&self) -> bool {
        self.stored.load(Ordering::SeqCst) > 0
    }
    fn stop_stored(&self) {
        self.stored_stop.store(true, Ordering::SeqCst)
    }
    fn abandon(&self, seq: u64) {
        self.abandoned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(seq);
    }
    fn put_edit(&self, seq: u64, request: crate::edit::Request) {
        self.edits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(seq, request);
    }
    fn take_edit(&self, seq: u64) -> Option<crate::edit::Request> {
        self.edits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&seq)
    }
    fn abandoned(&self, seq: u64) -> bool {
        self.abandoned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&seq)
    }
}

/// Runs `f`; a panic becomes its message (one job's panic must not end a thread).
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic with no message".into())
    })
}

// The test hooks live at the bottom of the layers (inject uses them too).
pub(crate) use crate::fault;

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
                controller::run(opts, tx, inputs_rx, events, ready_tx);
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
