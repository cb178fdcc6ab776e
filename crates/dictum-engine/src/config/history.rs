//! The `[history]` config section: kept audio and retention. Documented with its defaults in
//! `config::DEFAULT_TOML`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, TS)]
#[serde(default)]
#[ts(export)]
pub struct HistoryConfig {
    /// Keep a WAV copy of each utterance next to the history database.
    pub keep_audio: bool,
    /// Delete history older than this many days; 0 keeps everything.
    pub retention_days: u32,
}
