//! The one HTTP client policy: every request Dictum sends (LLM cleanups, warm-ups and probes,
//! model downloads, the LLM benchmark) goes through a client built here, so one place decides:
//!
//! - **Proxies**: a loopback URL (`127.0.0.0/8`, `::1`, `localhost`, `*.localhost`) never goes
//!   through `http_proxy`/`https_proxy`/`all_proxy`: text dictated to a "local" LLM stays on
//!   this machine. Remote URLs honour the proxy variables (and `no_proxy`) as usual.
//! - **Redirects**: [`Redirects::SameOrigin`] (LLM requests: they carry the dictated text)
//!   follows at most [`MAX_REDIRECTS`] redirects within the same scheme, host and port, and
//!   refuses any other with an error that says where it pointed. [`Redirects::VerifiedDownload`]
//!   (model files, whose every byte is checked against the catalog's SHA-256 before use, and
//!   whose public home redirects to a CDN host) follows redirects to other hosts but never
//!   from https down to http, and no credentials travel with them.
//! - **Bodies**: [`read_capped`] streams an answer and stops past a limit ([`MAX_BODY`], 1 MiB,
//!   for every API answer): a hostile or broken server cannot make Dictum buffer gigabytes.
//! - **Errors**: [`snippet`] cuts server text to [`SNIPPET_CHARS`] characters (on a character
//!   boundary) for error messages and history; no error carries a whole body.
//! - **URLs**: [`check_url`] accepts only `http`/`https` URLs without `user:password@`
//!   (credentials in a URL end up in the config file, logs and history; the API key goes in the
//!   environment variable that `llm.api_key_env` names).
//! - **API keys**: [`key_allowed`] is the one rule for where a key may go: only to the origin
//!   of the URL the user saved with it, and only over https or to this machine. [`Policy`]'s
//!   `Debug` never shows the bearer token.

use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use reqwest::{redirect, Url};
use std::time::Duration;

/// Largest API answer read (LLM completions, model lists, `/api/ps`): 1 MiB.
pub const MAX_BODY: usize = 1 << 20;
/// Longest piece of server text an error message quotes, in characters.
pub const SNIPPET_CHARS: usize = 200;
/// Most redirects followed for one request.
pub const MAX_REDIRECTS: usize = 3;

/// Which redirects a client follows (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirects {
    /// Same scheme, host and port only (requests that carry dictated text).
    SameOrigin,
    /// Any host, but never https → http (checksum-verified downloads).
    VerifiedDownload,
}

/// How one client behaves; [`client_for`] adds the proxy and redirect rules. `Debug` shows
/// whether a bearer token is set, never the token.
#[derive(Clone)]
pub struct Policy {
    /// Whole-request deadline (None: none; downloads set their own overall deadline).
    pub timeout: Option<Duration>,
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes of an answer.
    pub read_timeout: Option<Duration>,
    pub redirects: Redirects,
    /// Keep idle connections this long (None: reqwest's default).
    pub pool_idle: Option<Duration>,
    /// Sent as `Authorization: Bearer …` (marked sensitive: never logged).
    pub bearer: Option<String>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("redirects", &self.redirects)
            .field("pool_idle", &self.pool_idle)
            .field("bearer", &self.bearer.as_ref().map(|_| "****"))
            .finish()
    }
}

impl Policy {
    /// API requests (LLM): one whole-request timeout, same-origin redirects only.
    pub fn api(timeout: Duration) -> Policy {
        Policy {
            timeout: Some(timeout),
            connect_timeout: timeout.min(Duration::from_secs(3)),
            read_timeout: None,
            redirects: Redirects::SameOrigin,
            pool_idle: None,
            bearer: None,
        }
    }

    /// Model downloads: no whole-request timeout (the caller keeps an overall deadline),
    /// 60 s without bytes is an error.
    pub fn download() -> Policy {
        Policy {
            timeout: None,
            connect_timeout: Duration::from_secs(15),
            read_timeout: Some(Duration::from_secs(60)),
            redirects: Redirects::VerifiedDownload,
            pool_idle: None,
            bearer: None,
        }
    }
}

/// Why a client could not be built or an answer not read. `Display` is one line for the user.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NetError {
    #[error("{0}")]
    BadUrl(String),
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    #[error("the answer from {url} is larger than {limit} bytes; Dictum stopped reading it (is the URL the right server?)")]
    TooLarge { url: String, limit: usize },
    #[error("reading the answer from {url} failed: {reason}")]
    Read { url: String, reason: String },
}

/// Whether `url`'s host is this machine: `127.0.0.0/8`, `::1` (and `::ffff:127.x`),
/// `localhost` or a `*.localhost` name. Unparseable URLs are not loopback.
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(u) = Url::parse(url) else {
        return false;
    };
    let Some(host) = u.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => {
            let d = bare.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
    }
}

/// Checks a server URL that a setting or flag names (`what`, e.g. "llm.url"): http or https,
/// a host, and no `user:password@`. Err is the message to show.
pub fn check_url(url: &str, what: &str) -> Result<Url, String> {
    let trimmed = url.trim();
    let u = Url::parse(trimmed).map_err(|e| {
        format!(
            "{what} `{}` is not a URL ({e}); e.g. \"http://127.0.0.1:11434\"",
            snippet(trimmed, 100)
        )
    })?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(format!(
            "{what} `{}` is not an http(s) URL; e.g. \"http://127.0.0.1:11434\"",
            snippet(trimmed, 100)
        ));
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(format!(
            "{what} must not contain a user name or password (`user:pass@host`): it would be stored in the config file and sent along redirects; put the API key in an environment variable and set llm.api_key_env to its name"
        ));
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err(format!("{what} `{}` has no host", snippet(trimmed, 100)));
    }
    Ok(u)
}

/// Whether an API key saved with the server `saved` (the URL in the config file) may be sent to
/// `target`: only to the same origin (scheme, host and port: a URL typed into a form and not yet
/// saved is another server until it is saved), and only over https or to this machine (a key
/// sent over plain http to another host can be read and reused by anyone on the way). Err is
/// why not, one line, for "sent without the API key (…)".
pub fn key_allowed(saved: &Url, target: &Url) -> Result<(), String> {
    if saved.origin() != target.origin() || !saved.origin().is_tuple() {
        return Err(format!(
            "{} is not the saved server {}; save the URL first to use its key",
            target.origin().ascii_serialization(),
            saved.origin().ascii_serialization()
        ));
    }
    if target.scheme() != "https" && !is_loopback_url(target.as_str()) {
        return Err(format!(
            "{} is plain http to another machine, and a key sent that way can be read on the network; use https",
            target.origin().ascii_serialization()
        ));
    }
    Ok(())
}

fn redirect_policy(kind: Redirects) -> redirect::Policy {
    redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(format!(
                "more than {MAX_REDIRECTS} redirects; Dictum stopped following them"
            ));
        }
        let (Some(first), next) = (attempt.previous().first(), attempt.url()) else {
            return attempt.stop();
        };
        match kind {
            Redirects::SameOrigin if first.origin() != next.origin() => {
                let msg = format!(
                    "the server redirected to another host ({}), which Dictum refuses: the request carries your dictated text; set the URL of the server that answers directly",
                    next.origin().ascii_serialization()
                );
                attempt.error(msg)
            }
            Redirects::VerifiedDownload
                if first.scheme() == "https" && next.scheme() != "https" =>
            {
                let msg = format!(
                    "the server redirected from https to {}, which Dictum refuses",
                    snippet(next.as_str(), 120)
                );
                attempt.error(msg)
            }
            _ => attempt.follow(),
        }
    })
}

/// A client for requests to `url` (and same-origin paths of it) under `policy`: no proxy if
/// `url` is loopback, the redirect rule, the timeouts, the bearer token.
pub fn client_for(url: &str, policy: &Policy) -> Result<reqwest::Client, NetError> {
    let mut b = reqwest::Client::builder()
        .connect_timeout(policy.connect_timeout)
        .redirect(redirect_policy(policy.redirects))
        .tcp_nodelay(true);
    if is_loopback_url(url) {
        b = b.no_proxy();
    }
    if let Some(t) = policy.timeout {
        b = b.timeout(t);
    }
    if let Some(t) = policy.read_timeout {
        b = b.read_timeout(t);
    }
    if let Some(t) = policy.pool_idle {
        b = b.pool_idle_timeout(t);
    }
    if let Some(token) = &policy.bearer {
        let mut v = HeaderValue::from_str(&format!("Bearer {}", token.trim())).map_err(|_| {
            NetError::Client(
                "the API key holds characters an HTTP header cannot carry; check the variable llm.api_key_env names".into(),
            )
        })?;
        v.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, v);
        b = b.default_headers(headers);
    }
    b.build().map_err(|e| NetError::Client(e.to_string()))
}

/// Reads `resp`'s body, at most `limit` bytes: past that (by Content-Length or by the bytes
/// that arrive) it stops reading and fails. Timeouts and resets come back as reqwest errors
/// wrapped in `Err(Ok(..))` so callers can classify them; the cap as `Err(Err(..))`.
pub async fn read_capped(
    mut resp: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, std::result::Result<reqwest::Error, NetError>> {
    let url = resp.url().to_string();
    let too_large = |url: String| Err(Err(NetError::TooLarge { url, limit }));
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return too_large(url);
    }
    let mut body = Vec::with_capacity(resp.content_length().unwrap_or(0) as usize);
    while let Some(chunk) = resp.chunk().await.map_err(Ok)? {
        if body.len() + chunk.len() > limit {
            return too_large(url);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most `max` characters of `text` (trimmed, control characters shown as spaces), with
/// "…" when cut: what an error message may quote of a server's answer.
pub fn snippet(text: &str, max: usize) -> String {
    let text = text.trim();
    let mut out: String = text
        .chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for u in [
            "http://127.0.0.1:11434",
            "http://127.3.4.5/",
            "http://127.1:8080",
            "http://[::1]:8080/v1",
            "http://[::ffff:127.0.0.1]/",
            "http://localhost:11434",
            "http://LOCALHOST./",
            "https://ollama.localhost/",
        ] {
            assert!(is_loopback_url(u), "{u}");
        }
        for u in [
            "http://10.0.0.1/",
            "http://192.168.1.2:11434",
            "http://localhost.example.com/",
            "http://[::2]/",
            "https://huggingface.co/x",
            "not a url",
        ] {
            assert!(!is_loopback_url(u), "{u}");
        }
    }

    #[test]
    fn urls_with_credentials_or_other_schemes_are_refused() {
        assert!(check_url("http://127.0.0.1:11434", "llm.url").is_ok());
        assert!(check_url("https://api.example.com/v1", "llm.url").is_ok());
        let e = check_url("http://user:secret@127.0.0.1:11434", "llm.url").expect_err("creds");
        assert!(e.contains("api_key_env") && !e.contains("secret"), "{e}");
        assert!(check_url("http://token@host/", "llm.url").is_err());
        assert!(check_url("ftp://host/", "llm.url").is_err());
        assert!(check_url("file:///etc/passwd", "llm.url").is_err());
        assert!(check_url("localhost:11434", "llm.url").is_err());
        assert!(check_url("", "llm.url").is_err());
    }

    fn url(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    #[test]
    fn keys_go_only_to_the_saved_origin_over_https_or_loopback() {
        let allowed = |saved: &str, target: &str| key_allowed(&url(saved), &url(target));
        // https, the saved server (any path of it): yes.
        assert!(allowed("https://api.example.com/v1", "https://api.example.com/v1").is_ok());
        assert!(allowed(
            "https://api.example.com",
            "https://api.example.com:443/v1/x"
        )
        .is_ok());
        // http to this machine, the saved one: yes.
        assert!(allowed("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1").is_ok());
        assert!(allowed("http://localhost:11434", "http://LOCALHOST:11434").is_ok());
        // https to another host: no, and the reason says to save first.
        let e = allowed("https://api.example.com", "https://evil.example.net").expect_err("host");
        assert!(e.contains("save the URL first"), "{e}");
        // Another port or scheme of the same host: no.
        assert!(allowed("https://api.example.com", "https://api.example.com:8443").is_err());
        assert!(allowed("http://127.0.0.1:8080", "http://127.0.0.1:8081").is_err());
        assert!(allowed("https://api.example.com", "http://api.example.com").is_err());
        // Loopback, but not the saved server: no (another user's server on this machine).
        assert!(allowed("https://api.example.com", "http://127.0.0.1:8080").is_err());
        // Plain http to another machine, even the saved one: no.
        let e = allowed("http://gpu-box.lan:8000", "http://gpu-box.lan:8000").expect_err("http");
        assert!(e.contains("plain http") && e.contains("https"), "{e}");
    }

    #[test]
    fn a_policy_never_prints_its_token() {
        let mut p = Policy::api(Duration::from_secs(5));
        p.bearer = Some("sk-hunter2-token".into());
        let shown = format!("{p:?} {p:#?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("bearer") && shown.contains("****"),
            "{shown}"
        );
    }

    #[test]
    fn snippets_cut_on_characters_and_hide_controls() {
        assert_eq!(snippet("  short  ", 200), "short");
        let long = "é".repeat(500);
        let s = snippet(&long, 200);
        assert_eq!(s.chars().count(), 201);
        assert!(s.ends_with('…'));
        assert_eq!(snippet("a\nb\x1bc", 10), "a b c");
    }
}
