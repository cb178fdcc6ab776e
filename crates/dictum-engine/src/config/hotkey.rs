//! The syntax of the `[dictation]` keys (`hotkey`, `cancel_key`): "ctrl+alt+space"-style text
//! parsed into `global-hotkey`'s [`HotKey`], and for the dictation hotkey also "mouse:9", a
//! mouse button ([`Binding`]). Here, at the bottom of the crate, so the section can check its
//! keys at load; `hotkey::parse` and `hotkey::parse_binding` are these functions.

use global_hotkey::hotkey::{Code, HotKey};
use std::str::FromStr;

/// The lowest and highest mouse button that can be the dictation hotkey. 1-3 are the left,
/// middle and right buttons and 4-7 the wheel (up, down, left, right): grabbing one of them
/// would take clicking or scrolling away from every application. 8 and 9 are the usual
/// thumb buttons (back, forward).
pub const MOUSE_BUTTONS: std::ops::RangeInclusive<u8> = 8..=32;

/// What the dictation hotkey is: a key chord, or a mouse button (X11 only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    Key(HotKey),
    /// The X11 button number, within [`MOUSE_BUTTONS`].
    Button(u8),
}

/// The event id of a mouse button: above every [`HotKey::id`] (those are the modifier bits,
/// at most 0x2000, shifted by 16, or'ed with the key code), so the two never meet.
const BUTTON_ID: u32 = 0x8000_0000;

impl Binding {
    /// The id its presses and releases carry (`HotKey::id()` for a key).
    pub fn id(&self) -> u32 {
        match self {
            Binding::Key(h) => h.id(),
            Binding::Button(b) => BUTTON_ID | u32::from(*b),
        }
    }
}

impl std::fmt::Display for Binding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Binding::Key(h) => write!(f, "{h}"),
            Binding::Button(b) => write!(f, "mouse:{b}"),
        }
    }
}

/// How a Wayland user gets a mouse button to drive Dictum: the compositor binds it.
pub const MOUSE_ON_WAYLAND: &str = "on Wayland only the compositor can grab a mouse button: bind the button there to run `dictum ctl press` when it goes down and `dictum ctl release` when it comes up (sway: `bindsym --whole-window --no-repeat button9 exec dictum ctl press` and `bindsym --whole-window --release button9 exec dictum ctl release`; where only a press can be bound, `dictum ctl toggle`), and set [dictation] hotkey to a key";

/// `Some` when `spec` names a mouse button ("mouse:9"): the button, or why it cannot be the
/// hotkey; `None` for a key.
pub fn parse_button(spec: &str) -> Option<Result<u8, String>> {
    let spec = spec.trim();
    let lower = spec.to_ascii_lowercase();
    if !lower.contains("mouse:") {
        return None;
    }
    let Some(number) = lower.strip_prefix("mouse:") else {
        return Some(Err(format!(
            "`{spec}`: a mouse button is the hotkey alone, without modifiers; write it like \"mouse:9\""
        )));
    };
    let why = match number.trim().parse::<u32>() {
        Ok(b) if (1..=3).contains(&b) => format!(
            "`{spec}` is the left, middle or right button: grabbing it would take clicking away from every application; use a side button, e.g. \"mouse:8\" or \"mouse:9\" (the thumb buttons)"
        ),
        Ok(b) if (4..=7).contains(&b) => format!(
            "`{spec}` is the scroll wheel (4-7): grabbing it would take scrolling away from every application; use a side button, e.g. \"mouse:8\" or \"mouse:9\" (the thumb buttons)"
        ),
        Ok(b) => match u8::try_from(b) {
            Ok(b) if MOUSE_BUTTONS.contains(&b) => return Some(Ok(b)),
            _ => format!(
                "`{spec}` is not a mouse button Dictum can use; buttons {}-{} can be the hotkey, e.g. \"mouse:9\" (a thumb button; `xev -event button` prints the number of each button)",
                MOUSE_BUTTONS.start(),
                MOUSE_BUTTONS.end()
            ),
        },
        Err(_) => format!(
            "`{spec}` is not a mouse button; write it like \"mouse:9\" (`xev -event button` prints the number of each button)"
        ),
    };
    Some(Err(why))
}

/// Parses the dictation hotkey: a key chord as [`parse`] does, or "mouse:N" (see
/// [`parse_button`]).
pub fn parse_binding(spec: &str) -> Result<Binding, String> {
    match parse_button(spec) {
        Some(button) => button.map(Binding::Button),
        None => parse(spec).map(Binding::Key),
    }
}

/// Parses "ctrl+alt+space"-style text (case-insensitive; modifiers ctrl, alt, shift, super).
/// A lone modifier is refused: X11 cannot grab one. A mouse button is refused with the
/// reason: only the dictation hotkey on X11 can be one ([`parse_binding`]).
pub fn parse(spec: &str) -> Result<HotKey, String> {
    let spec = spec.trim();
    if let Some(button) = parse_button(spec) {
        return Err(match button {
            Ok(_) => format!(
                "`{spec}` is a mouse button: Dictum grabs one only as the [dictation] hotkey on X11, and here a key is needed; {MOUSE_ON_WAYLAND}"
            ),
            Err(why) => why,
        });
    }
    if spec.is_empty() {
        return Err("empty hotkey; write it like \"ctrl+alt+space\"".into());
    }
    let last = spec
        .rsplit('+')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let lone_modifiers = [
        "ctrl",
        "control",
        "alt",
        "shift",
        "super",
        "cmd",
        "command",
        "meta",
        "controlleft",
        "controlright",
        "altleft",
        "altright",
        "shiftleft",
        "shiftright",
        "metaleft",
        "metaright",
    ];
    if lone_modifiers.contains(&last.as_str()) {
        return Err(format!(
            "`{spec}` ends with a modifier; a hotkey needs a main key, e.g. \"ctrl+alt+space\" or \"f9\" (a lone modifier cannot be grabbed on X11)"
        ));
    }
    let hotkey = HotKey::from_str(spec).map_err(|e| {
        format!("`{spec}` is not a hotkey ({e}); write it like \"ctrl+alt+space\", \"super+shift+d\" or \"f9\"")
    })?;
    if matches!(
        hotkey.key,
        Code::ControlLeft
            | Code::ControlRight
            | Code::AltLeft
            | Code::AltRight
            | Code::ShiftLeft
            | Code::ShiftRight
            | Code::MetaLeft
            | Code::MetaRight
    ) {
        return Err(format!(
            "`{spec}` is a lone modifier, which cannot be grabbed on X11; add a main key"
        ));
    }
    Ok(hotkey)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_mouse_button_is_a_binding() {
        assert_eq!(parse_binding("mouse:9"), Ok(Binding::Button(9)));
        assert_eq!(parse_binding(" Mouse:8 "), Ok(Binding::Button(8)));
        assert_eq!(parse_binding("mouse:32"), Ok(Binding::Button(32)));
        assert_eq!(Binding::Button(9).to_string(), "mouse:9");
        let key = parse_binding("ctrl+alt+space").expect("a key");
        assert!(matches!(key, Binding::Key(_)));
        // A button's id is no key's id.
        assert_ne!(Binding::Button(9).id(), key.id());
        assert_eq!(Binding::Button(9).id() & 0xff, 9);
    }

    #[test]
    fn clicking_and_scrolling_buttons_are_refused_with_the_reason() {
        for b in 1..=3 {
            let e = parse_binding(&format!("mouse:{b}")).expect_err("a click button");
            assert!(e.contains("clicking"), "{e}");
            assert!(e.contains("mouse:9"), "{e}");
        }
        for b in 4..=7 {
            let e = parse_binding(&format!("mouse:{b}")).expect_err("the wheel");
            assert!(e.contains("scroll"), "{e}");
        }
        for bad in [
            "mouse:0",
            "mouse:33",
            "mouse:300",
            "mouse:x",
            "mouse:",
            "mouse:-9",
        ] {
            let e = parse_binding(bad).expect_err(bad);
            assert!(e.contains("mouse:9"), "{bad}: {e}");
        }
        let e = parse_binding("ctrl+mouse:9").expect_err("modifiers");
        assert!(e.contains("without modifiers"), "{e}");
    }

    #[test]
    fn a_mouse_button_is_no_key() {
        // The cancel key and compositor shortcuts take keys only; the message says where a
        // button can go and what to do on Wayland.
        let e = parse("mouse:9").expect_err("not a key");
        assert!(e.contains("only as the [dictation] hotkey on X11"), "{e}");
        assert!(e.contains("dictum ctl press"), "{e}");
        let e = parse("mouse:1").expect_err("not a key");
        assert!(e.contains("clicking"), "{e}");
    }
}
