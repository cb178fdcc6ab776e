//! The `[inject]` config section: how dictated text reaches the focused window.

use serde::{Deserialize, Serialize};

/// How text is put into the focused window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum InjectMethod {
    /// Simulated key presses (enigo over XTest; `wtype`/`ydotool` on Wayland). Works in every
    /// window, leaves the clipboard alone; about 1–2 ms per character.
    Type,
    /// Clipboard + Ctrl+V (Ctrl+Shift+V in terminals), the previous clipboard restored
    /// afterwards. Constant time whatever the length; some apps ignore synthetic Ctrl+V.
    Paste,
}

impl InjectMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            InjectMethod::Type => "type",
            InjectMethod::Paste => "paste",
        }
    }
}

/// Which path delivers the keys. `auto` picks per session and focused window (see
/// `inject::session`); the others force one path (and fail with the reason where it is not
/// available).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
#[ts(export)]
pub enum InjectBackend {
    #[default]
    Auto,
    /// XTest (X11 sessions, XWayland windows).
    X11,
    /// The Wayland virtual-keyboard protocol (wlroots compositors).
    VirtualKeyboard,
    /// The RemoteDesktop portal (GNOME, KDE).
    Portal,
    Wtype,
    /// Dictum's own uinput keyboard, keys chosen for the user's layout (needs /dev/uinput).
    Uinput,
    /// ydotool's uinput keyboard (US layout only).
    Ydotool,
}

impl InjectBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            InjectBackend::Auto => "auto",
            InjectBackend::X11 => "x11",
            InjectBackend::VirtualKeyboard => "virtual-keyboard",
            InjectBackend::Portal => "portal",
            InjectBackend::Wtype => "wtype",
            InjectBackend::Uinput => "uinput",
            InjectBackend::Ydotool => "ydotool",
        }
    }

    // `path()` (the forced `TypePath`) is in `inject/session/mod.rs`, beside `TypePath`: this
    // leaf imports nothing from the crate above it.
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(default)]
#[ts(export)]
pub struct InjectConfig {
    /// "type" (simulated key presses) or "paste" (clipboard + Ctrl+V).
    pub method: InjectMethod,
    /// "auto" (by session and focused window), or force "x11", "virtual-keyboard", "portal",
    /// "wtype", "uinput" or "ydotool".
    pub backend: InjectBackend,
    /// WM_CLASS names (instance or class, any case) of terminals: paste sends Ctrl+Shift+V there.
    pub terminal_classes: Vec<String>,
    /// Paste mode on Wayland: wait this long after Ctrl+V before restoring the previous
    /// clipboard (the target fetches the text asynchronously; restoring at once pastes the
    /// OLD text). On X11 Dictum sees the fetch and restores right after it.
    #[ts(type = "number")]
    pub paste_restore_delay_ms: u64,
    /// Append a space so consecutive dictations do not run together.
    pub trailing_space: bool,
    /// Wait up to this long for the hotkey's modifiers (Ctrl/Alt/Shift/Super) to be released
    /// before typing; keys still held after it are released by Dictum.
    #[ts(type = "number")]
    pub modifier_release_timeout_ms: u64,
    /// Desktop notification when the text could not be injected (it is on the clipboard).
    pub notify_on_failure: bool,
    /// A text longer than `max_chars_base + max_chars_per_second` × seconds of speech is not
    /// typed (it is stored; a speech server or an LLM run wild cannot type for minutes).
    #[ts(type = "number")]
    pub max_chars_per_second: u32,
}

/// Characters any dictation may have, however short its audio (a snippet, a short word
/// spelled out).
pub const MAX_CHARS_BASE: usize = 200;

/// Terminals known to paste with Ctrl+Shift+V (Ctrl+V sends a literal ^V there).
pub const DEFAULT_TERMINAL_CLASSES: &[&str] = &[
    "XTerm",
    "UXTerm",
    "URxvt",
    "Alacritty",
    "kitty",
    "Gnome-terminal",
    "org.gnome.Terminal",
    "Konsole",
    "xfce4-terminal",
    "Tilix",
    "terminator",
    "foot",
    "Wezterm",
    "org.wezfurlong.wezterm",
    "st-256color",
    "Terminology",
    "Guake",
    "Ptyxis",
    "com.mitchellh.ghostty",
];

impl Default for InjectConfig {
    fn default() -> Self {
        InjectConfig {
            method: InjectMethod::Type,
            backend: InjectBackend::Auto,
            terminal_classes: DEFAULT_TERMINAL_CLASSES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            paste_restore_delay_ms: 250,
            trailing_space: true,
            modifier_release_timeout_ms: 300,
            notify_on_failure: true,
            max_chars_per_second: 40,
        }
    }
}

impl InjectConfig {
    /// True when a window with WM_CLASS `instance`/`class` is one of `terminal_classes`
    /// (compared without regard to case).
    pub fn is_terminal(&self, instance: Option<&str>, class: Option<&str>) -> bool {
        is_terminal(&self.terminal_classes, instance, class)
    }

    /// The most characters a dictation of `audio_ms` of audio may type.
    pub fn char_budget(&self, audio_ms: Option<i64>) -> usize {
        let seconds = audio_ms.unwrap_or(0).max(0) as usize / 1000 + 1;
        MAX_CHARS_BASE + self.max_chars_per_second as usize * seconds
    }

    /// `(key, reason)` of the first invalid value.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(10..=1000).contains(&self.max_chars_per_second) {
            return Err((
                "inject.max_chars_per_second",
                "must be 10 to 1000; fast speech is about 20 characters a second".into(),
            ));
        }
        if self.paste_restore_delay_ms > 10_000 {
            return Err((
                "inject.paste_restore_delay_ms",
                "must be at most 10000 (10 s); 250 suits most apps".into(),
            ));
        }
        if self.modifier_release_timeout_ms > 5_000 {
            return Err((
                "inject.modifier_release_timeout_ms",
                "must be at most 5000 (5 s)".into(),
            ));
        }
        Ok(())
    }
}

/// Case-insensitive match of a window's WM_CLASS instance or class against `terminals`.
pub fn is_terminal(terminals: &[String], instance: Option<&str>, class: Option<&str>) -> bool {
    [instance, class]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .any(|name| {
            terminals
                .iter()
                .any(|t| t.trim().eq_ignore_ascii_case(name))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_classes_match_instance_or_class_in_any_case() {
        let c = InjectConfig::default();
        assert!(c.is_terminal(Some("xterm"), Some("XTerm")));
        assert!(c.is_terminal(None, Some("xterm")));
        assert!(c.is_terminal(Some("gnome-terminal-server"), Some("Gnome-terminal")));
        assert!(c.is_terminal(Some("org.gnome.Terminal"), None));
        assert!(c.is_terminal(Some("ALACRITTY"), Some("nope")));
        assert!(!c.is_terminal(Some("navigator"), Some("firefox")));
        assert!(!c.is_terminal(Some(""), Some("")));
        assert!(!c.is_terminal(None, None));
        // A prefix is not a match.
        assert!(!c.is_terminal(Some("xterm-like-editor"), None));
    }

    #[test]
    fn user_list_replaces_the_defaults() {
        let c = InjectConfig {
            terminal_classes: vec!["MyTerm".into()],
            ..InjectConfig::default()
        };
        assert!(c.is_terminal(Some("myterm"), None));
        assert!(!c.is_terminal(Some("xterm"), Some("XTerm")));
    }

    #[test]
    fn defaults() {
        let c = InjectConfig::default();
        assert_eq!(c.method, InjectMethod::Type);
        assert_eq!(c.paste_restore_delay_ms, 250);
        assert!(c.trailing_space);
        assert!(c.validate().is_ok());
        let bad = InjectConfig {
            paste_restore_delay_ms: 60_000,
            ..c
        };
        assert_eq!(
            bad.validate().map_err(|e| e.0),
            Err("inject.paste_restore_delay_ms")
        );
    }
}
