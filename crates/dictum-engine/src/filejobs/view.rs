//! What the "Transcribe a file…" window shows of each file in the queue, and what it asks a
//! file to be transcribed with. Sent as the `file-job` event and by the window's commands;
//! their TypeScript twins are generated into `ui/src/bindings/` by `cargo test`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a file is in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum JobState {
    /// Waiting for the files before it.
    Queued,
    /// Being decoded and transcribed.
    Running,
    /// Transcribed to its end (its text may be empty: no speech).
    Done,
    /// Stopped by the user; the text so far is kept (in the window and its history row).
    Cancelled,
    /// Could not be transcribed (unreadable, no audio track, model missing): `error` says why.
    Failed,
}

/// What a file is transcribed with; `None` takes the dictation's setting.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export, optional_fields)]
pub struct JobOptions {
    /// A model name from the catalog or an installed file's name (`tiny.en-q8_0`).
    pub model: Option<String>,
    /// "en", "de", … or "auto".
    pub language: Option<String>,
    /// whisper's translate task: English text whatever the language spoken.
    pub translate: bool,
}

/// One file of the queue, as the window shows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct JobView {
    /// The queue's number for it (not the history row's).
    pub id: u32,
    /// The file's full path, and its name alone.
    pub path: String,
    pub name: String,
    pub state: JobState,
    /// Audio transcribed so far and in all, in ms (`total_ms` is 0 until the header is read).
    #[ts(type = "number")]
    pub done_ms: u64,
    #[ts(type = "number")]
    pub total_ms: u64,
    /// Wall time since the file started, and the expected time still to go (None before the
    /// first piece gives a pace).
    pub elapsed_ms: f64,
    pub remaining_ms: Option<f64>,
    /// The text so far (the whole text once done).
    pub text: String,
    /// The file's history row, once it has one.
    #[ts(type = "number | null")]
    pub entry_id: Option<i64>,
    /// Why it failed.
    pub error: Option<String>,
    /// A note beside the text: transcribed in part (a cut-short file, cancelled), the LLM's
    /// verdict.
    pub note: Option<String>,
    /// A dictation is under way: this file waits for it (dictation goes first).
    pub waiting_for_dictation: bool,
    /// What it is transcribed with (the options resolved).
    pub model: String,
    pub language: String,
    pub translate: bool,
}

/// What the window offers to choose from before adding files.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct JobDefaults {
    /// The installed models, by name; the dictation's first.
    pub models: Vec<String>,
    /// The dictation's model and language (`[stt]`).
    pub model: String,
    pub language: String,
    /// File types the decoders read here, for the file dialog and the drop hint; `ffmpeg`
    /// adds the rest when it is installed.
    pub extensions: Vec<String>,
    pub ffmpeg: bool,
}

/// A file written by Save as.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct SavedFile {
    pub path: String,
    #[ts(type = "number")]
    pub bytes: u64,
}

/// What Save as writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum SaveFormat {
    Txt,
    Srt,
    Vtt,
}

impl SaveFormat {
    pub fn extension(self) -> &'static str {
        match self {
            SaveFormat::Txt => "txt",
            SaveFormat::Srt => "srt",
            SaveFormat::Vtt => "vtt",
        }
    }
}
