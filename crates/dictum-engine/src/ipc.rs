//! Shapes the tray app and its UI exchange that are not engine types of their own. They live
//! here (not in the app) so their TypeScript twins are generated with the rest
//! (`ui/src/bindings/`, by `cargo test`), and the UI cannot drift from them.

use crate::config::Config;
use crate::store::ExportFormat;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The settings panel's view of the config.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct ConfigView {
    pub config: Config,
    /// The file it is read from and saved to.
    pub path: String,
    /// Unknown keys and other notes from loading it.
    pub warnings: Vec<String>,
    /// Whether the XDG autostart entry exists.
    pub autostart: bool,
    /// Where models are downloaded to.
    pub models_dir: String,
    /// The styles a config without `[[style]]` tables has (`config::style::builtin`): the
    /// Styles card shows them, and saves them as tables once one is changed.
    pub builtin_styles: Vec<crate::config::style::StyleConfig>,
}

/// Where an export went.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct ExportResult {
    pub path: String,
    pub count: u32,
    pub format: ExportFormat,
}

/// What the tray icon shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum DictationState {
    Idle,
    Recording,
    Processing,
    /// Hands-free, waiting for speech (its dictations are recording/processing).
    Listening,
    /// A press waits for a microphone that is slow to start (a Bluetooth headset).
    Opening,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct TrayStatus {
    pub state: DictationState,
    pub hotkey_paused: bool,
    /// Hands-free listening is on (the menu offers to stop it).
    pub hands_free: bool,
    /// Why the state is `error`, or a note ("dictation controller not connected").
    pub message: Option<String>,
    /// A dictation controller (hotkey + capture + pipeline) is running in this process.
    pub controller: bool,
    /// The microphone's stream, open or closed and why (`[dictation] microphone`), e.g.
    /// "closed: nothing is being dictated"; None before the controller said.
    pub microphone: Option<String>,
    /// The style every dictation is written in (`[dictation] style`, the tray's Style menu);
    /// None for none. A style picked at the key is that dictation's only.
    pub style: Option<String>,
}

/// The live input level while the settings panel's meter is open.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct MicLevel {
    pub device: String,
    /// 0–1 (peak of the last block).
    pub level: f32,
    pub error: Option<String>,
}
