//! End to end on a Wayland desktop, as a user of one would run Dictum: a real headless sway
//! with XWayland (`tests/common/sway.rs`: compositor and clients run as an
//! unprivileged user when the test runs as root), a real sound server (a private PulseAudio
//! whose virtual microphone is fed by `paplay`), `dictum run --json` in the session's
//! environment (WAYLAND_DISPLAY and DISPLAY both set, XDG_SESSION_TYPE=wayland,
//! XDG_CURRENT_DESKTOP=sway), and the words read back from the terminals' input:
//!
//! | window             | driven by                                           | method |
//! |--------------------|-----------------------------------------------------|--------|
//! | foot (native)      | `dictum ctl press` / `release`                      | type   |
//! | foot               | the sway binding `dictum shortcut install` wrote, the chord held on the session's keyboard (a virtual keyboard with the full US keymap) | type |
//! | xterm (XWayland)   | `dictum ctl`                                        | type   |
//! | xterm              | the sway binding                                    | type   |
//! | foot, xterm        | `dictum ctl`                                        | paste, clipboard restored, a Wayland paste's row says it is unconfirmed |
//!
//! Every case must deliver exactly the dictation event's text plus the trailing space. All
//! cases run and are reported before the test fails, with the latency seen from outside the
//! daemon (release → first byte in the terminal's file, chars/s) beside the daemon's own
//! `release_to_text_ms` / `release_to_typed_ms`. `DICTUM_LIVE_WAYLAND_RUNS=N` repeats each
//! case N times (default 1); `DICTUM_LIVE_WAYLAND_OUT=FILE` writes the table there;
//! `DICTUM_BIN=PATH` runs another dictum build (e.g. the release one).
//!
//! Skipped only when the tools are missing and `DICTUM_REQUIRE_E2E` is unset (`scripts/test`
//! sets it and installs them: `ensure_wayland_deps`).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;
#[path = "support/speech.rs"]
mod speech;
#[path = "support/sway_daemon.rs"]
mod sway_daemon;
use common::pulse::Pulse;
use common::sway::{keys, tools_present, Keyboard, Session, Terminal};
use events::RunningDaemon as Daemon;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

const HOTKEY: &str = "ctrl+alt+space";
const CLIPBOARD_BEFORE: &str = "what was on the clipboard";
/// HOTKEY on the keyboard.
const CHORD: [u32; 3] = [keys::LEFTCTRL, keys::LEFTALT, keys::SPACE];

fn write_config(s: &Session, model: &Path, extra: &str) {
    sway_daemon::write_config(
        s,
        &format!(
            "[stt]\nmodel = \"{}\"\nthreads = 2\n\n[dictation]\nhotkey = \"{HOTKEY}\"\n\n[inject]\nnotify_on_failure = false\n{extra}",
            model.display()
        ),
    );
}

#[derive(Clone, Copy, PartialEq)]
enum Drive {
    Ctl,
    Binding,
}

impl Drive {
    fn name(self) -> &'static str {
        match self {
            Drive::Ctl => "dictum ctl",
            Drive::Binding => "sway binding",
        }
    }
}

/// One dictation while `term` has the focus; returns the row of the results table.
#[allow(clippy::too_many_arguments)]
fn case(
    s: &Session,
    kb: &mut Keyboard,
    d: &mut Daemon,
    exe: &Path,
    term: &Terminal,
    drive: Drive,
    method: &str,
    clip: &str,
) -> Result<String, String> {
    s.focus(&term.criteria, &term.id);
    if method == "paste" {
        s.set_clipboard(CLIPBOARD_BEFORE);
    }
    let before = term.len();
    let tail = Duration::from_millis(400);
    let released = match drive {
        Drive::Ctl => {
            let ctl = |word: &str| sway_daemon::ctl(s, exe, word);
            ctl("press");
            std::thread::sleep(Duration::from_millis(100));
            common::pulse::play_and_wait(clip);
            std::thread::sleep(tail);
            ctl("release");
            Instant::now()
        }
        Drive::Binding => {
            kb.down(&CHORD);
            std::thread::sleep(Duration::from_millis(100));
            common::pulse::play_and_wait(clip);
            std::thread::sleep(tail);
            // The key first, as people do: the release binding fires on it.
            kb.up(&[keys::SPACE, keys::LEFTALT, keys::LEFTCTRL]);
            Instant::now()
        }
    };
    let ev = d.try_next("dictation", Duration::from_secs(60))?;
    let text = ev["text"].as_str().unwrap_or_default();
    if ev["outcome"] != "ok" || text.is_empty() {
        return Err(format!("no text: {ev}"));
    }
    let expect = format!("{text} ");
    let got = term.wait_for(before, before + expect.len() as u64, Duration::from_secs(5));
    // Anything more (a late duplicate) shows up by now.
    std::thread::sleep(Duration::from_millis(200));
    let got_all = term.wait_for(before, u64::MAX, Duration::ZERO);
    if got != expect || got_all != expect {
        return Err(format!(
            "{} received {got_all:?}, expected {expect:?}; inject_method {}, inject_error {}",
            term.id, ev["inject_method"], ev["inject_error"]
        ));
    }
    if method == "paste" {
        // XWayland's xterm may take the X11 paste (its fetch is seen); a Wayland paste's row
        // says it is unconfirmed, and nothing else.
        let expected = match ev["inject_method"].as_str() {
            Some("x11_paste") => Value::Null,
            _ => Value::from(dictum_engine::inject::PASTE_UNCONFIRMED),
        };
        if ev["inject_error"] != expected {
            return Err(format!(
                "inject_error {}, expected {expected}; {ev}",
                ev["inject_error"]
            ));
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut clip_now = s.clipboard();
        while clip_now.as_deref() != Some(CLIPBOARD_BEFORE) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            clip_now = s.clipboard();
        }
        if clip_now.as_deref() != Some(CLIPBOARD_BEFORE) {
            return Err(format!(
                "the clipboard was not restored after the paste: {clip_now:?}; {ev}"
            ));
        }
    }
    let (first, last, len) = term
        .growth_since(before)
        .ok_or("the watcher saw no growth")?;
    let chars = text.chars().count() + 1;
    let first_ms = first.saturating_duration_since(released).as_secs_f64() * 1000.0;
    let span = last.saturating_duration_since(first).as_secs_f64();
    let rate = if span > 0.0 && len > before {
        format!("{:.0}", (chars.saturating_sub(1)) as f64 / span)
    } else {
        "one write".to_string()
    };
    let f = |k: &str| ev[k].as_f64().map_or("-".into(), |v| format!("{v:.0}"));
    Ok(format!(
        "| {} | {} | {method} | {} | {chars} | {first_ms:.0} | {rate} | {} | {} | {} | {} |",
        term.id,
        drive.name(),
        ev["inject_method"].as_str().unwrap_or("-"),
        f("release_to_text_ms"),
        f("release_to_typed_ms"),
        f("tail_stt_ms"),
        ev["chunks"],
    ))
}

/// Dictates `clip` (a path) into `term` with `dictum ctl`; returns the event and the bytes the
/// terminal got (waiting until `expect_len(text)` bytes arrived, or 5 s).
fn ctl_dictate(
    s: &Session,
    d: &mut Daemon,
    exe: &Path,
    term: &Terminal,
    clip: &Path,
    expect_len: impl Fn(&str) -> usize,
) -> Result<(Value, String), String> {
    s.focus(&term.criteria, &term.id);
    let before = term.len();
    let ctl = |word: &str| sway_daemon::ctl(s, exe, word);
    ctl("press");
    std::thread::sleep(Duration::from_millis(100));
    common::pulse::play_and_wait(&clip.display().to_string());
    std::thread::sleep(Duration::from_millis(300));
    ctl("release");
    let ev = d.try_next("dictation", Duration::from_secs(60))?;
    let n = expect_len(ev["text"].as_str().unwrap_or_default()) as u64;
    let got = term.wait_for(before, before + n, Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(200));
    Ok((ev, got))
}

/// Voice commands on the native Wayland path (the virtual keyboard): "New line." said alone
/// presses Return in the terminal (with text before it, it would only be typed: issue 26);
/// "Delete that." sends one BackSpace per character of the previous dictation (the terminal is
/// raw, so each reaches the file as DEL).
fn commands_case(
    s: &Session,
    d: &mut Daemon,
    exe: &Path,
    foot: &Terminal,
) -> Result<String, String> {
    let dir = s.dir.path().join("clips");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let newline = speech::speak(&dir, "newline", "New line.");
    let sentence = speech::speak(&dir, "sentence", "The meeting moved to Thursday morning.");
    let delete = speech::speak(&dir, "delete", "Delete that.");
    let (ev, got) = ctl_dictate(s, d, exe, foot, &sentence, |t| t.len() + 1)?;
    let text = ev["text"].as_str().unwrap_or_default();
    if got != format!("{text} ") {
        return Err(format!("first sentence: got {got:?}; {ev}"));
    }
    // whisper tiny now and then hears espeak's "New line." as "You line." (seen once in a cold
    // CI run: capture timing shifts the frames): a command clip whose words were not a command
    // is typed as text and said again, once. A command that was heard but did the wrong thing
    // fails at once.
    let (mut ev, mut got) = ctl_dictate(s, d, exe, foot, &newline, |_| 1)?;
    if ev["commands"] == serde_json::json!([]) && ev["text"] != "" {
        eprintln!(
            "new line was heard as {:?}: typed as text; saying it again",
            ev["text"]
        );
        std::thread::sleep(Duration::from_secs(1)); // the rest of its typing lands first
        (ev, got) = ctl_dictate(s, d, exe, foot, &newline, |_| 1)?;
    }
    if ev["commands"] != serde_json::json!(["new line"]) || got != "\n" {
        return Err(format!("new line: got {got:?}; {ev}"));
    }
    let (ev, got) = ctl_dictate(s, d, exe, foot, &sentence, |t| t.len() + 1)?;
    let typed = ev["text"].as_str().unwrap_or_default().to_string();
    if got != format!("{typed} ") {
        return Err(format!("sentence: got {got:?}; {ev}"));
    }
    let mut erase = typed.chars().count() + 1;
    let (mut ev, mut got) = ctl_dictate(s, d, exe, foot, &delete, |_| erase)?;
    if ev["commands"] == serde_json::json!([]) && ev["text"] != "" {
        // Misheard and typed: now that text is the dictation "delete that" erases.
        eprintln!(
            "delete that was heard as {:?}: typed as text; saying it again",
            ev["text"]
        );
        erase = ev["text"].as_str().unwrap_or_default().chars().count() + 1;
        std::thread::sleep(Duration::from_secs(1));
        (ev, got) = ctl_dictate(s, d, exe, foot, &delete, |_| erase)?;
    }
    if ev["commands"] != serde_json::json!(["scratch that"]) || got != "\u{7f}".repeat(erase) {
        return Err(format!(
            "delete that: got {got:?} ({} bytes), expected {erase} DEL; {ev}",
            got.len()
        ));
    }
    Ok(format!(
        "| foot | virtual keyboard | new line → \\n, delete that → {erase} × BackSpace |"
    ))
}

#[test]
fn dictation_reaches_native_and_xwayland_windows_on_sway() {
    if !tools_present() {
        return;
    }
    let runs: usize = std::env::var("DICTUM_LIVE_WAYLAND_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let pulse = Pulse::start();
    // The session runs as another user: it reaches the private PulseAudio through its socket.
    pulse.share();
    let s = Session::start("");
    let (exe, model) = sway_daemon::prepare(&s);
    write_config(&s, &model, "");
    // The user's keyboard, there before any window (as on a desktop).
    let mut kb = Keyboard::connect(&s);
    let xterm = Terminal::xterm(&s, "Dictum xterm target");
    let foot = Terminal::foot(&s, "Dictum foot target");

    // The sway binding, as a user installs it: into the session user's own sway config.
    let sway_config = s.home.join(".config/sway/config");
    let original = std::fs::read_to_string(&sway_config).expect("sway config");
    let out = s.command(&exe).args(["shortcut", "install"]).output();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!(
        "dictum shortcut install:\n{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "dictum shortcut install failed");
    assert!(said.contains("reloaded sway"), "{said}");
    let own = s.home.join(".config/sway/config.d/dictum.conf");
    let own_text = std::fs::read_to_string(&own).expect("dictum.conf written");
    assert!(
        own_text.contains(&format!(
            "bindsym --release Ctrl+Mod1+space exec {} ctl release",
            exe.canonicalize().expect("exe").display()
        )),
        "{own_text}"
    );
    let with_include = std::fs::read_to_string(&sway_config).expect("sway config");
    assert!(with_include.starts_with(&original));
    let again = s.command(&exe).args(["shortcut", "install"]).output();
    assert!(again.status.success());
    assert!(
        !String::from_utf8_lossy(&again.stdout).contains("reloaded"),
        "second install changed something: {}",
        String::from_utf8_lossy(&again.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(&sway_config).expect("sway config"),
        with_include
    );

    let mut d = sway_daemon::start(&s, &exe);
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let mut run = |d: &mut Daemon, term: &Terminal, drive: Drive, method: &str, clip: &str| {
        for _ in 0..runs {
            match case(&s, &mut kb, d, &exe, term, drive, method, clip) {
                Ok(row) => {
                    eprintln!("{row}");
                    rows.push(row);
                }
                Err(e) => {
                    let msg = format!("{} via {} ({method}): {e}", term.id, drive.name());
                    eprintln!("FAILED: {msg}");
                    failures.push(msg);
                    // Let a late delivery land before the next case.
                    std::thread::sleep(Duration::from_millis(500));
                }
            }
        }
    };
    run(&mut d, &foot, Drive::Ctl, "type", "jfk.wav");
    run(&mut d, &foot, Drive::Binding, "type", "jfk.wav");
    run(&mut d, &xterm, Drive::Ctl, "type", "jfk.wav");
    run(&mut d, &xterm, Drive::Binding, "type", "jfk.wav");
    let commands = speech::tools().then(|| commands_case(&s, &mut d, &exe, &foot));

    d.notices.clear();
    write_config(&s, &model, "method = \"paste\"\n");
    d.wait_notice("config applied");
    run(&mut d, &foot, Drive::Ctl, "paste", "jfk.wav");
    run(&mut d, &xterm, Drive::Ctl, "paste", "jfk.wav");
    run(&mut d, &foot, Drive::Binding, "paste", "goforward.wav");
    match commands {
        Some(Ok(row)) => eprintln!("{row}"),
        Some(Err(e)) => {
            eprintln!("FAILED: voice commands in foot: {e}");
            failures.push(format!("voice commands in foot: {e}"));
        }
        None => {}
    }

    // `dictum shortcut remove` puts the sway config back; the chord then does nothing.
    let out = s.command(&exe).args(["shortcut", "remove"]).output();
    eprintln!(
        "dictum shortcut remove:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(&sway_config).expect("sway config"),
        original
    );
    assert!(!own.exists());
    kb.down(&CHORD);
    std::thread::sleep(Duration::from_millis(600));
    kb.up(&[keys::SPACE, keys::LEFTALT, keys::LEFTCTRL]);
    if let Err(e) = d.try_no_dictation(Duration::from_millis(1500)) {
        failures.push(format!(
            "the chord still dictates after `dictum shortcut remove`: {e}"
        ));
    }
    drop(d);

    let table = format!(
        "| window | driven by | method | inject_method | chars | release→first char (ms, outside) | chars/s (outside) | release_to_text_ms | release_to_typed_ms | tail_stt_ms | chunks |\n|---|---|---|---|---|---|---|---|---|---|---|\n{}\n",
        rows.join("\n")
    );
    eprintln!("\n{table}");
    if let Ok(p) = std::env::var("DICTUM_LIVE_WAYLAND_OUT") {
        std::fs::write(&p, &table).expect("write table");
    }
    assert!(
        failures.is_empty(),
        "{} of the cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
