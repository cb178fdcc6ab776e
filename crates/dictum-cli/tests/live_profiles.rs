//! Per-app profiles end to end: `dictum run` on a real X display (Xvfb) with the PulseAudio
//! virtual microphone, the real LLM (llama.cpp's llama-server serving SmolLM2-135M from the
//! test assets, built by `scripts/llama-server`), and two real xterms of different window
//! classes. A `terminal` profile (class `^xterm$`) turns the LLM cleanup and the trailing
//! period off; a `mail` profile (class `mailterm`) keeps the LLM on. One dictation into each
//! window: the events and history rows name the profile, the LLM ran only for `mail`, and each
//! window got its own dictation's text.
//!
//! Skipped only when the X tools are missing and `DICTUM_REQUIRE_E2E` is unset; a
//! llama-server that cannot be built or started fails the test.

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;

#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::llm_servers::Llama;
use common::x11::Xterm;
use x11_daemon::{dictate, typed_line, Live, HOTKEY};

/// The LLM ran on this dictation (whatever the guard then said).
fn llm_ran(outcome: &serde_json::Value) -> bool {
    matches!(outcome.as_str(), Some("cleaned" | "rejected"))
}

#[test]
fn an_xterm_profile_disables_cleanup_while_a_second_window_class_keeps_it() {
    let Some(live) = Live::start() else {
        return;
    };
    let (x, dir) = (&live.x, live.path());
    let llama = Llama::start(
        dir,
        &common::assets().join("models/SmolLM2-135M-Instruct.Q4_1.gguf"),
    );
    let mail = Xterm::start_as(x, "Compose: report", "Mailterm", "80x10+0+420");
    let term = live.term("Dictum terminal");
    let mut d = live.daemon();
    // The profiles and the LLM come with a config change (applied without a restart).
    d.write_config(&format!(
        "[llm]\nenabled = true\nbackend = \"openai\"\nurl = \"{}\"\nmodel = \"smollm2\"\n\
         timeout_ms = 60000\nnum_ctx = 2048\n\n\
         [[profile]]\nname = \"terminal\"\nmatch_class = \"^xterm$\"\nllm = false\n\
         trailing_period = false\n\n\
         [[profile]]\nname = \"mail\"\nmatch_class = \"mailterm\"\nllm = true\n",
        llama.url
    ));
    d.wait_notice("config applied");

    // 1. The terminal: no cleanup, no final period; typed into the terminal.
    let (mut seen_term, mut seen_mail) = (0usize, 0usize);
    term.point_at(x);
    let ev = dictate(x, &mut d, HOTKEY, &common::clip("jfk.wav"), 500);
    eprintln!("terminal: {ev}");
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert_eq!(ev["profile"], "terminal", "{ev}");
    assert_eq!(
        ev["llm_outcome"], "disabled",
        "the LLM ran for the terminal: {ev}"
    );
    let text = ev["text"].as_str().unwrap_or_default().to_string();
    assert!(text.to_lowercase().contains("your country"), "{ev}");
    assert!(!text.ends_with('.'), "the final period stays: {text:?}");
    assert_eq!(typed_line(&term, x, &mut seen_term).trim_end(), text);
    let terminal_id = ev["id"].as_i64().expect("id");

    // 2. The other window class: the LLM runs; typed into that window, not the terminal.
    mail.point_at(x);
    let ev = dictate(x, &mut d, HOTKEY, &common::clip("jfk.wav"), 500);
    eprintln!("mail: {ev}");
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert_eq!(ev["profile"], "mail", "{ev}");
    assert!(llm_ran(&ev["llm_outcome"]), "the LLM did not run: {ev}");
    let mail_text = ev["text"].as_str().unwrap_or_default().to_string();
    assert_eq!(typed_line(&mail, x, &mut seen_mail).trim_end(), mail_text);
    let mail_id = ev["id"].as_i64().expect("id");
    term.point_at(x);
    assert_eq!(
        typed_line(&term, x, &mut seen_term),
        "",
        "the mail dictation reached the terminal"
    );
    drop(d);

    // 3. The history rows say the same.
    let history =
        dictum_engine::store::History::open(&dir.join("history.sqlite3")).expect("history");
    let row = |id| history.get(id).expect("read").expect("row");
    let t = row(terminal_id);
    assert_eq!(t.profile.as_deref(), Some("terminal"), "{t:?}");
    assert_eq!(t.app_class.as_deref(), Some("XTerm"), "{t:?}");
    assert_eq!(t.llm_outcome.as_deref(), Some("disabled"), "{t:?}");
    assert!(t.llm_ms.is_none(), "{t:?}");
    let m = row(mail_id);
    assert_eq!(m.profile.as_deref(), Some("mail"), "{m:?}");
    assert_eq!(m.app_class.as_deref(), Some("Mailterm"), "{m:?}");
    assert!(
        m.llm_ms.is_some() && m.llm_backend.as_deref() == Some("openai"),
        "{m:?}"
    );
}
