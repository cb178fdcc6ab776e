//! The `[llm]` config section: THE one place the request options live. Every request — the
//! warm-up included — builds its options with [`LlmConfig::request_options`], so the context
//! the server loads at warm-up is the context every dictation asks for (Ollama reloads the
//! whole model when `num_ctx` differs from the loaded one).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum BackendKind {
    /// Ollama's native API (`/api/chat` or `/api/generate`, `/api/ps`).
    Ollama,
    /// Any OpenAI-compatible server (`/v1/chat/completions`): llama-server, LM Studio, vLLM,
    /// Ollama's `/v1`.
    Openai,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Ollama => "ollama",
            BackendKind::Openai => "openai",
        }
    }

    pub fn parse(s: &str) -> Option<BackendKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ollama" => Some(BackendKind::Ollama),
            "openai" => Some(BackendKind::Openai),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum OllamaEndpoint {
    Chat,
    Generate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct LlmConfig {
    /// Run the cleanup stage after speech recognition.
    pub enabled: bool,
    /// "ollama" (native API) or "openai" (OpenAI-compatible `/v1/chat/completions`).
    pub backend: BackendKind,
    /// Server base URL, e.g. `http://127.0.0.1:11434` (Ollama) or `http://127.0.0.1:8080`.
    pub url: String,
    /// Model name as the server knows it.
    pub model: String,
    /// Name of the environment variable holding the server's API key, sent as
    /// `Authorization: Bearer …`; empty = no key. The key itself is never stored in the config
    /// (and a URL with `user:password@` is refused).
    pub api_key_env: String,
    /// Ollama only: "chat" (`/api/chat`) or "generate" (`/api/generate`).
    pub ollama_endpoint: OllamaEndpoint,
    /// Whole-request timeout; on expiry the raw transcript is typed.
    #[ts(type = "number")]
    pub timeout_ms: u64,
    /// Context window the model is loaded with (Ollama `options.num_ctx`).
    pub num_ctx: u32,
    /// How long Ollama keeps the model loaded after a request ("30m", "1h", "-1" = forever).
    pub keep_alive: String,
    pub temperature: f32,
    pub top_p: f32,
    /// Sampling seed; -1 = server's choice.
    #[ts(type = "number")]
    pub seed: i64,
    /// Most tokens to generate; 0 = automatic (2 × the input's estimated tokens + 16).
    pub num_predict: u32,
    /// A request (after warm-up) whose model load time exceeds this is flagged `llm_reloaded`.
    #[ts(type = "number")]
    pub reload_threshold_ms: u64,
    /// System prompt; empty = the built-in cleanup prompt. `{vocabulary}` is replaced by the
    /// vocabulary line (from `stt.vocabulary`), `{text}` by the transcript.
    pub system_prompt: String,
    /// The user message; `{text}` is the transcript, `{vocabulary}` the vocabulary line.
    pub user_template: String,
    /// Send the built-in example (a raw transcript and its cleanup) before the transcript.
    pub examples: bool,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            enabled: false,
            backend: BackendKind::Ollama,
            url: "http://127.0.0.1:11434".into(),
            model: "llama3.2:3b".into(),
            api_key_env: String::new(),
            ollama_endpoint: OllamaEndpoint::Chat,
            timeout_ms: 10_000,
            num_ctx: 2048,
            keep_alive: "30m".into(),
            temperature: 0.0,
            top_p: 0.9,
            seed: 42,
            num_predict: 0,
            reload_threshold_ms: 500,
            system_prompt: String::new(),
            user_template: "{text}".into(),
            examples: true,
        }
    }
}

/// The sampling/context options of one request, derived from the config (and the input length
/// for the automatic `num_predict`). Backends translate it to their wire format.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestOptions {
    pub num_ctx: u32,
    pub keep_alive: String,
    pub temperature: f32,
    pub top_p: f32,
    pub seed: Option<i64>,
    pub num_predict: u32,
}

impl LlmConfig {
    /// The options of every request (warm-up included): the only place they are built.
    pub fn request_options(&self, input: &str) -> RequestOptions {
        RequestOptions {
            num_ctx: self.num_ctx,
            keep_alive: self.keep_alive.clone(),
            temperature: self.temperature,
            top_p: self.top_p,
            seed: (self.seed >= 0).then_some(self.seed),
            num_predict: if self.num_predict > 0 {
                self.num_predict
            } else {
                auto_num_predict(input)
            },
        }
    }

    /// Checks values; Err(key, reason).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        // Ranges documented in config::DEFAULT_TOML.
        super::ranges::check_ranges(&[
            (
                "llm.num_ctx",
                self.num_ctx.into(),
                1,
                1 << 20,
                " tokens (e.g. 2048)",
            ),
            (
                "llm.timeout_ms",
                self.timeout_ms,
                1,
                600_000,
                " ms (e.g. 10000)",
            ),
            (
                "llm.num_predict",
                self.num_predict.into(),
                0,
                131_072,
                " tokens (0 = automatic)",
            ),
            (
                "llm.reload_threshold_ms",
                self.reload_threshold_ms,
                0,
                600_000,
                " ms",
            ),
        ])?;
        if !(-1..=i64::from(u32::MAX)).contains(&self.seed) {
            return Err((
                "llm.seed",
                format!("must be -1 (server's choice) or between 0 and {}", u32::MAX),
            ));
        }
        if let Err(reason) = crate::net::check_url(&self.url, "llm.url") {
            return Err(("llm.url", reason));
        }
        let name = self.api_key_env.trim();
        let valid_name = name.chars().enumerate().all(|(i, c)| {
            c == '_'
                || c.is_ascii_uppercase()
                || c.is_ascii_lowercase()
                || (i > 0 && c.is_ascii_digit())
        });
        if !valid_name || name.len() > 128 {
            return Err((
                "llm.api_key_env",
                "must be the name of an environment variable (letters, digits, _), e.g. \"OPENAI_API_KEY\", or empty; not the key itself".into(),
            ));
        }
        if self.model.trim().is_empty() {
            return Err(("llm.model", "must name a model the server has".into()));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(("llm.temperature", "must be between 0 and 2".into()));
        }
        if !(0.0..=1.0).contains(&self.top_p) || self.top_p == 0.0 {
            return Err(("llm.top_p", "must be in (0, 1]".into()));
        }
        match keep_alive_secs(&self.keep_alive) {
            Some(s) if s == -1.0 || (0.0..=KEEP_ALIVE_MAX_SECS).contains(&s) => {}
            _ => {
                return Err((
                    "llm.keep_alive",
                    format!(
                        "`{}` is not accepted; use a duration up to 7 days like \"30m\", \"1h\", \
                         \"90s\" or \"600\" (seconds), \"0\" (unload at once), or \"-1\" (forever)",
                        self.keep_alive
                    ),
                ))
            }
        }
        if !self.user_template.contains("{text}") {
            return Err((
                "llm.user_template",
                "must contain {text} (where the transcript goes)".into(),
            ));
        }
        Ok(())
    }

    /// keep_alive as Ollama's JSON: a number for plain seconds, else the duration string.
    pub fn keep_alive_json(keep_alive: &str) -> serde_json::Value {
        match keep_alive.trim().parse::<i64>() {
            Ok(n) => serde_json::Value::from(n),
            Err(_) => serde_json::Value::from(keep_alive.trim()),
        }
    }
}

/// 2 × the input's estimated token count (≈ 1 token per 4 bytes, at least 1 per word) + 16.
pub fn auto_num_predict(input: &str) -> u32 {
    let words = input.split_whitespace().count();
    let tokens = (input.len() / 4).max(words) as u32;
    2 * tokens + 16
}

/// The longest keep_alive accepted besides "-1" (forever): 7 days.
pub const KEEP_ALIVE_MAX_SECS: f64 = 7.0 * 24.0 * 3600.0;

/// Seconds of a keep_alive value (Go duration subset or a plain decimal number); negative =
/// forever. Only digits, one optional leading `-`, `.` and the units h/m/s/ms: "inf", "nan",
/// "1e9" and other forms f64 parsing would take are refused (None).
pub fn keep_alive_secs(s: &str) -> Option<f64> {
    let s = s.trim();
    let digits = s.strip_prefix('-').unwrap_or(s);
    let plain = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.chars().any(|c| c.is_ascii_digit());
    if plain {
        return s.parse::<f64>().ok().filter(|n| n.is_finite());
    }
    let mut total = 0.0;
    let mut num = String::new();
    let mut chars = s.chars().peekable();
    let neg = s.starts_with('-');
    if neg {
        chars.next();
    }
    let mut any = false;
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let value: f64 = num.parse().ok()?;
        num.clear();
        let unit = match c {
            'h' => 3600.0,
            'm' if chars.peek() == Some(&'s') => {
                chars.next();
                0.001
            }
            'm' => 60.0,
            's' => 1.0,
            _ => return None,
        };
        total += value * unit;
        any = true;
    }
    if !num.is_empty() || !any {
        return None;
    }
    Some(if neg { -total } else { total })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_alive_forms() {
        assert_eq!(keep_alive_secs("30m"), Some(1800.0));
        assert_eq!(keep_alive_secs("1h30m"), Some(5400.0));
        assert_eq!(keep_alive_secs("90"), Some(90.0));
        assert_eq!(keep_alive_secs("-1"), Some(-1.0));
        assert_eq!(keep_alive_secs("500ms"), Some(0.5));
        assert_eq!(keep_alive_secs("soon"), None);
        assert_eq!(keep_alive_secs("5x"), None);
        assert_eq!(LlmConfig::keep_alive_json("-1"), serde_json::json!(-1));
        assert_eq!(LlmConfig::keep_alive_json("5m"), serde_json::json!("5m"));
    }

    #[test]
    fn warm_up_and_requests_share_every_option_but_the_length_bound() {
        let c = LlmConfig::default();
        let a = c.request_options("hi");
        let b = c.request_options("a much longer dictation with many more words in it");
        assert_eq!(a.num_ctx, b.num_ctx);
        assert_eq!(a.keep_alive, b.keep_alive);
        assert_eq!(a.temperature, b.temperature);
        assert!(b.num_predict > a.num_predict);
        let fixed = LlmConfig {
            num_predict: 64,
            ..LlmConfig::default()
        };
        assert_eq!(fixed.request_options("x").num_predict, 64);
    }

    #[test]
    fn validation() {
        assert!(LlmConfig::default().validate().is_ok());
        let bad = |c: LlmConfig| c.validate().expect_err("invalid").0;
        assert_eq!(
            bad(LlmConfig {
                num_ctx: 0,
                ..LlmConfig::default()
            }),
            "llm.num_ctx"
        );
        assert_eq!(
            bad(LlmConfig {
                timeout_ms: 0,
                ..LlmConfig::default()
            }),
            "llm.timeout_ms"
        );
        assert_eq!(
            bad(LlmConfig {
                url: "localhost:11434".into(),
                ..LlmConfig::default()
            }),
            "llm.url"
        );
        assert_eq!(
            bad(LlmConfig {
                url: "http://me:hunter2@127.0.0.1:11434".into(),
                ..LlmConfig::default()
            }),
            "llm.url"
        );
        assert_eq!(
            bad(LlmConfig {
                api_key_env: "sk-123 secret".into(),
                ..LlmConfig::default()
            }),
            "llm.api_key_env"
        );
        assert!(LlmConfig {
            api_key_env: "OPENAI_API_KEY".into(),
            ..LlmConfig::default()
        }
        .validate()
        .is_ok());
        assert_eq!(
            bad(LlmConfig {
                keep_alive: "forever".into(),
                ..LlmConfig::default()
            }),
            "llm.keep_alive"
        );
        assert_eq!(
            bad(LlmConfig {
                user_template: "clean this".into(),
                ..LlmConfig::default()
            }),
            "llm.user_template"
        );
    }
}
