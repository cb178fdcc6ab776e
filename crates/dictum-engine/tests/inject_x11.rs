//! Injection into a real X server: each test starts its own `Xvfb` (no window manager) and an
//! `xterm` running `cat > FILE`, injects text with the real [`Injector`] (enigo over XTest,
//! arboard, x11rb) and reads back what the terminal received. `xdotool` moves the pointer,
//! holds keys and presses Return; `xclip` plays another application owning the clipboard.
//!
//! The tests skip only when Xvfb/xterm/xdotool/xclip are missing AND `DICTUM_REQUIRE_E2E` is
//! unset (`scripts/test` sets it and installs them). They run one at a time (a lock): the
//! clipboard library reads `DISPLAY` from the process environment, so each test points it at
//! its own server while holding the lock.
//!
//! Numbers: `cargo test -p dictum-engine --test inject_x11 -- --nocapture measure`.

mod common;

use common::x11::{gtk4_present, tools_present, ClipboardOwner, Xterm, Xvfb, LOCK};
use dictum_engine::inject::{
    Delivery, InjectConfig, InjectMethod, InjectReport, Injector, TypePath,
};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn config(method: InjectMethod) -> InjectConfig {
    InjectConfig {
        method,
        notify_on_failure: false,
        ..InjectConfig::default()
    }
}

fn assert_delivered(r: &InjectReport, method: Delivery) {
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(r.method, Some(method), "{r:?}");
}

#[test]
fn types_ascii_and_unicode_into_xterm() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum typing");
    let mut inj = Injector::new(&config(InjectMethod::Type)).expect("injector");

    let r = inj.inject("Hello world, this is Dictum.");
    assert_delivered(&r, Delivery::Typed(TypePath::X11));
    assert_eq!(r.chars, 29, "trailing space counted");
    assert_eq!(term.line(&x), "Hello world, this is Dictum. \n");

    let unicode = "Grüße, naïve café — 10 € ✓";
    let r = inj.inject(unicode);
    assert_delivered(&r, Delivery::Typed(TypePath::X11));
    assert_eq!(r.app_class.as_deref(), Some("XTerm"));
    assert_eq!(
        term.line(&x),
        format!("Hello world, this is Dictum. \n{unicode} \n")
    );
    eprintln!(
        "typed {} chars in {:.1} ms ({:.0} chars/s)",
        r.chars,
        r.inject_ms,
        r.chars_per_s()
    );
}

/// The daemon creates the injector at start-up and hands it to an "injector" thread.
#[test]
fn injector_moves_to_its_own_thread() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum thread");
    let mut inj = Injector::new(&config(InjectMethod::Paste)).expect("injector");
    let worker = std::thread::Builder::new()
        .name("injector".into())
        .spawn(move || {
            let first = inj.inject("from the injector thread");
            // Let xterm fetch the selection before the next paste replaces it.
            std::thread::sleep(Duration::from_millis(300));
            (first, inj)
        })
        .expect("spawn");
    let (r, inj) = worker.join().expect("injector thread");
    assert_delivered(&r, Delivery::Pasted(TypePath::X11));
    assert_eq!(term.line(&x), "from the injector thread \n");
    drop(inj);
}

#[test]
fn caps_lock_does_not_change_the_case_and_stays_on() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum caps");
    let mut inj = Injector::new(&config(InjectMethod::Type)).expect("injector");
    x.xdotool(&["key", "Caps_Lock"]);
    let r = inj.inject("Hello World, énorme");
    assert_delivered(&r, Delivery::Typed(TypePath::X11));
    assert_eq!(r.warning, None);
    // Caps Lock is on again afterwards: xdotool's lowercase letters come out in capitals.
    x.xdotool(&["type", "abc"]);
    assert_eq!(term.line(&x), "Hello World, énorme ABC\n");
}

#[test]
fn focused_window_is_the_xterm_by_pointer_and_by_focus() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let _term = Xterm::start(&x, "Dictum window title");
    let mut inj = Injector::new(&config(InjectMethod::Type)).expect("injector");

    // PointerRoot focus: the window under the pointer.
    let w = inj.focused_window();
    assert_eq!(w.class.as_deref(), Some("XTerm"), "{w:?}");
    assert_eq!(w.instance.as_deref(), Some("xterm"), "{w:?}");
    assert_eq!(w.title.as_deref(), Some("Dictum window title"), "{w:?}");

    // Pointer elsewhere: nothing under it.
    x.xdotool(&["mousemove", "--sync", "1200", "780"]);
    let w = inj.focused_window();
    assert_eq!(w.class, None, "{w:?}");

    // Explicit input focus on the xterm, pointer still elsewhere.
    let id = x.xdotool(&["search", "--name", "^Dictum window title$"]);
    let id = id.lines().next().expect("a window id").to_string();
    x.xdotool(&["windowfocus", "--sync", &id]);
    let w = inj.focused_window();
    assert_eq!(w.class.as_deref(), Some("XTerm"), "{w:?}");
    assert_eq!(w.title.as_deref(), Some("Dictum window title"), "{w:?}");
    assert_eq!(w.id.map(|i| i.to_string()), Some(id.clone()));

    // Focus on xterm's inner (VT100) window, which has no WM_CLASS: walk up to the client.
    let tree = Command::new("xwininfo")
        .args(["-id", &id, "-children"])
        .env("DISPLAY", &x.display)
        .output()
        .expect("xwininfo");
    let tree = String::from_utf8_lossy(&tree.stdout);
    let child = tree
        .lines()
        .skip_while(|l| !l.contains("child"))
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .expect("xterm has an inner window")
        .to_string();
    x.xdotool(&["windowfocus", "--sync", &child]);
    let w = inj.focused_window();
    assert_eq!(
        w.class.as_deref(),
        Some("XTerm"),
        "{w:?} (focus on {child})"
    );
    assert_eq!(w.id.map(|i| i.to_string()), Some(id.clone()));

    // A window manager's _NET_ACTIVE_WINDOW wins over the input focus. Focus goes back to
    // PointerRoot over empty root, and the property names the xterm.
    x.xdotool(&["windowfocus", "--sync", &root_id(&x)]);
    assert_eq!(inj.focused_window().class, None);
    let status = Command::new("xprop")
        .args(["-root", "-f", "_NET_ACTIVE_WINDOW", "32x"])
        .args(["-set", "_NET_ACTIVE_WINDOW", &id])
        .env("DISPLAY", &x.display)
        .status()
        .expect("xprop");
    assert!(status.success());
    let w = inj.focused_window();
    assert_eq!(w.class.as_deref(), Some("XTerm"), "{w:?}");
    assert_eq!(w.title.as_deref(), Some("Dictum window title"), "{w:?}");
}

fn root_id(x: &Xvfb) -> String {
    let out = Command::new("xwininfo")
        .arg("-root")
        .env("DISPLAY", &x.display)
        .output()
        .expect("xwininfo -root");
    let text = String::from_utf8_lossy(&out.stdout);
    let hex = text
        .split_whitespace()
        .find(|w| w.starts_with("0x"))
        .expect("root window id");
    u32::from_str_radix(hex.trim_start_matches("0x"), 16)
        .expect("hex id")
        .to_string()
}

#[test]
fn pastes_with_ctrl_shift_v_and_restores_the_clipboard() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum paste");
    let mut inj = Injector::new(&config(InjectMethod::Paste)).expect("injector");

    // Empty clipboard before: the dictated text stays on it.
    assert_eq!(x.clipboard(), None);
    let r = inj.inject("first paste");
    assert_delivered(&r, Delivery::Pasted(TypePath::X11));
    // Nothing to restore, so inject returned right after the chord; xterm fetches the text
    // asynchronously, and a Return pressed before it arrives would end the line first.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(term.line(&x), "first paste \n");
    assert_eq!(x.clipboard().as_deref(), Some("first paste "));

    // Another application owns the clipboard: its text comes back after the paste.
    x.set_clipboard_elsewhere("the user's clipboard ✓");
    let text = "Grüße — pasted, not typed";
    let r = inj.inject(text);
    assert_delivered(&r, Delivery::Pasted(TypePath::X11));
    assert_eq!(r.app_class.as_deref(), Some("XTerm"));
    assert_eq!(term.line(&x), format!("first paste \n{text} \n"));
    assert_eq!(x.clipboard().as_deref(), Some("the user's clipboard ✓"));
    assert_eq!(r.warning, None);
    eprintln!(
        "paste: {:.1} ms until Ctrl+Shift+V, {:.1} ms with the fetch and the restore",
        r.inject_ms, r.total_ms
    );
}

/// Paste mode keeps every format: an image and HTML copied together (GTK 4, as a browser
/// copies) come back byte for byte after the paste, served by Dictum (the HTML, over a
/// quarter MiB, by INCR both ways), and again after a second paste.
#[test]
fn paste_keeps_an_image_and_html_on_the_clipboard() {
    if !tools_present() || !gtk4_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum paste formats");
    let owner = ClipboardOwner::start(&x, 40, 600);
    assert!(owner.html.len() > 256 << 10, "large enough for INCR");
    assert_eq!(x.clipboard_target("text/html"), Some(owner.html.clone()));
    let mut inj = Injector::new(&config(InjectMethod::Paste)).expect("injector");

    let r = inj.inject("keep my image");
    assert_delivered(&r, Delivery::Pasted(TypePath::X11));
    assert_eq!(r.warning, None, "{r:?}");
    assert_eq!(term.line(&x), "keep my image \n");
    let png = x.clipboard_target("image/png");
    assert!(
        png == Some(owner.png.clone()),
        "image/png not kept byte for byte"
    );
    let html = x.clipboard_target("text/html");
    assert!(
        html == Some(owner.html.clone()),
        "text/html not kept byte for byte"
    );
    eprintln!(
        "paste with {} KiB kept: {:.1} ms until the chord, {:.1} ms with the fetch and the restore",
        (owner.png.len() + owner.html.len()) >> 10,
        r.inject_ms,
        r.total_ms
    );

    // The owner is gone: Dictum serves the saved formats, and keeps them again.
    drop(owner);
    let r = inj.inject("and again");
    assert_delivered(&r, Delivery::Pasted(TypePath::X11));
    assert_eq!(r.warning, None, "{r:?}");
    assert_eq!(term.line(&x), "keep my image \nand again \n");
    assert!(x
        .clipboard_target("image/png")
        .is_some_and(|p| p.len() > 30_000));
    let targets = x.clipboard_target("TARGETS").expect("TARGETS");
    let targets = String::from_utf8_lossy(&targets);
    assert!(
        targets.contains("image/png") && targets.contains("text/html"),
        "{targets}"
    );
}

/// A window that never fetches the paste (xterm's default bindings have no Ctrl+Shift+V):
/// the text is typed instead and the report says so, the clipboard is what it was; a copy
/// made meanwhile is kept.
#[test]
fn a_paste_nobody_fetches_is_typed_and_says_so() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start_without_paste(&x, "Dictum no paste chord");
    let mut inj = Injector::new(&config(InjectMethod::Paste)).expect("injector");

    // Nobody owns the clipboard: nobody owns it after.
    assert_eq!(x.clipboard(), None);
    let r = inj.inject("first");
    assert_eq!(r.method, Some(Delivery::Typed(TypePath::X11)), "{r:?}");
    assert_eq!(term.line(&x), "first \n");
    assert_eq!(x.clipboard(), None);

    x.set_clipboard_elsewhere("the user's clipboard ✓");
    let r = inj.inject("typed not pasted");
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(r.method, Some(Delivery::Typed(TypePath::X11)), "{r:?}");
    let warning = r.warning.clone().unwrap_or_default();
    assert!(warning.starts_with("typed: paste not fetched"), "{r:?}");
    assert_eq!(term.line(&x), "first \ntyped not pasted \n");
    assert_eq!(x.clipboard().as_deref(), Some("the user's clipboard ✓"));

    // The user copies something while Dictum waits for the fetch: that copy is kept.
    let display = x.display.clone();
    let copier = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let mut child = Command::new("xclip")
            .args(["-selection", "clipboard", "-i"])
            .env("DISPLAY", display)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run xclip");
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(b"copied meanwhile").expect("write");
        drop(stdin);
        child.wait().expect("xclip")
    });
    let r = inj.inject("third");
    assert!(copier.join().expect("thread").success());
    assert_eq!(r.method, Some(Delivery::Typed(TypePath::X11)), "{r:?}");
    assert!(
        r.warning
            .as_deref()
            .is_some_and(|w| w.contains("copied meanwhile")),
        "{r:?}"
    );
    assert_eq!(x.clipboard().as_deref(), Some("copied meanwhile"));
    assert_eq!(term.line(&x), "first \ntyped not pasted \nthird \n");
}

#[test]
fn held_ctrl_is_released_before_typing() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum modifiers");
    let mut inj = Injector::new(&config(InjectMethod::Type)).expect("injector");

    // Still held after the wait: released by Dictum. With Ctrl down, "c" would be ^C (cat
    // dies) and "u" ^U (line erased).
    x.xdotool(&["keydown", "ctrl"]);
    let r = inj.inject("cut this out, quickly");
    assert_delivered(&r, Delivery::Typed(TypePath::X11));
    assert!(r.modifiers_forced, "{r:?}");
    assert!(r.modifier_wait_ms >= 290.0, "waited first: {r:?}");
    assert_eq!(term.line(&x), "cut this out, quickly \n");

    // Released by the user during the wait: typed right after, nothing forced.
    x.xdotool(&["keydown", "shift", "alt"]);
    let display = x.display.clone();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(120));
        Command::new("xdotool")
            .args(["keyup", "shift", "alt"])
            .env("DISPLAY", display)
            .status()
            .expect("xdotool keyup")
    });
    let r = inj.inject("all good");
    assert!(releaser.join().expect("thread").success());
    assert_delivered(&r, Delivery::Typed(TypePath::X11));
    assert!(!r.modifiers_forced, "{r:?}");
    assert!(
        (100.0..290.0).contains(&r.modifier_wait_ms),
        "waited for the release: {r:?}"
    );
    assert_eq!(term.line(&x), "cut this out, quickly \nall good \n");
}

/// The user presses keys (the hotkey again, for the next dictation) while a long text is
/// still being typed: typing stops at the next word until they are up, then goes on, so the
/// letters are not typed with the user's modifiers. Shift is held here because it shows
/// (capitals) without harming the terminal (Ctrl+C would end `cat`). A word or so may
/// still be typed with it: the X server may not have processed the keys sent before the
/// press when typing looks at the keyboard.
#[test]
fn keys_pressed_while_typing_pause_it_until_they_are_up() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum typing pause");
    let mut inj = Injector::new(&config(InjectMethod::Type)).expect("injector");
    // In one line under the terminal's 4096 bytes; each "€" after the first waits 11 ms
    // (`REPEAT_PAUSE`) and a keymap change: typing lasts well over the 150 ms before Shift
    // goes down (~2.5 s here, where plain letters go at 7000 a second).
    let text = "the quick brown fox jumps over the lazy dog € ".repeat(20);
    let text = text.trim_end().to_string();
    let typing = {
        let text = text.clone();
        std::thread::spawn(move || (inj.inject(&text), inj))
    };
    std::thread::sleep(Duration::from_millis(150));
    x.xdotool(&["keydown", "shift"]);
    std::thread::sleep(Duration::from_millis(600));
    x.xdotool(&["keyup", "shift"]);
    let (r, inj) = typing.join().expect("typing thread");
    assert_delivered(&r, Delivery::Typed(TypePath::X11));
    assert!(!r.modifiers_forced, "{r:?}");
    assert!(r.inject_ms >= 600.0, "typing waited for the keys: {r:?}");
    let line = term.line(&x);
    assert_eq!(line.to_lowercase(), format!("{text} \n"));
    let shifted = line
        .split(' ')
        .filter(|w| w.chars().any(|c| c.is_uppercase()))
        .count();
    assert!(
        shifted <= 2,
        "{shifted} words typed with Shift held: {line}"
    );
    drop(inj);
}

/// The daemon builds a new injector when the config changes, while the old one is still
/// alive, then drops the old one. enigo maps a character missing from the layout ("W", "T")
/// onto a spare keycode for as long as it lives and unmaps it when dropped; a new enigo read
/// the keymap with the old one's mappings in it, took "W" for a key of the layout and typed
/// that keycode after it was unmapped: nothing came out ("We should" typed as "e should",
/// live_cleanup). The injector must see the keymap changed and read it again.
#[test]
fn a_new_injector_types_what_the_previous_one_had_mapped() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum keymap");
    let mut old = Injector::new(&config(InjectMethod::Type)).expect("injector");
    let r = old.inject("The report is due on Wednesday.");
    assert_delivered(&r, Delivery::Typed(TypePath::X11));
    assert_eq!(term.line(&x), "The report is due on Wednesday. \n");
    // The config reload: the new one first (it may fail; then the old one stays), then the
    // old one goes.
    let mut new = Injector::new(&config(InjectMethod::Type)).expect("injector");
    drop(old);
    let r = new.inject("We should Test it.");
    assert_delivered(&r, Delivery::Typed(TypePath::X11));
    assert_eq!(
        term.line(&x),
        "The report is due on Wednesday. \nWe should Test it. \n"
    );
}

#[test]
fn empty_text_types_nothing() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum empty");
    let mut inj = Injector::new(&config(InjectMethod::Type)).expect("injector");
    for text in ["", "  "] {
        let r = inj.inject(text);
        assert_eq!(r.method, None, "{r:?}");
        assert_eq!(r.error, None, "{r:?}");
        assert_eq!(r.chars, 0);
    }
    x.xdotool(&["type", "marker"]);
    assert_eq!(term.line(&x), "marker\n");
}

#[test]
fn failed_typing_leaves_the_text_on_the_clipboard() {
    if !tools_present() {
        return;
    }
    // An X server without the XTEST extension: no simulated key presses, but a clipboard.
    let x = Xvfb::start_with(&["-extension", "XTEST"]);
    let term = Xterm::start(&x, "Dictum no xtest");
    let mut inj = Injector::new(&config(InjectMethod::Type)).expect("injector");
    let start = Instant::now();
    let r = inj.inject("kept for later");
    assert!(start.elapsed() < Duration::from_secs(2), "{r:?}");
    assert_eq!(r.method, Some(Delivery::ClipboardOnly), "{r:?}");
    let err = r.error.as_deref().expect("the typing error");
    assert!(!err.is_empty());
    assert_eq!(r.app_class.as_deref(), Some("XTerm"), "{r:?}");
    assert_eq!(x.clipboard().as_deref(), Some("kept for later "));
    // Nothing reached the terminal (no Return can be sent without XTEST either: the file
    // stays empty unless a stray line got through).
    assert!(err.contains("XTEST"), "says what is missing: {err}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(std::fs::read_to_string(&term.file).unwrap_or_default(), "");
    eprintln!("typing error reported: {err}");
}

#[test]
fn unreachable_display_is_reported_not_panicked() {
    if !tools_present() {
        return;
    }
    let _lock = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    // A display number nothing listens on.
    let n = (200..260)
        .find(|n| !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists())
        .expect("a free display number");
    std::env::set_var("DISPLAY", format!(":{n}"));
    std::env::remove_var("WAYLAND_DISPLAY");
    std::env::remove_var("XDG_SESSION_TYPE");

    let mut inj = Injector::new(&config(InjectMethod::Type))
        .expect("a missing display is not a config error");
    assert!(inj.check().is_err());
    assert_eq!(inj.focused_window().class, None);
    let start = Instant::now();
    let r = inj.inject("hello");
    assert!(start.elapsed() < Duration::from_secs(2), "{r:?}");
    let err = r.error.expect("an error");
    assert!(err.contains(&format!(":{n}")), "names the display: {err}");
    // No X server: the clipboard fallback cannot work either, and says so.
    assert_eq!(r.method, None, "{err}");
    assert!(err.contains("clipboard"), "{err}");
}

#[test]
fn measure() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let term = Xterm::start(&x, "Dictum measure");
    let sentence = "The quick brown fox jumps over the lazy dog, then types it again. ";
    let long: String = sentence.repeat(3); // ~200 chars: a long dictation
    let unicode = "Grüße aus Köln: naïve café, 10 € — ✓ ";
    let realistic = "I think we should meet on Monday. Can you send the report to Anna and Tom? Thanks, I will check it tomorrow.";

    let t = Instant::now();
    let mut inj = Injector::new(&config(InjectMethod::Type)).expect("injector");
    eprintln!("Injector::new: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    let w = inj.focused_window();
    eprintln!("focused_window: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
    assert_eq!(w.class.as_deref(), Some("XTerm"));
    let mut expected = String::new();
    for (name, text) in [
        ("ascii", long.trim_end()),
        ("unicode", unicode.trim_end()),
        ("realistic", realistic),
        (
            "lowercase",
            "the quick brown fox jumps over the lazy dog and types it again",
        ),
    ] {
        for _ in 0..3 {
            let r = inj.inject(text);
            assert_delivered(&r, Delivery::Typed(TypePath::X11));
            // enigo's lingering 12 ms delay (see typing.rs) would give ~60 chars/s here.
            assert!(
                r.chars_per_s() > 100.0,
                "typing {name} at {:.0} chars/s: {r:?}",
                r.chars_per_s()
            );
            eprintln!(
                "type {name}: {} chars in {:.1} ms = {:.0} chars/s",
                r.chars,
                r.inject_ms,
                r.chars_per_s()
            );
            expected.push_str(text);
            expected.push_str(" \n");
            assert_eq!(term.line(&x), expected);
        }
    }
    drop(inj);

    let mut inj = Injector::new(&config(InjectMethod::Paste)).expect("injector");
    for _ in 0..3 {
        x.set_clipboard_elsewhere("previous");
        let r = inj.inject(long.trim_end());
        assert_delivered(&r, Delivery::Pasted(TypePath::X11));
        eprintln!(
            "paste: {} chars, {:.1} ms until the chord, {:.1} ms total (restored after the fetch)",
            r.chars, r.inject_ms, r.total_ms
        );
        expected.push_str(long.trim_end());
        expected.push_str(" \n");
        assert_eq!(term.line(&x), expected);
        assert_eq!(x.clipboard().as_deref(), Some("previous"));
    }
}
