//! The ~20 s clip of four sentences the live-words tests hold the key over (jfk.wav,
//! sns-0870.wav, sns-0880.wav and espeak-fox.wav with 0.4 s gaps, as `scripts/bench-live`
//! joins them), joined with sox. Shared by `live_partial.rs` and `tray_indicator.rs`; needs
//! the `common` test-asset module (`#[path = "../../dictum-engine/tests/common/mod.rs"]`).
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const CLIPS: [&str; 4] = ["jfk.wav", "sns-0870.wav", "sns-0880.wav", "espeak-fox.wav"];

fn sox(args: &[&OsStr]) {
    let ok = Command::new("sox")
        .args(args)
        .status()
        .expect("sox (apt-get install sox)")
        .success();
    assert!(ok, "sox {args:?} failed");
}

/// The four clips as one 16 kHz mono clip in `dir`, 0.4 s of silence between them.
pub fn long_clip(dir: &Path) -> PathBuf {
    let gap = dir.join("gap.wav");
    let format: [&OsStr; 6] = [
        "-r".as_ref(),
        "16000".as_ref(),
        "-c".as_ref(),
        "1".as_ref(),
        "-b".as_ref(),
        "16".as_ref(),
    ];
    let mut args: Vec<&OsStr> = vec!["-n".as_ref()];
    args.extend(format);
    args.extend([
        gap.as_os_str(),
        "trim".as_ref(),
        "0".as_ref(),
        "0.4".as_ref(),
    ]);
    sox(&args);
    let mut parts: Vec<PathBuf> = Vec::new();
    for (i, name) in CLIPS.iter().enumerate() {
        let part = dir.join(format!("part{i}.wav"));
        let source = crate::common::clip(name);
        let mut args: Vec<&OsStr> = vec![source.as_os_str()];
        args.extend(format);
        args.push(part.as_os_str());
        sox(&args);
        if i > 0 {
            parts.push(gap.clone());
        }
        parts.push(part);
    }
    let out = dir.join("four-sentences.wav");
    let mut args: Vec<&OsStr> = parts.iter().map(|p| p.as_os_str()).collect();
    args.push(out.as_os_str());
    sox(&args);
    out
}

/// The clip's length in ms.
pub fn clip_ms(clip: &Path) -> u64 {
    let d = dictum_engine::audio::read_wav(clip).expect("read the joined clip");
    d.samples.len() as u64 / d.channels.max(1) as u64 * 1000 / d.sample_rate as u64
}

/// What the four clips say (refs.tsv), joined.
pub fn reference() -> String {
    let said: Vec<String> = CLIPS
        .iter()
        .map(|c| crate::common::pulse::reference(c))
        .collect();
    said.join(" ")
}
