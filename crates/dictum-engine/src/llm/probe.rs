//! What the settings panel asks of an LLM server: which models it has (`/api/tags` for
//! Ollama, `/v1/models` for OpenAI-compatible servers) and a test cleanup with the settings as
//! they are in the form (latency, tokens/s, whether the model had to be loaded). The API key
//! is never the form's: the `_with` variants take the saved settings, whose key source is used
//! and whose server alone gets the key ([`super::key_for`]).

use super::config::{BackendKind, LlmConfig};
use super::{Cleaner, LlmError, LlmOutcome};
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;
use ts_rs::TS;

/// The text the Test button cleans when the user gives none.
pub const SAMPLE_TEXT: &str = "um so i think we should uh send the report to maria by friday";

/// The models URL for a configured server URL.
pub fn models_url(config: &LlmConfig) -> String {
    let base = config.url.trim_end_matches('/');
    match config.backend {
        BackendKind::Ollama => format!("{base}/api/tags"),
        BackendKind::Openai => {
            let base = base.trim_end_matches("/chat/completions");
            if base.ends_with("/v1") {
                format!("{base}/models")
            } else {
                format!("{base}/v1/models")
            }
        }
    }
}

/// Model names the server offers, sorted (`config` is the saved settings).
pub async fn list_models(config: &LlmConfig) -> Result<Vec<String>, LlmError> {
    list_models_with(config, config).await
}

/// Model names the server `config` (a form's settings) names offers, sorted; the key is
/// `saved`'s, sent only to `saved`'s server. An HTTP error says when the key was withheld.
pub async fn list_models_with(
    config: &LlmConfig,
    saved: &LlmConfig,
) -> Result<Vec<String>, LlmError> {
    crate::net::check_url(&config.url, "llm.url").map_err(LlmError::Other)?;
    let url = models_url(config);
    let probe = LlmConfig {
        timeout_ms: config.timeout_ms.clamp(1, 10_000),
        ..config.clone()
    };
    let key = super::key_for(config, saved)?;
    let client = super::client_with_key(&probe, &key, Duration::from_secs(10))?;
    let (status, body) = super::get_capped(&client, &url).await?;
    if !status.is_success() {
        return Err(match super::http_error(&url, status, &body) {
            LlmError::Http { url, status, body } if key.withheld.is_some() => LlmError::Http {
                url,
                status,
                body: format!("{body} ({})", key.describe()),
            },
            e => e,
        });
    }
    let v: Value = serde_json::from_str(&body)
        .map_err(|e| LlmError::Malformed(format!("{url} should send: JSON ({e})")))?;
    let list = match config.backend {
        BackendKind::Ollama => v["models"].as_array(),
        BackendKind::Openai => v["data"].as_array(),
    }
    .ok_or_else(|| {
        LlmError::Malformed(format!(
            "{url} should send: a model list (is llm.backend right for this server?)"
        ))
    })?;
    let key = match config.backend {
        BackendKind::Ollama => "name",
        BackendKind::Openai => "id",
    };
    let mut names: Vec<String> = list
        .iter()
        .filter_map(|m| m[key].as_str().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The result of the settings panel's Test button.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct LlmTestResult {
    /// "cleaned", "rejected" (the guard kept the raw text) or "failed".
    pub outcome: String,
    pub input: String,
    /// What the model answered.
    pub output: Option<String>,
    /// What would be typed.
    pub text: String,
    pub reject_reason: Option<String>,
    pub error: Option<String>,
    /// Wall time of the request, ms.
    pub latency_ms: f64,
    pub tokens_per_sec: Option<f64>,
    pub load_ms: Option<f64>,
    /// The server had to load the model for this request (load time above
    /// `llm.reload_threshold_ms`): with the same num_ctx/keep_alive, dictations will not pay it.
    pub model_loaded: bool,
    /// Where the API key came from ("no API key", "API key from $X", "…keyring…"), or "tested
    /// without the API key (why)" for a server that is not the saved one; never the key.
    pub key: String,
}

/// Runs one cleanup of `text` (or [`SAMPLE_TEXT`]) with `config` (the saved settings),
/// enabled or not.
pub async fn test_cleanup(config: &LlmConfig, vocabulary: &[String], text: &str) -> LlmTestResult {
    test_cleanup_with(config, config, vocabulary, text).await
}

/// Runs one cleanup of `text` (or [`SAMPLE_TEXT`]) with `config` (a form's settings), enabled
/// or not; the key is `saved`'s, sent only to `saved`'s server.
pub async fn test_cleanup_with(
    config: &LlmConfig,
    saved: &LlmConfig,
    vocabulary: &[String],
    text: &str,
) -> LlmTestResult {
    let input = if text.trim().is_empty() {
        SAMPLE_TEXT
    } else {
        text
    };
    let failed = |e: String| LlmTestResult {
        outcome: LlmOutcome::Failed.as_str().into(),
        input: input.into(),
        output: None,
        text: input.into(),
        reject_reason: None,
        error: Some(e),
        latency_ms: 0.0,
        tokens_per_sec: None,
        load_ms: None,
        model_loaded: false,
        key: String::new(),
    };
    if let Err((key, reason)) = config.validate() {
        return failed(format!("invalid setting {key}: {reason}"));
    }
    let key = match super::key_for(config, saved) {
        Ok(k) => k,
        Err(e) => return failed(e.to_string()),
    };
    let cleaner = match Cleaner::with_key(config, vocabulary, &key) {
        Ok(c) => c,
        Err(e) => return failed(e.to_string()),
    };
    let r = cleaner.clean(input).await;
    LlmTestResult {
        outcome: r.outcome.as_str().into(),
        input: input.into(),
        output: r.output,
        text: r.text,
        reject_reason: r.reject_reason,
        error: r.error,
        latency_ms: r.total_ms,
        tokens_per_sec: r.tokens_per_sec,
        load_ms: r.load_ms,
        model_loaded: r
            .load_ms
            .is_some_and(|ms| ms > config.reload_threshold_ms as f64),
        key: key.describe(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_urls() {
        let mut c = LlmConfig {
            url: "http://h:11434/".into(),
            ..Default::default()
        };
        assert_eq!(models_url(&c), "http://h:11434/api/tags");
        c.backend = BackendKind::Openai;
        c.url = "http://h:8080".into();
        assert_eq!(models_url(&c), "http://h:8080/v1/models");
        c.url = "http://h:8080/v1".into();
        assert_eq!(models_url(&c), "http://h:8080/v1/models");
        c.url = "http://h:8080/v1/chat/completions".into();
        assert_eq!(models_url(&c), "http://h:8080/v1/models");
    }
}
