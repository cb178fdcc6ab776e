//! The `[inject]` config section lives in `config/inject.rs` (a leaf at the bottom of the
//! crate, docs/ARCHITECTURE.md "Module graph"); re-exported here so `inject::config::…` keeps
//! its meaning.

pub use crate::config::inject::{
    is_terminal, InjectBackend, InjectConfig, InjectMethod, DEFAULT_TERMINAL_CLASSES,
    MAX_CHARS_BASE,
};
