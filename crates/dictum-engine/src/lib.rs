//! Dictum's engine: everything between "audio came in" and "text went out", as a library
//! that builds and tests without any GUI toolkit. The `dictum` CLI and the tray app are thin
//! faces over it.
//!
//! Data flow (see `docs/ARCHITECTURE.md`):
//! audio (decode → 16 kHz mono) → vad (trim / reject silence) → stt (whisper) → llm (optional
//! cleanup, guarded) → store (history) → inject (type/paste into the focused window).

pub mod audio;
pub mod autostart;
pub mod commands;
pub mod config;
pub mod context;
pub mod dictation;
pub mod edit;
pub mod error;
pub mod eval;
pub(crate) mod fault;
pub mod filejobs;
pub mod gpu;
pub mod hotkey;
pub mod inject;
pub mod ipc;
pub mod learn;
pub mod llm;
pub mod loopback;
pub mod media;
pub mod models;
pub mod net;
pub mod paths;
pub mod pipeline;
pub mod portal;
pub mod profile;
pub mod secrets;
pub mod shortcut;
pub mod snippets;
pub mod store;
pub mod stt;
pub mod subtitles;
pub mod text_safety;
pub mod timing;
pub mod vad;

pub use error::{Error, Result};

/// The build's speech backend, for `--version` and the about box: "CPU", "CUDA" or "Vulkan".
pub const BUILD_FEATURES: &str = if cfg!(feature = "cuda") {
    "CUDA"
} else if cfg!(feature = "vulkan") {
    "Vulkan"
} else {
    "CPU"
};

/// Sample rate every stage after `audio` works in.
pub const SAMPLE_RATE: u32 = 16_000;
