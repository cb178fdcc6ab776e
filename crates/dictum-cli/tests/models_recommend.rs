//! `dictum models recommend` on this machine: it times the installed test models (tiny.en-q8_0
//! and base-q8_0 from the test assets) on the built-in speech clips and prints the measurements,
//! the table behind the choice, and a choice.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn models_dir() -> PathBuf {
    let assets = match std::env::var_os("DICTUM_TEST_ASSETS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    assets.join("models")
}

fn dictum(data: &std::path::Path, models: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(args)
        .env("DICTUM_DATA_DIR", data)
        .env("DICTUM_CONFIG", data.join("config.toml"))
        .env("DICTUM_MODELS_DIR", models)
        .output()
        .expect("run dictum")
}

/// `dictum models recommend --runs 1 --models MODELS` (and `extra`) with the test models, in a
/// fresh data folder.
fn recommend(models: &str, extra: &[&str]) -> Output {
    let data = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["models", "recommend", "--runs", "1", "--models", models];
    args.extend(extra);
    dictum(data.path(), &models_dir(), &args)
}

#[test]
fn recommend_times_the_installed_models_and_chooses() {
    // Named, so both are timed whatever the first one's figure (a loaded CI machine would
    // otherwise skip base as too slow to be worth timing).
    let out = recommend("tiny.en-q8_0,base-q8_0", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Both test models were timed, on the CPU (no GPU here, or a CPU build).
    for model in ["tiny.en-q8_0", "base-q8_0"] {
        assert!(stderr.contains(&format!("timing {model}")), "{stderr}");
    }
    if cfg!(not(feature = "cuda")) {
        assert!(stdout.contains("measured on cpu"), "{stdout}");
    }
    assert!(stdout.contains("ms per second of audio"), "{stdout}");
    assert!(stdout.contains("release p95"), "{stdout}");
    let chosen = stdout
        .lines()
        .find_map(|l| l.strip_prefix("recommended: "))
        .unwrap_or_else(|| panic!("no choice in:\n{stdout}"));
    let name = chosen.split_whitespace().next().unwrap_or("");
    assert!(
        dictum_engine::models::find(name).is_some(),
        "{name} is not a catalog model"
    );
    // Every measured row is labelled so, and every other row as an estimate.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| dictum_engine::models::find(w).is_some())
                && l.contains('×')
        })
        .collect();
    assert!(rows.len() >= 5, "the table: {stdout}");
    for l in &rows {
        assert!(l.contains("measured") || l.contains("estimate: "), "{l}");
    }
    assert!(
        rows.iter()
            .any(|l| l.starts_with("base-q8_0 ") && l.contains("measured")),
        "{stdout}"
    );
}

#[test]
fn recommend_json_carries_the_numbers_behind_the_choice() {
    let out = recommend("tiny.en-q8_0", &["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let rec = &v["recommendation"];
    let ms = rec["measurements"].as_array().expect("measurements");
    assert_eq!(ms.len(), 1, "{v:#}");
    assert_eq!(ms[0]["model"], "tiny.en-q8_0");
    assert!(ms[0]["long"]["ms"].as_f64().unwrap_or(0.0) > 0.0, "{v:#}");
    assert!(ms[0]["long"]["audio_ms"].as_f64().unwrap_or(0.0) > 9000.0);
    let rows = rec["rows"].as_array().expect("rows");
    let tiny = rows
        .iter()
        .find(|r| r["model"] == "tiny.en-q8_0")
        .expect("tiny row");
    assert_eq!(tiny["basis"]["kind"], "measured");
    assert_eq!(tiny["installed"], true);
    // base-q8_0 is installed but was not timed: its row is an estimate from tiny's.
    let base = rows
        .iter()
        .find(|r| r["model"] == "base-q8_0")
        .expect("base row");
    assert_eq!(base["basis"]["kind"], "estimated", "{base:#}");
    assert!(rec["model"].as_str().is_some_and(|m| !m.is_empty()));
}

#[test]
fn recommend_without_models_says_how_to_get_one() {
    let data = tempfile::tempdir().expect("tempdir");
    let empty = data.path().join("no-models");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let out = dictum(data.path(), &empty, &["models", "recommend", "--runs", "1"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("dictum models download"), "{stderr}");
}
