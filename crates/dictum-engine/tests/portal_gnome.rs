//! The portal client (`dictum_engine::portal`) and the injector against the REAL GNOME stack
//! (Debian bookworm packages): `mutter --headless --wayland` (mutter 43), the real
//! `xdg-desktop-portal` frontend and `xdg-desktop-portal-gnome` backend on a private D-Bus
//! session bus, with a native Wayland window focused (the GTK 3 text view of
//! `tests/wayland_textbox.py`, GDK's Wayland backend).
//!
//! What this proves, on the real GNOME portal:
//! - RemoteDesktop typing arrives in the native window, exactly, once the user has allowed it
//!   in xdg-desktop-portal-gnome's dialog (answered here with keys, as a user would: see
//!   `common/gnome.rs`; GNOME 43 asks at every session: no restore token, no pre-authorization);
//! - the first characters of a new session arrive (mutter 43 drops the first key events of a
//!   new RemoteDesktop session: `RemoteKeyboard` primes it with a Shift tap; without that the
//!   first 1 to 3 characters were lost here);
//! - a character the keyboard layout lacks is dropped by mutter, never typed wrong;
//! - Dictum's injector routes to the portal on GNOME (no virtual keyboard for applications),
//!   and pastes text with such characters (wl-clipboard) instead of typing it with gaps;
//! - GNOME 43 has no GlobalShortcuts portal (it came with GNOME 48): the hotkey path is a
//!   GNOME custom shortcut (`dictum shortcut install`, toggle).
//!
//! Skipped when the tools are missing unless `DICTUM_REQUIRE_E2E` is set.
//! Numbers: `cargo test -p dictum-engine --test portal_gnome -- --nocapture`.
#![cfg(target_os = "linux")]

#[path = "common/gnome.rs"]
mod gnome;
#[path = "common/portal_desktop.rs"]
mod portal_desktop;

use dictum_engine::inject::backends::portal::RemoteKeyboard;
use dictum_engine::inject::session::hotkey_path;
use dictum_engine::inject::{Delivery, Focus, HotkeyPath, TypePath};
use gnome::{tools, Gnome};
use std::time::Instant;

#[test]
fn real_gnome_portal_types_into_a_wayland_window() {
    let Some(tools) = tools() else {
        return;
    };
    let gnome = Gnome::start(&tools);
    let bus = gnome.bus();

    let (info, probe_ms) = gnome.probe();
    assert!(info.can_type(), "{info:?}");
    assert!(
        info.global_shortcuts.is_none(),
        "GNOME 43 has no GlobalShortcuts portal: {info:?}"
    );

    // Typing: the user allows it once in GNOME's dialog.
    let token = gnome.dir.path().join("data/dictum/remote-desktop.token");
    let before = gnome.dialogs_shown();
    let t = Instant::now();
    let (kb, dialog_after) = std::thread::scope(|s| {
        let connecting = s.spawn(|| RemoteKeyboard::connect_on(&bus, &token));
        let dialog_after = gnome.answer_consent(before);
        (connecting.join().expect("connect thread"), dialog_after)
    });
    let mut kb = kb.unwrap_or_else(|e| panic!("RemoteDesktop session: {e}\n{}", gnome.logs()));
    let consent_ms = t.elapsed().as_secs_f64() * 1e3;
    let text = "Hello from Dictum on GNOME: 1, 2, 3! (ok?) A-Z_@#\n";
    kb.type_text(text).expect("type");
    let (got, _) = gnome.wait_typed(text);
    assert_eq!(got, text, "what the window received\n{}", gnome.logs());

    // Speed: a dictation-sized text, until the last character is in the window.
    let (n, sent, arrived) = gnome.type_long(&mut kb);

    // A character the US layout lacks: mutter drops it (no wrong character typed).
    gnome.type_off_layout(&mut kb);
    let version = kb.portal_version();
    drop(kb);

    // The product's injector in this session (the only test in this binary: the environment
    // is ours). It opens its own RemoteDesktop session: GNOME asks again.
    for (k, v) in gnome.session_env() {
        std::env::set_var(k, v);
    }
    std::env::set_var("DICTUM_DATA_DIR", gnome.dir.path().join("data/dictum"));
    std::env::remove_var("DISPLAY");
    std::env::remove_var("SWAYSOCK");
    std::env::remove_var("HYPRLAND_INSTANCE_SIGNATURE");
    let mut inj = portal_desktop::portal_injector();
    assert_eq!(
        hotkey_path(inj.session(), inj.abilities()),
        HotkeyPath::Compositor { release: false },
        "GNOME 43: a custom shortcut, toggle"
    );
    let before = gnome.typed();
    let dialogs = gnome.dialogs_shown();
    let r = std::thread::scope(|s| {
        let answering = s.spawn(|| gnome.answer_consent(dialogs));
        let r = inj.inject("Routed by Dictum, 42");
        answering.join().expect("answer thread");
        r
    });
    assert_eq!(r.error, None, "{r:?}\n{}", gnome.logs());
    assert_eq!(r.method, Some(Delivery::Typed(TypePath::Portal)), "{r:?}");
    let expected = format!("{before}Routed by Dictum, 42 ");
    assert_eq!(gnome.wait_typed(&expected).0, expected);
    let route = inj.route(Focus::Unknown);
    eprintln!(
        "injector on GNOME: route {:?}",
        route.as_ref().map(|r| r.describe())
    );
    // mutter offers no data-control clipboard; wl-clipboard works while the portal's
    // keyboard exists. With it, text the layout lacks is pasted whole.
    if route.is_ok_and(|r| r.clipboard.is_some()) {
        let t = Instant::now();
        let r = inj.inject("café crème");
        let paste_ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(r.error, None, "{r:?}");
        assert_eq!(r.method, Some(Delivery::Pasted(TypePath::Portal)), "{r:?}");
        let expected = format!("{expected}café crème ");
        assert_eq!(gnome.wait_typed(&expected).0, expected, "pasted whole");
        eprintln!("real GNOME 43 portal: inject() of non-layout text by paste {paste_ms:.0} ms");
    } else {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but wl-clipboard is missing (sudo apt install wl-clipboard)"
        );
    }

    eprintln!(
        "real GNOME 43 portal: probe {probe_ms:.1} ms; dialog shown after {:.0} ms; RemoteDesktop v{version} connect incl. the user's answer {consent_ms:.0} ms",
        dialog_after.as_secs_f64() * 1e3
    );
    eprintln!(
        "real GNOME 43 portal: {n} chars sent in {:.1} ms ({:.0} chars/s), all in the window after {:.1} ms ({:.0} chars/s)",
        sent.as_secs_f64() * 1e3,
        n / sent.as_secs_f64(),
        arrived.as_secs_f64() * 1e3,
        n / arrived.as_secs_f64(),
    );
}
