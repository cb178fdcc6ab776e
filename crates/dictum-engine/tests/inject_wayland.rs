//! In-process Wayland typing and clipboard against a real compositor: each test starts its
//! own headless sway with XWayland (as an unprivileged user when run as root, see
//! `common/sway.rs`), opens a terminal whose input goes to a file (`foot`, native Wayland, or
//! `xterm` through XWayland), types with [`VirtualKeyboard`] (zwp_virtual_keyboard_v1) or
//! pastes with [`WlClipboard`] (data-control) and reads back exactly what the terminal got.
//! `wl-paste`/`wl-copy` play the other applications on the clipboard; `wtype` is the
//! reference the typing speed is compared with.
//!
//! Paste mode keeping every type of the clipboard: `inject_wayland/clipboard.rs`.
//!
//! Skipped only when sway/foot/xterm/Xwayland/wtype/wl-clipboard (and, for the clipboard
//! owner, GTK 4 for Python) are missing AND `DICTUM_REQUIRE_E2E` is unset. Numbers:
//! `cargo test -p dictum-engine --features test-hooks --test inject_wayland -- --nocapture
//! --test-threads 1`.

#[path = "inject_wayland/clipboard.rs"]
mod clipboard;
mod common;

use common::sway::{first_byte, tools_present, Kind, Sway, Window, LOCK};
use dictum_engine::inject::backends::vkbd::{probe_globals, VirtualKeyboard};
use dictum_engine::inject::backends::wlclip::WlClipboard;
use dictum_engine::inject::{
    Delivery, Focus, InjectBackend, InjectConfig, InjectMethod, Injector, TypePath,
    PASTE_UNCONFIRMED,
};
use std::io::Write as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Punctuation, digits, a tab, non-ASCII letters, a dash and a check mark, and a newline.
const SENTENCE: &str =
    "Hello, world! It's 10:45 (tab\there) \"quoted\"; 100% sure? Grüße, café — naïve ✓\n";
const WAIT: Duration = Duration::from_secs(10);

/// Types `text` and returns (seconds the call took, seconds from the call to the first byte
/// in the window's file).
fn timed_type(kbd: &mut VirtualKeyboard, win: &Window, text: &str) -> (f64, Option<f64>) {
    let file = win.file.clone();
    let watcher = std::thread::spawn(move || first_byte(&file, WAIT));
    std::thread::sleep(Duration::from_millis(20)); // the watcher is polling
    let t0 = Instant::now();
    kbd.type_text(text).expect("type_text");
    let took = t0.elapsed().as_secs_f64();
    let first = watcher
        .join()
        .ok()
        .flatten()
        .map(|t| t.duration_since(t0).as_secs_f64());
    (took, first)
}

/// Types SENTENCE with `kbd` into the cleared `win`, checks it arrived exactly, and prints how
/// fast, as `what`.
fn type_sentence(kbd: &mut VirtualKeyboard, win: &Window, what: &str) {
    win.clear();
    let (took, first) = timed_type(kbd, win, SENTENCE);
    assert_eq!(win.wait_for(SENTENCE, WAIT), SENTENCE, "{what}");
    let n = SENTENCE.chars().count();
    eprintln!(
        "{what}: {n} chars in {:.1} ms ({:.0} chars/s), first char after {:.1} ms",
        took * 1e3,
        n as f64 / took,
        first.unwrap_or(f64::NAN) * 1e3
    );
}

#[test]
fn probe_lists_the_compositor_globals() {
    if !tools_present() {
        return;
    }
    let _sway = Sway::start();
    let t0 = Instant::now();
    let g = probe_globals().expect("probe");
    eprintln!("probe_globals: {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    assert!(g.virtual_keyboard, "{g:?}");
    assert!(g.data_control, "{g:?}");
    assert!(g.seat, "{g:?}");
    assert!(g.names.iter().any(|n| n == "wl_compositor"), "{g:?}");
}

#[test]
fn probe_and_connect_fail_fast_and_say_why() {
    let _lock = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    // No compositor at all.
    std::env::set_var("WAYLAND_DISPLAY", dir.path().join("nothing-here"));
    let err = probe_globals().expect_err("no compositor");
    assert!(
        err.contains("cannot connect to the Wayland compositor"),
        "{err}"
    );
    let err = VirtualKeyboard::connect().err().expect("no compositor");
    assert!(err.contains("cannot connect"), "{err}");
    std::env::remove_var("WAYLAND_DISPLAY");
    let err = probe_globals().expect_err("no WAYLAND_DISPLAY");
    assert!(err.contains("WAYLAND_DISPLAY is not set"), "{err}");
    // A compositor that accepts the connection and never answers: bounded.
    let socket = dir.path().join("hung");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    std::env::set_var("WAYLAND_DISPLAY", &socket);
    let t0 = Instant::now();
    let err = probe_globals().expect_err("hung compositor");
    let took = t0.elapsed();
    assert!(err.contains("did not answer"), "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    drop(listener);
    std::env::remove_var("WAYLAND_DISPLAY");
}

#[test]
fn types_exactly_into_a_native_wayland_window() {
    if !tools_present() {
        return;
    }
    let sway = Sway::start();
    let win = Window::open(&sway, Kind::Foot, "dictumfoot");
    let t0 = Instant::now();
    let mut kbd = VirtualKeyboard::connect().expect("virtual keyboard");
    let connect_ms = t0.elapsed().as_secs_f64() * 1e3;

    type_sentence(
        &mut kbd,
        &win,
        &format!("vkbd into foot, first call (keymap upload; connect {connect_ms:.1} ms)"),
    );
    // Again: the keymap is reused, no upload.
    type_sentence(&mut kbd, &win, "vkbd into foot, same keymap");
    let n = SENTENCE.chars().count();

    // New characters right after: the keymap grows.
    win.clear();
    let more = "Ärger über Øre, 3 × 4 = 12 ½ € ß\n";
    kbd.type_text(more).expect("type");
    assert_eq!(win.wait_for(more, WAIT), more);

    // The same sentence with wtype, the reference (one process per call, as Dictum ran it).
    win.clear();
    let file = win.file.clone();
    let watcher = std::thread::spawn(move || first_byte(&file, WAIT));
    std::thread::sleep(Duration::from_millis(20));
    let t0 = Instant::now();
    let status = sway
        .command("wtype")
        .arg(SENTENCE)
        .status()
        .expect("run wtype");
    let took = t0.elapsed().as_secs_f64();
    let first = watcher.join().ok().flatten().map(|t| t.duration_since(t0));
    assert!(status.success());
    let got = win.wait_for(SENTENCE, WAIT);
    eprintln!(
        "wtype into foot: {n} chars in {:.1} ms ({:.0} chars/s), first char after {:.1} ms, exact: {}",
        took * 1e3,
        n as f64 / took,
        first.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3),
        got == SENTENCE
    );

    // After another keyboard (wtype's) was used, as after the user typed on the real one: the
    // compositor sends our keymap to the window again.
    type_sentence(&mut kbd, &win, "vkbd into foot after another keyboard");
}

#[test]
fn types_exactly_into_an_xwayland_window() {
    if !tools_present() {
        return;
    }
    let sway = Sway::start();
    let win = Window::open(&sway, Kind::Xterm, "dictumxterm");
    let mut kbd = VirtualKeyboard::connect().expect("virtual keyboard");
    if let Some(ms) = std::env::var("DICTUM_TEST_KEYMAP_SETTLE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        kbd.set_keymap_settle(Duration::from_millis(ms)); // to measure what XWayland needs
    }
    for round in 0..3 {
        type_sentence(
            &mut kbd,
            &win,
            &format!("vkbd into xterm (XWayland), round {round}"),
        );
    }
    // Keymap changes back to back: new characters right after the last keys, then a text
    // with more distinct characters than one keymap holds (several keymaps in one call).
    win.clear();
    let more = "Ärger über Øre, 3 × 4 = 12 ½ € ß\n";
    kbd.type_text(more).expect("type");
    let many = distinct_chars(300);
    let t0 = Instant::now();
    kbd.type_text(&many).expect("type");
    let took = t0.elapsed().as_secs_f64();
    let expected = format!("{more}{many}");
    assert_eq!(win.wait_for(&expected, WAIT), expected);
    eprintln!(
        "vkbd into xterm, 300 distinct chars (2 keymaps): {:.1} ms",
        took * 1e3
    );
}

/// `n` distinct printable characters (Latin, Greek, Cyrillic letters), then a newline.
fn distinct_chars(n: usize) -> String {
    let mut s: String = ('A'..='Z')
        .chain('a'..='z')
        .chain('\u{C0}'..='\u{17F}')
        .chain('\u{391}'..='\u{3A9}')
        .chain('\u{3B1}'..='\u{3C9}')
        .chain('\u{410}'..='\u{44F}')
        .filter(|c| !c.is_control() && *c as u32 != 0x3A2 && *c != '×' && *c != '÷')
        .take(n)
        .collect();
    assert_eq!(s.chars().count(), n);
    s.push('\n');
    s
}

#[test]
fn clipboard_set_get_and_paste_chord() {
    if !tools_present() {
        return;
    }
    let sway = Sway::start();
    let mut clip = WlClipboard::connect().expect("clipboard");

    let text = "Copied by Dictum: Grüße ✓";
    let t0 = Instant::now();
    clip.set_text(text).expect("set");
    let set_ms = t0.elapsed().as_secs_f64() * 1e3;
    let t0 = Instant::now();
    assert_eq!(clip.text().as_deref(), Some(text));
    let get_ms = t0.elapsed().as_secs_f64() * 1e3;
    eprintln!("WlClipboard: set {set_ms:.1} ms, get {get_ms:.1} ms");

    // Another application sees it, long after set_text returned.
    std::thread::sleep(Duration::from_millis(300));
    let paste = |sway: &Sway| {
        let out = sway
            .command("wl-paste")
            .arg("--no-newline")
            .output()
            .expect("wl-paste");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(paste(&sway), text);

    // Another application copies: we read that.
    let mut copy = sway
        .command("wl-copy")
        .stdin(Stdio::piped())
        .spawn()
        .expect("wl-copy");
    copy.stdin
        .take()
        .expect("stdin")
        .write_all(b"from elsewhere")
        .expect("write");
    assert!(copy.wait().expect("wl-copy").success());
    assert_eq!(clip.text().as_deref(), Some("from elsewhere"));

    // Set ours again and paste it into foot with Ctrl+Shift+V.
    let win = Window::open(&sway, Kind::Foot, "dictumpaste");
    let pasted = "pasted by the chord — ½ ✓";
    clip.set_text(pasted).expect("set");
    let mut kbd = VirtualKeyboard::connect().expect("virtual keyboard");
    kbd.paste_chord(true).expect("chord");
    assert_eq!(win.wait_for(pasted, WAIT), pasted);
    assert_eq!(paste(&sway), pasted);
}

#[test]
fn paste_chord_into_an_xwayland_window() {
    if !tools_present() {
        return;
    }
    let sway = Sway::start();
    let win = Window::open(&sway, Kind::Xterm, "dictumxpaste");
    let mut clip = WlClipboard::connect().expect("clipboard");
    let pasted = "pasted into xterm — Grüße ✓";
    clip.set_text(pasted).expect("set");
    let mut kbd = VirtualKeyboard::connect().expect("virtual keyboard");
    kbd.paste_chord(true).expect("chord");
    assert_eq!(win.wait_for(pasted, WAIT), pasted);
}

#[test]
fn a_long_text_arrives_complete_and_in_order() {
    if !tools_present() {
        return;
    }
    let sway = Sway::start();
    let win = Window::open(&sway, Kind::Foot, "dictumlong");
    let mut kbd = VirtualKeyboard::connect().expect("virtual keyboard");
    // Numbered words (order is visible) mixed with 300 distinct letters (several keymaps).
    let letters: Vec<char> = distinct_chars(300).trim_end().chars().collect();
    let mut text = String::new();
    let mut i = 0;
    while text.chars().count() < 2000 {
        text.push_str(&format!("{i:03}{} ", letters[(i * 7) % letters.len()]));
        i += 1;
    }
    let text: String = text.chars().take(1999).chain(['\n']).collect();
    assert_eq!(text.chars().count(), 2000);
    let (took, first) = timed_type(&mut kbd, &win, &text);
    let got = win.wait_for(&text, WAIT);
    let at = got
        .chars()
        .zip(text.chars())
        .position(|(a, b)| a != b)
        .unwrap_or(got.chars().count().min(2000));
    let around = |s: &str| {
        s.chars()
            .skip(at.saturating_sub(20))
            .take(40)
            .collect::<String>()
    };
    assert_eq!(
        got.chars().count(),
        2000,
        "complete? first difference at char {at}: got {:?}, sent {:?}",
        around(&got),
        around(&text)
    );
    assert_eq!(got, text, "in order");
    eprintln!(
        "vkbd into foot, 2000 chars ({} distinct): {:.1} ms ({:.0} chars/s), first char after {:.1} ms",
        {
            let mut d: Vec<char> = text.chars().collect();
            d.sort();
            d.dedup();
            d.len()
        },
        took * 1e3,
        2000.0 / took,
        first.unwrap_or(f64::NAN) * 1e3
    );
}

/// wl-paste as another application of the session sees the clipboard.
fn session_clipboard(sway: &Sway) -> String {
    let out = sway
        .command("wl-paste")
        .arg("--no-newline")
        .output()
        .expect("wl-paste");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn session_copy(sway: &Sway, text: &str) {
    let mut copy = sway
        .command("wl-copy")
        .stdin(Stdio::piped())
        .spawn()
        .expect("wl-copy");
    copy.stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    assert!(copy.wait().expect("wl-copy").success());
}

fn injector(method: InjectMethod, backend: InjectBackend) -> Injector {
    Injector::new(&InjectConfig {
        method,
        backend,
        notify_on_failure: false,
        // The harness names foot by its app id: a terminal, it pastes with Ctrl+Shift+V.
        terminal_classes: vec!["dictumroute".into(), "XTerm".into()],
        ..InjectConfig::default()
    })
    .expect("injector")
}

/// The product's injector on a Wayland session with XWayland running (DISPLAY set too):
/// the native window gets the virtual keyboard, the XWayland window (named so by sway) gets
/// XTest, and the report names the path really used. Paste mode restores the clipboard in
/// both. This is the bug the routing exists for: before it, `DISPLAY` alone chose X11 and
/// foot received nothing while the report said "typed".
#[test]
fn the_injector_reaches_native_and_xwayland_windows() {
    if !tools_present() {
        return;
    }
    let sway = Sway::start();
    let text = "Send the report to Anna, café — ½ ✓";
    let expected = format!("{text} ");

    let foot = Window::open(&sway, Kind::Foot, "dictumroute");
    let mut inj = injector(InjectMethod::Type, InjectBackend::Auto);
    assert!(inj.session().x_display, "XWayland is running");
    let r = inj.inject(text);
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(
        r.method,
        Some(Delivery::Typed(TypePath::VirtualKeyboard)),
        "{r:?}"
    );
    assert_eq!(r.focus, Some(Focus::Native), "{r:?}");
    // The harness names foot by its app id.
    assert_eq!(r.app_class.as_deref(), Some("dictumroute"), "{r:?}");
    assert_eq!(foot.wait_for(&expected, WAIT), expected);
    eprintln!(
        "injector into foot: {} in {:.1} ms ({:.0} chars/s)",
        r.method.map(|m| m.as_str()).unwrap_or("-"),
        r.inject_ms,
        r.chars_per_s()
    );

    // XTest first; headless sway has no physical keyboard, so XWayland's only keyboard map is
    // the virtual keyboard's, which has no modifiers: XTest cannot type there, and the
    // injector falls back to the virtual keyboard (on a desktop with a keyboard, XTest).
    let xterm = Window::open(&sway, Kind::Xterm, "dictumroutex");
    let r = inj.inject(text);
    assert_eq!(r.error, None, "{r:?}");
    let xpath = match r.method {
        Some(Delivery::Typed(p @ (TypePath::X11 | TypePath::VirtualKeyboard))) => p,
        other => panic!("typed into xterm by {other:?}: {r:?}"),
    };
    assert_eq!(r.focus, Some(Focus::XWayland), "{r:?}");
    assert_eq!(r.app_class.as_deref(), Some("XTerm"), "{r:?}");
    assert_eq!(xterm.wait_for(&expected, WAIT), expected);
    eprintln!(
        "injector into xterm: {} in {:.1} ms ({:.0} chars/s)",
        r.method.map(|m| m.as_str()).unwrap_or("-"),
        r.inject_ms,
        r.chars_per_s()
    );

    // Paste mode, the previous clipboard restored afterwards, in both windows.
    let mut inj = injector(InjectMethod::Paste, InjectBackend::Auto);
    for (win, path) in [(&foot, TypePath::VirtualKeyboard), (&xterm, xpath)] {
        win.focus(&sway);
        win.clear();
        session_copy(&sway, "previous clipboard");
        let r = inj.inject(text);
        assert_eq!(r.error, None, "{r:?}");
        // A Wayland paste cannot be confirmed (X11 watches the fetch): said, and nothing else.
        let unconfirmed = (path != TypePath::X11).then_some(PASTE_UNCONFIRMED);
        assert_eq!(r.warning.as_deref(), unconfirmed, "{r:?}");
        assert_eq!(r.method, Some(Delivery::Pasted(path)), "{r:?}");
        assert_eq!(win.wait_for(&expected, WAIT), expected);
        assert_eq!(session_clipboard(&sway), "previous clipboard");
        eprintln!(
            "injector paste into {:?}: chord after {:.1} ms, {:.1} ms with the restore",
            win.kind, r.inject_ms, r.total_ms
        );
    }
}

/// The old behaviour, forced: XTest on a Wayland session with a native window focused
/// reports success and delivers nothing. Proves the test above can tell the difference.
#[test]
fn xtest_into_a_native_window_delivers_nothing() {
    if !tools_present() {
        return;
    }
    let sway = Sway::start();
    let foot = Window::open(&sway, Kind::Foot, "dictumlost");
    let mut inj = injector(InjectMethod::Type, InjectBackend::X11);
    let r = inj.inject("these words are lost");
    assert_eq!(r.method, Some(Delivery::Typed(TypePath::X11)), "{r:?}");
    assert_eq!(r.error, None, "X11 reports success: {r:?}");
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(foot.text(), "", "nothing reaches the native window");
}

/// No typing path at all on a Wayland session: the text is left on the Wayland clipboard,
/// the report says why, nothing is lost.
#[test]
fn no_typing_path_leaves_the_text_on_the_wayland_clipboard() {
    if !tools_present() {
        return;
    }
    let sway = Sway::start();
    let _foot = Window::open(&sway, Kind::Foot, "dictumnopath");
    let mut inj = injector(InjectMethod::Type, InjectBackend::Ydotool);
    let r = inj.inject("kept for later");
    let err = r.error.clone().expect("an error");
    assert!(err.contains("ydotool"), "{err}");
    assert_eq!(r.method, Some(Delivery::ClipboardOnly), "{r:?}");
    assert_eq!(session_clipboard(&sway), "kept for later ");
}
