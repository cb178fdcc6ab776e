//! Translate to English (issue 30 item 4): `[stt] task = "translate"` through `dictum
//! transcribe`, on German speech that espeak-ng says at test time, with the real multilingual
//! model (base-q8_0); the refusals of an English-only model (by its name at config time, by
//! its file at load time); and the speech server's `/v1/audio/translations` with the real
//! whisper.cpp `whisper-server`.

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "support/dictum_cmd.rs"]
mod dictum_cmd;
#[path = "support/speech.rs"]
mod speech;
#[path = "support/stt_servers.rs"]
mod stt_servers;

use dictum_cmd::dictum;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use stt_servers::{whisper_server_bin, WhisperServer};

/// What espeak-ng's German voice says. Picked by hand among five French, German and Spanish
/// sentences: base-q8_0 translates this one to "Good morning, I would like to have a
/// coffee." (language detected or given), and transcribes it as "Guten Morgen, ich möchte
/// bitte einen Cafet binken." — neither English word appears without translation.
const GERMAN: &str = "Guten Morgen, ich möchte bitte einen Kaffee trinken.";

fn base_model() -> PathBuf {
    common::assets().join("models/ggml-base-q8_0.bin")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "dictum failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn write_config(dir: &Path, text: &str) {
    std::fs::write(dir.join("config.toml"), text).expect("config");
}

/// The German clip, or None (skipped) without espeak-ng and sox.
fn german_clip(dir: &Path) -> Option<PathBuf> {
    speech::tools().then(|| speech::speak_in(dir, "german", "de", GERMAN))
}

fn lower_text(v: &Value) -> String {
    v["text"].as_str().unwrap_or_default().to_lowercase()
}

#[test]
fn translate_types_english_for_german_speech_and_transcribe_does_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(clip) = german_clip(dir.path()) else {
        return;
    };
    let clip = clip.to_str().expect("path");
    let model = base_model();
    let model = model.to_str().expect("path");
    // The task from the config file; language left at its default "en", which with
    // translate means "detect it".
    write_config(
        dir.path(),
        &format!("[stt]\nmodel = \"{model}\"\ntask = \"translate\"\n"),
    );
    let translated = json_of(&dictum(dir.path(), &["transcribe", clip, "--json"]));
    let text = lower_text(&translated);
    eprintln!("translate: {text:?}");
    assert!(
        text.contains("coffee") && text.contains("morning"),
        "not translated: {translated}"
    );
    assert_eq!(translated["language"], "de", "detected: {translated}");
    // The same speech transcribed (the language detected too): German words, no English.
    write_config(
        dir.path(),
        &format!("[stt]\nmodel = \"{model}\"\nlanguage = \"auto\"\n"),
    );
    let transcribed = json_of(&dictum(dir.path(), &["transcribe", clip, "--json"]));
    let text = lower_text(&transcribed);
    eprintln!("transcribe: {text:?}");
    assert!(text.contains("guten morgen"), "{transcribed}");
    assert!(
        !text.contains("coffee") && !text.contains("morning"),
        "{transcribed}"
    );
    // `--translate` does what the key does, with the language given.
    let flag = json_of(&dictum(
        dir.path(),
        &[
            "transcribe",
            clip,
            "--json",
            "--translate",
            "--language",
            "de",
        ],
    ));
    assert!(lower_text(&flag).contains("coffee"), "{flag}");
}

/// An English-only model cannot translate: refused before any audio is read, naming a
/// multilingual model to pick; a file whose name does not say so is refused when it loads.
#[test]
fn an_english_only_model_is_refused_naming_a_multilingual_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tiny_en = common::tiny_model();
    let tiny_en = tiny_en.to_str().expect("path");
    let clip = common::clip(&common::refs()[0].0);
    let clip = clip.to_str().expect("path");
    let one_line_refusal = |o: &Output, must: &[&str]| {
        assert!(!o.status.success(), "accepted: {}", stderr(o));
        assert!(o.stdout.is_empty(), "typed something");
        let err = stderr(o);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "one line: {err}");
        for m in must {
            assert!(err.contains(m), "{m:?} missing: {err}");
        }
    };
    // The config file: the key is named, with the model to pick instead.
    write_config(
        dir.path(),
        &format!("[stt]\nmodel = \"{tiny_en}\"\ntask = \"translate\"\n"),
    );
    one_line_refusal(
        &dictum(dir.path(), &["transcribe", clip]),
        &["stt.task", "English-only", "\"tiny-q8_0\"", "\"base-q8_0\""],
    );
    // The same through the command line's flags.
    write_config(dir.path(), "");
    one_line_refusal(
        &dictum(
            dir.path(),
            &["transcribe", clip, "--model", tiny_en, "--translate"],
        ),
        &["stt.task", "English-only", "\"tiny-q8_0\""],
    );
    // A profile that translates, with the default (English-only) model.
    write_config(
        dir.path(),
        "[[profile]]\nname = \"chat\"\nmatch_class = \"signal\"\ntask = \"translate\"\n",
    );
    one_line_refusal(
        &dictum(dir.path(), &["transcribe", clip]),
        &["profile \"chat\".task", "English-only", "\"tiny-q8_0\""],
    );
    // A file whose name does not say "en": the model's own vocabulary does, at load.
    let renamed = dir.path().join("my-whisper.bin");
    std::os::unix::fs::symlink(common::tiny_model(), &renamed).expect("symlink");
    write_config(dir.path(), "");
    one_line_refusal(
        &dictum(
            dir.path(),
            &[
                "transcribe",
                clip,
                "--model",
                renamed.to_str().expect("path"),
                "--translate",
            ],
        ),
        &["my-whisper.bin", "English-only", "\"base-q8_0\""],
    );
    // Transcribing with it is as before.
    let ok = dictum(dir.path(), &["transcribe", clip, "--model", tiny_en]);
    assert!(ok.status.success(), "{}", stderr(&ok));
}

/// The speech server translates at `/v1/audio/translations` (whisper-server on that path
/// with `--translate -l auto`); a server without the endpoint is refused saying so.
#[test]
fn the_speech_server_translates_at_its_translations_endpoint() {
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(clip) = german_clip(dir.path()) else {
        return;
    };
    let clip = clip.to_str().expect("path");
    let model = base_model();
    let server = WhisperServer::start_with(
        &bin,
        &model,
        "/v1/audio/translations",
        &["--translate", "-l", "auto"],
    );
    // No local fallback: the text is the server's. base on two busy cores, with language
    // detection: a generous timeout (a test of the endpoint, not of speed).
    let config = |url: &str| {
        format!(
            "[stt]\nmodel = \"{}\"\ntask = \"translate\"\nbackend = \"openai\"\nurl = \"{url}\"\nfallback = false\ntimeout_ms = 120000\n",
            model.display()
        )
    };
    write_config(dir.path(), &config(&server.url()));
    let out = json_of(&dictum(dir.path(), &["transcribe", clip, "--json"]));
    eprintln!("server translate: {out}");
    assert!(lower_text(&out).contains("coffee"), "{out}");
    drop(server);
    // A server that only transcribes (the usual whisper-server): 404 on translations.
    let plain = WhisperServer::start(&bin, &common::tiny_model());
    write_config(dir.path(), &config(&plain.url()));
    let o = dictum(dir.path(), &["transcribe", clip]);
    assert!(!o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("no /v1/audio/translations endpoint") && err.contains("cannot translate"),
        "{err}"
    );
}
