//! The edit request: the `[llm]` section's server, backend, model, key and request options
//! (the same `num_ctx` and `keep_alive` as a cleanup, so Ollama does not reload the model),
//! with the edit's own prompt (`prompt.rs`), `[edit] timeout_ms`, and room for an answer
//! longer than the selection. Through the cleanup's backends (`llm::ollama`, `llm::openai`)
//! and `net`'s client policy; never through the cleanup guard.

use crate::config::llm::BackendKind;
use crate::config::Config;
use crate::llm::{ollama, openai, Backend, Completion, LlmError};
use crate::store::Entry;
use crate::timing::ms_since;
use std::time::{Duration, Instant};

/// What the server answered, with the client's wall time.
#[derive(Debug, Clone)]
pub struct Asked {
    pub completion: Completion,
    pub total_ms: f64,
}

/// Most tokens an edit may generate: `[llm] num_predict` when set, else room for an answer
/// four times the selection (a bullet list, a longer version) and then some.
pub fn num_predict(configured: u32, selection: &str) -> u32 {
    if configured > 0 {
        return configured;
    }
    let words = selection.split_whitespace().count();
    let tokens = (selection.len() / 4).max(words) as u32;
    tokens.saturating_mul(4).saturating_add(256).min(16_384)
}

/// Sends one edit request and waits for the answer (at most `[edit] timeout_ms`).
pub fn ask(config: &Config, selection: &str, instruction: &str) -> Result<Asked, LlmError> {
    let mut llm = config.llm.clone();
    llm.timeout_ms = config.edit.timeout_ms;
    let client = crate::llm::client_for(&llm, Duration::from_secs(5))?;
    let messages = super::prompt::messages(&config.edit.prompt, selection, instruction);
    let mut opts = llm.request_options(selection);
    opts.num_predict = num_predict(llm.num_predict, selection);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| LlmError::Other(format!("cannot start the request's runtime: {e}")))?;
    let t0 = Instant::now();
    let result = runtime.block_on(async {
        match llm.backend {
            BackendKind::Ollama => {
                ollama::Ollama::new(client, &llm)
                    .complete(&messages, &opts)
                    .await
            }
            BackendKind::Openai => {
                openai::OpenAi::new(client, &llm)
                    .complete(&messages, &opts)
                    .await
            }
        }
    });
    let total_ms = ms_since(t0);
    match result {
        Ok(completion) => Ok(Asked {
            completion,
            total_ms,
        }),
        Err(LlmError::Timeout { url, .. }) => Err(LlmError::Timeout {
            url,
            ms: config.edit.timeout_ms,
        }),
        Err(e) => Err(e),
    }
}

/// Writes the request's server, model and timings into the row. `llm_outcome` is the cleanup
/// stage's (its column allows cleanup verdicts only): none for an answer (the row's mode says
/// it is an edit's), "failed" with the error.
pub fn record(entry: &mut Entry, config: &Config, asked: &Result<Asked, LlmError>) {
    entry.llm_backend = Some(config.llm.backend.as_str().to_string());
    entry.llm_model = Some(config.llm.model.clone());
    entry.llm_reject_reason = None;
    match asked {
        Ok(a) => {
            let c = &a.completion;
            entry.llm_outcome = None;
            entry.llm_error = None;
            entry.llm_ms = Some(a.total_ms);
            entry.llm_load_ms = c.load_ms;
            entry.llm_prompt_eval_ms = c.prompt_eval_ms;
            entry.llm_eval_ms = c.eval_ms;
            entry.llm_tokens_per_sec = c.tokens_per_sec;
        }
        Err(e) => {
            entry.llm_outcome = Some("failed".into());
            entry.llm_error = Some(e.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_may_answer_longer_than_its_selection() {
        assert_eq!(num_predict(0, ""), 256);
        // 40 characters: 10 tokens, four times that and 256.
        assert_eq!(num_predict(0, &"abcd".repeat(10)), 296);
        assert_eq!(num_predict(77, "whatever"), 77);
        assert_eq!(num_predict(0, &"x".repeat(1 << 20)), 16_384);
    }
}
