//! The `[llm]` config section, with the one place the request options are built, lives in
//! `config/llm.rs` (a leaf at the bottom of the crate, docs/ARCHITECTURE.md "Module graph");
//! re-exported here so `llm::config::…` keeps its meaning.

pub use crate::config::llm::{
    auto_num_predict, keep_alive_secs, BackendKind, LlmConfig, OllamaEndpoint, RequestOptions,
    KEEP_ALIVE_MAX_SECS,
};
