//! The `[vad]` config section: when a frame counts as speech. Documented with its defaults in
//! `config::DEFAULT_TOML`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct VadConfig {
    /// Voice probability (0–1) above which a 16 ms frame counts as speech.
    pub threshold: f32,
    /// Less speech than this in an utterance means "no speech": nothing is typed.
    pub min_speech_ms: u32,
    /// Audio kept before the first and after the last speech frame.
    pub pad_ms: u32,
}

impl Default for VadConfig {
    fn default() -> Self {
        VadConfig {
            threshold: 0.5,
            min_speech_ms: 200,
            pad_ms: 250,
        }
    }
}
