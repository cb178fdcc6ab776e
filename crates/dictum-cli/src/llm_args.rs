//! `--llm-backend/--llm-url/--llm-model/--llm-timeout-ms`, shared by `clean`, `transcribe`
//! and `bench llm`: they override the `[llm]` config section for one run.

use dictum_engine::config::Config;
use dictum_engine::llm::config::BackendKind;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct LlmArgs {
    /// LLM backend: "ollama" (native API) or "openai" (any /v1/chat/completions server).
    #[arg(long, value_parser = parse_backend)]
    pub llm_backend: Option<BackendKind>,
    /// LLM server base URL, e.g. http://127.0.0.1:11434.
    #[arg(long)]
    pub llm_url: Option<String>,
    /// Model name as the LLM server knows it.
    #[arg(long)]
    pub llm_model: Option<String>,
    /// Whole-request timeout in milliseconds.
    #[arg(long)]
    pub llm_timeout_ms: Option<u64>,
}

fn parse_backend(s: &str) -> Result<BackendKind, String> {
    BackendKind::parse(s).ok_or_else(|| format!("unknown LLM backend `{s}`; use ollama or openai"))
}

impl LlmArgs {
    /// Applies the overrides and checks the result like a config file would be checked.
    pub fn apply(&self, config: &mut Config) -> anyhow::Result<()> {
        let llm = &mut config.llm;
        if let Some(b) = self.llm_backend {
            llm.backend = b;
        }
        if let Some(u) = &self.llm_url {
            llm.url = u.clone();
        }
        if let Some(m) = &self.llm_model {
            llm.model = m.clone();
        }
        if let Some(t) = self.llm_timeout_ms {
            llm.timeout_ms = t;
        }
        llm.validate()
            .map_err(|(key, reason)| anyhow::anyhow!("invalid setting {key}: {reason}"))
    }
}
