//! The types that cross between dictation's threads and its faces, in a leaf that imports
//! nothing from the threads (issue 39): what a face asks ([`Command`]) and is told
//! ([`Event`], [`Report`], [`Partial`]); what the controller's loop receives ([`Input`]);
//! the worker's jobs ([`Job`], [`Finish`]); what goes to the injector ([`InjectorMsg`]:
//! [`Typed`], [`Part`], a stored row, with an edit's request inside the message); and what a
//! sink reports after typing ([`SinkReport`]).

use crate::config::Config;
use crate::dictation::state::State;
use crate::profile::Profile;
use crate::store::{Entry, Outcome};
use crate::timing::StageTimings;
use serde::Serialize;
use std::sync::{mpsc, Arc};
use std::time::Instant;

/// What a face (CLI, tray) can ask of a running dictation.
#[derive(Debug, Clone)]
pub enum Command {
    /// The same as the hotkey going down / up (tray menu, tests, `dictum toggle`).
    Press,
    /// A press that writes its dictation in the style named (`[[style]]`): a style's
    /// modifier or key, `dictum ctl press --style NAME`. Released by `Release`.
    PressStyle(String),
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
    /// check. `dictum history --retry`, `dictum ctl type ID`, the history window, and the
    /// last dictation again (`dictum ctl retype`, `[dictation] retype_hotkey`).
    TypeStored(TypeStored),
    /// Transcribe an audio or video file in the background, after dictations (`dictum ctl
    /// transcribe FILE`): handed to the face as [`Event::TranscribeFile`], whose file queue
    /// (`filejobs`) takes it.
    TranscribeFile(std::path::PathBuf),
    Shutdown,
}

/// A stored row to type ([`Command::TypeStored`]) and who waits for how it went.
#[derive(Debug, Clone)]
pub struct TypeStored {
    /// The history row whose text is typed; its `inject_method`/`inject_error` record how.
    pub row: StoredRow,
    /// Told once it is typed (`Ok`: what was done) or not (`Err`: why; the text stays in
    /// history, and the rest of a stopped typing on the clipboard).
    pub reply: Option<mpsc::Sender<Result<String, String>>>,
}

/// Which history row a [`TypeStored`] types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredRow {
    /// This one (`dictum ctl type ID`, a retry, the history window).
    Id(i64),
    /// The newest dictation with text, chosen by the injector when its turn comes, so a
    /// dictation typed just before counts (`dictation::retype`).
    LastDictation,
}

impl TypeStored {
    /// Row `id`, with no one waiting for the answer.
    pub fn id(id: i64) -> TypeStored {
        TypeStored {
            row: StoredRow::Id(id),
            reply: None,
        }
    }

    /// The last dictation again, with no one waiting for the answer.
    pub fn last_dictation() -> TypeStored {
        TypeStored {
            row: StoredRow::LastDictation,
            reply: None,
        }
    }
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
    /// The capture stream opened or closed (`[dictation] microphone`); `state` says why, as
    /// `dictum doctor` does (e.g. "closed: nothing is being dictated"). Told at start-up and
    /// at each change.
    Microphone {
        open: bool,
        state: String,
    },
    /// A file to transcribe in the background ([`Command::TranscribeFile`]): the face queues
    /// it (`filejobs`).
    TranscribeFile {
        path: std::path::PathBuf,
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
    /// `[dictation] microphone`: "on_demand", "always" or "auto".
    pub microphone: String,
    /// The stream's state after start-up and why, e.g. "closed: nothing is being
    /// dictated" (`audio::mic_policy::MicReason::describe`).
    pub microphone_state: String,
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
    pub release: Option<ReleasePath>,
    /// Voice commands executed (names), in the order said.
    pub commands: Vec<String>,
    /// Voice commands heard but not done, with why (`commands::trust`).
    pub commands_refused: Vec<crate::commands::trust::Refused>,
    /// The per-app profile the focused window picked at the press ("default": none matched,
    /// or the app could not be known).
    pub profile: String,
    /// The style (`[[style]]`) the dictation was written in; None when none was picked.
    pub style: Option<String>,
    /// What the LLM stage did: "cleaned", "rejected", "failed", "disabled" (a profile turned
    /// it off); None when the stage is off.
    pub llm_outcome: Option<String>,
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

pub(crate) enum Job {
    /// Load and warm the model if it is not loaded (start-up, key press after idle unload).
    Prepare,
    /// Transcribe samples `start..end` of utterance `utt` (its sequence number) ahead of
    /// the release.
    Chunk {
        utt: u64,
        start: usize,
        end: usize,
        samples: Vec<f32>,
        commit: bool,
        /// The utterance's per-app profile (language, vocabulary).
        profile: Arc<Profile>,
        /// The text around the cursor read at the press, for the cleanup while speaking.
        context: Option<Arc<crate::dictation::llm_context::PressRead>>,
    },
    Finish(Box<Finish>),
    /// Speech resumed in utterance `.0` after its last speculation: a speculation of it
    /// being transcribed (or waiting) is useless and is stopped.
    Stale(u64),
    /// The utterance (sequence number) was cancelled: forget its chunks.
    Forget(u64),
    Reconfigure(Box<Config>),
}

/// Everything the worker needs to end an utterance.
pub(crate) struct Finish {
    /// The utterance's sequence number in this process (rows may have no id: DB locked).
    pub seq: u64,
    pub entry: Entry,
    /// The whole utterance (pre-roll first), as captured; the controller keeps a handle to
    /// save it if the utterance is given up on.
    pub samples: Arc<Vec<f32>>,
    /// Where the not-yet-final part starts.
    pub committed: usize,
    /// End of a still-valid speculation over `committed..`, if any.
    pub speculation_end: Option<usize>,
    pub release_at: Instant,
    pub timings: StageTimings,
    /// The utterance's per-app profile (language, vocabulary, LLM on/off and prompt,
    /// trailing period).
    pub profile: Arc<Profile>,
    /// Sent at the release, before the post-roll was recorded (the voice was already
    /// silent): `samples` end at the release.
    pub before_post_roll: bool,
    /// Cut by hands-free listening, not a held key (`commands::trust`).
    pub hands_free: bool,
    /// Edit mode: what the edit key's press captured (the selection); the injector types
    /// the LLM's answer over it instead of the instruction.
    pub edit: Option<crate::edit::Request>,
    /// The text around the cursor read since the press, for the LLM (`dictation/caret.rs`).
    pub context: Option<Arc<crate::dictation::llm_context::PressRead>>,
}

/// What goes to the injector.
pub(crate) struct Typed {
    pub seq: u64,
    pub entry: Entry,
    pub release_at: Instant,
    pub release: Option<ReleasePath>,
    /// Voice commands said at the end (or alone), done after the text is typed.
    pub commands: Vec<crate::commands::Spoken>,
    /// The utterance's per-app profile (injection method).
    pub profile: Arc<Profile>,
    /// Cut by hands-free listening, not a held key (`commands::trust`).
    pub hands_free: bool,
    /// Edit mode: the request from the press ([`Finish::edit`]).
    pub edit: Option<crate::edit::Request>,
}

/// The first words of a dictation, typed while its last words are still being cleaned
/// (`live_clean::Session::finish_early`): the injector types them at once and, when the
/// dictation's [`Typed`] follows, only what comes after them.
pub(crate) struct Part {
    pub seq: u64,
    /// The row (already stored with the raw words), for the cancel key.
    pub id: Option<i64>,
    /// The words, ending with a space (what follows them is typed after it).
    pub text: String,
    pub release_at: Instant,
    pub profile: Arc<Profile>,
    /// The utterance's length (the typing budget, `[inject] max_chars_per_second`).
    pub audio_ms: Option<i64>,
}

/// How the release of one live dictation was served: which whisper passes it waited for.
/// Published with the dictation (`Report::release`), not stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReleasePath {
    /// Passes over this utterance that were running at the release or ran after it, whose
    /// text was not used (new speech or the post-roll made them stale) and that whisper ran
    /// to their end: time the release waited for nothing. Always 0 unless aborting failed.
    pub stale_passes_completed: u32,
    /// Such stale passes that were stopped early through whisper's abort callback.
    pub stale_passes_aborted: u32,
    /// Passes stopped before the release: speech resumed while they ran (the segmenter's
    /// `Stale`), so the release never met them.
    pub stopped_before_release: u32,
    /// Milliseconds after the release spent in passes whose text was not used.
    pub stale_ms_after_release: f64,
    /// The pass whose text became the tail: when it started, in ms relative to the release
    /// (negative: before it), and how long it ran. `None` when the finish transcribed the
    /// tail itself.
    pub tail_pass_start_ms: Option<f64>,
    pub tail_pass_ms: Option<f64>,
    /// Whole passes over this utterance (speculations and commits) before the tail.
    pub passes: u32,
    /// The text went out without waiting for the post-roll (the voice was already silent at
    /// the release; `dictation.type_before_post_roll_ms`).
    pub typed_before_post_roll: bool,
    /// Characters typed ahead of the rest, while the last words were still being cleaned
    /// (`live_clean::Session::finish_early`); 0 when the text went out at once.
    pub typed_ahead_chars: usize,
}

pub(crate) enum InjectorMsg {
    Type(Box<Typed>),
    /// A dictation's first words, ahead of its [`Typed`].
    Part(Box<Part>),
    Reconfigure(Box<Config>),
    /// A stored row's text to type through the gate (`Command::TypeStored`).
    Stored(TypeStored),
    Stop,
}

/// Builds the report the controller publishes once a dictation is done.
pub(crate) fn report(entry: &Entry, release: Option<ReleasePath>) -> Report {
    Report {
        release,
        id: entry.id.unwrap_or(0),
        outcome: entry.outcome,
        text: entry.text.clone().unwrap_or_default(),
        audio_ms: entry.audio_ms,
        release_to_text_ms: entry.release_to_text_ms,
        release_to_typed_ms: entry.release_to_typed_ms,
        tail_stt_ms: entry.tail_stt_ms,
        chunks: entry.chunks,
        inject_method: entry.inject_method.clone(),
        inject_error: entry.inject_error.clone(),
        error: entry.error.clone(),
        commands: entry
            .commands
            .as_deref()
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or_default(),
        commands_refused: entry
            .commands_refused
            .as_deref()
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or_default(),
        profile: entry
            .profile
            .clone()
            .unwrap_or_else(|| crate::profile::DEFAULT_PROFILE.to_string()),
        style: entry.style.clone(),
        llm_outcome: entry.llm_outcome.clone(),
    }
}

#[derive(Debug, Clone, Default)]
pub struct SinkReport {
    pub method: String,
    pub error: Option<String>,
    /// Ms from the call until the text was handed over (last key sent, or the paste chord),
    /// when the sink does more afterwards (paste: restoring the clipboard).
    pub handed_over_ms: Option<f64>,
    /// The window that received the text, when the sink knows it.
    pub app_class: Option<String>,
    pub window_title: Option<String>,
    /// Characters delivered (a trailing space included), when the sink knows.
    pub chars: Option<usize>,
}
