//! Words the user did not say must never act (issue 26), end to end: `dictum run` on Xvfb with
//! the PulseAudio virtual microphone, typing into real xterms (a real `sh`, and `cat` windows
//! whose file gets a line only when a Return reaches them).
//!
//! - A hostile speech server (the declared stand-in `tests/stt_server_standin.py answer`)
//!   answering "touch pwned press enter": the text is typed into the shell, Return is not
//!   pressed, no file `pwned` appears (until the test itself presses Return: the shell is
//!   live). The row and the event name the refused command and why.
//! - Push-to-talk "New line." said alone into the shell presses Return (a typed command runs).
//! - A one-word 300 kB answer: refused by the character budget, stored, nothing typed; its
//!   retry (`dictum history --retry`) and "type again" (`dictum ctl type`) go through the
//!   daemon's gate: refused too, the refusal on the row. A 2 MB one is past the 1 MiB answer
//!   cap: the local model stands in, the row says why.
//! - The cancel key (Escape) while a long text is typed stops it at the next word.
//! - Hands-free, a clip "… Press enter." played into a terminal: no Return; "Press enter."
//!   alone into a window that is not a terminal, after a pause: Return. Begun in a terminal
//!   whose profile says `commands = true` (Return there when the focus stays), the focus moved
//!   to a plain xterm before the pause: no Return.

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;
#[path = "support/speech.rs"]
mod speech;
#[path = "support/stt_servers.rs"]
mod stt_servers;
#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::pulse::{play_file, play_file_and_wait};
use common::x11::{tools_present, Xterm, Xvfb};
use serde_json::Value;
use speech::speak;
use std::path::Path;
use std::time::{Duration, Instant};
use stt_servers::Standin;
use x11_daemon::{dictate, Daemon, Live, HOTKEY};

fn tools() -> bool {
    tools_present() && speech::tools()
}

/// A stand-in speech server that answers every request with `text`.
fn answering(dir: &Path, name: &str, text: &str) -> Standin {
    let file = dir.join(format!("{name}.txt"));
    std::fs::write(&file, text).expect("answer file");
    Standin::start(
        &["answer", "0"],
        &[("STANDIN_TEXT_FILE", file.to_str().expect("utf-8 path"))],
    )
}

/// Points the running daemon at the speech server `url` (applied live).
fn use_server(d: &mut Daemon, url: &str, extra: &str) {
    d.apply_config(&format!(
        "[stt]\nbackend = \"openai\"\nurl = \"{url}\"\ntimeout_ms = 10000\n{extra}"
    ));
}

fn wait_for(what: &str, within: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("not within {within:?}: {what}");
    false
}

fn row(dir: &Path, ev: &Value) -> dictum_engine::store::Entry {
    let history =
        dictum_engine::store::History::open(&dir.join("history.sqlite3")).expect("history");
    history
        .get(ev["id"].as_i64().expect("row id"))
        .expect("read row")
        .expect("row")
}

/// One test function, its parts one after another: each starts its own live session, whose
/// PulseAudio address is in the process environment.
#[test]
fn words_the_user_did_not_say_never_act() {
    if !tools() {
        return;
    }
    push_to_talk_keys_act_only_when_the_user_clearly_meant_them();
    hands_free_keys_never_act_in_terminals_and_only_alone_elsewhere();
    hands_free_keys_go_by_the_window_of_delivery();
    a_renamed_terminal_is_a_terminal_and_invisible_text_is_not_typed();
    an_unknown_window_counts_as_a_terminal();
}

fn push_to_talk_keys_act_only_when_the_user_clearly_meant_them() {
    let clips = tempfile::tempdir().expect("tempdir");
    let hello = speak(clips.path(), "hello", "Hello there, this is a test.");
    let new_line = speak(clips.path(), "newline", "New line.");
    let long = speak(
        clips.path(),
        "long",
        "The quarterly report covers sales in every region, the new hires in the support \
         team, and the plans for the spring launch of the product. After the review we will \
         meet the customers in the north, write the summary for the board, and send the \
         slides to everyone who asked for them before the end of the month.",
    );

    let live = Live::start().expect("tools checked above");
    let (x, dir) = (&live.x, live.path());
    let work = tempfile::tempdir().expect("tempdir");
    let shell = Xterm::start_shell(x, "Dictum shell", None, "80x10+0+420", work.path());
    let mut d = live.daemon();

    // 1. Push-to-talk, local model: "New line." said alone into the shell presses Return,
    //    and the line the user typed runs.
    shell.point_at(x);
    x.xdotool(&["type", "touch byreturn"]);
    std::thread::sleep(Duration::from_millis(300));
    let mut ev = dictate(x, &mut d, HOTKEY, &new_line, 300);
    if ev["commands"] == serde_json::json!([]) && ev["text"] != "" {
        // whisper tiny now and then hears espeak's "New line." as "You line." (seen in CI in
        // live_wayland): typed as text, no command. The shell's line is typed again (the
        // terminal's kill character, Ctrl+U, clears it) and the clip said again, once. A
        // command heard but not acted on still fails.
        eprintln!(
            "new line was heard as {:?}: typed as text; saying it again",
            ev["text"]
        );
        std::thread::sleep(Duration::from_millis(500)); // the rest of its typing lands
        x.xdotool(&["key", "ctrl+u"]);
        x.xdotool(&["type", "touch byreturn"]);
        std::thread::sleep(Duration::from_millis(300));
        ev = dictate(x, &mut d, HOTKEY, &new_line, 300);
    }
    assert_eq!(ev["commands"], serde_json::json!(["new line"]), "{ev}");
    assert!(events::refused(&ev).is_empty(), "{ev}");
    assert!(
        wait_for("byreturn", Duration::from_secs(5), || work
            .path()
            .join("byreturn")
            .exists()),
        "Return reached the shell: {ev}"
    );
    // Nothing but the line the user typed ran (typed.txt: the terminal's own record).
    let mut made: Vec<_> = std::fs::read_dir(work.path())
        .expect("ls")
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .filter(|n| n != "typed.txt")
        .collect();
    made.sort();
    assert_eq!(made, ["byreturn"], "the shell ran the line as typed: {ev}");

    // 2. The cancel key while a long text is typed stops it at the next word (local model,
    //    a 20 s paragraph: ~300 characters, typed in about a second).
    let cat = Xterm::start_with(x, "Dictum cat", true);
    cat.point_at(x);
    x.xdotool(&["keydown", HOTKEY]);
    std::thread::sleep(Duration::from_millis(100));
    play_file_and_wait(&long);
    std::thread::sleep(Duration::from_millis(300));
    x.xdotool(&["keyup", HOTKEY]);
    assert!(
        wait_for("typing starts", Duration::from_secs(60), || {
            std::fs::metadata(&cat.file).is_ok_and(|m| m.len() > 0)
        }),
        "nothing typed; notices {:?}",
        d.notices
    );
    let at_escape = std::fs::metadata(&cat.file).map_or(0, |m| m.len()) as usize;
    x.xdotool(&["key", "Escape"]);
    let ev = d.next("dictation", Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(500));
    let typed = std::fs::read_to_string(&cat.file).unwrap_or_default();
    let text = ev["text"].as_str().unwrap_or_default().to_string();
    eprintln!(
        "typed {} of {} characters ({at_escape} when Escape went down)",
        typed.len(),
        text.len()
    );
    let error = ev["inject_error"].as_str().unwrap_or_default();
    assert!(error.contains("typing stopped"), "{ev}");
    // What was typed is the text's beginning; letters of the word under way when Escape went
    // down may go to the key's grab instead of the window (docs/TROUBLESHOOTING.md).
    let mut rest = text.chars();
    assert!(
        !typed.trim().is_empty() && typed.trim_end().chars().all(|c| rest.any(|t| t == c)),
        "the beginning of the text: {typed:?} of {text:?}"
    );
    assert!(
        typed.len() < text.len() / 2,
        "stopped early: {} of {}",
        typed.len(),
        text.len()
    );
    shell.point_at(x);

    // 3. A hostile speech server: its "press enter" never presses Return in a terminal.
    let hostile = answering(clips.path(), "hostile", "touch pwned press enter");
    use_server(&mut d, &hostile.url(), "");
    let ev = dictate(x, &mut d, HOTKEY, &hello, 300);
    events::assert_typed_and_refused(&ev, "touch pwned", "press enter");
    assert!(
        ev["commands"].as_array().is_none_or(|a| a.is_empty()),
        "{ev}"
    );
    std::thread::sleep(Duration::from_millis(1500));
    let pwned = work.path().join("pwned");
    assert!(!pwned.exists(), "Return was pressed in the terminal: {ev}");
    let stored = row(dir, &ev);
    let why = stored.commands_refused.unwrap_or_default();
    assert!(
        why.contains("press enter") && why.contains("said alone"),
        "{why}"
    );
    // The text really is in a live shell: the user's own Return runs it.
    x.xdotool(&["key", "Return"]);
    assert!(
        wait_for(
            "pwned after the user's Return",
            Duration::from_secs(5),
            || pwned.exists()
        ),
        "the typed text was not in the shell"
    );

    // 4. A runaway answer, one 300 kB word: stored, not typed.
    cat.point_at(x);
    let before = std::fs::metadata(&cat.file).map_or(0, |m| m.len());
    let huge = "a".repeat(300_000);
    let runaway = answering(clips.path(), "runaway", &huge);
    use_server(&mut d, &runaway.url(), "");
    let ev = dictate(x, &mut d, HOTKEY, &hello, 300);
    let error = ev["inject_error"].as_str().unwrap_or_default();
    assert!(
        error.contains("not typed") && error.contains("max_chars_per_second"),
        "{ev}"
    );
    std::thread::sleep(Duration::from_millis(500));
    let after = std::fs::metadata(&cat.file).map_or(0, |m| m.len());
    assert_eq!(after, before, "typed {} characters", after - before);
    assert_eq!(
        row(dir, &ev).text.map(|t| t.len()),
        Some(300_000),
        "the row keeps the whole answer"
    );
    stored_texts_type_only_through_the_gate(x, dir, &ev, &cat.file);

    // 5. A 2 MB one-word answer is past what any answer may be (1 MiB, read as a stream):
    //    not a transcript; the local model stands in and types what was said.
    let before = std::fs::metadata(&cat.file).map_or(0, |m| m.len());
    let two_mb = answering(clips.path(), "two-mb", &"a".repeat(2_000_000));
    use_server(&mut d, &two_mb.url(), "");
    let ev = dictate(x, &mut d, HOTKEY, &hello, 300);
    assert_eq!(ev["outcome"], "ok", "{ev}");
    let text = ev["text"].as_str().unwrap_or_default();
    assert!(!text.contains("aaaa"), "{ev}");
    std::thread::sleep(Duration::from_millis(500));
    let typed = std::fs::read(&cat.file).unwrap_or_default();
    let new = String::from_utf8_lossy(&typed[before as usize..]).to_string();
    assert!(
        !new.contains("aaaa") && new.len() < 200,
        "typed {} characters",
        new.len()
    );
    let stored = row(dir, &ev);
    assert_eq!(stored.stt_backend.as_deref(), Some("local"), "{ev}");
    assert!(
        stored
            .stt_fallback
            .as_deref()
            .is_some_and(|f| !f.is_empty()),
        "the row says why the server's answer was not used: {:?}",
        stored.stt_fallback
    );
}

/// Issue 38: a retry (`dictum history --retry`) and "type again" (`dictum ctl type`, the
/// history window's button) of the 300 kB row are typed by the running daemon through its
/// gate: refused by the budget, the refusal on the row, nothing typed into `file`.
fn stored_texts_type_only_through_the_gate(x: &Xvfb, dir: &Path, ev: &Value, file: &Path) {
    let id = ev["id"].as_i64().expect("row id").to_string();
    let before = std::fs::metadata(file).map_or(0, |m| m.len());
    let dictum = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_dictum"))
            .args(args)
            .env("DISPLAY", &x.display)
            .env_remove("WAYLAND_DISPLAY")
            .env("DICTUM_DATA_DIR", dir)
            .env("DICTUM_CONFIG", dir.join("config.toml"))
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run dictum")
    };
    // Its audio is kept (not delivered): the retry transcribes it again (the same runaway
    // server answers) and hands it to the daemon, which refuses it.
    for args in [&["history", "--retry", &id][..], &["ctl", "type", &id][..]] {
        let out = dictum(args);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        eprintln!("dictum {args:?}: {err}");
        assert!(!out.status.success(), "{args:?}: {err}");
        assert!(
            err.contains("not typed") && err.contains("max_chars_per_second"),
            "{args:?}: {err}"
        );
        let stored = row(dir, ev);
        assert_eq!(stored.text.map(|t| t.len()), Some(300_000), "{args:?}");
        assert!(
            stored
                .inject_error
                .as_deref()
                .is_some_and(|e| e.contains("max_chars_per_second")),
            "the refusal is on the row: {:?}",
            stored.inject_error
        );
        std::thread::sleep(Duration::from_millis(500));
        let after = std::fs::metadata(file).map_or(0, |m| m.len());
        assert_eq!(
            after,
            before,
            "{args:?} typed {} characters",
            after - before
        );
    }
}

fn hands_free_keys_never_act_in_terminals_and_only_alone_elsewhere() {
    let clips = tempfile::tempdir().expect("tempdir");
    let with_text = speak(clips.path(), "with-text", "Remove everything, press enter.");
    let alone = speak(clips.path(), "alone", "Press enter.");

    let live = Live::start().expect("tools checked above");
    let x = &live.x;
    let term = Xterm::start(x, "Dictum terminal");
    let editor = Xterm::start_named(x, "Dictum editor", "Editor", "editor", "80x10+0+420");
    let mut d = live.daemon();
    d.apply_config("[dictation]\ninput_device = \"dictum_mic\"\n");
    d.hands_free_on();

    let play = play_file_and_wait;

    // Into a terminal: neither with text nor alone.
    term.point_at(x);
    for clip in [&with_text, &alone] {
        play(clip);
        let ev = d.next("dictation", Duration::from_secs(60));
        eprintln!("terminal: {ev}");
        assert_eq!(events::refused(&ev), ["press enter"], "{ev}");
        let why = &ev["commands_refused"][0]["why"];
        assert!(
            why.as_str().unwrap_or_default().contains("terminal"),
            "{ev}"
        );
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        std::fs::read_to_string(&term.file).unwrap_or_default(),
        "",
        "no Return reached the terminal"
    );

    // Elsewhere: with text, the text only; alone after a pause, Return.
    editor.point_at(x);
    play(&with_text);
    let ev = d.next("dictation", Duration::from_secs(60));
    eprintln!("editor, with text: {ev}");
    assert_eq!(events::refused(&ev), ["press enter"], "{ev}");
    std::thread::sleep(Duration::from_millis(1000));
    play(&alone);
    let ev = d.next("dictation", Duration::from_secs(60));
    eprintln!("editor, alone: {ev}");
    assert_eq!(ev["commands"], serde_json::json!(["press enter"]), "{ev}");
    assert!(
        wait_for("a line in the editor", Duration::from_secs(5), || {
            std::fs::read_to_string(&editor.file).is_ok_and(|t| t.ends_with('\n'))
        }),
        "Return reached the window"
    );
    let line = std::fs::read_to_string(&editor.file).unwrap_or_default();
    assert!(
        line.to_lowercase().contains("remove everything"),
        "{line:?}"
    );
    assert_eq!(line.matches('\n').count(), 1, "one Return only: {line:?}");
    d.send("hands-free off");
}

/// Issue 38: hands-free, "Press enter." said alone into a terminal whose class-matched
/// profile says `commands = true` presses Return there; the same speech begun there with the
/// focus moved to a plain xterm before the pause presses none (the profile that decides is the
/// one of the window at delivery, and a window other than the one at the start gets no keys).
fn hands_free_keys_go_by_the_window_of_delivery() {
    let clips = tempfile::tempdir().expect("tempdir");
    let alone = speak(clips.path(), "alone", "Press enter.");
    let live = Live::start().expect("tools checked above");
    let (x, dir) = (&live.x, live.path());
    let keys = Xterm::start_named(x, "Dictum keys", "Keysterm", "keysterm", "80x10+0+420");
    let term = Xterm::start(x, "Dictum terminal");
    let mut d = live.daemon();
    d.apply_config(
        "[dictation]\ninput_device = \"dictum_mic\"\n\n[[profile]]\nname = \"keys\"\n\
         match_class = \"^keysterm$\"\ncommands = true\n",
    );
    d.hands_free_on();
    let play = |moved: Option<&Xterm>| {
        let mut child = play_file(&alone);
        if let Some(to) = moved {
            // The dictation opens at the speech (200 ms of it); the pause ends it later.
            std::thread::sleep(Duration::from_millis(700));
            to.point_at(x);
        }
        assert!(child.wait().expect("paplay").success());
    };

    // Said alone into the window whose profile turns commands on: Return.
    keys.point_at(x);
    std::thread::sleep(Duration::from_millis(500));
    play(None);
    let ev = d.next("dictation", Duration::from_secs(60));
    eprintln!("commands = true, alone: {ev}");
    assert_eq!(ev["commands"], serde_json::json!(["press enter"]), "{ev}");
    assert!(
        wait_for("a line in the keys window", Duration::from_secs(5), || {
            std::fs::read_to_string(&keys.file).is_ok_and(|t| t.contains('\n'))
        }),
        "Return reached the window whose profile allows keys"
    );

    // Begun there, the focus moved to a plain xterm before the pause: no Return anywhere.
    keys.point_at(x);
    std::thread::sleep(Duration::from_millis(1000));
    play(Some(&term));
    let ev = d.next("dictation", Duration::from_secs(60));
    eprintln!("commands = true, focus moved: {ev}");
    assert_eq!(
        row(dir, &ev).app_class.as_deref(),
        Some("Keysterm"),
        "the speech began in the keys window: {ev}"
    );
    assert_eq!(events::refused(&ev), ["press enter"], "{ev}");
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        !std::fs::read_to_string(&term.file)
            .unwrap_or_default()
            .contains('\n'),
        "no Return reached the xterm: {ev}"
    );
    let lines = std::fs::read_to_string(&keys.file).unwrap_or_default();
    assert_eq!(
        lines.matches('\n').count(),
        1,
        "none in the keys window: {lines:?}"
    );
    d.send("hands-free off");
}

/// Issue 38: the gate judges a window by its process, not its name. An xterm renamed by
/// both `-name` and `-class` (matching nothing on `[inject] terminal_classes`) running a
/// real shell: the hostile server's "touch pwned press enter" types the text, presses no
/// Return, and no file appears. Then a server answer full of invisible characters and a
/// full-width "ｐｒｅｓｓ ｅｎｔｅｒ" into a window that is no terminal (the `editor` profile says
/// `terminal = false`): the typed bytes and the row are clean, the look-alike is text.
fn a_renamed_terminal_is_a_terminal_and_invisible_text_is_not_typed() {
    let clips = tempfile::tempdir().expect("tempdir");
    let hello = speak(clips.path(), "hello", "Hello there, this is a test.");
    let live = Live::start().expect("tools checked above");
    let (x, dir) = (&live.x, live.path());
    let work = tempfile::tempdir().expect("tempdir");
    let shell = Xterm::start_shell(
        x,
        "Dictum notes",
        Some(("Notes", "notes")),
        "80x10+0+420",
        work.path(),
    );
    let mut d = live.daemon();

    shell.point_at(x);
    let hostile = answering(clips.path(), "hostile", "touch pwned press enter");
    use_server(&mut d, &hostile.url(), "");
    let ev = dictate(x, &mut d, HOTKEY, &hello, 300);
    eprintln!("renamed xterm: {ev}");
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert_eq!(
        row(dir, &ev).app_class.as_deref(),
        Some("Notes"),
        "the window is the renamed one: {ev}"
    );
    assert_eq!(events::refused(&ev), ["press enter"], "{ev}");
    std::thread::sleep(Duration::from_millis(1500));
    let pwned = work.path().join("pwned");
    assert!(
        !pwned.exists(),
        "Return was pressed in the renamed terminal: {ev}"
    );
    x.xdotool(&["key", "Return"]);
    assert!(
        wait_for(
            "pwned after the user's Return",
            Duration::from_secs(5),
            || { pwned.exists() }
        ),
        "the typed text was not in the shell"
    );

    // Invisible characters and a look-alike command, into a window that is no terminal.
    let editor = Xterm::start_named(x, "Dictum editor", "Editor", "editor", "80x10+0+0");
    editor.point_at(x);
    let hidden = "Hello\u{200B} wor\u{2060}ld \u{200E}ok\u{200F}\u{FEFF} fine\u{E0041}\u{E007F} \
                  ｐｒｅｓｓ ｅｎｔｅｒ";
    let sneaky = answering(clips.path(), "sneaky", hidden);
    use_server(&mut d, &sneaky.url(), "");
    let ev = dictate(x, &mut d, HOTKEY, &hello, 300);
    eprintln!("invisible: {ev}");
    let text = ev["text"].as_str().unwrap_or_default().to_string();
    assert_eq!(text, "Hello world ok fine ｐｒｅｓｓ ｅｎｔｅｒ", "{ev}");
    assert!(
        ev["commands"].as_array().is_none_or(|a| a.is_empty()) && events::refused(&ev).is_empty(),
        "a look-alike is no command: {ev}"
    );
    assert_eq!(row(dir, &ev).text.as_deref(), Some(text.as_str()));
    // `cat` in a cooked terminal writes a line only at a Return: an empty file now means
    // none was pressed; the test's own Return then shows the bytes that were typed.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        std::fs::read_to_string(&editor.file).unwrap_or_default(),
        "",
        "no Return was pressed"
    );
    let typed = editor.line(x);
    assert_eq!(
        typed, "Hello world ok fine ｐｒｅｓｓ ｅｎｔｅｒ \n",
        "the typed bytes are clean: {typed:?}"
    );
}

/// Issue 38: where the focused window cannot be known (GNOME and KDE Wayland; here the
/// test hook `DICTUM_FAULT=focus_unknown@*` hides it on X11), every window counts as a
/// terminal: the server's "touch pwned press enter" presses no Return; hands-free "Press
/// enter." alone after a pause presses none; push-to-talk "Press enter." said alone does.
fn an_unknown_window_counts_as_a_terminal() {
    let clips = tempfile::tempdir().expect("tempdir");
    let hello = speak(clips.path(), "hello", "Hello there, this is a test.");
    let alone = speak(clips.path(), "alone", "Press enter.");
    let live = Live::start().expect("tools checked above");
    let (x, dir) = (&live.x, live.path());
    let work = tempfile::tempdir().expect("tempdir");
    let shell = Xterm::start_shell(x, "Dictum shell", None, "80x10+0+420", work.path());
    let editor = Xterm::start_named(x, "Dictum editor", "Editor", "editor", "80x10+0+0");
    std::env::set_var("DICTUM_FAULT", "focus_unknown@*");
    let mut d = live.daemon();
    std::env::remove_var("DICTUM_FAULT");

    // 1. The hostile server: no Return, no file.
    shell.point_at(x);
    let hostile = answering(clips.path(), "hostile", "touch pwned press enter");
    use_server(&mut d, &hostile.url(), "");
    let ev = dictate(x, &mut d, HOTKEY, &hello, 300);
    eprintln!("unknown window, server: {ev}");
    assert_eq!(row(dir, &ev).app_class, None, "the window is unknown: {ev}");
    assert_eq!(events::refused(&ev), ["press enter"], "{ev}");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        !work.path().join("pwned").exists(),
        "Return was pressed: {ev}"
    );
    x.xdotool(&["key", "ctrl+u"]);

    // 2. Push-to-talk, local model, "Press enter." said alone: Return.
    d.apply_config("[dictation]\ninput_device = \"dictum_mic\"\n");
    x.xdotool(&["type", "touch byreturn"]);
    std::thread::sleep(Duration::from_millis(300));
    let ev = dictate(x, &mut d, HOTKEY, &alone, 300);
    eprintln!("unknown window, push-to-talk alone: {ev}");
    assert_eq!(ev["commands"], serde_json::json!(["press enter"]), "{ev}");
    assert!(
        wait_for("byreturn", Duration::from_secs(5), || work
            .path()
            .join("byreturn")
            .exists()),
        "Return reached the shell: {ev}"
    );

    // 3. Hands-free, "Press enter." alone after a pause, into the editor: no Return (the
    //    window cannot be known, so its profile cannot say it is no terminal).
    editor.point_at(x);
    d.hands_free_on();
    std::thread::sleep(Duration::from_millis(1000));
    play_file_and_wait(&alone);
    let ev = d.next("dictation", Duration::from_secs(60));
    eprintln!("unknown window, hands-free alone: {ev}");
    assert_eq!(events::refused(&ev), ["press enter"], "{ev}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !std::fs::read_to_string(&editor.file)
            .unwrap_or_default()
            .contains('\n'),
        "no Return reached the window"
    );
    d.send("hands-free off");
}
