//! The syntax of the `[dictation]` keys (`hotkey`, `cancel_key`): "ctrl+alt+space"-style text
//! parsed into `global-hotkey`'s [`HotKey`]. Here, at the bottom of the crate, so the section can
//! check its keys at load; `hotkey::parse` is this function.

use global_hotkey::hotkey::{Code, HotKey};
use std::str::FromStr;

/// Parses "ctrl+alt+space"-style text (case-insensitive; modifiers ctrl, alt, shift, super).
/// A lone modifier is refused: X11 cannot grab one.
pub fn parse(spec: &str) -> Result<HotKey, String> {
    let spec = spec.trim();
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
