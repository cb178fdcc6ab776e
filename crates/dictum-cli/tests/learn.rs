//! Learning from corrections (issue 30 item 3) as a user runs it. With the real tiny.en model,
//! `dictum transcribe` of espeak-fox.wav writes "The quick roundfark jump over the lazy nog";
//! after `dictum history --correct` on two such rows the replacements are proposed (not after
//! one), nothing reaches the config without `--accept`, a proposal left out is not written,
//! and the next `dictum transcribe` of the clip with the same config gives the corrected words.
//! Seeded rows (History API, no whisper) check the vocabulary proposal, the numbering, the
//! refusals and that the user's own comments in the config stay.

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "support/dictum_cmd.rs"]
mod dictum_cmd;

use dictum_cmd::dictum;
use dictum_engine::store::{Entry, History, Outcome, Source};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// What espeak-fox.wav says (refs.tsv), as a user would type it.
const FOX: &str = "The quick brown fox jumps over the lazy dog. Please send the quarterly report to the finance team by Friday.";

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "dictum failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json_of(o: &Output) -> Value {
    let out = ok(o);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn transcribe_fox(dir: &Path) -> Value {
    let clip = common::clip("espeak-fox.wav");
    json_of(&dictum(
        dir,
        &["transcribe", "--json", clip.to_str().expect("path")],
    ))
}

fn replaces(v: &Value) -> Vec<(u64, String, String)> {
    v["proposals"]
        .as_array()
        .expect("proposals")
        .iter()
        .filter(|p| p["kind"] == "replace")
        .map(|p| {
            (
                p["n"].as_u64().expect("n"),
                p["from"].as_str().expect("from").to_string(),
                p["to"].as_str().expect("to").to_string(),
            )
        })
        .collect()
}

const CONFIG: &str = "# my own note: keep me\n[stt]\nmodel = \"tiny.en-q8_0\"\nthreads = 2\n";

#[test]
fn a_mistake_corrected_twice_is_learned_on_accept_and_the_clip_comes_out_right() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, CONFIG).expect("config");

    let first = transcribe_fox(dir.path());
    let raw = first["raw_text"]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    assert!(
        raw.contains("roundfark") && raw.contains("nog"),
        "tiny.en no longer mishears espeak-fox.wav the same way; pick another clip: {first}"
    );
    let second = transcribe_fox(dir.path());
    let (id1, id2) = (
        first["id"].as_i64().expect("id").to_string(),
        second["id"].as_i64().expect("id").to_string(),
    );

    // One correction: nothing seen twice yet, nothing proposed, nothing written.
    let once = json_of(&dictum(
        dir.path(),
        &["history", "--correct", &id1, FOX, "--json"],
    ));
    assert_eq!(once["correction"], FOX);
    assert!(replaces(&once).is_empty(), "{once}");

    // The second correction of the same mistake proposes the replacements...
    let twice = json_of(&dictum(
        dir.path(),
        &["history", "--correct", &id2, FOX, "--json"],
    ));
    let reps = replaces(&twice);
    let fox = reps
        .iter()
        .find(|(_, from, _)| from.contains("roundfark"))
        .unwrap_or_else(|| panic!("roundfark not proposed: {twice}"));
    assert!(fox.2.contains("brown fox"), "{twice}");
    let dog = reps
        .iter()
        .find(|(_, from, to)| from == "nog" && to == "dog")
        .unwrap_or_else(|| panic!("nog -> dog not proposed: {twice}"));
    assert!(
        twice["proposals"]
            .as_array()
            .expect("proposals")
            .iter()
            .all(|p| p["seen"].as_u64().unwrap_or(2) == 2),
        "{twice}"
    );
    // ...and writes nothing by itself.
    assert_eq!(std::fs::read_to_string(&config).expect("read"), CONFIG);
    // The text form numbers them and says how to accept.
    let text = ok(&dictum(dir.path(), &["history", "--correct", &id2]));
    assert!(
        text.contains(&format!("{}. replace: \"nog\" -> \"dog\"", dog.0)),
        "{text}"
    );
    assert!(text.contains("--accept"), "{text}");

    // Accepting only nog -> dog: the fox proposal is not written.
    let n = dog.0.to_string();
    ok(&dictum(
        dir.path(),
        &["history", "--correct", &id2, "--accept", &n],
    ));
    let written = std::fs::read_to_string(&config).expect("read");
    assert!(
        written.starts_with(CONFIG),
        "comments and keys kept: {written}"
    );
    assert!(written.contains("from = \"nog\""), "{written}");
    assert!(!written.contains("roundfark"), "not accepted: {written}");
    ok(&dictum(dir.path(), &["config", "--check"]));
    let after_one = transcribe_fox(dir.path());
    let t = after_one["text"].as_str().unwrap_or_default();
    assert!(
        t.contains("lazy dog") && t.contains("roundfark"),
        "{after_one}"
    );

    // Accepting all: the next transcription of the clip has the corrected words.
    let all = json_of(&dictum(
        dir.path(),
        &["history", "--correct", &id2, "--accept", "all", "--json"],
    ));
    assert!(all["written"]["replacements"]
        .as_array()
        .expect("written")
        .iter()
        .any(|r| r[0].as_str().unwrap_or_default().contains("roundfark")));
    let learned = transcribe_fox(dir.path());
    let t = learned["text"].as_str().unwrap_or_default();
    assert!(
        t.starts_with("The quick brown fox") && t.contains("lazy dog") && !t.contains("roundfark"),
        "{learned}"
    );
    // Whisper's own words stay in the row.
    assert!(learned["raw_text"]
        .as_str()
        .unwrap_or_default()
        .contains("roundfark"));
}

/// Rows with whisper's words, made through the History API (no model needed).
fn seed(dir: &Path, raws: &[Option<&str>]) -> Vec<String> {
    let history = History::open(&dir.join("data/history.sqlite3")).expect("open");
    raws.iter()
        .map(|raw| {
            let mut e = Entry::new(Source::Mic);
            e.outcome = Outcome::Ok;
            e.raw_text = raw.map(str::to_string);
            e.text = raw.map(str::to_string);
            history.insert(&mut e).expect("insert").to_string()
        })
        .collect()
}

#[test]
fn proposals_are_numbered_and_only_the_accepted_ones_are_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    let before = "# mine\n[stt]\nvocabulary = [\"Dictum\"] # my words\n";
    std::fs::write(&config, before).expect("config");
    let ids = seed(
        dir.path(),
        &[
            Some("We deploy on cooper netties today."),
            Some("Is cooper netties up?"),
            None,
        ],
    );

    let first = ok(&dictum(
        dir.path(),
        &[
            "history",
            "--correct",
            &ids[0],
            "We deploy on Kubernetes today.",
        ],
    ));
    assert!(
        first.contains("1. vocabulary: add \"Kubernetes\""),
        "{first}"
    );
    assert!(!first.contains("replace:"), "seen once: {first}");

    let second = ok(&dictum(
        dir.path(),
        &["history", "--correct", &ids[1], "Is Kubernetes up?"],
    ));
    assert!(
        second.contains("1. vocabulary: add \"Kubernetes\"")
            && second.contains("2. replace: \"cooper netties\" -> \"Kubernetes\" (corrected in 2"),
        "{second}"
    );
    assert_eq!(std::fs::read_to_string(&config).expect("read"), before);

    // A number not listed is refused and writes nothing.
    let bad = dictum(
        dir.path(),
        &["history", "--correct", &ids[1], "--accept", "3"],
    );
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("no proposal 3"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert_eq!(std::fs::read_to_string(&config).expect("read"), before);

    // Only the replacement is accepted: the vocabulary stays as it was.
    let out = ok(&dictum(
        dir.path(),
        &["history", "--correct", &ids[1], "--accept", "2"],
    ));
    assert!(out.contains("learned: [[replace]]"), "{out}");
    let text = std::fs::read_to_string(&config).expect("read");
    assert!(text.starts_with(before), "{text}");
    let check = ok(&dictum(dir.path(), &["config", "--check"]));
    assert!(check.contains("vocabulary = [\"Dictum\"]"), "{check}");
    assert!(check.contains("from = \"cooper netties\""), "{check}");

    // Then the vocabulary word: appended to the list in place, the comment kept.
    ok(&dictum(
        dir.path(),
        &["history", "--correct", &ids[1], "--accept", "1"],
    ));
    let text = std::fs::read_to_string(&config).expect("read");
    assert!(
        text.starts_with("# mine\n[stt]\nvocabulary = [\"Dictum\", \"Kubernetes\"] # my words\n"),
        "{text}"
    );
    // Accepting again adds nothing.
    let again = ok(&dictum(
        dir.path(),
        &["history", "--correct", &ids[1], "--accept", "all"],
    ));
    assert!(again.contains("Nothing new to write"), "{again}");
    assert_eq!(std::fs::read_to_string(&config).expect("read"), text);

    // The correction is kept on the row; whisper's words are not changed.
    let history = History::open(&dir.path().join("data/history.sqlite3")).expect("open");
    let id: i64 = ids[1].parse().expect("id");
    assert_eq!(
        history.correction(id).expect("read").as_deref(),
        Some("Is Kubernetes up?")
    );
    assert_eq!(
        history
            .get(id)
            .expect("get")
            .expect("row")
            .raw_text
            .as_deref(),
        Some("Is cooper netties up?")
    );

    // Refusals: no such row, a row without a transcript, a row never corrected, no text.
    for (args, says) in [
        (vec!["--correct", "999", "x"], "no entry #999"),
        (vec!["--correct", ids[2].as_str(), "x"], "no transcript"),
        (vec!["--correct", ids[2].as_str()], "no transcript"),
        (vec!["--correct", "abc", "x"], "entry id"),
        (vec!["--correct", ids[0].as_str(), " "], "empty"),
    ] {
        let mut full = vec!["history"];
        full.extend(args.iter().copied());
        let o = dictum(dir.path(), &full);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{args:?}: {err}");
    }
    let fresh = seed(dir.path(), &[Some("hello there")]);
    let o = dictum(dir.path(), &["history", "--correct", &fresh[0]]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("not been corrected"),
        "{err}"
    );
}
