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
    /// "transcribe" (text in the spoken language) or "translate" (English text from speech in
    /// another language; multilingual models only).
    pub task: SttTask,
    /// CPU threads for whisper; 0 picks the number of cores (at most 8).
    pub threads: u32,
    /// Take fewer threads than `threads` for a pass while other programs keep cores busy
    /// (whisper's threads spin at each step: one that waits for a busy core stalls the rest).
    pub adapt_threads: bool,
    /// Encoder window: "auto" sizes it to the utterance, "full" always uses 30 s.
    pub audio_ctx: AudioCtxMode,
    /// Extra frames (20 ms each) added to the auto-sized window.
    pub audio_ctx_margin: u32,
    /// Smallest auto-sized window, in frames (20 ms each).
    pub audio_ctx_min: u32,
    /// Use the GPU when the binary was built with CUDA or Vulkan.
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

/// `stt.task` (and a profile's `task`): what whisper makes of the speech.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum SttTask {
    /// Text in the language spoken.
    #[default]
    Transcribe,
    /// English text, whatever language is spoken (whisper's translate task; the speech
    /// server's `/v1/audio/translations`). Multilingual models only.
    Translate,
}

impl SttTask {
    pub fn as_str(self) -> &'static str {
        match self {
            SttTask::Transcribe => "transcribe",
            SttTask::Translate => "translate",
        }
    }

    pub fn parse(s: &str) -> Option<SttTask> {
        match s.trim().to_ascii_lowercase().as_str() {
            "transcribe" => Some(SttTask::Transcribe),
            "translate" => Some(SttTask::Translate),
            _ => None,
        }
    }
}

/// The language whisper is told for `task`: with `translate`, "en" means "detect it" (the
/// speech to translate is by definition not English, and "en" is the default every config
/// starts with), so a profile that only sets `task = "translate"` works.
pub fn source_language(language: &str, task: SttTask) -> &str {
    if task == SttTask::Translate && language.trim().eq_ignore_ascii_case("en") {
        "auto"
    } else {
        language
    }
}

/// True when `model` (a catalog name such as `tiny.en-q8_0`, or a path such as
/// `ggml-base.en.bin`) names an English-only whisper model: `.en` ends its size name.
pub fn english_only_name(model: &str) -> bool {
    let name = model.rsplit(['/', '\\']).next().unwrap_or(model);
    let name = name.strip_suffix(".bin").unwrap_or(name);
    name.match_indices(".en").any(|(i, m)| {
        name[i + m.len()..]
            .chars()
            .next()
            .is_none_or(|c| matches!(c, '-' | '_' | '.'))
    })
}

/// A multilingual catalog model to use instead of the English-only `model`: its multilingual
/// twin (`tiny.en-q8_0` → `tiny-q8_0`) when `model` is one of the catalog's English-only
/// models (every one has a twin: whisper.cpp publishes both), else `base-q8_0`. The catalog's
/// names are spelled out here: this section imports nothing from `models` above it.
pub fn multilingual_instead(model: &str) -> String {
    let name = model.rsplit(['/', '\\']).next().unwrap_or(model);
    let name = name.strip_suffix(".bin").unwrap_or(name);
    let name = name.strip_prefix("ggml-").unwrap_or(name);
    let catalog_en = ["tiny", "base", "small", "medium"].iter().any(|size| {
        name.strip_prefix(size)
            .and_then(|r| r.strip_prefix(".en"))
            .is_some_and(|q| matches!(q, "" | "-q5_1" | "-q8_0" | "-q5_0"))
    });
    if catalog_en {
        name.replacen(".en", "", 1)
    } else {
        "base-q8_0".into()
    }
}

/// Why an English-only `model` cannot translate, and which model to pick instead.
pub fn translate_refusal(model: &str) -> String {
    let instead = multilingual_instead(model);
    // The smallest model is the weakest translator: name the next size up too.
    let better = if instead.starts_with("tiny") {
        " or \"base-q8_0\" (larger, translates better)"
    } else {
        ""
    };
    format!(
        "the model `{model}` is English-only and cannot translate; pick a multilingual model \
         instead, e.g. stt.model = \"{instead}\"{better} (`dictum models download NAME`), \
         or set task = \"transcribe\""
    )
}

/// Checks that `task` can run with the `[stt]` settings: translating needs a multilingual
/// local model wherever the local model is used (the local backend, or the server's
/// fallback). The model is judged by its name here; [`crate::stt::Transcriber`] checks the
/// file itself when it loads. Err is the reason.
pub fn check_task(stt: &SttConfig, task: SttTask) -> Result<(), String> {
    let local_used = stt.backend == SttBackend::Local || stt.fallback;
    if task == SttTask::Translate && local_used && english_only_name(&stt.model) {
        let mut why = translate_refusal(stt.model.trim());
        if stt.backend == SttBackend::Openai {
            why.push_str(
                " (the local model stands in when the speech server fails; stt.fallback = false \
                 sends every utterance to the server only)",
            );
        }
        return Err(why);
    }
    Ok(())
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
            task: SttTask::Transcribe,
            threads: 0,
            adapt_threads: true,
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
    check_task(stt, stt.task).map_err(|r| ("stt.task", r))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn translating(model: &str) -> SttConfig {
        SttConfig {
            model: model.into(),
            task: SttTask::Translate,
            ..SttConfig::default()
        }
    }

    #[test]
    fn english_only_models_are_known_by_name() {
        for m in [
            "tiny.en-q8_0",
            "tiny.en",
            "base.en-q5_1",
            "/work/shared/models/ggml-tiny.en-q8_0.bin",
            "ggml-small.en.bin",
            "distil-small.en",
        ] {
            assert!(english_only_name(m), "{m}");
        }
        for m in [
            "base-q8_0",
            "tiny",
            "/models/ggml-large-v3-turbo.bin",
            "/home/en/ggml-base.bin",
            "ggml-medium.english-finetune.bin",
        ] {
            assert!(!english_only_name(m), "{m}");
        }
    }

    #[test]
    fn translate_with_an_english_only_model_is_refused_naming_a_multilingual_one() {
        let Err((key, why)) = validate(&translating("tiny.en-q8_0")) else {
            panic!("translate with tiny.en accepted");
        };
        assert_eq!(key, "stt.task");
        assert!(why.contains("English-only"), "{why}");
        assert!(why.contains("\"tiny-q8_0\""), "names the twin: {why}");
        assert!(why.contains("\"base-q8_0\""), "{why}");
        assert!(!why.contains('\n'), "one line: {why}");
        // A file path: judged by its name, the twin found in the catalog.
        let why = check_task(&translating("/m/ggml-base.en-q5_1.bin"), SttTask::Translate)
            .expect_err("refused");
        assert!(why.contains("\"base-q5_1\""), "{why}");
        // No twin in the catalog: base-q8_0.
        assert_eq!(multilingual_instead("my-finetune.en"), "base-q8_0");
        // Multilingual models translate; any model transcribes.
        assert_eq!(validate(&translating("base-q8_0")), Ok(()));
        assert_eq!(
            validate(&SttConfig {
                task: SttTask::Transcribe,
                ..translating("tiny.en-q8_0")
            }),
            Ok(())
        );
    }

    /// Every English-only model of the catalog is known as such, and its suggested twin is a
    /// multilingual model of the catalog.
    #[test]
    fn every_english_only_catalog_model_has_a_multilingual_twin() {
        for m in crate::models::CATALOG {
            assert_eq!(english_only_name(m.name), m.english_only, "{}", m.name);
            if m.english_only {
                let twin = multilingual_instead(m.name);
                assert!(
                    crate::models::CATALOG
                        .iter()
                        .any(|c| c.name == twin && !c.english_only),
                    "{} -> {twin}",
                    m.name
                );
            }
        }
    }

    #[test]
    fn the_server_backend_refuses_an_english_only_fallback_but_not_without_fallback() {
        let server = SttConfig {
            backend: SttBackend::Openai,
            ..translating("tiny.en-q8_0")
        };
        let why = check_task(&server, SttTask::Translate).expect_err("refused");
        assert!(why.contains("stt.fallback = false"), "{why}");
        let no_fallback = SttConfig {
            fallback: false,
            ..server
        };
        assert_eq!(check_task(&no_fallback, SttTask::Translate), Ok(()));
    }

    #[test]
    fn translate_detects_the_language_where_it_is_english() {
        assert_eq!(source_language("en", SttTask::Translate), "auto");
        assert_eq!(source_language("de", SttTask::Translate), "de");
        assert_eq!(source_language("auto", SttTask::Translate), "auto");
        assert_eq!(source_language("en", SttTask::Transcribe), "en");
        assert_eq!(SttTask::parse(" Translate"), Some(SttTask::Translate));
        assert_eq!(SttTask::parse("x"), None);
        assert_eq!(SttTask::default().as_str(), "transcribe");
    }
}
