//! The settings panel's LLM probes over real HTTP on 127.0.0.1: model lists in Ollama's
//! (`/api/tags`) and OpenAI's (`/v1/models`) formats, the Test button's cleanup against an
//! Ollama-format answer (with a model load in it), a refused connection, a wrong backend.
//! The answers are fixed JSON in each API's real shape: what is under test is Dictum's client.

use dictum_engine::llm::config::{BackendKind, LlmConfig};
use dictum_engine::llm::probe::{list_models, test_cleanup};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Answers every request with the body routed by path; returns the base URL.
async fn server(routes: Vec<(&'static str, String)>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let routes = routes.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let mut got = Vec::new();
                // Read headers, then Content-Length bytes of body.
                loop {
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if got.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                let text = String::from_utf8_lossy(&got).to_string();
                let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, body) = match routes.iter().find(|(p, _)| *p == path) {
                    Some((_, b)) => ("200 OK", b.clone()),
                    None => ("404 Not Found", "{\"error\":\"not found\"}".to_string()),
                };
                let resp = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn lists_models_from_both_apis() {
    let base = server(vec![
        (
            "/api/tags",
            r#"{"models":[{"name":"qwen2.5:3b","size":1},{"name":"llama3.2:3b","size":2}]}"#.into(),
        ),
        (
            "/v1/models",
            r#"{"object":"list","data":[{"id":"SmolLM2-135M","object":"model"}]}"#.into(),
        ),
    ])
    .await;
    let mut c = LlmConfig {
        url: base.clone(),
        ..Default::default()
    };
    assert_eq!(
        list_models(&c).await.expect("tags"),
        vec!["llama3.2:3b", "qwen2.5:3b"]
    );
    c.backend = BackendKind::Openai;
    assert_eq!(list_models(&c).await.expect("models"), vec!["SmolLM2-135M"]);
    c.url = format!("{base}/v1");
    assert_eq!(list_models(&c).await.expect("models"), vec!["SmolLM2-135M"]);
    c.url = format!("{base}/nothing");
    let err = list_models(&c).await.expect_err("404");
    assert!(err.to_string().contains("404"), "{err}");
}

#[tokio::test]
async fn test_button_reports_latency_speed_and_load() {
    let answer = r#"{"model":"llama3.2:3b","message":{"role":"assistant","content":"So I think we should send the report to Maria by Friday."},"done":true,
        "total_duration":2100000000,"load_duration":1800000000,"prompt_eval_duration":100000000,"eval_count":20,"eval_duration":250000000}"#;
    let base = server(vec![("/api/chat", answer.into())]).await;
    let c = LlmConfig {
        url: base,
        ..Default::default()
    };
    let r = test_cleanup(&c, &[], "").await;
    assert_eq!(r.outcome, "cleaned", "{r:?}");
    assert_eq!(
        r.text,
        "So I think we should send the report to Maria by Friday."
    );
    assert!(r.input.starts_with("um so i think"));
    assert_eq!(r.tokens_per_sec, Some(80.0));
    assert_eq!(r.load_ms, Some(1800.0));
    assert!(r.model_loaded);
    assert!(r.latency_ms > 0.0);
}

#[tokio::test]
async fn test_button_says_what_to_do_when_nothing_listens() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let c = LlmConfig {
        url: format!("http://127.0.0.1:{port}"),
        ..Default::default()
    };
    let r = test_cleanup(&c, &[], "hello there").await;
    assert_eq!(r.outcome, "failed");
    let e = r.error.expect("error");
    assert!(e.contains("cannot reach") && e.contains("llm.url"), "{e}");
    assert_eq!(r.text, "hello there");
    let err = list_models(&c).await.expect_err("refused");
    assert!(err.to_string().contains("cannot reach"), "{err}");
    let bad = LlmConfig { num_ctx: 0, ..c };
    assert!(test_cleanup(&bad, &[], "x")
        .await
        .error
        .expect("error")
        .contains("llm.num_ctx"));
}
