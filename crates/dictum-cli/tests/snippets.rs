//! Snippets and replacements (issue 30 item 2) through the real `dictum transcribe` on the real
//! tiny.en model: `[[replace]]` rewrites whole words whisper writes (every occurrence, raw text
//! kept as whisper wrote it), `[[snippet]]` turns a phrase said alone into its text with its
//! newline (a file's text is not typed); and the same through the speech-server backend
//! (the real whisper.cpp `whisper-server` on the same model, harness of `remote_stt.rs`).
//! A bad table is one clear line. The live path makes its row with the same code
//! (`pipeline::Words::into_row`, unit-tested there with a microphone row).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "support/dictum_cmd.rs"]
mod dictum_cmd;
#[path = "support/stt_servers.rs"]
mod stt_servers;

use dictum_cmd::dictum;
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use stt_servers::{whisper_server_bin, WhisperServer};

const ADDRESS: &str = "12 Main Street\nSpringfield";

const RULES: &str = r#"
[[replace]]
from = "fellow americans"
to = "fellow Earthlings"

[[replace]]
from = "country"
to = "planet"

[[snippet]]
phrase = "go forward 10 meters"
text = "12 Main Street\nSpringfield"
"#;

fn write_config(dir: &Path, rules: &str) {
    std::fs::write(
        dir.join("config.toml"),
        format!("[stt]\nmodel = \"tiny.en-q8_0\"\nthreads = 2\n{rules}"),
    )
    .expect("config");
}

fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// jfk.wav and goforward.wav transcribed with `extra` arguments: the replacements and the
/// snippet applied, whisper's own words kept as the raw text.
fn check_rules(dir: &Path, extra: &[&str], backend: &str) {
    let jfk = common::clip("jfk.wav");
    let mut args = vec!["transcribe", "--json", jfk.to_str().expect("path")];
    args.extend_from_slice(extra);
    let v = json_of(&dictum(dir, &args));
    assert_eq!(v["stt_backend"], backend, "{v}");
    let text = v["text"].as_str().unwrap_or_default();
    let raw = v["raw_text"].as_str().unwrap_or_default().to_lowercase();
    // tiny.en: "And so my fellow Americans ask not what your country can do for you ask what
    // you can do for your country."
    assert!(raw.contains("fellow americans"), "{v}");
    assert_eq!(raw.matches("country").count(), 2, "{v}");
    assert!(text.contains("my fellow Earthlings"), "{text}");
    assert_eq!(text.matches("planet").count(), 2, "{text}");
    assert!(!text.to_lowercase().contains("country"), "{text}");
    assert!(text.ends_with("your planet."), "{text}");

    // "Go forward 10 meters." said alone: exactly the snippet, its newline kept.
    let go = common::clip("goforward.wav");
    let mut args = vec!["transcribe", go.to_str().expect("path")];
    args.extend_from_slice(extra);
    let o = dictum(dir, &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim_end(), ADDRESS);
}

#[test]
fn transcribe_applies_replacements_and_snippets() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_config(dir.path(), RULES);
    check_rules(dir.path(), &[], "local");

    // The history row holds the text as delivered.
    let out = dictum(dir.path(), &["history", "--json", "--limit", "1"]);
    let rows = json_of(&out);
    assert_eq!(rows[0]["text"], ADDRESS, "{rows}");

    // Without the tables, whisper's words.
    write_config(dir.path(), "");
    let jfk = common::clip("jfk.wav");
    let v = json_of(&dictum(
        dir.path(),
        &["transcribe", "--json", jfk.to_str().expect("path")],
    ));
    assert!(
        v["text"].as_str().unwrap_or_default().contains("country"),
        "{v}"
    );
}

#[test]
fn a_bad_table_is_one_clear_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let go = common::clip("goforward.wav");
    for (rules, says) in [
        (
            "[[snippet]]\nphrase = \"  \"\ntext = \"x\"\n",
            "snippet #1.phrase",
        ),
        (
            "[[replace]]\nfrom = \"a b\"\nto = \"x\"\n[[replace]]\nfrom = \"A-B\"\nto = \"y\"\n",
            "replaced twice",
        ),
    ] {
        write_config(dir.path(), rules);
        let o = dictum(dir.path(), &["transcribe", go.to_str().expect("path")]);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(
            lines[0].starts_with("dictum: error: ") && lines[0].contains(says),
            "{err}"
        );
    }
}

#[test]
fn the_speech_servers_text_gets_them_too() {
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    let server = WhisperServer::start(&bin, &common::tiny_model());
    let dir = tempfile::tempdir().expect("tempdir");
    write_config(dir.path(), RULES);
    let url = server.url();
    check_rules(
        dir.path(),
        &[
            "--stt-backend",
            "openai",
            "--stt-url",
            &url,
            "--stt-timeout-ms",
            "120000",
        ],
        "openai",
    );
}
