//! `dictum bench live --clips DIR`: the live path against one pass on a folder of clips (the
//! live-WER corpus that `scripts/corpus` builds, or any folder with a `refs.tsv`), and the
//! corpus's committed references.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
use common::assets;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A two-clip corpus: a dev clip with several stretches (jfk, 11 s) and a short one.
fn corpus(dir: &Path) {
    let dev = assets().join("audio/dev");
    for clip in ["jfk.wav", "goforward.wav"] {
        std::fs::copy(dev.join(clip), dir.join(clip)).expect("copy clip");
    }
    std::fs::write(
        dir.join("refs.tsv"),
        "jfk.wav\tand so my fellow americans ask not what your country can do for you ask what you can do for your country\n\
         goforward.wav\tgo forward ten meters\n",
    )
    .expect("write refs");
}

#[test]
fn bench_live_reads_a_clip_folder_and_writes_every_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    corpus(dir.path());
    let details = dir.path().join("passes.tsv");
    // Stretches of 3 s, so jfk (11 s) is committed in several whatever the default is.
    std::fs::write(
        dir.path().join("config.toml"),
        "[dictation]\ncommit_min_ms = 3000\n",
    )
    .expect("write config");
    let out = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(["bench", "live", "--tail-ms", "200", "--clips"])
        .arg(dir.path())
        .arg("--assets")
        .arg(assets())
        .arg("--details")
        .arg(&details)
        .env("DICTUM_CONFIG", dir.path().join("config.toml"))
        .env("DICTUM_DATA_DIR", dir.path().join("data"))
        .env_remove("DICTUM_LOG")
        .output()
        .expect("run dictum");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("2 clips, 13 s."), "{report}");
    assert!(report.contains("| jfk.wav |"), "{report}");
    assert!(
        report.contains("| live, released 200 ms after the last word |"),
        "{report}"
    );
    // One row per clip and path; jfk's live row has commits (`C`) before its tail (`T`),
    // and the stretches follow each other.
    let rows = std::fs::read_to_string(&details).expect("details written");
    let live: Vec<&str> = rows
        .lines()
        .filter(|l| l.starts_with("jfk.wav\tlive200\t"))
        .collect();
    assert_eq!(rows.lines().count(), 1 + 2 * 2, "{rows}");
    let [row] = live[..] else {
        panic!("one live row for jfk: {rows}")
    };
    let passes: Vec<&str> = row.rsplit('\t').next().unwrap_or("").split(" | ").collect();
    assert!(passes.len() >= 2, "jfk is committed in stretches: {row}");
    assert!(passes[0].starts_with("C 0-"), "{row}");
    assert!(passes.last().is_some_and(|p| p.starts_with("T ")), "{row}");
    let stretch = |p: &str| -> (usize, usize) {
        let range = p.split(' ').nth(1).unwrap_or("");
        let (a, b) = range.split_once('-').unwrap_or(("", ""));
        (a.parse().expect("from"), b.parse().expect("to"))
    };
    for pair in passes.windows(2) {
        assert_eq!(stretch(pair[0]).1, stretch(pair[1]).0, "{row}");
    }
}

#[test]
fn the_corpus_refs_name_each_clip_once_with_a_reference() {
    let refs = std::fs::read_to_string(repo().join("tests/corpus/refs.tsv")).expect("refs.tsv");
    let mut names = HashSet::new();
    for line in refs.lines() {
        let (name, text) = line.split_once('\t').expect("file<TAB>reference");
        assert!(name.ends_with(".wav"), "{line}");
        assert!(
            !text.trim().is_empty(),
            "every corpus clip has speech: {line}"
        );
        assert!(names.insert(name), "{name} listed twice");
    }
    // Every text the synthetic voices read is a clip of its own.
    let texts = std::fs::read_to_string(repo().join("tests/corpus/texts.tsv")).expect("texts");
    for line in texts
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (id, text) = line.split_once('\t').expect("id<TAB>text");
        let name = format!("espeak-{id}.wav");
        assert!(
            names.contains(name.as_str()),
            "{name} missing from refs.tsv"
        );
        assert!(
            refs.contains(&format!("{name}\t{text}\n")),
            "{name}'s reference is its text"
        );
    }
    assert!(names.len() >= 70, "{} clips", names.len());
}
