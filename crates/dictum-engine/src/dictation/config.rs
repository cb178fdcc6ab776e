//! The `[dictation]` config section lives in `config/dictation.rs` (a leaf at the bottom of
//! the crate, docs/ARCHITECTURE.md "Module graph"); re-exported here so `dictation::config::…`
//! keeps its meaning.

pub use crate::config::dictation::{DictationConfig, Mode};
