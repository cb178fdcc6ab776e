//! Cleanup while speaking (issue 27 item 6, `dictation/live_clean.rs`) against a REAL model:
//! llama.cpp's llama-server (built by `scripts/llama-server`) serving SmolLM2-135M-Instruct from
//! the test assets, OpenAI-compatible API. A server that cannot be built or started FAILS the
//! test: a skipped test proves nothing.
//!
//! The guard table's raw transcripts (`tests/data/guard_cases.tsv`, each distinct one written
//! as whisper writes a sentence), three to a dictation, are cleaned two ways: one pass over the
//! whole text (what the release did before), and piece by piece as while speaking (each
//! sentence with the one before it and its cleanup as context, each guarded on its own). The
//! pieces must apply no fewer cleaned sentences than the one pass, and every accepted piece
//! must pass the guard against its own raw words (the rows the table says are faithful).

mod common;

use common::llm_servers::{smollm2, Llama};
use dictum_engine::dictation::live_clean::{assemble, Piece, Session};
use dictum_engine::llm::config::{BackendKind, LlmConfig};
use dictum_engine::llm::guard::{judge, table, Limits};
use dictum_engine::llm::{Cleaner, LlmOutcome};
use std::sync::Arc;
use std::time::Duration;

/// A raw transcript as whisper writes a sentence: capital first, a final period.
fn sentence(raw: &str) -> String {
    let raw = raw.trim().trim_end_matches(['.', '?', '!']);
    let mut c = raw.chars();
    match c.next() {
        Some(f) => format!("{}{}.", f.to_uppercase(), c.as_str()),
        None => String::new(),
    }
}

#[test]
fn pieces_clean_no_worse_than_one_pass_over_the_guard_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Llama::start(dir.path(), &smollm2());
    let url = server.url.clone();
    let config = LlmConfig {
        enabled: true,
        backend: BackendKind::Openai,
        url,
        model: "smollm2".into(),
        timeout_ms: 60_000,
        num_ctx: 2048,
        temperature: 0.0,
        seed: 42,
        ..LlmConfig::default()
    };
    let cleaner = Arc::new(Cleaner::new(&config, &[]).expect("cleaner"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    assert!(rt.block_on(cleaner.warm_up()).ok, "warm-up");

    let mut raws: Vec<String> = Vec::new();
    for case in table::cases().expect("guard table") {
        // Single-line transcripts (the table also holds control characters on purpose).
        let s = sentence(&case.raw);
        if !s.is_empty() && !s.contains(['\n', '\r', '\u{1b}']) && !raws.contains(&s) {
            raws.push(s);
        }
    }
    let limits = Limits::default();
    let (mut sentences, mut by_pieces, mut by_one_pass) = (0usize, 0usize, 0usize);
    let (mut pieces_rejected, mut one_pass_rejected) = (0usize, 0usize);
    let (mut ms_pieces_tail, mut ms_one_pass) = (Vec::new(), Vec::new());
    let mut worse = Vec::new();
    for group in raws.chunks(3).filter(|g| g.len() == 3) {
        let full = group.join(" ");
        sentences += group.len();
        // One pass over the whole text (the release before).
        let one = rt.block_on(cleaner.clean_for(&full, false));
        assert_ne!(one.outcome, LlmOutcome::Failed, "{:?}", one.error);
        ms_one_pass.push(one.total_ms);
        let one_applied = if one.outcome == LlmOutcome::Cleaned {
            group.len()
        } else {
            one_pass_rejected += 1;
            0
        };
        by_one_pass += one_applied;
        // Piece by piece, each sentence with the one before as context.
        let mut pieces: Vec<Piece> = Vec::new();
        for s in group {
            let before = dictum_engine::dictation::live_clean::context(&pieces);
            let r = rt.block_on(cleaner.clean_after(
                s,
                before.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
                false,
            ));
            assert_ne!(r.outcome, LlmOutcome::Failed, "{:?}", r.error);
            if let Some(out) = &r.output {
                if r.outcome == LlmOutcome::Cleaned {
                    assert!(judge(s, out, &limits, false).is_ok(), "{s:?} -> {out:?}");
                }
            }
            pieces.push(Piece {
                raw: s.clone(),
                report: r,
            });
        }
        ms_pieces_tail.push(pieces.last().map_or(0.0, |p| p.report.total_ms));
        let joined = assemble(&pieces, &limits, false, 0.0);
        let applied = pieces
            .iter()
            .filter(|p| p.report.outcome == LlmOutcome::Cleaned)
            .count();
        pieces_rejected += pieces.len() - applied;
        by_pieces += applied;
        if applied < one_applied {
            worse.push(format!(
                "{full:?}: one pass {:?}, pieces {:?}",
                one.text, joined.text
            ));
        }
        eprintln!(
            "{full}\n  one pass ({}): {}\n  pieces ({applied}/3): {}",
            one.outcome.as_str(),
            one.text,
            joined.text
        );
    }
    let p50 = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    eprintln!(
        "LIVE-CLEAN over {sentences} sentences of the guard table ({} dictations of 3): \
         cleaned sentences applied: pieces {by_pieces}, one pass {by_one_pass}; \
         rejections: pieces {pieces_rejected} of {sentences}, one pass {one_pass_rejected} of {}; \
         LLM time p50: one pass {:.0} ms, last piece {:.0} ms; dictations where pieces did worse: {}",
        sentences / 3,
        sentences / 3,
        p50(&mut ms_one_pass),
        p50(&mut ms_pieces_tail),
        worse.len()
    );
    assert!(
        by_pieces >= by_one_pass,
        "pieces applied {by_pieces} cleaned sentences, one pass {by_one_pass}:\n{}",
        worse.join("\n")
    );

    // The same through a live session (its thread, the commits, the release).
    let session = Session::start(cleaner.clone()).expect("session");
    let (a, b, c) = (&raws[0], &raws[1], &raws[2]);
    session.commit(a);
    session.commit(b);
    assert!(
        session.wait_idle(Duration::from_secs(120)),
        "pieces cleaned"
    );
    // Once pieces are cleaned no guess is made (it would only take a core from whisper):
    // the session stays idle (a guess would keep it busy for 100 ms or more).
    session.speculate(c);
    assert!(
        session.wait_idle(Duration::from_millis(1)),
        "a guess started although pieces were cleaned"
    );
    let full = format!("{a} {b} {c}");
    // The pieces' text goes out first (typed while the rest is cleaned), once; the text the
    // release types starts with it.
    let mut early = Vec::new();
    let report = session
        .finish_early(&full, false, &mut |t| early.push(t.to_string()))
        .expect("pieces fit the text");
    assert_ne!(report.outcome, LlmOutcome::Failed, "{:?}", report.error);
    assert!(
        !dictum_engine::eval::normalize(&report.text).is_empty(),
        "{report:?}"
    );
    assert_eq!(
        early.len(),
        1,
        "the cleaned pieces are handed over once: {early:?}"
    );
    assert!(
        report.text.starts_with(&format!("{} ", early[0])),
        "the typed text goes on from the words typed ahead: {early:?} then {:?}",
        report.text
    );
    assert!(
        dictum_engine::eval::normalize(&early[0]).len()
            < dictum_engine::eval::normalize(&report.text).len(),
        "the last sentence is not typed ahead: {early:?} of {:?}",
        report.text
    );
    // Nothing after the pieces: nothing typed ahead (the profile may still change the end).
    let session = Session::start(cleaner.clone()).expect("session");
    session.commit(a);
    assert!(session.wait_idle(Duration::from_secs(120)), "piece cleaned");
    let mut early = Vec::new();
    let report = session
        .finish_early(a, false, &mut |t| early.push(t.to_string()))
        .expect("the piece is the text");
    assert!(early.is_empty(), "{early:?}");
    assert!(!report.text.is_empty());
    // A text the pieces do not fit (a voice command changed it): no verdict, one pass
    // instead, and nothing typed ahead.
    let session = Session::start(cleaner).expect("session");
    session.commit(a);
    assert!(session.wait_idle(Duration::from_secs(120)), "piece cleaned");
    let mut early = Vec::new();
    assert!(session
        .finish_early("Something else entirely. And more.", false, &mut |t| early
            .push(t.to_string()))
        .is_none());
    assert!(early.is_empty(), "{early:?}");
}

/// A guess the release made useless is dropped at once: against a server that takes the
/// request and never answers, the session is idle again right after `drop_guess` (without
/// it, the guess would hold the session for the request's whole timeout, 60 s here), and the
/// release's own request for the same words is then made (and fails, so the words stay raw).
#[test]
fn a_dropped_guess_frees_the_session_at_once() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    // Takes connections and reads, never answers.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    let config = LlmConfig {
        enabled: true,
        backend: BackendKind::Openai,
        url: format!("http://127.0.0.1:{port}"),
        model: "silent".into(),
        timeout_ms: 60_000,
        ..LlmConfig::default()
    };
    let cleaner = Arc::new(Cleaner::new(&config, &[]).expect("cleaner"));
    let session = Session::start(cleaner).expect("session");
    session.speculate("and then we shipped it");
    // The guess is in flight: the session is busy.
    assert!(
        !session.wait_idle(Duration::from_millis(500)),
        "the guess did not start"
    );
    session.drop_guess();
    assert!(
        session.wait_idle(Duration::from_secs(20)),
        "the dropped guess still holds the session"
    );
}
