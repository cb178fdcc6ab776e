//! The LLM cleanup stage: turns whisper's raw words into punctuated, capitalized text without
//! fillers — and only ever that. The [`Cleaner`] facade owns one `reqwest::Client` (one
//! connection pool reused across dictations, built by [`crate::net`]: no proxy for a loopback
//! server, no redirect to another host, answers capped at 1 MiB), the backend chosen in config (Ollama native or
//! OpenAI-compatible), the warm-up, reload detection and the guard. It never fails: a timeout,
//! a refused connection, an HTTP error or malformed JSON gives the raw transcript back with
//! the reason in the report (and so in history).

pub mod config;
pub mod guard;
pub mod ollama;
pub mod openai;
pub mod probe;
pub mod prompt;

use crate::secrets::KeyChoice;
use crate::store::Entry;
use crate::timing::ms_since;
use config::{BackendKind, LlmConfig, RequestOptions};
use prompt::Message;
use serde::Serialize;
use serde_json::Value;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What one request to the server gave back. Times in milliseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub text: String,
    /// Model load time the server reports (Ollama `load_duration`); None when it reports none.
    pub load_ms: Option<f64>,
    pub prompt_eval_ms: Option<f64>,
    pub eval_ms: Option<f64>,
    pub eval_count: Option<u64>,
    pub tokens_per_sec: Option<f64>,
    pub server_total_ms: Option<f64>,
}

/// What `/api/ps` says about our model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Residency {
    pub model: String,
    pub size: Option<u64>,
    pub size_vram: Option<u64>,
    pub context_length: Option<u64>,
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error(
        "LLM request to {url} timed out after {ms} ms; raise llm.timeout_ms or use a smaller model"
    )]
    Timeout { url: String, ms: u64 },
    #[error("cannot reach the LLM server at {url}: {reason}; start it (e.g. `ollama serve`) or fix llm.url")]
    Connect { url: String, reason: String },
    #[error("LLM server at {url} answered HTTP {status}: {body}")]
    Http {
        url: String,
        status: u16,
        body: String,
    },
    #[error("LLM server answer is not what {0}")]
    Malformed(String),
    #[error("LLM request failed: {0}")]
    Other(String),
    /// A plain-http server on this machine run by another account ([`crate::loopback`]):
    /// nothing was sent.
    #[error("{0}")]
    Untrusted(String),
}

impl LlmError {
    /// The server closed a kept-alive connection before answering on it (hyper's
    /// `IncompleteMessage`): sending it again is harmless (a cleanup changes nothing there).
    pub fn is_stale_connection(&self) -> bool {
        matches!(self, LlmError::Other(m) if m.ends_with("connection closed before message completed"))
    }

    /// The error without the server's text, for logs at the default level and notices: an
    /// HTTP error body or a malformed answer may quote the dictated words or the model's
    /// answer (the systemd journal keeps them where `history --delete-all` does not reach).
    /// The whole error goes to the history row, and to the log at debug level.
    pub fn without_words(&self) -> String {
        match self {
            LlmError::Http { url, status, .. } => format!(
                "LLM server at {url} answered HTTP {status} (its message is in the history row; `--verbose` logs it)"
            ),
            LlmError::Malformed(_) => "the LLM server's answer is not what Dictum expects (the details are in the history row; `--verbose` logs them)".into(),
            other => other.to_string(),
        }
    }

    /// Short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Timeout { .. } => "timeout",
            LlmError::Connect { .. } => "connect",
            LlmError::Http { .. } => "http",
            LlmError::Malformed(_) => "malformed",
            LlmError::Other(_) => "other",
            LlmError::Untrusted(_) => "untrusted_server",
        }
    }

    /// An answer that could not be read whole: a reqwest error, or past the size cap.
    fn from_read(url: &str, e: Result<reqwest::Error, crate::net::NetError>) -> LlmError {
        match e {
            Ok(e) => LlmError::from_reqwest(url, e),
            Err(e) => LlmError::Malformed(format!("{url} should send: {e}")),
        }
    }

    fn from_reqwest(url: &str, e: reqwest::Error) -> LlmError {
        use std::error::Error as _;
        // The innermost cause says most ("connection refused", "connection closed").
        let mut reason = e.to_string();
        let mut source = e.source();
        while let Some(s) = source {
            reason = s.to_string();
            source = s.source();
        }
        if e.is_timeout() {
            LlmError::Timeout {
                url: url.into(),
                ms: 0,
            }
        } else if e.is_redirect() {
            LlmError::Other(format!("{url}: {}", crate::net::snippet(&reason, 300)))
        } else if e.is_connect() {
            LlmError::Connect {
                url: url.into(),
                reason,
            }
        } else if e.is_decode() || e.is_body() {
            LlmError::Malformed(format!("{url} should send ({reason})"))
        } else {
            LlmError::Other(format!("{url}: {reason}"))
        }
    }
}

/// An HTTP error status; the body is quoted (its `error` message when it is JSON), cut to
/// [`crate::net::SNIPPET_CHARS`] characters.
pub(crate) fn http_error(url: &str, status: reqwest::StatusCode, body: &str) -> LlmError {
    let mut body = body.trim();
    let parsed = serde_json::from_str::<Value>(body).ok();
    if let Some(msg) = parsed
        .as_ref()
        .and_then(|v| v["error"].as_str().or(v["error"]["message"].as_str()))
    {
        body = msg;
    }
    LlmError::Http {
        url: url.into(),
        status: status.as_u16(),
        body: crate::net::snippet(body, crate::net::SNIPPET_CHARS),
    }
}

/// A JSON value quoted in an error: at most [`crate::net::SNIPPET_CHARS`] characters.
pub(crate) fn json_snippet(v: &Value) -> String {
    crate::net::snippet(&v.to_string(), crate::net::SNIPPET_CHARS)
}

/// GETs `url` and returns the status and the body (at most [`crate::net::MAX_BODY`] bytes).
pub(crate) async fn get_capped(
    client: &reqwest::Client,
    url: &str,
) -> Result<(reqwest::StatusCode, String), LlmError> {
    crate::loopback::check_server(url, "LLM server").map_err(LlmError::Untrusted)?;
    let resp = client
        .get(url)
        .send()
        .await
        .map_err(|e| LlmError::from_reqwest(url, e))?;
    let status = resp.status();
    let bytes = crate::net::read_capped(resp, crate::net::MAX_BODY)
        .await
        .map_err(|e| LlmError::from_read(url, e))?;
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

/// POSTs JSON and parses a JSON answer; every failure becomes an [`LlmError`].
pub(crate) async fn post_json(
    client: &reqwest::Client,
    url: &str,
    body: &Value,
) -> Result<Value, LlmError> {
    // Another account's server on this machine gets no text, selection or key.
    crate::loopback::check_server(url, "LLM server").map_err(LlmError::Untrusted)?;
    let resp = client
        .post(url)
        .json(body)
        .send()
        .await
        .map_err(|e| LlmError::from_reqwest(url, e))?;
    let status = resp.status();
    let bytes = crate::net::read_capped(resp, crate::net::MAX_BODY)
        .await
        .map_err(|e| LlmError::from_read(url, e))?;
    if !status.is_success() {
        return Err(http_error(url, status, &String::from_utf8_lossy(&bytes)));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        let head = crate::net::snippet(&String::from_utf8_lossy(&bytes), crate::net::SNIPPET_CHARS);
        LlmError::Malformed(format!("{url} should send: invalid JSON ({e}): {head:?}"))
    })
}

/// One server API. `request` is the exact URL and body `complete` sends (the benchmark posts
/// the same body with a plain client).
pub trait Backend {
    fn request(&self, messages: &[Message], opts: &RequestOptions) -> (String, Value);
    fn complete(
        &self,
        messages: &[Message],
        opts: &RequestOptions,
    ) -> impl Future<Output = Result<Completion, LlmError>> + Send;
    /// Loads the model with exactly the options of a real request: it *is* a real request,
    /// so no backend can let the warm-up drift from what dictations send.
    fn warm_up(
        &self,
        messages: &[Message],
        opts: &RequestOptions,
    ) -> impl Future<Output = Result<Completion, LlmError>> + Send {
        self.complete(messages, opts)
    }
    /// What the server has loaded (`/api/ps`); None where the API has no such thing.
    fn residency(&self) -> impl Future<Output = Result<Option<Residency>, LlmError>> + Send;
}

/// The HTTP client of every request to the LLM server `config` names ([`crate::net`]'s
/// policy: API timeouts, same-origin redirects, no proxy for loopback, the API key from
/// `llm.api_key_env` or the keyring, where [`crate::net::key_allowed`] lets it go).
pub fn client_for(config: &LlmConfig, pool_idle: Duration) -> Result<reqwest::Client, LlmError> {
    client_with_key(config, &key_for(config, config)?, pool_idle)
}

/// The key a request with `config` (the saved settings, or a settings form's) carries: the key
/// source of `saved` (the settings on disk; a form never names it), and only to `saved`'s
/// server ([`crate::secrets::key_for`]). The keyring is asked for OpenAI-compatible servers
/// when no variable is named (Ollama has no keys).
pub fn key_for(config: &LlmConfig, saved: &LlmConfig) -> Result<KeyChoice, LlmError> {
    crate::secrets::key_for(
        "llm",
        &saved.api_key_env,
        "llm.api_key_env",
        config.backend == BackendKind::Openai,
        &saved.url,
        &config.url,
    )
    .map_err(LlmError::Other)
}

/// [`client_for`] with the key already chosen.
pub fn client_with_key(
    config: &LlmConfig,
    key: &KeyChoice,
    pool_idle: Duration,
) -> Result<reqwest::Client, LlmError> {
    let mut policy = crate::net::Policy::api(Duration::from_millis(config.timeout_ms.max(1)));
    policy.pool_idle = Some(pool_idle);
    policy.bearer = key.secret();
    crate::net::client_for(&config.url, &policy).map_err(|e| LlmError::Other(e.to_string()))
}

enum AnyBackend {
    Ollama(ollama::Ollama),
    OpenAi(openai::OpenAi),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmOutcome {
    /// The guard accepted the output: it is the text.
    Cleaned,
    /// The server answered, the guard said no: the raw transcript is the text.
    Rejected,
    /// No usable answer (timeout, connection, HTTP, JSON): the raw transcript is the text.
    Failed,
    /// The stage is off.
    Disabled,
}

impl LlmOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            LlmOutcome::Cleaned => "cleaned",
            LlmOutcome::Rejected => "rejected",
            LlmOutcome::Failed => "failed",
            LlmOutcome::Disabled => "disabled",
        }
    }
}

/// Everything about one cleanup, as stored in history and printed by `--json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmReport {
    pub backend: String,
    pub model: String,
    pub outcome: LlmOutcome,
    /// The text to type: the cleaned text if accepted, else the raw transcript.
    pub text: String,
    /// What the model answered (None when it did not).
    pub output: Option<String>,
    pub reject_reason: Option<String>,
    pub error: Option<String>,
    pub error_kind: Option<String>,
    pub load_ms: Option<f64>,
    pub prompt_eval_ms: Option<f64>,
    pub eval_ms: Option<f64>,
    pub tokens_per_sec: Option<f64>,
    /// Client-side wall time of the whole stage.
    pub total_ms: f64,
    pub reloaded: bool,
    /// Why it was probably reloaded (only when `reloaded`).
    pub reload_cause: Option<String>,
}

impl LlmReport {
    /// Writes the report into a history row: `text` only changes when the guard accepted.
    pub fn apply_to(&self, entry: &mut Entry) {
        entry.llm_backend = Some(self.backend.clone());
        entry.llm_model = Some(self.model.clone());
        entry.llm_outcome = Some(self.outcome.as_str().to_string());
        entry.llm_reject_reason = self.reject_reason.clone();
        entry.llm_error = self.error.clone();
        entry.llm_ms = Some(self.total_ms);
        entry.llm_load_ms = self.load_ms;
        entry.llm_prompt_eval_ms = self.prompt_eval_ms;
        entry.llm_eval_ms = self.eval_ms;
        entry.llm_tokens_per_sec = self.tokens_per_sec;
        entry.llm_reloaded = Some(self.reloaded);
        if self.outcome == LlmOutcome::Cleaned {
            entry.text = Some(self.text.clone());
        }
    }

    /// The `llm` object of `--json` output.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::json!({
            "backend": self.backend,
            "model": self.model,
            "outcome": self.outcome,
            "load_ms": self.load_ms,
            "prompt_eval_ms": self.prompt_eval_ms,
            "eval_ms": self.eval_ms,
            "tokens_per_sec": self.tokens_per_sec,
            "total_ms": self.total_ms,
            "reloaded": self.reloaded,
        });
        if let Some(r) = &self.reject_reason {
            v["reject_reason"] = r.clone().into();
        }
        if let Some(e) = &self.error {
            v["error"] = e.clone().into();
        }
        if let Some(o) = &self.output {
            v["output"] = o.clone().into();
        }
        v
    }
}

/// What a warm-up found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WarmUp {
    pub ok: bool,
    pub total_ms: f64,
    pub load_ms: Option<f64>,
    /// `/api/ps` after the warm-up (Ollama); None for OpenAI-compatible servers.
    pub residency: Option<Residency>,
    /// Problems, each already logged with `tracing::warn!`.
    pub warnings: Vec<String>,
}

/// The text the warm-up cleans (through the very same prompt and options as a dictation).
pub const WARMUP_TEXT: &str = "um this is a warm up";

pub struct Cleaner {
    config: LlmConfig,
    vocabulary: Vec<String>,
    backend: AnyBackend,
    client: reqwest::Client,
    limits: guard::Limits,
    /// A request has loaded the model: a later long load is a reload.
    loaded_once: AtomicBool,
    last_request: Mutex<Option<Instant>>,
}

impl Cleaner {
    /// Builds the client and backend; no request is sent.
    pub fn new(config: &LlmConfig, vocabulary: &[String]) -> Result<Cleaner, LlmError> {
        Cleaner::with_key(config, vocabulary, &key_for(config, config)?)
    }

    /// [`Cleaner::new`] with the key already chosen ([`key_for`]: a settings form's test).
    pub fn with_key(
        config: &LlmConfig,
        vocabulary: &[String],
        key: &KeyChoice,
    ) -> Result<Cleaner, LlmError> {
        let client = client_with_key(config, key, Duration::from_secs(300))?;
        let backend = match config.backend {
            BackendKind::Ollama => AnyBackend::Ollama(ollama::Ollama::new(client.clone(), config)),
            BackendKind::Openai => AnyBackend::OpenAi(openai::OpenAi::new(client.clone(), config)),
        };
        Ok(Cleaner {
            config: config.clone(),
            vocabulary: vocabulary.to_vec(),
            backend,
            client,
            limits: guard::Limits::default(),
            loaded_once: AtomicBool::new(false),
            last_request: Mutex::new(None),
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// The one client (and connection pool) every request uses.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// The messages of a cleanup request for `text`.
    pub fn messages(&self, text: &str) -> Vec<Message> {
        prompt::messages(&self.config, &self.vocabulary, text)
    }

    /// The exact URL and JSON body a cleanup of `text` sends.
    pub fn request_for(&self, text: &str) -> (String, Value) {
        let msgs = self.messages(text);
        let opts = self.config.request_options(text);
        match &self.backend {
            AnyBackend::Ollama(b) => b.request(&msgs, &opts),
            AnyBackend::OpenAi(b) => b.request(&msgs, &opts),
        }
    }

    /// The messages of a cleanup request for `text` that comes after `before` (its raw words
    /// and what they became, shown as one earlier exchange: cleanup while speaking).
    pub fn messages_after(&self, text: &str, before: Option<(&str, &str)>) -> Vec<Message> {
        self.messages_in(text, before, None)
    }

    /// [`Cleaner::messages_after`] with the place the text goes (`[context] llm`), fenced
    /// in the system prompt (`prompt::context_note`).
    pub fn messages_in(
        &self,
        text: &str,
        before: Option<(&str, &str)>,
        context: Option<&prompt::Context>,
    ) -> Vec<Message> {
        let mut msgs = prompt::messages_in(&self.config, &self.vocabulary, text, context);
        if let Some((raw, cleaned)) = before {
            let user = self.messages(raw).pop();
            if let Some(user) = user {
                let at = msgs.len().saturating_sub(1);
                msgs.insert(at, Message::new("assistant", cleaned));
                msgs.insert(at, user);
            }
        }
        msgs
    }

    async fn complete(&self, text: &str, warm: bool) -> Result<Completion, LlmError> {
        self.complete_after(text, None, None, warm).await
    }

    async fn complete_after(
        &self,
        text: &str,
        before: Option<(&str, &str)>,
        context: Option<&prompt::Context>,
        warm: bool,
    ) -> Result<Completion, LlmError> {
        let msgs = self.messages_in(text, before, context);
        let opts = self.config.request_options(text);
        let send = || async {
            match (&self.backend, warm) {
                (AnyBackend::Ollama(b), false) => b.complete(&msgs, &opts).await,
                (AnyBackend::Ollama(b), true) => b.warm_up(&msgs, &opts).await,
                (AnyBackend::OpenAi(b), false) => b.complete(&msgs, &opts).await,
                (AnyBackend::OpenAi(b), true) => b.warm_up(&msgs, &opts).await,
            }
        };
        let mut result = send().await;
        // A pooled connection the server closed while idle (llama-server closes them after
        // 5 s; this runtime only runs during a request, so the close is seen only when the
        // next request is written on it): sent again once, on a fresh connection.
        if matches!(&result, Err(e) if e.is_stale_connection()) {
            tracing::debug!("LLM connection closed by the server while idle; sending again");
            result = send().await;
        }
        result.map_err(|e| match e {
            LlmError::Timeout { url, .. } => LlmError::Timeout {
                url,
                ms: self.config.timeout_ms,
            },
            other => other,
        })
    }

    /// What the server has loaded (Ollama `/api/ps`); Ok(None) for OpenAI-compatible servers
    /// or when our model is not loaded.
    pub async fn residency(&self) -> Result<Option<Residency>, LlmError> {
        match &self.backend {
            AnyBackend::Ollama(b) => b.residency().await,
            AnyBackend::OpenAi(b) => b.residency().await,
        }
    }

    /// Loads the model with exactly a dictation's options, then checks what is resident. Call
    /// at start-up and after any config change (a new `Cleaner`).
    pub async fn warm_up(&self) -> WarmUp {
        let start = Instant::now();
        let result = self.complete(WARMUP_TEXT, true).await;
        let mut warnings = Vec::new();
        let (ok, load_ms) = match result {
            Ok(c) => {
                self.loaded_once.store(true, Ordering::SeqCst);
                self.touch();
                (true, c.load_ms)
            }
            Err(e) => {
                warnings.push(format!("LLM warm-up failed: {e}"));
                (false, None)
            }
        };
        let total_ms = ms_since(start);
        let residency = if ok && self.config.backend == BackendKind::Ollama {
            match self.residency().await {
                Ok(Some(r)) => {
                    if let Some(ctx) = r
                        .context_length
                        .filter(|c| *c != u64::from(self.config.num_ctx))
                    {
                        warnings.push(format!(
                            "the LLM server has {} loaded with a {ctx}-token context, but llm.num_ctx is {}: every dictation would reload it; check OLLAMA_CONTEXT_LENGTH or other clients of the server",
                            r.model, self.config.num_ctx
                        ));
                    }
                    if r.size_vram == Some(0) {
                        tracing::info!("LLM {} runs on the CPU (size_vram 0)", r.model);
                    }
                    Some(r)
                }
                Ok(None) => {
                    warnings.push(format!(
                        "after the warm-up, /api/ps does not list {}: the server unloaded it at once (keep_alive {:?}?)",
                        self.config.model, self.config.keep_alive
                    ));
                    None
                }
                Err(e) => {
                    warnings.push(format!("cannot check what the LLM server has loaded: {e}"));
                    None
                }
            }
        } else {
            None
        };
        for w in &warnings {
            tracing::warn!("{w}");
        }
        WarmUp {
            ok,
            total_ms,
            load_ms,
            residency,
            warnings,
        }
    }

    fn touch(&self) -> Option<Duration> {
        let mut last = self.last_request.lock().unwrap_or_else(|p| p.into_inner());
        let since = last.map(|t| t.elapsed());
        *last = Some(Instant::now());
        since
    }

    pub(crate) fn report(&self, raw: &str, outcome: LlmOutcome, total_ms: f64) -> LlmReport {
        LlmReport {
            backend: self.config.backend.as_str().into(),
            model: self.config.model.clone(),
            outcome,
            text: raw.to_string(),
            output: None,
            reject_reason: None,
            error: None,
            error_kind: None,
            load_ms: None,
            prompt_eval_ms: None,
            eval_ms: None,
            tokens_per_sec: None,
            total_ms,
            reloaded: false,
            reload_cause: None,
        }
    }

    /// Cleans one transcript for a terminal or an unknown window (the strictest target).
    /// Never fails: the report's `text` is always usable.
    pub async fn clean(&self, raw: &str) -> LlmReport {
        self.clean_for(raw, true).await
    }

    /// Cleans one transcript for a known target: `terminal` says whether the text goes into
    /// a terminal (the guard then also refuses added shell-significant characters; elsewhere
    /// `$123`, `50%`, `R&D` are fine). Never fails: the report's `text` is always usable.
    pub async fn clean_for(&self, raw: &str, terminal: bool) -> LlmReport {
        self.clean_after(raw, None, terminal).await
    }

    /// [`Cleaner::clean_for`] of a piece of a longer text that comes after `before` (the
    /// previous piece's raw words and what they became): the model sees that exchange first,
    /// the guard judges this piece alone (`dictation/live_clean.rs`).
    pub async fn clean_after(
        &self,
        raw: &str,
        before: Option<(&str, &str)>,
        terminal: bool,
    ) -> LlmReport {
        self.clean_in(raw, before, terminal, None).await
    }

    /// Whether the server is on this machine (a loopback URL): the text around the cursor
    /// goes only there unless `[context] llm_remote` says otherwise.
    pub fn is_local(&self) -> bool {
        crate::net::is_loopback_url(&self.config.url)
    }

    /// [`Cleaner::clean_after`] with the place the text goes (`[context] llm`): the model
    /// sees it fenced as data; the guard judges the answer against the transcript alone.
    pub async fn clean_in(
        &self,
        raw: &str,
        before: Option<(&str, &str)>,
        terminal: bool,
        context: Option<&prompt::Context>,
    ) -> LlmReport {
        let start = Instant::now();
        if raw.trim().is_empty() {
            return self.report(raw, LlmOutcome::Disabled, 0.0);
        }
        let result = self.complete_after(raw, before, context, false).await;
        let total_ms = ms_since(start);
        let c = match result {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("{}; typing the raw transcript", e.without_words());
                tracing::debug!("LLM cleanup failed: {e}");
                let mut r = self.report(raw, LlmOutcome::Failed, total_ms);
                r.error = Some(e.to_string());
                r.error_kind = Some(e.kind().into());
                return r;
            }
        };
        let since_last = self.touch();
        let was_loaded = self.loaded_once.swap(true, Ordering::SeqCst);
        let threshold = self.config.reload_threshold_ms as f64;
        let reloaded = was_loaded && c.load_ms.is_some_and(|ms| ms > threshold);
        let mut r = self.report(raw, LlmOutcome::Rejected, total_ms);
        r.output = Some(c.text.clone());
        r.load_ms = c.load_ms;
        r.prompt_eval_ms = c.prompt_eval_ms;
        r.eval_ms = c.eval_ms;
        r.tokens_per_sec = c.tokens_per_sec;
        r.reloaded = reloaded;
        if reloaded {
            let cause = self.reload_cause(since_last);
            tracing::warn!(
                "the LLM server reloaded {} for this dictation ({:.0} ms of load time): {cause}",
                self.config.model,
                c.load_ms.unwrap_or_default()
            );
            r.reload_cause = Some(cause);
        }
        match guard::judge(raw, &c.text, &self.limits, terminal) {
            Ok(text) => {
                r.outcome = LlmOutcome::Cleaned;
                r.text = text;
            }
            Err(rejection) => {
                let reason = crate::net::snippet(&rejection.to_string(), 300);
                // The reason may quote the answer: only at debug level; history keeps it.
                tracing::info!(
                    kind = rejection.kind.as_str(),
                    "LLM output rejected; typing the raw transcript"
                );
                tracing::debug!("LLM output rejected: {reason}");
                r.reject_reason = Some(reason);
            }
        }
        r
    }

    /// The likely cause of a reload, from what Dictum knows.
    fn reload_cause(&self, since_last: Option<Duration>) -> String {
        let keep = config::keep_alive_secs(&self.config.keep_alive).unwrap_or(300.0);
        match since_last {
            Some(d) if keep >= 0.0 && d.as_secs_f64() > keep => format!(
                "keep_alive expired: the last request was {:.0} s ago and llm.keep_alive is {:?}; raise it (\"-1\" keeps the model loaded)",
                d.as_secs_f64(),
                self.config.keep_alive
            ),
            _ => format!(
                "the model was unloaded or reloaded since the last request although keep_alive ({:?}) had not expired: most likely another client asked for it with a different num_ctx (Dictum uses {}), or another model evicted it from memory",
                self.config.keep_alive, self.config.num_ctx
            ),
        }
    }
}
