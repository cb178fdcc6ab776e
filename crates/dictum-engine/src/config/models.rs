//! The `[models]` config section: where the model manager downloads from (tray app, issue 5).
//! Documented with its defaults in `config::DEFAULT_TOML`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where the public ggml whisper models live (a mirror or local folder can replace it).
pub const DEFAULT_BASE_URL: &str = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct ModelsConfig {
    /// Where model downloads come from: an http(s) URL (the public home or a mirror), or a
    /// local folder (`/path` or `file:///path`) holding the ggml files by name.
    pub base_url: String,
}

impl Default for ModelsConfig {
    fn default() -> Self {
        ModelsConfig {
            base_url: DEFAULT_BASE_URL.to_string() + "/",
        }
    }
}

/// Checks a models base URL as a setting (`models.base_url`): an http(s) URL without
/// credentials, or a folder (`/path`, `file:///path`; not checked for existence here).
pub fn check_base_url(base: &str) -> std::result::Result<(), String> {
    let base = base.trim();
    let lower = base.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return crate::net::check_url(base, "the model base URL")
            .map(|_| ())
            .map_err(|e| e.replace("llm.api_key_env", "a public or local mirror instead"));
    }
    if base.is_empty() || (lower.contains("://") && !lower.starts_with("file://")) {
        return Err(
            "must be an http(s) URL, file:///folder or a folder path, e.g. https://huggingface.co/ggerganov/whisper.cpp/resolve/main/".into(),
        );
    }
    Ok(())
}
