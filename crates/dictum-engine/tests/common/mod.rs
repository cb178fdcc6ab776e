//! Test assets: real models and speech clips from `$DICTUM_TEST_ASSETS` (default `../shared`
//! beside the repository). Missing assets fail the test loudly: a skipped test proves nothing.
#![allow(dead_code)]

pub mod llm_servers;
pub mod pulse;
pub mod sway;
pub mod x11;

use std::path::PathBuf;

pub fn assets() -> PathBuf {
    let dir = match std::env::var_os("DICTUM_TEST_ASSETS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    assert!(
        dir.join("audio/dev/refs.tsv").is_file(),
        "test assets not found at {} (set DICTUM_TEST_ASSETS to the shared/ folder)",
        dir.display()
    );
    dir
}

pub fn tiny_model() -> PathBuf {
    assets().join("models/ggml-tiny.en-q8_0.bin")
}

pub fn clip(name: &str) -> PathBuf {
    assets().join("audio/dev").join(name)
}

/// (file name, reference) pairs from refs.tsv.
pub fn refs() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(assets().join("audio/dev/refs.tsv")).expect("refs.tsv");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (f, r) = l.split_once('\t').unwrap_or((l, ""));
            (f.to_string(), r.trim().to_string())
        })
        .collect()
}

/// Writes `samples` (mono, 16 kHz) as a 16-bit WAV.
pub fn write_wav(path: &std::path::Path, samples: &[f32]) {
    dictum_engine::audio::write_wav_16k(path, samples).expect("write wav");
}

/// True when every tool is on PATH. Otherwise the test is skipped (false), or fails when
/// `DICTUM_REQUIRE_E2E` is set (`scripts/test` sets it and installs them; `hint` says how).
pub fn tools_ready(tools: &[&str], hint: &str) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !x11::on_path(t)).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
        "DICTUM_REQUIRE_E2E is set but {missing:?} are not installed{hint}"
    );
    eprintln!("SKIPPED: {missing:?} not installed{hint}");
    false
}

/// Copies the program `src` to `to` so that it can be started at once.
///
/// `std::fs::copy` would hold `to` open for writing in this process, and a child that another
/// test thread forks in that moment inherits the descriptor until it execs: starting `to` then
/// fails with "Text file busy" (ETXTBSY; seen in CI with KWin's copy). `cp` writes it in a
/// process of its own, so no descriptor for writing is ever open here.
pub fn copy_executable(src: &std::path::Path, to: &std::path::Path) {
    let status = std::process::Command::new("cp")
        .arg("--")
        .arg(src)
        .arg(to)
        .status()
        .unwrap_or_else(|e| panic!("run cp: {e}"));
    assert!(
        status.success(),
        "cp {} {}: {status}",
        src.display(),
        to.display()
    );
}
