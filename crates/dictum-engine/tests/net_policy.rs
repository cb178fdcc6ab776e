//! The HTTP policy (`dictum_engine::net`) against real HTTP servers on 127.0.0.1: redirects
//! to another host are refused before the dictated text is re-sent, same-origin redirects
//! work (a few), huge or endless answers are cut at 1 MiB with a short error, error messages
//! never carry a whole body (nor panic on a multi-byte character), the API key goes out as a
//! bearer token, and model downloads stop at their size. The proxy rules are in
//! `net_proxy.rs` (proxy variables are read once per process).

#[path = "common/http.rs"]
mod http;

use dictum_engine::llm::config::BackendKind;
use dictum_engine::llm::probe::list_models;
use dictum_engine::llm::{Cleaner, LlmOutcome};
use dictum_engine::models::download::{download, DownloadSpec, ModelSource};
use http::{llm, ollama_chat, serve, Reply};
use std::sync::atomic::AtomicBool;

const RAW: &str = "hello there how are you";

async fn clean(url: &str) -> dictum_engine::llm::LlmReport {
    Cleaner::new(&llm(url), &[])
        .expect("cleaner")
        .clean(RAW)
        .await
}

#[tokio::test]
async fn a_redirect_to_another_host_is_refused_and_the_text_not_resent() {
    // The other host: 127.0.0.1 on another port is another origin; so is `localhost`.
    let elsewhere = serve(|_| Reply::json(&ollama_chat("Hello there, how are you?"))).await;
    for target in [
        format!("{}/api/chat", elsewhere.base),
        format!("http://localhost:{}/api/chat", elsewhere.port),
    ] {
        for status in [301, 302, 307, 308] {
            let t = target.clone();
            let first = serve(move |_| Reply::redirect(status, &t)).await;
            let r = clean(&first.base).await;
            assert_eq!(r.outcome, LlmOutcome::Failed, "{status} → {target}: {r:?}");
            assert_eq!(r.text, RAW, "the raw transcript is what gets typed");
            let err = r.error.unwrap_or_default();
            assert!(err.contains("another host"), "{err}");
            assert!(err.contains(&format!(":{}", elsewhere.port)), "{err}");
            assert_eq!(first.hits().len(), 1);
        }
    }
    assert!(
        elsewhere.hits().is_empty(),
        "the dictated text reached the other host: {:?}",
        elsewhere.hits()
    );
}

#[tokio::test]
async fn same_origin_redirects_are_followed_a_few_times_only() {
    let server = serve(|req| match req.target.as_str() {
        "/old/api/chat" => Reply::redirect(308, "/api/chat"),
        "/api/chat" => Reply::json(&ollama_chat("Hello there, how are you?")),
        "/loop/api/chat" => Reply::redirect(307, "/loop/api/chat"),
        _ => Reply::status(404, "no"),
    })
    .await;
    let r = clean(&format!("{}/old", server.base)).await;
    assert_eq!(r.outcome, LlmOutcome::Cleaned, "{r:?}");
    assert_eq!(r.text, "Hello there, how are you?");
    // The body was re-sent on the 308 (same origin): both requests are POSTs.
    let hits = server.hits();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.method == "POST"), "{hits:?}");

    let r = clean(&format!("{}/loop", server.base)).await;
    assert_eq!(r.outcome, LlmOutcome::Failed);
    let err = r.error.unwrap_or_default();
    assert!(err.contains("redirects"), "{err}");
    // 1 request + 3 followed redirects, then the 4th is refused.
    let loops = server
        .hits()
        .iter()
        .filter(|h| h.target == "/loop/api/chat")
        .count();
    assert_eq!(loops, 1 + dictum_engine::net::MAX_REDIRECTS);
}

#[tokio::test]
async fn huge_answers_are_cut_at_one_mebibyte_with_a_short_error() {
    // 64 MiB of a JSON string that never ends: streamed without Content-Length (the cap must
    // count the bytes as they come), then with it (refused before reading).
    for with_length in [false, true] {
        let server = serve(move |_| {
            let mut chunk = b"{\"message\":{\"content\":\"".to_vec();
            chunk.resize(64 * 1024, b'a');
            Reply::Stream {
                chunk,
                times: 1024,
                with_length,
            }
        })
        .await;
        let r = clean(&server.base).await;
        assert_eq!(r.outcome, LlmOutcome::Failed, "{r:?}");
        assert_eq!(r.text, RAW);
        let err = r.error.clone().unwrap_or_default();
        assert!(err.contains("larger than 1048576 bytes"), "{err}");
        assert!(err.len() < 400, "{} chars: {err}", err.len());
        // What reaches history: the error, short.
        let mut entry = dictum_engine::store::Entry::new(dictum_engine::store::Source::Mic);
        r.apply_to(&mut entry);
        assert!(entry.llm_error.map(|e| e.len()).unwrap_or(0) < 400);
        // The client hung up early: far less than the 64 MiB was written (socket buffers
        // take a few MiB).
        let sent = server.streamed_bytes();
        assert!(sent < 24 << 20, "server wrote {sent} bytes");
    }
}

#[tokio::test]
async fn error_bodies_are_quoted_short_and_never_panic_on_multibyte_text() {
    // 1 + 3k bytes: byte 300 falls inside a '€' (String::truncate(300) panicked there).
    let body = format!("a{}", "€".repeat(100_000));
    let b = body.clone();
    let server = serve(move |_| Reply::status(500, &b)).await;
    let r = clean(&server.base).await;
    assert_eq!(r.outcome, LlmOutcome::Failed);
    let err = r.error.unwrap_or_default();
    assert!(err.contains("HTTP 500"), "{err}");
    assert!(err.chars().count() < 400, "{} chars", err.chars().count());

    // Valid JSON without the expected field: the message quotes a snippet, not the whole.
    let big = serde_json::json!({ "unexpected": "x".repeat(500_000) }).to_string();
    let server = serve(move |_| Reply::json(&big)).await;
    let r = clean(&server.base).await;
    assert_eq!(r.outcome, LlmOutcome::Failed);
    let err = r.error.unwrap_or_default();
    assert!(err.contains("answer has no text"), "{err}");
    assert!(err.len() < 600, "{} bytes", err.len());

    // The model list probe reads through the same cap.
    let server = serve(|_| Reply::Stream {
        chunk: vec![b' '; 64 * 1024],
        times: 512,
        with_length: false,
    })
    .await;
    let err = list_models(&llm(&server.base))
        .await
        .expect_err("too large")
        .to_string();
    assert!(err.contains("larger than"), "{err}");
}

#[tokio::test]
async fn the_api_key_goes_out_as_a_bearer_token_and_probes_check_urls() {
    std::env::set_var("DICTUM_TEST_NET_KEY", "sk-test-123");
    let server = serve(|req| {
        if req.header("authorization") == Some("Bearer sk-test-123") {
            Reply::json(r#"{"object":"list","data":[{"id":"m2"},{"id":"m1"}]}"#)
        } else {
            Reply::status(401, r#"{"error":{"message":"missing key"}}"#)
        }
    })
    .await;
    let mut c = llm(&server.base);
    c.backend = BackendKind::Openai;
    let err = list_models(&c).await.expect_err("no key").to_string();
    assert!(err.contains("401") && err.contains("missing key"), "{err}");
    c.api_key_env = "DICTUM_TEST_NET_KEY".into();
    assert_eq!(list_models(&c).await.expect("with key"), ["m1", "m2"]);
    c.api_key_env = "DICTUM_TEST_NET_UNSET".into();
    let err = list_models(&c).await.expect_err("unset").to_string();
    assert!(err.contains("DICTUM_TEST_NET_UNSET is not set"), "{err}");

    // Credentials in the URL: refused before any request, the secret not echoed.
    let c = llm(&format!("http://user:hunter2@127.0.0.1:{}/", server.port));
    let before = server.hits().len();
    let err = list_models(&c).await.expect_err("creds").to_string();
    assert!(
        err.contains("api_key_env") && !err.contains("hunter2"),
        "{err}"
    );
    let t = dictum_engine::llm::probe::test_cleanup(&c, &[], "").await;
    assert_eq!(t.outcome, "failed");
    assert!(t.error.unwrap_or_default().contains("llm.url"));
    assert_eq!(server.hits().len(), before, "a request went out");
}

fn spec(file: &str, bytes: u64) -> DownloadSpec {
    DownloadSpec {
        file: file.into(),
        expected_bytes: Some(bytes),
        expected_sha256: Some("00".repeat(32)),
        expected_sha1: None,
        deadline: None,
    }
}

#[tokio::test]
async fn downloads_stop_at_the_expected_size() {
    // The server sends 32 MiB for a file that should have 1 MB: without Content-Length the
    // download stops at the first byte past the size; with it, before reading.
    for with_length in [false, true] {
        let server = serve(move |_| Reply::Stream {
            chunk: vec![7u8; 64 * 1024],
            times: 512,
            with_length,
        })
        .await;
        let dest = tempfile::tempdir().expect("tempdir");
        let err = download(
            &ModelSource::parse(&server.base).expect("source"),
            &spec("ggml-x.bin", 1_000_000),
            dest.path(),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .await
        .expect_err("too large")
        .to_string();
        assert!(err.contains("1000000 bytes"), "{err}");
        let part = dest.path().join("ggml-x.bin.part");
        let kept = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        assert!(kept <= 1_000_000, "{kept} bytes kept");
        assert!(!dest.path().join("ggml-x.bin").exists());
        let sent = server.streamed_bytes();
        assert!(sent < 24 << 20, "server wrote {sent} bytes");
    }
}

#[test]
fn model_base_urls_with_credentials_are_refused() {
    let err = ModelSource::parse("https://me:secret@mirror.example/models/")
        .expect_err("creds")
        .to_string();
    assert!(!err.contains("secret") && err.contains("password"), "{err}");
    assert!(ModelSource::parse("https://mirror.example/models/").is_ok());
    let mut config = dictum_engine::config::Config::default();
    config.models.base_url = "http://a:b@mirror.example/".into();
    let err = config.check().expect_err("creds").to_string();
    assert!(err.contains("models.base_url"), "{err}");
}
