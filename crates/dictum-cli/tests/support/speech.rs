//! Spoken clips made at test time: espeak-ng's British voice at 140 words a minute (the one
//! whisper tiny.en hears "delete that" from), as 16 kHz mono WAV. Needs espeak-ng and sox
//! (`ensure_e2e_deps` installs them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Speaks `text` into `dir/name.wav`.
pub fn speak(dir: &Path, name: &str, text: &str) -> PathBuf {
    speak_in(dir, name, "en-gb", text)
}

/// "Please send the report before the meeting.", spoken into `dir/report.wav`: the clip the
/// media, mute and cue tests dictate.
pub fn report(dir: &Path) -> PathBuf {
    speak(dir, "report", "Please send the report before the meeting.")
}

/// Speaks `text` with espeak-ng's `voice` (a language: "de", "fr") into `dir/name.wav`.
pub fn speak_in(dir: &Path, name: &str, voice: &str, text: &str) -> PathBuf {
    let raw = dir.join(format!("{name}.raw.wav"));
    let out = dir.join(format!("{name}.wav"));
    let ok = Command::new("espeak-ng")
        .args(["-v", voice, "-s", "140", "-w"])
        .arg(&raw)
        .arg(text)
        .status()
        .expect("espeak-ng (apt install espeak-ng)")
        .success();
    assert!(ok, "espeak-ng failed for {text:?}");
    let ok = Command::new("sox")
        .arg(&raw)
        .args(["-r", "16000", "-c", "1", "-b", "16"])
        .arg(&out)
        .status()
        .expect("sox (apt install sox)")
        .success();
    assert!(ok, "sox failed for {name}");
    let _ = std::fs::remove_file(&raw);
    out
}

/// True when espeak-ng and sox are there; with `DICTUM_REQUIRE_E2E` set, missing ones fail.
pub fn tools() -> bool {
    let on_path = |t: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(t).is_file()))
    };
    let missing: Vec<&str> = ["espeak-ng", "sox"]
        .into_iter()
        .filter(|t| !on_path(t))
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
        "DICTUM_REQUIRE_E2E is set but {missing:?} are not installed (sudo apt install espeak-ng sox)"
    );
    eprintln!("SKIPPED: {missing:?} not installed (sudo apt install espeak-ng sox)");
    false
}
