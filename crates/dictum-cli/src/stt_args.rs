//! `--stt-backend/--stt-url/--stt-model/--stt-timeout-ms/--stt-upload`, shared by `transcribe`, `run` and
//! `doctor`: they override the `[stt]` server settings for one run (mirrors `llm_args.rs`).

use dictum_engine::config::{Config, SttBackend, SttUpload};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct SttArgs {
    /// Speech backend: "local" (whisper.cpp here) or "openai" (a server speaking
    /// /v1/audio/transcriptions; the local model stands in when it fails).
    #[arg(long, value_parser = parse_backend)]
    pub stt_backend: Option<SttBackend>,
    /// Speech server base URL, e.g. http://gpu-box:8080 (https unless loopback).
    #[arg(long)]
    pub stt_url: Option<String>,
    /// Model name as the speech server knows it.
    #[arg(long)]
    pub stt_model: Option<String>,
    /// Whole-request timeout for the speech server, in milliseconds.
    #[arg(long)]
    pub stt_timeout_ms: Option<u64>,
    /// Audio format sent to the speech server: "flac", "wav", or "auto" (FLAC, WAV for a
    /// server that refuses FLAC).
    #[arg(long, value_parser = parse_upload)]
    pub stt_upload: Option<SttUpload>,
}

fn parse_upload(s: &str) -> Result<SttUpload, String> {
    SttUpload::parse(s).ok_or_else(|| format!("unknown upload format `{s}`; use auto, flac or wav"))
}

fn parse_backend(s: &str) -> Result<SttBackend, String> {
    SttBackend::parse(s).ok_or_else(|| format!("unknown speech backend `{s}`; use local or openai"))
}

impl SttArgs {
    /// Applies the overrides and checks the result like a config file would be checked.
    pub fn apply(&self, config: &mut Config) -> anyhow::Result<()> {
        let stt = &mut config.stt;
        if let Some(b) = self.stt_backend {
            stt.backend = b;
        }
        if let Some(u) = &self.stt_url {
            stt.url = u.clone();
        }
        if let Some(m) = &self.stt_model {
            stt.remote_model = m.clone();
        }
        if let Some(t) = self.stt_timeout_ms {
            stt.timeout_ms = t;
        }
        if let Some(u) = self.stt_upload {
            stt.upload = u;
        }
        dictum_engine::stt::remote::validate(stt)
            .map_err(|(key, reason)| anyhow::anyhow!("invalid setting {key}: {reason}"))
    }
}
