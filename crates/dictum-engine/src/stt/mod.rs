//! Speech to text with whisper.cpp (through whisper-rs), or on a shared server (`remote.rs`).

mod certain_loop;
pub mod cpu_share;
pub mod flac;
mod model_file;
mod nonspeech;
mod pass;
pub mod priority;
pub mod remote;
mod remote_breaker;
mod resilient;
pub mod suspect;
mod whisper;
pub mod worker_process;

pub use certain_loop::{degenerate, looks_degenerate, Degenerate};
pub use model_file::{check_model_file, ModelInfo};
pub use nonspeech::{is_silence_phrase, strip_nonspeech};
pub use pass::{audio_ctx_for, SttOptions, SttOutput, TimedText, Window};
pub use resilient::{Delivered, ResilientTranscriber, MAX_GPU_FAILURES};
pub use whisper::{is_aborted, is_stopped, Transcriber};
