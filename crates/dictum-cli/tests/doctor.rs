//! `dictum doctor` on this machine (no NVIDIA GPU): a CPU plan and exit 0; a broken setup
//! exits non-zero with a fix.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn models_dir() -> PathBuf {
    let assets = match std::env::var_os("DICTUM_TEST_ASSETS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    assets.join("models")
}

fn doctor(models: &std::path::Path, data: &std::path::Path) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(["doctor", "--json"])
        .env("DICTUM_DATA_DIR", data)
        .env("DICTUM_CONFIG", data.join("config.toml"))
        .env("DICTUM_MODELS_DIR", models)
        .output()
        .expect("run dictum doctor");
    let v: Value = serde_json::from_slice(&out.stdout).expect("doctor json");
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn doctor_reports_a_cpu_plan_and_exits_zero() {
    let data = tempfile::tempdir().expect("tempdir");
    let (code, v) = doctor(&models_dir(), data.path());
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["plan"]["device"], "cpu", "{v:#}");
    if cfg!(not(feature = "cuda")) {
        assert!(v["plan"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("--features cuda"));
    }
    let gpu = v["gpu"]["status"].as_str().unwrap_or("");
    assert!(gpu == "no_gpu" || gpu == "gpus", "{v:#}");
    let checks = v["checks"].as_array().expect("checks");
    let model = checks
        .iter()
        .find(|c| c["name"] == "model")
        .expect("model check");
    assert_eq!(model["status"], "ok");
    let detail = model["detail"].as_str().unwrap_or("");
    assert!(detail.contains("sha256 "), "{detail}");
    // The test asset is a local conversion under the public file's name.
    assert!(detail.contains("not the published file"), "{detail}");
}

#[test]
fn doctor_fails_with_a_fix_when_the_model_is_missing() {
    let data = tempfile::tempdir().expect("tempdir");
    let empty = data.path().join("no-models");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let (code, v) = doctor(&empty, data.path());
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["ok"], false);
    let model = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "model")
        .cloned()
        .expect("model check");
    assert_eq!(model["status"], "fail");
    assert!(model["fix"].is_string());
}

#[test]
fn doctor_warns_with_a_fix_when_the_llm_is_unreachable_but_exits_zero() {
    let data = tempfile::tempdir().expect("tempdir");
    // Port 9 (discard) on loopback: nothing listens there.
    std::fs::write(
        data.path().join("config.toml"),
        "[llm]\nenabled = true\nurl = \"http://127.0.0.1:9\"\ntimeout_ms = 2000\n",
    )
    .expect("config");
    let (code, v) = doctor(&models_dir(), data.path());
    assert_eq!(
        code, 0,
        "an unreachable LLM breaks nothing: raw text is kept\n{v:#}"
    );
    let llm = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "llm")
        .cloned()
        .expect("llm check");
    assert_eq!(llm["status"], "warn", "{llm}");
    assert!(
        llm["fix"].as_str().unwrap_or("").contains("127.0.0.1:9"),
        "{llm}"
    );
}

/// Without a session bus (so without an accessibility bus) the text-around-cursor line says
/// it is not readable and why, as information: doctor still passes.
#[test]
fn doctor_says_whether_the_text_around_the_cursor_is_readable() {
    let data = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(["doctor", "--json"])
        .env("DICTUM_DATA_DIR", data.path())
        .env("DICTUM_CONFIG", data.path().join("config.toml"))
        .env("DICTUM_MODELS_DIR", models_dir())
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/dictum-bus",
        )
        .output()
        .expect("run dictum doctor");
    let v: Value = serde_json::from_slice(&out.stdout).expect("doctor json");
    assert_eq!(v["text_around_cursor"]["bus"], false, "{v:#}");
    assert!(v["text_around_cursor"]["error"]
        .as_str()
        .unwrap_or("")
        .contains("session bus"));
    let line = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "text at cursor")
        .expect("text at cursor check");
    assert_eq!(line["status"], "info", "{line:#}");
    assert!(line["fix"].as_str().unwrap_or("").contains("at-spi2-core"));
}
