//! The engine and the order of an utterance's stages (decode → resample → VAD → whisper →
//! LLM cleanup → history), split by job: `engine.rs` the [`Engine`] itself (config, model,
//! LLM stage, profiles, reconfiguring); `segment.rs` one stretch of audio through the VAD and
//! whisper; `remote.rs` the speech server and the fall back to the local model; `file.rs` a
//! file, piece by piece, into its row. The finished row's model ([`Words`], [`fail_row`]) is
//! `store/row.rs`, with its writer.
//!
//! Each job imports `engine.rs`, a leaf of the folder, and `remote` imports `segment`; none
//! imports back, and this file only re-exports, so the folder has no circle
//! (`scripts/module-graph --check`).

mod engine;
mod file;
mod remote;
mod segment;

pub use crate::store::row::{fail_row, keep_rejected_answer, Words};
pub use engine::{no_local_fallback, Engine, FILE_PIECE_S, NO_LOCAL_FALLBACK};
pub use file::{FileHooks, FileProgress, Utterance};
pub use segment::Segment;
