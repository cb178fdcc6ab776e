//! Proxy rules of `dictum_engine::net`, against real servers on 127.0.0.1: with `http_proxy`
//! (and `HTTPS_PROXY`, `ALL_PROXY`) pointing at a recording proxy, requests to a loopback LLM
//! server (127.0.0.1, `localhost`), the settings' model-list probe and a model download from a
//! loopback mirror all go straight to the server, while a request to a remote host goes through
//! the proxy. One test in this binary: reqwest reads the proxy variables once per process, so
//! they are set before the first client is built.

#[path = "common/http.rs"]
mod http;

use dictum_engine::llm::{Cleaner, LlmOutcome};
use dictum_engine::models::download::{download, DownloadOutcome, DownloadSpec, ModelSource};
use http::{llm, ollama_chat, serve, Reply};
use sha2::Digest;
use std::sync::atomic::AtomicBool;

const RAW: &str = "hello there how are you";
const CLEAN: &str = "Hello there, how are you?";

#[tokio::test]
async fn loopback_requests_bypass_the_proxy_and_remote_ones_use_it() {
    // The proxy answers every request itself (as a proxy would relay it), and records it.
    let proxy = serve(|_| Reply::json(&ollama_chat(CLEAN))).await;
    for k in ["NO_PROXY", "no_proxy"] {
        std::env::remove_var(k);
    }
    for k in [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "all_proxy",
    ] {
        std::env::set_var(k, &proxy.base);
    }
    let model_bytes = vec![42u8; 300_000];
    let mb = model_bytes.clone();
    let server = serve(move |req| {
        if req.target.ends_with(".bin") {
            Reply::Full {
                status: 200,
                headers: vec![],
                body: mb.clone(),
            }
        } else if req.target == "/api/tags" {
            Reply::json(r#"{"models":[{"name":"m"}]}"#)
        } else {
            Reply::json(&ollama_chat(CLEAN))
        }
    })
    .await;

    // A loopback LLM, by address and by name: straight to the server.
    for url in [
        server.base.clone(),
        format!("http://localhost:{}", server.port),
    ] {
        let r = Cleaner::new(&llm(&url), &[])
            .expect("cleaner")
            .clean(RAW)
            .await;
        assert_eq!(r.outcome, LlmOutcome::Cleaned, "{url}: {r:?}");
        let names = dictum_engine::llm::probe::list_models(&llm(&url))
            .await
            .expect("models");
        assert_eq!(names, ["m"]);
    }
    // A model download from a loopback mirror.
    let dest = tempfile::tempdir().expect("tempdir");
    let spec = DownloadSpec {
        file: "ggml-x.bin".into(),
        expected_bytes: Some(model_bytes.len() as u64),
        expected_sha256: Some(hex::encode(sha2::Sha256::digest(&model_bytes))),
        expected_sha1: None,
        deadline: None,
    };
    let out = download(
        &ModelSource::parse(&format!("{}/models/", server.base)).expect("source"),
        &spec,
        dest.path(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .await
    .expect("download");
    assert!(matches!(out, DownloadOutcome::Completed { .. }), "{out:?}");
    assert_eq!(server.hits().len(), 5);
    assert!(
        proxy.hits().is_empty(),
        "loopback requests went through the proxy: {:?}",
        proxy.hits()
    );

    // A remote server: through the proxy (absolute-form request line), which answers.
    let r = Cleaner::new(&llm("http://llm.dictum-test.example:11434"), &[])
        .expect("cleaner")
        .clean(RAW)
        .await;
    assert_eq!(r.outcome, LlmOutcome::Cleaned, "{r:?}");
    let hits = proxy.hits();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(
        hits[0].target,
        "http://llm.dictum-test.example:11434/api/chat"
    );
}
