//! The `[stt]` config section: the model, the language, whisper's window, and the speech
//! server (`backend = "openai"`, docs/REMOTE.md) with its checks. Documented with its defaults
//! in `config::DEFAULT_TOML`.

use crate::net;
use crate::secrets;
use reqwest::Url;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The default cap on a file's duration in seconds (`stt.max_file_s`): 4 hours.
pub const DEFAULT_MAX_SECONDS: u32 = 4 * 3600;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct SttConfig {
    /// Catalog name (`tiny.en-q8_0`) or path to a whisper.cpp ggml model file.
    pub model: String,
    /// Spoken language as a two-letter code, or "auto" to detect it.
    pub language: String,
    /// CPU threads for whisper; 0 picks the number of cores (at most 8).
    pub threads: u32,
    /// Encoder window: "auto" sizes it to the utterance, "full" always uses 30 s.
    pub audio_ctx: AudioCtxMode,
    /// Extra frames (20 ms each) added to the auto-sized window.
    pub audio_ctx_margin: u32,
    /// Smallest auto-sized window, in frames (20 ms each).
    pub audio_ctx_min: u32,
    /// Use the GPU when the binary was built with CUDA.
    pub use_gpu: bool,
    /// Words and names whisper should spell your way (fed to it as the initial prompt).
    pub vocabulary: Vec<String>,
    /// Longest audio file accepted (`dictum transcribe`), in seconds; checked from the WAV
    /// header before anything is decoded.
    pub max_file_s: u32,
    /// Where speech is transcribed: on this machine, or on a shared server (docs/REMOTE.md).
    pub backend: SttBackend,
    /// The speech server's base URL (`openai` backend), e.g. `http://gpu-box:8080`; requests
    /// go to `<url>/v1/audio/transcriptions` (`/audio/transcriptions` when it ends in `/v1`).
    pub url: String,
    /// The model name the server knows (`openai` backend).
    pub remote_model: String,
    /// The audio format sent to the server (`openai` backend): FLAC (lossless, about half the
    /// bytes), WAV, or FLAC with WAV for a server that refuses FLAC.
    pub upload: SttUpload,
    /// Name of the environment variable holding the server's API key; empty = the desktop
    /// keyring's entry (`dictum key set stt`), or no key. Never the key itself.
    pub api_key_env: String,
    /// Whole-request timeout for the server, in ms; past it the utterance is transcribed locally.
    #[ts(type = "number")]
    pub timeout_ms: u64,
    /// Allow plain http to a server that is not on this machine (the audio crosses the network
    /// unencrypted).
    pub allow_insecure: bool,
    /// Transcribe locally when the server is down, slow, refuses or answers garbage.
    pub fallback: bool,
    /// After a failure, dictations go straight to the local model for this long (ms) before the
    /// server is tried again (the circuit breaker).
    #[ts(type = "number")]
    pub retry_after_ms: u64,
}

/// `stt.backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum SttBackend {
    /// whisper.cpp on this machine.
    Local,
    /// A server speaking OpenAI's `POST /v1/audio/transcriptions`.
    Openai,
}

impl SttBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            SttBackend::Local => "local",
            SttBackend::Openai => "openai",
        }
    }

    pub fn parse(s: &str) -> Option<SttBackend> {
        match s.trim().to_ascii_lowercase().as_str() {
            "local" => Some(SttBackend::Local),
            "openai" | "remote" => Some(SttBackend::Openai),
            _ => None,
        }
    }
}

/// `stt.upload`: how the utterance is sent to the speech server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum SttUpload {
    /// FLAC; a server that refuses it gets the same utterance again as WAV at once, and WAV
    /// from then on (while the process runs).
    Auto,
    /// 16 kHz mono 16-bit WAV, always.
    Wav,
    /// FLAC, always (a refusal is a failure: the local model transcribes).
    Flac,
}

impl SttUpload {
    pub fn as_str(self) -> &'static str {
        match self {
            SttUpload::Auto => "auto",
            SttUpload::Wav => "wav",
            SttUpload::Flac => "flac",
        }
    }

    pub fn parse(s: &str) -> Option<SttUpload> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(SttUpload::Auto),
            "wav" => Some(SttUpload::Wav),
            "flac" => Some(SttUpload::Flac),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum AudioCtxMode {
    Auto,
    Full,
}

impl Default for SttConfig {
    fn default() -> Self {
        SttConfig {
            model: "tiny.en-q8_0".into(),
            language: "en".into(),
            threads: 0,
            audio_ctx: AudioCtxMode::Auto,
            audio_ctx_margin: 64,
            audio_ctx_min: 384,
            use_gpu: true,
            vocabulary: Vec::new(),
            max_file_s: DEFAULT_MAX_SECONDS,
            backend: SttBackend::Local,
            url: "http://127.0.0.1:8080".into(),
            remote_model: "whisper-1".into(),
            upload: SttUpload::Auto,
            api_key_env: String::new(),
            timeout_ms: 8000,
            allow_insecure: false,
            fallback: true,
            retry_after_ms: 15000,
        }
    }
}

/// Checks the `[stt]` server keys (used by `Config::validate`); Err is (key, reason).
pub fn validate(stt: &SttConfig) -> Result<(), (&'static str, String)> {
    if !(100..=600_000).contains(&stt.timeout_ms) {
        return Err((
            "stt.timeout_ms",
            format!(
                "must be between 100 and 600000 ms; it is {}",
                stt.timeout_ms
            ),
        ));
    }
    if stt.retry_after_ms > 3_600_000 {
        return Err((
            "stt.retry_after_ms",
            format!(
                "must be between 0 and 3600000 ms; it is {}",
                stt.retry_after_ms
            ),
        ));
    }
    secrets::check_env_name(&stt.api_key_env).map_err(|r| ("stt.api_key_env", r))?;
    if stt.backend == SttBackend::Openai {
        check_server_url(stt)?;
        if stt.remote_model.trim().is_empty() {
            return Err((
                "stt.remote_model",
                "must name the model the server serves, e.g. \"whisper-1\"".into(),
            ));
        }
    }
    Ok(())
}

/// The URL rules for the speech server: http(s), no credentials, and https unless loopback or
/// `allow_insecure`.
pub(crate) fn check_server_url(stt: &SttConfig) -> Result<Url, (&'static str, String)> {
    let url = net::check_url(&stt.url, "stt.url")
        .map_err(|r| ("stt.url", r.replace("llm.api_key_env", "stt.api_key_env")))?;
    if url.scheme() == "http" && !net::is_loopback_url(url.as_str()) && !stt.allow_insecure {
        return Err((
            "stt.url",
            format!(
                "`{}` is plain http to another machine: your dictated audio would cross the network unencrypted; use https, or set stt.allow_insecure = true for a trusted network",
                net::snippet(stt.url.trim(), 100)
            ),
        ));
    }
    Ok(url)
}
