//! Secrets go only where the user saved them (issue 26): the settings panel's probes (LLM model
//! list and test cleanup, speech server check) take the API key's source from the SAVED
//! settings and send the key only to the saved server. Two real HTTP servers on 127.0.0.1 (two
//! ports: two origins) record the `Authorization` header of every request: the saved one gets
//! the key, a typed-in other one gets none, and the result says it was tested without the key.

#[path = "common/http.rs"]
mod http;

use dictum_engine::config::{SttBackend, SttConfig};
use dictum_engine::llm::config::{BackendKind, LlmConfig};
use dictum_engine::llm::probe::{list_models_with, test_cleanup_with};
use dictum_engine::stt::remote::check_server_with;
use http::{serve, Reply, Server};

const KEY: &str = "sk-dictum-origin-5e1f";
const VAR: &str = "DICTUM_TEST_KEY_ORIGIN";

/// An OpenAI-compatible server that answers everything (models, chat, transcriptions).
async fn openai_server() -> Server {
    serve(|req| {
        if req.target.ends_with("/models") {
            Reply::json(r#"{"object":"list","data":[{"id":"m1"}]}"#)
        } else if req.target.ends_with("/audio/transcriptions") {
            Reply::json(r#"{"text":"ten of clubs"}"#)
        } else {
            Reply::json(
                r#"{"choices":[{"message":{"role":"assistant","content":"Hello there."}}],"usage":{"completion_tokens":3}}"#,
            )
        }
    })
    .await
}

fn bearers(server: &Server) -> Vec<Option<String>> {
    server
        .hits()
        .iter()
        .map(|r| r.header("authorization").map(str::to_string))
        .collect()
}

fn llm(url: &str, key_env: &str) -> LlmConfig {
    LlmConfig {
        enabled: true,
        backend: BackendKind::Openai,
        url: url.into(),
        model: "m1".into(),
        api_key_env: key_env.into(),
        timeout_ms: 5_000,
        ..LlmConfig::default()
    }
}

#[tokio::test]
async fn llm_probes_send_the_saved_key_to_the_saved_server_only() {
    std::env::set_var(VAR, KEY);
    let saved_server = openai_server().await;
    let other = openai_server().await;
    let saved = llm(&saved_server.base, VAR);

    // The saved server, from a form that names no key source: the saved key goes.
    let form = llm(&saved_server.base, "");
    assert_eq!(
        list_models_with(&form, &saved).await.expect("models"),
        ["m1"]
    );
    let t = test_cleanup_with(&form, &saved, &[], "hello there").await;
    assert_eq!(t.key, format!("API key from ${VAR}"), "{t:?}");
    let want = Some(format!("Bearer {KEY}"));
    assert_eq!(bearers(&saved_server), [want.clone(), want]);

    // A typed-in other server (another port of the same host), even from a form that names the
    // saved variable: no key; the result says why.
    let form = llm(&other.base, VAR);
    assert_eq!(
        list_models_with(&form, &saved).await.expect("models"),
        ["m1"]
    );
    let t = test_cleanup_with(&form, &saved, &[], "hello there").await;
    assert!(
        t.key.contains("tested without the API key") && t.key.contains("save the URL first"),
        "{t:?}"
    );
    assert!(!format!("{t:?}").contains(KEY));
    assert_eq!(
        bearers(&other),
        [None, None],
        "the key reached the other server"
    );
}

#[tokio::test]
async fn an_unsaved_server_that_wants_the_key_says_to_save_first() {
    std::env::set_var(VAR, KEY);
    let saved_server = openai_server().await;
    let wants_key = serve(|req| match req.header("authorization") {
        Some(_) => Reply::json(r#"{"object":"list","data":[{"id":"m1"}]}"#),
        None => Reply::status(401, r#"{"error":{"message":"missing key"}}"#),
    })
    .await;
    let saved = llm(&saved_server.base, VAR);
    let err = list_models_with(&llm(&wants_key.base, ""), &saved)
        .await
        .expect_err("401")
        .to_string();
    assert!(
        err.contains("401") && err.contains("save the URL first"),
        "{err}"
    );
    assert!(!err.contains(KEY));
    assert_eq!(bearers(&wants_key), [None]);
}

fn stt(url: &str, key_env: &str) -> SttConfig {
    SttConfig {
        backend: SttBackend::Openai,
        url: url.into(),
        remote_model: "whisper-1".into(),
        api_key_env: key_env.into(),
        timeout_ms: 5_000,
        ..SttConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_speech_server_check_sends_the_saved_key_to_the_saved_server_only() {
    std::env::set_var(VAR, KEY);
    let saved_server = openai_server().await;
    let other = openai_server().await;
    let saved = stt(&saved_server.base, VAR);
    let check = |form: SttConfig, saved: SttConfig| {
        tokio::task::spawn_blocking(move || check_server_with(&form, &saved))
    };

    let c = check(stt(&saved_server.base, ""), saved.clone())
        .await
        .expect("check");
    assert!(c.ok, "{c:?}");
    assert_eq!(c.key, format!("API key from ${VAR}"));
    let hits = bearers(&saved_server);
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|b| b.as_deref() == Some(&format!("Bearer {KEY}"))),
        "{hits:?}"
    );

    let c = check(stt(&other.base, VAR), saved.clone())
        .await
        .expect("check");
    assert!(c.ok, "{c:?}");
    assert!(
        c.key.contains("tested without the API key") && c.detail.contains("save the URL first"),
        "{c:?}"
    );
    assert!(!format!("{c:?}").contains(KEY));
    let hits = bearers(&other);
    assert!(
        !hits.is_empty() && hits.iter().all(Option::is_none),
        "{hits:?}"
    );
}
