//! Snippets and replacements in live dictation (issue 30 item 2): `dictum run` on Xvfb with the
//! PulseAudio virtual microphone (the harness of `live_commands.rs`), sentences synthesised
//! with espeak-ng, typed into a real xterm whose input is read back from a file.
//!
//! - `[[replace]] from = "thursday" to = "Friday"`: "The meeting moved to Thursday morning." is
//!   typed with "Friday"; the row's raw text keeps whisper's "Thursday".
//! - `[[snippet]] phrase = "my address"` with a two-line text: "Send it to my address." types
//!   the address on one line (a typed dictation gets no newline: no Return reaches the window).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;
#[path = "support/speech.rs"]
mod speech;
#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::pulse::Pulse;
use common::x11::{tools_present, Xterm, Xvfb};
use speech::speak;
use x11_daemon::{dictate, write_initial_config, Daemon, HOTKEY};

const RULES: &str = r#"
[[replace]]
from = "thursday"
to = "Friday"

[[snippet]]
phrase = "my address"
text = "12 Main Street\nSpringfield"
"#;

#[test]
fn live_dictation_gets_replacements_and_snippets() {
    if !(tools_present() && speech::tools()) {
        return;
    }
    let clips = tempfile::tempdir().expect("tempdir");
    let meeting = speak(
        clips.path(),
        "meeting",
        "The meeting moved to Thursday morning.",
    );
    let address = speak(clips.path(), "address", "Send it to my address.");

    let _pulse = Pulse::start();
    let x = Xvfb::start();
    let term = Xterm::start_named(&x, "Dictum snippets", "Editor", "editor", "80x24+0+0");
    let dir = tempfile::tempdir().expect("tempdir");
    write_initial_config(dir.path());
    let config = dir.path().join("config.toml");
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str(RULES);
    std::fs::write(&config, text).expect("config");
    let mut d = Daemon::start(dir.path(), &x);

    let ev = dictate(&x, &mut d, HOTKEY, &meeting, 300);
    let meeting_id = ev["id"].as_i64().expect("row id");
    assert_eq!(ev["outcome"], "ok", "{ev}");
    let typed = ev["text"].as_str().unwrap_or_default().to_string();
    assert!(
        typed.contains("Friday") && !typed.to_lowercase().contains("thursday"),
        "{ev}"
    );
    let file = term.line(&x);
    assert_eq!(file, format!("{typed} \n"), "{ev}");

    let ev = dictate(&x, &mut d, HOTKEY, &address, 300);
    assert_eq!(ev["outcome"], "ok", "{ev}");
    let said = ev["text"].as_str().unwrap_or_default().to_string();
    assert!(said.contains("12 Main Street Springfield"), "{ev}");
    assert!(!said.contains('\n'), "{ev}");
    eprintln!("typed: {typed:?}, then {said:?}");
    // One line: the file gets it only at the Return the test presses.
    let file = term.line(&x);
    assert_eq!(file, format!("{typed} \n{said} \n"), "{ev}");

    let history =
        dictum_engine::store::History::open(&dir.path().join("history.sqlite3")).expect("history");
    let row = history.get(meeting_id).expect("read row").expect("row");
    assert_eq!(row.text.as_deref(), Some(typed.as_str()));
    assert!(
        row.raw_text
            .as_deref()
            .unwrap_or_default()
            .to_lowercase()
            .contains("thursday"),
        "{row:?}"
    );
}
