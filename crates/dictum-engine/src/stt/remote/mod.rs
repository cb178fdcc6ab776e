//! The shared-server speech backend (`stt.backend = "openai"`): each VAD-trimmed utterance goes
//! as 16 kHz mono 16-bit FLAC (`flac.rs`; lossless, about half the bytes) or WAV
//! (`stt.upload`) to a server speaking OpenAI's `POST /v1/audio/transcriptions`
//! (whisper.cpp's `whisper-server --inference-path /v1/audio/transcriptions`, speaches, vLLM,
//! LocalAI, Groq, OpenAI), with the language and the prompt (vocabulary + what was said just
//! before), asking for `verbose_json` so segments and their no-speech probability come back when
//! the server has them (plain `{"text": …}` answers are accepted too).
//!
//! The request is synchronous for the caller (the engine's worker thread, which sends one
//! request at a time: at most one request in flight per client), run on a private
//! current-thread runtime whose connection pool lives as long as this client. Every request has
//! the whole-request deadline `stt.timeout_ms`; answers are capped at [`crate::net::MAX_BODY`].
//! Errors are one line, classified ([`RemoteError`]) so the engine can fall back to the local
//! model and say why; the API key is never in any of them. The [`Breaker`] (in
//! `remote_breaker.rs`) keeps a dead server from costing a timeout on every dictation.
//!
//! `stt.upload = "auto"` sends FLAC; a server that refuses it (HTTP 400/415/422 that is not
//! about the key, or an answer that is not a transcript) gets the same utterance again as WAV
//! at once, and when WAV works the server is remembered as a WAV server for the life of the
//! process ([`server_wants_wav`]), so only its first utterance pays the extra round trip.
//!
//! `task = "translate"` (`stt.task` or a profile's) sends the utterance to OpenAI's
//! `POST /v1/audio/translations` instead (English text; no language field, the server detects
//! it). OpenAI, Groq, speaches and LocalAI have it; whisper.cpp's `whisper-server` serves one
//! path, so a translating one runs with `--inference-path /v1/audio/translations --translate
//! -l auto`.
//! A server without the endpoint answers 404, and the message says so.

use crate::config::{SttConfig, SttTask, SttUpload};
use crate::net::{self, Policy};
use crate::secrets::{self, KeySource};
use reqwest::Url;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use super::remote_breaker::{Breaker, Gate};

/// Headers a server may report its own processing time in (ms), first found wins.
const SERVER_TIME_HEADERS: &[&str] = &["x-processing-ms", "openai-processing-ms", "x-inference-ms"];

use crate::config::stt::check_server_url;
/// The `[stt]` checks (`validate`, the server URL rules) live with the section
/// (`config/stt.rs`).
pub use crate::config::stt::validate;

/// `<base>/v1/<path>`, or `<base>/<path>` when the base already ends in `/v1`.
pub fn endpoint(base: &Url, path: &str) -> Url {
    let mut s = base.as_str().trim_end_matches('/').to_string();
    if !s.ends_with("/v1") {
        s.push_str("/v1");
    }
    s.push('/');
    s.push_str(path);
    Url::parse(&s).unwrap_or_else(|_| base.clone())
}

/// Why the server gave no usable transcript; `Display` is one line for the user and the row.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RemoteError {
    /// The settings cannot work (URL, missing key variable); nothing was sent.
    #[error("{0}")]
    Setup(String),
    #[error("the speech server at {url} cannot be reached ({reason}); is it running?")]
    Down { url: String, reason: String },
    #[error("the speech server at {url} did not answer within {ms} ms (stt.timeout_ms)")]
    Timeout { url: String, ms: u64 },
    #[error("the speech server refused the API key (HTTP {status}); set the right key with `dictum key set stt` or the variable stt.api_key_env names")]
    Auth { status: u16 },
    #[error("the speech server answered HTTP {status}: {body}")]
    Http { status: u16, body: String },
    #[error("the speech server's answer is not a transcript ({0})")]
    Garbage(String),
}

impl RemoteError {
    /// Short name for history and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            RemoteError::Setup(_) => "setup",
            RemoteError::Down { .. } => "down",
            RemoteError::Timeout { .. } => "timeout",
            RemoteError::Auth { .. } => "auth",
            RemoteError::Http { .. } => "http",
            RemoteError::Garbage(_) => "garbage",
        }
    }

    /// The error without what the server said, for logs at the default level: an answer
    /// that is not a transcript is quoted in [`RemoteError::Garbage`] (words, maybe the
    /// dictation's), an HTTP error's body may echo the request. The whole error goes to the
    /// history row, and to the log at debug level.
    pub fn without_words(&self) -> String {
        match self {
            RemoteError::Http { status, .. } => format!(
                "the speech server answered HTTP {status} (its message is in the history row; `--verbose` logs it)"
            ),
            RemoteError::Garbage(_) => "the speech server's answer is not a transcript (why is in the history row; `--verbose` logs it)".into(),
            other => other.to_string(),
        }
    }
}

/// What the server made of one utterance.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemoteOutput {
    /// The transcript, trimmed.
    pub text: String,
    /// The language the server reports (a code or a name), if any.
    pub language: Option<String>,
    /// Highest no-speech probability over the segments (0 when the server gives none).
    pub no_speech_prob: f32,
    /// Where the last segment ends, ms from the start of the audio sent.
    pub end_ms: Option<u64>,
    pub segments: usize,
    /// Audio encoded and request sent → answer read (both attempts when FLAC was refused).
    pub round_trip_ms: f64,
    /// The server's own processing time, when it reports it (a header).
    pub server_ms: Option<f64>,
    /// round trip − server time: upload, queueing and download (with `server_ms` only); with
    /// a FLAC refusal retried as WAV, the refused attempt is in it too.
    pub upload_ms: Option<f64>,
    /// Audio bytes sent (the file in the request; the attempt that answered).
    pub bytes: usize,
    /// The audio format the answer is for: "flac" or "wav" ("" before a request).
    pub format: &'static str,
    /// Why FLAC was not used for this utterance although it was tried (auto: the refusal).
    pub flac_refused: Option<String>,
}

/// An audio format the server can be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upload {
    Flac,
    Wav,
}

impl Upload {
    pub fn as_str(self) -> &'static str {
        match self {
            Upload::Flac => "flac",
            Upload::Wav => "wav",
        }
    }

    fn file(self) -> (&'static str, &'static str) {
        match self {
            Upload::Flac => ("audio.flac", "audio/flac"),
            Upload::Wav => ("audio.wav", "audio/wav"),
        }
    }

    /// The file of `pcm` (16 kHz mono 16-bit) in this format.
    pub fn encode(self, pcm: &[i16]) -> Vec<u8> {
        match self {
            Upload::Flac => super::flac::encode(pcm),
            Upload::Wav => wav_from_pcm(pcm),
        }
    }
}

/// Servers (their transcription URLs) that refused FLAC and took WAV, in this process.
static WAV_SERVERS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Whether the server at `transcriptions` refused FLAC and took WAV earlier in this process.
pub fn server_wants_wav(transcriptions: &str) -> bool {
    WAV_SERVERS
        .lock()
        .map(|l| l.iter().any(|u| u == transcriptions))
        .unwrap_or(false)
}

fn remember_wants_wav(transcriptions: &str) {
    if let Ok(mut l) = WAV_SERVERS.lock() {
        if !l.iter().any(|u| u == transcriptions) {
            l.push(transcriptions.to_string());
        }
    }
}

/// Whether `e`, the answer to a FLAC upload, may mean "not FLAC" (so WAV is worth a try):
/// a 400/415/422 that is not about the key, or an answer that is not a transcript.
pub fn refuses_flac(e: &RemoteError) -> bool {
    match e {
        RemoteError::Http {
            status: 400 | 415 | 422,
            body,
        } => {
            let body = body.to_ascii_lowercase();
            ![
                "api key",
                "api_key",
                "apikey",
                "auth",
                "token",
                "credential",
                "permission",
                "forbidden",
            ]
            .iter()
            .any(|w| body.contains(w))
        }
        RemoteError::Garbage(_) => true,
        _ => false,
    }
}

/// The key a request to `stt.url` (the saved settings, or a settings form's) carries: the key
/// source of `saved` (the settings on disk; a form never names it), and only to `saved`'s
/// server ([`secrets::key_for`]).
pub fn key_for(stt: &SttConfig, saved: &SttConfig) -> Result<secrets::KeyChoice, RemoteError> {
    secrets::key_for(
        "stt",
        &saved.api_key_env,
        "stt.api_key_env",
        true,
        &saved.url,
        &stt.url,
    )
    .map_err(RemoteError::Setup)
}

/// A client for one speech server (rebuilt when the settings change).
pub struct RemoteStt {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    url: Url,
    transcriptions: Url,
    /// `<url>/v1/audio/translations`, for `task = "translate"`.
    translations: Url,
    model: String,
    language: String,
    task: SttTask,
    timeout_ms: u64,
    upload: SttUpload,
    pub key_source: KeySource,
    pub breaker: Breaker,
}

impl std::fmt::Debug for RemoteStt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteStt")
            .field("url", &self.transcriptions.as_str())
            .field("model", &self.model)
            .field("key", &self.key_source)
            .finish_non_exhaustive()
    }
}

impl RemoteStt {
    /// Builds the client from `[stt]`: URL rules, the key (env variable or keyring, where
    /// [`net::key_allowed`] lets it go), timeouts.
    pub fn new(stt: &SttConfig) -> Result<RemoteStt, RemoteError> {
        RemoteStt::with_key(stt, &key_for(stt, stt)?)
    }

    /// [`RemoteStt::new`] with the key already chosen ([`key_for`]).
    pub fn with_key(stt: &SttConfig, key: &secrets::KeyChoice) -> Result<RemoteStt, RemoteError> {
        let url = check_server_url(stt).map_err(|(_, r)| RemoteError::Setup(r))?;
        let key = key.key.clone();
        let timeout = Duration::from_millis(stt.timeout_ms.max(1));
        let mut policy = Policy::api(timeout);
        policy.pool_idle = Some(Duration::from_secs(300));
        policy.bearer = key.as_ref().map(|k| k.secret().to_string());
        let client = net::client_for(url.as_str(), &policy).map_err(|e| {
            RemoteError::Setup(e.to_string().replace("llm.api_key_env", "stt.api_key_env"))
        })?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RemoteError::Setup(format!("cannot start the async runtime: {e}")))?;
        Ok(RemoteStt {
            runtime,
            client,
            transcriptions: endpoint(&url, "audio/transcriptions"),
            translations: endpoint(&url, "audio/translations"),
            url,
            model: stt.remote_model.trim().to_string(),
            language: crate::config::stt::source_language(&stt.language, stt.task).to_string(),
            task: stt.task,
            timeout_ms: stt.timeout_ms,
            upload: stt.upload,
            key_source: key.map_or(KeySource::None, |k| k.source),
            breaker: Breaker::new(Duration::from_millis(stt.retry_after_ms)),
        })
    }

    /// The language sent with the next requests (a per-app profile's, or `stt.language`).
    pub fn set_language(&mut self, language: &str) {
        if self.language != language {
            self.language = language.to_string();
        }
    }

    /// The task of the next requests (a per-app profile's, or `stt.task`): translating goes to
    /// `/v1/audio/translations`.
    pub fn set_task(&mut self, task: SttTask) {
        self.task = task;
    }

    /// Where the next utterance is sent: the transcriptions or the translations endpoint.
    pub fn endpoint_for_task(&self) -> &Url {
        match self.task {
            SttTask::Transcribe => &self.transcriptions,
            SttTask::Translate => &self.translations,
        }
    }

    /// The server as the user named it (for messages, rows and `doctor`).
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// `host:port`, for the row's device column.
    pub fn host(&self) -> String {
        let host = self.url.host_str().unwrap_or("?");
        match self.url.port_or_known_default() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        }
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// The format the next utterance goes in first (`stt.upload`, and what the server took).
    pub fn upload_format(&self) -> Upload {
        match self.upload {
            SttUpload::Wav => Upload::Wav,
            SttUpload::Flac => Upload::Flac,
            SttUpload::Auto if server_wants_wav(self.transcriptions.as_str()) => Upload::Wav,
            SttUpload::Auto => Upload::Flac,
        }
    }

    /// Sends `samples` (16 kHz mono, already trimmed) with `prompt`; the breaker is not
    /// consulted here (see [`Breaker`]). With `stt.upload = "auto"`, a FLAC refusal is retried
    /// as WAV at once (see the module doc).
    pub fn transcribe(&self, samples: &[f32], prompt: &str) -> Result<RemoteOutput, RemoteError> {
        let pcm = pcm16(samples);
        let start = Instant::now();
        let format = self.upload_format();
        let first = self.send(format, &pcm, prompt);
        let refused = match first {
            Err(e)
                if format == Upload::Flac && self.upload == SttUpload::Auto && refuses_flac(&e) =>
            {
                e
            }
            other => return other,
        };
        tracing::info!(
            "the speech server at {} refused FLAC ({refused}); sending this utterance again as WAV",
            self.url
        );
        let mut out = self.send(Upload::Wav, &pcm, prompt)?;
        remember_wants_wav(self.transcriptions.as_str());
        tracing::info!(
            "the speech server at {} takes WAV: WAV from now on for it",
            self.url
        );
        out.round_trip_ms = start.elapsed().as_secs_f64() * 1000.0;
        out.upload_ms = out.server_ms.map(|s| (out.round_trip_ms - s).max(0.0));
        out.flac_refused = Some(refused.to_string());
        Ok(out)
    }

    /// One request: `pcm` as `format`, with `prompt`.
    fn send(&self, format: Upload, pcm: &[i16], prompt: &str) -> Result<RemoteOutput, RemoteError> {
        // The round trip counts from here: encoding is part of what the server costs.
        let start = Instant::now();
        let audio = format.encode(pcm);
        let encode_ms = start.elapsed().as_secs_f64() * 1000.0;
        tracing::debug!(
            "speech server upload: {}, {} bytes for {:.2} s of audio (WAV: {} bytes), encoded in {encode_ms:.1} ms",
            format.as_str(),
            audio.len(),
            pcm.len() as f64 / f64::from(crate::SAMPLE_RATE),
            44 + 2 * pcm.len()
        );
        let boundary = format!(
            "dictum-{:x}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        let mut fields: Vec<(&str, &str)> = vec![
            ("model", &self.model),
            ("response_format", "verbose_json"),
            ("temperature", "0"),
        ];
        // OpenAI's translations endpoint takes no language: it detects the one spoken.
        if self.language != "auto" && self.task == SttTask::Transcribe {
            fields.push(("language", &self.language));
        }
        if !prompt.trim().is_empty() {
            fields.push(("prompt", prompt.trim()));
        }
        let (file_name, file_type) = format.file();
        let body = multipart(&boundary, &fields, file_name, file_type, &audio);
        let bytes = audio.len();
        drop(audio);
        let url = self.endpoint_for_task().clone();
        // Another account's server on this machine gets no audio, prompt or key.
        crate::loopback::check_server(url.as_str(), "speech server").map_err(RemoteError::Setup)?;
        let request = |body: Vec<u8>| {
            self.client
                .post(url.clone())
                .header(
                    reqwest::header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(body)
        };
        let answer = self.runtime.block_on(async {
            let resp = match request(body.clone()).send().await {
                Ok(resp) => Ok(resp),
                // A kept-alive connection the server closed while idle (whisper-server and
                // uvicorn close them after 5 s) fails at once: try once more on a new one.
                Err(e)
                    if !e.is_timeout() && !e.is_connect() && start.elapsed().as_millis() < 1000 =>
                {
                    tracing::debug!(
                        "speech server request failed on a reused connection ({e}); retrying once"
                    );
                    request(body).send().await
                }
                Err(e) => Err(e),
            };
            let resp = resp.map_err(|e| self.classify(&e))?;
            let status = resp.status();
            let server_ms = SERVER_TIME_HEADERS.iter().find_map(|h| {
                resp.headers()
                    .get(*h)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|v| v.is_finite() && *v >= 0.0)
            });
            let body = self.read_body(resp).await?;
            Ok::<_, RemoteError>((status, server_ms, body))
        });
        let (status, server_ms, body) = answer?;
        let round_trip_ms = start.elapsed().as_secs_f64() * 1000.0;
        if status.as_u16() == 401 || status.as_u16() == 403 {
            return Err(RemoteError::Auth {
                status: status.as_u16(),
            });
        }
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body);
            let mut msg = error_message(&text);
            if status.as_u16() == 404 && self.task == SttTask::Translate {
                msg.push_str(&format!(
                    " — the speech server at {} has no /v1/audio/translations endpoint, so it cannot translate (task = \"translate\"); use a server that has it (whisper-server: --inference-path /v1/audio/translations --translate -l auto), the local backend with a multilingual model, or task = \"transcribe\"",
                    self.url
                ));
            } else if status.as_u16() == 404 {
                msg.push_str(&format!(
                    " — is {} the server's base URL? (whisper-server needs --inference-path /v1/audio/transcriptions)",
                    self.url
                ));
            }
            return Err(RemoteError::Http {
                status: status.as_u16(),
                body: msg,
            });
        }
        let mut out = parse_answer(&body)?;
        out.round_trip_ms = round_trip_ms;
        out.server_ms = server_ms;
        out.upload_ms = server_ms.map(|s| (round_trip_ms - s).max(0.0));
        out.bytes = bytes;
        out.format = format.as_str();
        Ok(out)
    }

    /// The model ids the server lists at `/v1/models` (not every server has it).
    pub fn models(&self) -> Result<Vec<String>, RemoteError> {
        let url = endpoint(&self.url, "models");
        crate::loopback::check_server(url.as_str(), "speech server").map_err(RemoteError::Setup)?;
        let body = self.runtime.block_on(async {
            let resp = self
                .client
                .get(url.clone())
                .send()
                .await
                .map_err(|e| self.classify(&e))?;
            let status = resp.status();
            let body = self.read_body(resp).await?;
            if status.as_u16() == 401 || status.as_u16() == 403 {
                return Err(RemoteError::Auth {
                    status: status.as_u16(),
                });
            }
            if !status.is_success() {
                return Err(RemoteError::Http {
                    status: status.as_u16(),
                    body: error_message(&String::from_utf8_lossy(&body)),
                });
            }
            Ok(body)
        })?;
        let v: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| RemoteError::Garbage(format!("/v1/models is not JSON: {e}")))?;
        Ok(v.get("data")
            .and_then(|d| d.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|m| m.get("id").and_then(|i| i.as_str()).map(String::from))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The answer's body, capped at [`net::MAX_BODY`]; a transport error is classified, an
    /// over-long body is garbage.
    async fn read_body(&self, resp: reqwest::Response) -> Result<Vec<u8>, RemoteError> {
        net::read_capped(resp, net::MAX_BODY)
            .await
            .map_err(|e| match e {
                Ok(e) => self.classify(&e),
                Err(e) => RemoteError::Garbage(e.to_string()),
            })
    }

    fn classify(&self, e: &reqwest::Error) -> RemoteError {
        let url = self.url.to_string();
        if e.is_timeout() {
            return RemoteError::Timeout {
                url,
                ms: self.timeout_ms,
            };
        }
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            reason = s.to_string();
            source = s.source();
        }
        RemoteError::Down {
            url,
            reason: net::snippet(&reason, 120),
        }
    }
}

/// The built-in clip the server check sends ("ten of clubs", 1.1 s, 16 kHz mono).
pub const TEST_CLIP: &[u8] = include_bytes!("../../../assets/test-clip.wav");
/// What [`TEST_CLIP`] says.
pub const TEST_CLIP_TEXT: &str = "ten of clubs";

/// The result of checking a speech server (doctor, the settings panel's Test button): the
/// built-in clip's round trip and text, and the server's model list where it has one.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[ts(export)]
pub struct ServerCheck {
    pub url: String,
    pub ok: bool,
    /// One line: what worked, or what failed and what to do.
    pub detail: String,
    pub round_trip_ms: Option<f64>,
    pub text: Option<String>,
    /// Where the API key comes from ("no API key", "API key from $X", "…keyring…"); never the key.
    pub key: String,
    /// Ids from `/v1/models`; empty when the server does not list models.
    pub models: Vec<String>,
}

/// Sends the built-in clip to the server `stt` names (whatever `stt.backend` says) and lists
/// its models. Never fails: problems are in `detail`.
pub fn check_server(stt: &SttConfig) -> ServerCheck {
    check_server_with(stt, stt)
}

/// [`check_server`] for a settings form's `stt`: the key is `saved`'s (the settings on disk),
/// sent only to `saved`'s server; `key` says when it was left out.
pub fn check_server_with(stt: &SttConfig, saved: &SttConfig) -> ServerCheck {
    let mut check = ServerCheck {
        url: stt.url.clone(),
        ok: false,
        detail: String::new(),
        round_trip_ms: None,
        text: None,
        key: String::new(),
        models: Vec::new(),
    };
    let mut stt = stt.clone();
    stt.backend = crate::config::SttBackend::Openai;
    if let Err((key, reason)) = validate(&stt) {
        check.detail = format!("invalid setting {key}: {reason}");
        return check;
    }
    let key = match key_for(&stt, saved) {
        Ok(k) => k,
        Err(e) => {
            check.detail = e.to_string();
            return check;
        }
    };
    check.key = key.describe();
    let remote = match RemoteStt::with_key(&stt, &key) {
        Ok(r) => r,
        Err(e) => {
            check.detail = e.to_string();
            return check;
        }
    };
    let samples = match decode_test_clip() {
        Ok(s) => s,
        Err(e) => {
            check.detail = e;
            return check;
        }
    };
    match remote.transcribe(&samples, "") {
        Ok(out) => {
            check.ok = true;
            let refused = if out.flac_refused.is_some() {
                ", FLAC refused"
            } else {
                ""
            };
            check.detail = format!(
                "{} answered in {:.0} ms: \"{}\" ({}; model {}; {} upload{refused})",
                remote.url(),
                out.round_trip_ms,
                net::snippet(&out.text, 80),
                check.key,
                remote.model(),
                out.format.to_ascii_uppercase()
            );
            check.round_trip_ms = Some(out.round_trip_ms);
            check.text = Some(out.text);
        }
        Err(e) if key.withheld.is_some() => check.detail = format!("{e}; {}", check.key),
        Err(e) => check.detail = e.to_string(),
    }
    // Model lists are optional (whisper-server has none): only a list that came back counts.
    if let Ok(models) = remote.models() {
        check.models = models;
    }
    check
}

fn decode_test_clip() -> Result<Vec<f32>, String> {
    let reader = hound::WavReader::new(std::io::Cursor::new(TEST_CLIP))
        .map_err(|e| format!("the built-in test clip is unreadable: {e}"))?;
    reader
        .into_samples::<i16>()
        .map(|s| s.map(|v| f32::from(v) / 32768.0))
        .collect::<Result<Vec<f32>, _>>()
        .map_err(|e| format!("the built-in test clip is unreadable: {e}"))
}

/// The server's error text: `{"error": {"message": …}}`, `{"error": "…"}`, or the body, cut.
fn error_message(body: &str) -> String {
    let v: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let msg = v.as_ref().and_then(|v| {
        let e = v.get("error").or_else(|| v.get("detail"))?;
        e.get("message")
            .and_then(|m| m.as_str())
            .or_else(|| e.as_str())
            .map(String::from)
    });
    net::snippet(msg.as_deref().unwrap_or(body), net::SNIPPET_CHARS)
}

/// Longest language name kept from an answer ("english", "zh", "chinese (simplified)").
pub const MAX_LANGUAGE_CHARS: usize = 32;
/// Latest segment end believed (24 h): past it, a server's number says nothing.
pub const MAX_END_MS: u64 = 24 * 3600 * 1000;

/// Reads `{"text": …, "language"?: …, "segments"?: [{"end", "no_speech_prob"}…]}`. Whatever
/// the server sends, the answer is bounded: the text is one line of single-spaced words with
/// no control characters (line breaks, escapes, direction overrides); the language is at most
/// [`MAX_LANGUAGE_CHARS`] such characters; `no_speech_prob` is in [0, 1]; `end_ms` at most
/// [`MAX_END_MS`]; errors quote at most 80 characters, controls shown as spaces.
pub fn parse_answer(body: &[u8]) -> Result<RemoteOutput, RemoteError> {
    let v: serde_json::Value = serde_json::from_slice(body).map_err(|_| {
        let quoted = crate::text_safety::strip_control(&String::from_utf8_lossy(body), true);
        RemoteError::Garbage(format!("not JSON: `{}`", net::snippet(&quoted, 80)))
    })?;
    let Some(text) = v.get("text").and_then(|t| t.as_str()) else {
        return Err(RemoteError::Garbage("no \"text\" field".into()));
    };
    let segments = v
        .get("segments")
        .and_then(|s| s.as_array())
        .cloned()
        .unwrap_or_default();
    let no_speech_prob = segments
        .iter()
        .filter_map(|s| s.get("no_speech_prob").and_then(|p| p.as_f64()))
        .fold(0.0f64, f64::max)
        .clamp(0.0, 1.0) as f32;
    let end_ms = segments
        .iter()
        .filter_map(|s| s.get("end").and_then(|e| e.as_f64()))
        .fold(None, |m: Option<f64>, e| Some(m.map_or(e, |m| m.max(e))))
        .filter(|e| e.is_finite() && *e >= 0.0)
        .map(|e| ((e * 1000.0) as u64).min(MAX_END_MS));
    // Segments come joined by newlines (whisper-server): one line of single-spaced words.
    let text = crate::text_safety::strip_control(text, true)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    Ok(RemoteOutput {
        text,
        language: v
            .get("language")
            .and_then(|l| l.as_str())
            .map(|l| {
                crate::text_safety::strip_control(l, false)
                    .trim()
                    .chars()
                    .take(MAX_LANGUAGE_CHARS)
                    .collect::<String>()
            })
            .filter(|l| !l.trim().is_empty()),
        no_speech_prob,
        end_ms,
        segments: segments.len(),
        ..RemoteOutput::default()
    })
}

/// 16-bit PCM of `samples` (clamped to [-1, 1]), as WAV and FLAC carry it.
pub fn pcm16(samples: &[f32]) -> Vec<i16> {
    samples
        .iter()
        .map(|s| (s.clamp(-1.0, 1.0) * 32767.0).round() as i16)
        .collect()
}

/// 16 kHz mono 16-bit PCM WAV of `samples` (clamped to [-1, 1]).
pub fn wav_bytes(samples: &[f32]) -> Vec<u8> {
    wav_from_pcm(&pcm16(samples))
}

/// 16 kHz mono WAV of 16-bit `samples`.
pub fn wav_from_pcm(samples: &[i16]) -> Vec<u8> {
    let data_len = (samples.len() * 2) as u32;
    let rate = crate::SAMPLE_RATE;
    let mut out = Vec::with_capacity(44 + data_len as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for s in samples {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

/// A `multipart/form-data` body (RFC 7578): text fields, then the file.
fn multipart(
    boundary: &str,
    fields: &[(&str, &str)],
    file_name: &str,
    file_type: &str,
    file: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(file.len() + 512);
    for (name, value) in fields {
        out.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n")
                .as_bytes(),
        );
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: {file_type}\r\n\r\n"
        )
        .as_bytes(),
    );
    out.extend_from_slice(file);
    out.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    out
}

#[cfg(test)]
mod tests;
