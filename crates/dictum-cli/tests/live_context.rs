//! The text around the cursor, end to end (issue 41, `[context]`): `dictum run` on a real X
//! display (Xvfb) with the PulseAudio virtual microphone, a private session bus with the real
//! accessibility bus (`at-spi-bus-launcher`) and real GTK 4 fields (`tests/gtk_caret_box.py`,
//! which reports every change of its text); the LLM is the declared stand-in of
//! `tests/llm_record_standin.py` (it records each request and answers with the transcript
//! unchanged). The clip is espeak-ng saying "the report for the meeting" (whisper tiny.en
//! writes "The report for the meeting.").
//!
//! 1. In "I think | is right" (the caret after "I think "): "I think the report for the
//!    meeting is right", no capital, one space each side, no period; the LLM request carries
//!    the context, fenced.
//! 2. After "Done. " (the end of the text): a capital, no space before it, and the usual
//!    trailing space ("Done. The report for the meeting. ").
//! 3. An empty field: today's output (the text as heard and its trailing space).
//! 4. A password field: never read; the request has no context, the secret is in no request.
//! 5. An app on the opt-out list: never read (typed as heard, as in a field nobody reads);
//!    the request has no context.
//! 6. An LLM server on another address of this machine (not loopback): the words are still
//!    fitted, but the request has no context; 7. with `[context] llm_remote`, it has.
//! 8. `[context] switch_on_accessibility` turns the desktop's accessibility switch on, and
//!    off again when it is taken out; nothing above touched it.
//!
//! Needs what the live X11 tests need, plus dbus-daemon, at-spi2-core, GTK 4 for Python,
//! espeak-ng and sox; skipped without them unless `DICTUM_REQUIRE_E2E` is set.
#![cfg(target_os = "linux")]

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "../../dictum-engine/tests/common/atspi.rs"]
mod harness;

#[path = "support/events.rs"]
mod events;

#[path = "support/speech.rs"]
mod speech;

#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::llm_servers::RecordStandin;
use harness::{Field, Session};
use serde_json::Value;
use std::time::Duration;
use x11_daemon::{dictate, history_rows, Daemon, Live, HOTKEY};

const SECRET: &str = "hunter2-Tr0ub4dor&3";

/// An address of this machine that is not loopback (the one its default route leaves by);
/// 0.0.0.0 when it has none (Linux connects that to this machine too). Either way not a
/// loopback URL to Dictum.
fn outward_ip() -> String {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").expect("a UDP socket");
    socket
        .connect("198.51.100.1:9")
        .ok()
        .and_then(|_| socket.local_addr().ok())
        .map(|a| a.ip())
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
        .map_or_else(|| "0.0.0.0".to_string(), |ip| ip.to_string())
}

fn llm_config(url: &str, context: &str) -> String {
    format!(
        "[llm]\nenabled = true\nbackend = \"openai\"\nurl = \"{url}\"\nmodel = \"m\"\n\
         examples = false\ntimeout_ms = 20000\n\n[context]\n{context}\n"
    )
}

/// The system prompts of the cleanup requests since the first `from` (warm-ups, sent when a
/// config is applied, left out); at least one.
fn systems_since(llm: &RecordStandin, from: usize) -> Vec<String> {
    let all = llm.requests();
    let systems: Vec<String> = all
        .get(from..)
        .unwrap_or_default()
        .iter()
        .filter(|r| {
            let messages = r["messages"].as_array().cloned().unwrap_or_default();
            let last = messages.last().map(|m| m["content"].clone());
            last.as_ref().and_then(Value::as_str) != Some(dictum_engine::llm::WARMUP_TEXT)
        })
        .map(|r| {
            r["messages"][0]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(
        !systems.is_empty(),
        "no cleanup request after the first {from}: {all:?}"
    );
    systems
}

/// One dictation of `clip` into the focused field: the event, ok, with the words heard, and
/// the dictation as the middle of a sentence (what the fitted text must hold: the first
/// word lower case when it is "The", no final period).
fn dictate_into(live: &Live, d: &mut Daemon, clip: &std::path::Path) -> (Value, String) {
    let ev = dictate(&live.x, d, HOTKEY, clip, 300);
    eprintln!("dictation: {ev}");
    assert_eq!(ev["outcome"], "ok", "{ev}");
    let text = ev["text"].as_str().unwrap_or_default().to_string();
    assert!(
        text.to_lowercase().contains("report for the meeting"),
        "whisper heard {ev}"
    );
    let body = text.strip_suffix('.').unwrap_or(&text);
    let middle = match body.strip_prefix("The ") {
        Some(rest) => format!("the {rest}"),
        None => body.to_string(),
    };
    (ev, middle)
}

/// The field's text once it is `want`, or as it is after 10 s.
fn field_text(field: &Field, want: &str) -> String {
    field.text_when(|t| t == want, Duration::from_secs(10))
}

#[test]
fn the_words_fit_the_text_around_the_cursor_and_the_llm_sees_it_only_where_allowed() {
    let Some(launcher) = harness::tools_present() else {
        return;
    };
    if !speech::tools() {
        return;
    }
    let Some(live) = Live::start() else {
        return;
    };
    let (x, dir) = (&live.x, live.path());
    let session = Session::start(Some(launcher), &x.display);
    let llm = RecordStandin::start_on(dir, "0.0.0.0");
    let clip = speech::speak(dir, "the-report", "the report for the meeting");
    let mut d = Daemon::start_with(
        dir,
        x,
        HOTKEY,
        &[("DBUS_SESSION_BUS_ADDRESS", session.address())],
    );
    let local = format!("http://127.0.0.1:{}", llm.port());
    d.apply_config(&llm_config(&local, ""));
    let mut seen = llm.requests().len();

    // 1. Mid-sentence: fitted, and the request carries the context, fenced.
    let field = Field::start(x, &session, "entry", ("I think is right", 8), None);
    let (_, middle) = dictate_into(&live, &mut d, &clip);
    let want = format!("I think {middle} is right");
    assert_eq!(field_text(&field, &want), want);
    let systems = systems_since(&llm, seen);
    seen = llm.requests().len();
    // The release's request has the context, fenced once, with the text before the cursor.
    // (A guess sent while the key is held has none: on X11 the hotkey's grab hides the
    // focus meanwhile, and what cannot be read yet might be a password field.)
    for s in &systems {
        assert!(s.matches("<context>").count() <= 1, "{s}");
    }
    let last = systems.last().cloned().unwrap_or_default();
    assert_eq!(last.matches("<context>").count(), 1, "{last}");
    assert!(last.contains("window title: Dictum caret test"), "{last}");
    assert!(
        last.contains("text before the cursor:\nI think \n</context>"),
        "{last}"
    );
    drop(field);

    // 2. After a sentence: a capital, no space before it.
    let field = Field::start(x, &session, "entry", ("Done. ", 6), None);
    let (ev, _) = dictate_into(&live, &mut d, &clip);
    // At the end of the text: its usual trailing space, as before.
    let want = format!("Done. {} ", ev["text"].as_str().unwrap_or_default());
    assert!(
        want.starts_with("Done. The ") && want.ends_with(". "),
        "{want}"
    );
    assert_eq!(field_text(&field, &want), want);
    systems_since(&llm, seen);
    seen = llm.requests().len();
    drop(field);

    // 3. An empty field: as today, the text as heard and its trailing space.
    let field = Field::start(x, &session, "entry", ("", 0), None);
    let (ev, _) = dictate_into(&live, &mut d, &clip);
    let want = format!("{} ", ev["text"].as_str().unwrap_or_default());
    assert_eq!(field_text(&field, &want), want);
    systems_since(&llm, seen);
    seen = llm.requests().len();
    drop(field);

    // 4. A password field: never read, and nothing of it goes to the LLM.
    let field = Field::start(x, &session, "password", (SECRET, SECRET.len()), None);
    let (ev, _) = dictate_into(&live, &mut d, &clip);
    // (Focus-in selects a password entry's text whole: the words replace it.)
    let want = format!("{} ", ev["text"].as_str().unwrap_or_default());
    let got = field.text_when(|t| t.ends_with(&want), Duration::from_secs(10));
    assert!(got.ends_with(&want), "{got:?}");
    let systems = systems_since(&llm, seen);
    seen = llm.requests().len();
    for s in &systems {
        assert!(!s.contains("<context>") && !s.contains(SECRET), "{s}");
    }
    drop(field);

    // 5. An app on the opt-out list (by its name, the window class): never read, so the
    //    words go in as heard, as where nothing can be read.
    let field = Field::start(
        x,
        &session,
        "entry",
        ("I think is right", 8),
        Some("keepassxc"),
    );
    let (ev, _) = dictate_into(&live, &mut d, &clip);
    let want = format!(
        "I think {} is right",
        ev["text"].as_str().unwrap_or_default()
    );
    assert_eq!(field_text(&field, &want), want);
    let systems = systems_since(&llm, seen);
    for s in &systems {
        assert!(!s.contains("<context>") && !s.contains("I think"), "{s}");
    }
    drop(field);

    // 6. A server on another address: fitted all the same, but no context in the request.
    let remote = format!("http://{}:{}", outward_ip(), llm.port());
    eprintln!("not loopback: {remote}");
    d.apply_config(&llm_config(&remote, ""));
    seen = llm.requests().len();
    let field = Field::start(x, &session, "entry", ("I think is right", 8), None);
    let (_, middle) = dictate_into(&live, &mut d, &clip);
    let want = format!("I think {middle} is right");
    assert_eq!(field_text(&field, &want), want);
    let systems = systems_since(&llm, seen);
    for s in &systems {
        assert!(!s.contains("<context>") && !s.contains("I think"), "{s}");
    }
    drop(field);

    // 7. ... unless the user allows it.
    d.apply_config(&llm_config(&remote, "llm_remote = true"));
    seen = llm.requests().len();
    let field = Field::start(x, &session, "entry", ("I think is right", 8), None);
    let (_, middle) = dictate_into(&live, &mut d, &clip);
    let want = format!("I think {middle} is right");
    assert_eq!(field_text(&field, &want), want);
    let last = systems_since(&llm, seen).pop().unwrap_or_default();
    assert!(
        last.contains("text before the cursor:\nI think \n</context>"),
        "{last}"
    );
    drop(field);

    // 8. The desktop's accessibility switch (Qt and Chromium apps read it): never touched
    //    above; on while the config asks, off again after (it was off).
    let switch = |want: bool| {
        let until = std::time::Instant::now() + Duration::from_secs(5);
        let mut now = harness::switch_state(&session);
        while now != Some(want) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(100));
            now = harness::switch_state(&session);
        }
        now
    };
    assert_eq!(switch(false), Some(false));
    d.apply_config(&llm_config(&remote, "switch_on_accessibility = true"));
    assert_eq!(switch(true), Some(true));
    d.apply_config(&llm_config(&remote, ""));
    assert_eq!(switch(false), Some(false));
    drop(d);

    // The rows say what was done, newest first; the text read is in none of them.
    let rows = history_rows(dir);
    let said: Vec<(Option<&str>, Option<&str>)> = rows
        .iter()
        .take(7)
        .map(|r| (r.context.as_deref(), r.llm_context.as_deref()))
        .collect();
    let remote_note = "not sent: the LLM server is not on this machine ([context] llm_remote)";
    assert_eq!(
        said,
        [
            (Some("joined"), Some("sent")),
            (Some("joined"), Some(remote_note)),
            (
                Some("not read: an app on the opt-out list"),
                Some("not sent: an app on the opt-out list")
            ),
            (
                Some("not read: a password field"),
                Some("not sent: a password field")
            ),
            (Some("as heard: an empty field"), Some("sent")),
            (Some("as heard"), Some("sent")),
            (Some("joined"), Some("sent")),
        ],
        "{rows:?}"
    );
    for r in rows.iter().take(7) {
        assert!(r.context_ms.is_some_and(|ms| ms < 5000.0), "{r:?}");
    }
}
