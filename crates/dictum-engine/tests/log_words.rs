//! No dictated or answered words in the log at the default level (issue 38): the log may be
//! the systemd journal, which `history --delete-all` does not reach. An LLM server answering
//! malformed JSON that quotes words: the history row keeps them (the error), the default-level
//! log says only that the answer was malformed; at debug level (`--verbose`) the words are
//! there, so the check is a real one. One test in this binary: a `tracing` subscriber set for
//! one thread misses events when other tests' threads cached "no subscriber" first.

#[path = "common/http.rs"]
mod http;

use dictum_engine::llm::config::LlmConfig;
use dictum_engine::llm::{Cleaner, LlmOutcome};
use http::{serve, Reply};

const RAW: &str = "hello there how are you";

async fn clean(url: &str) -> dictum_engine::llm::LlmReport {
    let config = LlmConfig {
        enabled: true,
        url: url.into(),
        model: "m".into(),
        timeout_ms: 5_000,
        ..LlmConfig::default()
    };
    Cleaner::new(&config, &[])
        .expect("cleaner")
        .clean(RAW)
        .await
}

/// What a `tracing` subscriber at `level` writes, while `f` runs on this thread.
async fn logged<F, T>(level: tracing::Level, f: F) -> (T, String)
where
    F: std::future::Future<Output = T>,
{
    #[derive(Clone, Default)]
    struct Buf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("log buffer").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let out = f.await;
    let text = String::from_utf8_lossy(&buf.0.lock().expect("log buffer")).into_owned();
    (out, text)
}

#[tokio::test]
async fn a_malformed_answer_is_not_quoted_in_the_log_at_the_default_level() {
    // The answer's words (the model's answer, or the dictation echoed back).
    const SAID: &str = "quokka whispered the launch codes";
    for answer in [
        format!("not json at all: {SAID}"),
        format!(r#"{{"message": {{"role": "assistant"}}, "note": "{SAID}"}}"#),
    ] {
        let a = answer.clone();
        let server = serve(move |_| Reply::json(&a)).await;
        let (r, log) = logged(tracing::Level::INFO, clean(&server.base)).await;
        assert_eq!(r.outcome, LlmOutcome::Failed, "{answer}: {r:?}");
        assert_eq!(r.text, RAW, "the raw transcript is typed");
        // The history row keeps what the server said; the default log does not.
        let err = r.error.unwrap_or_default();
        assert!(err.contains("quokka"), "row error: {err}");
        assert!(log.contains("typing the raw transcript"), "{log}");
        assert!(!log.contains("quokka"), "words in the default log:\n{log}");
        // At debug level they are there: the check above could see them.
        let (_, log) = logged(tracing::Level::DEBUG, clean(&server.base)).await;
        assert!(log.contains("quokka"), "debug log:\n{log}");
    }
}
