//! Styles picked at the key, end to end: `dictum run` on a real X display (Xvfb) with the
//! PulseAudio virtual microphone and a real xterm; the LLM is the declared stand-in of
//! `tests/llm_record_standin.py` (it records each request and answers with the transcript
//! unchanged), so the test sees which prompt and model each dictation asked for.
//!
//! The same clip three times:
//! 1. with the hotkey alone: the configured prompt and model, no style on the row;
//! 2. with shift held too (the `memo` style's modifier): the memo prompt and model, the row
//!    and the event say `memo`, and the final period is gone (`trailing_period = false`);
//! 3. with `press --style note` (what `dictum ctl press --style note` sends): the note prompt.
//!
//! Skipped only when the X tools are missing and `DICTUM_REQUIRE_E2E` is unset.

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;

#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::llm_servers::RecordStandin;
use std::time::Duration;
use x11_daemon::{dictate, typed_line, Live, HOTKEY};

/// The system prompts and models of the requests the stand-in recorded after the first
/// `from` (a dictation may send several: whole sentences are cleaned while the key is held,
/// `dictation/live_clean.rs`); at least one.
fn requests_since(llm: &RecordStandin, from: usize) -> Vec<(String, String)> {
    let all = llm.requests();
    assert!(
        all.len() > from,
        "no LLM request after the first {from}: {all:?}"
    );
    all[from..]
        .iter()
        .map(|req| {
            let system = req["messages"][0]["content"].as_str().unwrap_or_default();
            let model = req["model"].as_str().unwrap_or_default();
            (system.to_string(), model.to_string())
        })
        .collect()
}

/// Every request since the first `from` had the prompt starting with `prompt` and `model`;
/// returns how many requests there are now.
fn all_asked(llm: &RecordStandin, from: usize, prompt: &str, model: &str) -> usize {
    let since = requests_since(llm, from);
    for (system, m) in &since {
        assert!(system.starts_with(prompt), "{prompt} wanted: {since:?}");
        assert_eq!(m, model, "{since:?}");
    }
    from + since.len()
}

#[test]
fn a_style_picked_at_the_key_changes_the_request_and_is_stored() {
    let Some(live) = Live::start() else {
        return;
    };
    let (x, dir) = (&live.x, live.path());
    let llm = RecordStandin::start(dir);
    let term = live.term("Dictum styles");
    let mut d = live.daemon();
    d.apply_config(&format!(
        "[llm]\nenabled = true\nbackend = \"openai\"\nurl = \"{}\"\nmodel = \"base-model\"\n\
         system_prompt = \"PROMPT-BASE. Clean up the text.{{vocabulary}}\"\n\
         examples = false\ntimeout_ms = 20000\n\n\
         [[style]]\nname = \"memo\"\nprompt = \"PROMPT-MEMO. Clean up the text.\"\n\
         model = \"memo-model\"\ntrailing_period = false\nmodifier = \"shift\"\n\n\
         [[style]]\nname = \"note\"\nprompt = \"PROMPT-NOTE. Clean up the text.\"\n",
        llm.url
    ));
    term.point_at(x);
    let clip = common::clip("jfk.wav");
    let mut seen = 0usize;

    // 1. The hotkey alone: the configured prompt, no style.
    let plain = dictate(x, &mut d, HOTKEY, &clip, 500);
    eprintln!("plain: {plain}");
    assert_eq!(plain["outcome"], "ok", "{plain}");
    assert!(plain["style"].is_null(), "{plain}");
    assert_eq!(plain["llm_outcome"], "cleaned", "{plain}");
    let seen_requests = all_asked(&llm, 0, "PROMPT-BASE.", "base-model");
    let plain_text = plain["text"].as_str().unwrap_or_default().to_string();
    assert!(
        plain_text.to_lowercase().contains("country") && plain_text.ends_with('.'),
        "{plain_text:?}"
    );
    assert_eq!(typed_line(&term, x, &mut seen).trim_end(), plain_text);

    // 2. Shift held too: the memo style's prompt and model, no final period.
    let memo = dictate(x, &mut d, &format!("shift+{HOTKEY}"), &clip, 500);
    eprintln!("memo: {memo}");
    assert_eq!(memo["outcome"], "ok", "{memo}");
    assert_eq!(memo["style"], "memo", "{memo}");
    assert_eq!(memo["llm_outcome"], "cleaned", "{memo}");
    let seen_requests = all_asked(&llm, seen_requests, "PROMPT-MEMO.", "memo-model");
    let memo_text = memo["text"].as_str().unwrap_or_default().to_string();
    assert!(
        memo_text.to_lowercase().contains("country") && !memo_text.ends_with('.'),
        "{memo}"
    );
    assert_eq!(typed_line(&term, x, &mut seen).trim_end(), memo_text);

    // 3. `press --style note` (the control socket's words): the note prompt.
    let player = common::pulse::play_file(&clip);
    d.send("press --style note");
    let mut player = player;
    let status = player.wait().expect("paplay");
    assert!(status.success(), "paplay: {status}");
    std::thread::sleep(Duration::from_millis(500));
    d.send("release");
    let note = d.next("dictation", Duration::from_secs(60));
    eprintln!("note: {note}");
    assert_eq!(note["style"], "note", "{note}");
    // A style without a model keeps [llm]'s.
    all_asked(&llm, seen_requests, "PROMPT-NOTE.", "base-model");
    drop(d);

    // The rows say the same.
    let rows = x11_daemon::history_rows(dir);
    let styles: Vec<Option<&str>> = rows.iter().map(|r| r.style.as_deref()).collect();
    assert_eq!(styles, [Some("note"), Some("memo"), None], "{rows:?}");
}
