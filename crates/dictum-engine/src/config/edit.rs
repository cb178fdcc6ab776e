//! The `[edit]` config section (issue 30, edit mode): select text, hold the edit hotkey, say
//! what to do with it, and the LLM's answer is typed over the selection (`crate::edit`).
//! Documented with its defaults in `config::DEFAULT_TOML`. A leaf: it imports only the key
//! syntax (`hotkey.rs`) and the range check beside it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct EditConfig {
    /// Edit mode on: the edit hotkey is grabbed and `dictum ctl edit-press` works.
    pub enabled: bool,
    /// The edit hotkey (same syntax as `[dictation] hotkey`; must differ from it).
    pub hotkey: String,
    /// The system prompt of an edit; empty = the built-in one.
    pub prompt: String,
    /// Whole-request timeout of an edit's LLM request, in ms.
    #[ts(type = "number")]
    pub timeout_ms: u64,
    /// Longest selection sent to the LLM, in characters; a longer one is refused.
    pub max_selection_chars: u32,
    /// The original selection is put on the clipboard before it is replaced.
    pub keep_on_clipboard: bool,
    /// The answer's line breaks are typed as Return (never in a terminal); off: spaces.
    pub type_newlines: bool,
}

/// The built-in edit hotkey.
pub const DEFAULT_HOTKEY: &str = "ctrl+alt+e";

impl Default for EditConfig {
    fn default() -> Self {
        EditConfig {
            enabled: false,
            hotkey: DEFAULT_HOTKEY.into(),
            prompt: String::new(),
            timeout_ms: 30_000,
            max_selection_chars: 8_000,
            keep_on_clipboard: true,
            type_newlines: true,
        }
    }
}

impl EditConfig {
    /// Checks values; `dictation_hotkey` and `cancel_key` are `[dictation]`'s, which the edit
    /// hotkey must not be. Err(key, reason).
    pub fn validate(
        &self,
        dictation_hotkey: &str,
        cancel_key: &str,
    ) -> Result<(), (&'static str, String)> {
        let key = match super::hotkey::parse_binding(&self.hotkey) {
            Ok(k) => k,
            Err(e) => return Err(("edit.hotkey", e)),
        };
        if super::hotkey::parse_binding(dictation_hotkey).is_ok_and(|d| d == key) {
            return Err((
                "edit.hotkey",
                format!(
                    "`{}` is also [dictation] hotkey; pick another key for edits, e.g. \"{DEFAULT_HOTKEY}\"",
                    self.hotkey.trim()
                ),
            ));
        }
        if !cancel_key.trim().is_empty()
            && super::hotkey::parse(cancel_key).is_ok_and(|c| super::hotkey::Binding::Key(c) == key)
        {
            return Err((
                "edit.hotkey",
                format!(
                    "`{}` is also [dictation] cancel_key; pick another key for edits",
                    self.hotkey.trim()
                ),
            ));
        }
        if self
            .prompt
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t')
        {
            return Err((
                "edit.prompt",
                "contains control characters; write plain text (newlines are fine)".into(),
            ));
        }
        super::ranges::check_ranges(&[
            (
                "edit.timeout_ms",
                self.timeout_ms,
                1,
                600_000,
                " ms (600000 = 10 minutes)",
            ),
            (
                "edit.max_selection_chars",
                self.max_selection_chars.into(),
                1,
                100_000,
                " characters",
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_valid_and_off() {
        let c = EditConfig::default();
        assert!(!c.enabled);
        assert_eq!(c.validate("ctrl+alt+space", "escape"), Ok(()));
    }

    #[test]
    fn the_edit_key_must_be_its_own() {
        let c = EditConfig {
            hotkey: "Ctrl+Alt+Space".into(),
            ..EditConfig::default()
        };
        let (key, why) = c
            .validate("ctrl+alt+space", "escape")
            .expect_err("same key");
        assert_eq!(key, "edit.hotkey");
        assert!(why.contains("[dictation] hotkey"), "{why}");
        let c = EditConfig {
            hotkey: "escape".into(),
            ..EditConfig::default()
        };
        let (_, why) = c
            .validate("ctrl+alt+space", "escape")
            .expect_err("cancel key");
        assert!(why.contains("cancel_key"), "{why}");
        // The order of the modifiers does not make another key.
        let c = EditConfig {
            hotkey: "alt+ctrl+e".into(),
            ..EditConfig::default()
        };
        assert!(c.validate("ctrl+alt+e", "").is_err());
    }

    #[test]
    fn bad_values_are_named() {
        let bad = |c: EditConfig| c.validate("ctrl+alt+space", "escape").expect_err("bad").0;
        assert_eq!(
            bad(EditConfig {
                hotkey: "ctrl+alt+nosuchkey".into(),
                ..EditConfig::default()
            }),
            "edit.hotkey"
        );
        assert_eq!(
            bad(EditConfig {
                timeout_ms: 0,
                ..EditConfig::default()
            }),
            "edit.timeout_ms"
        );
        assert_eq!(
            bad(EditConfig {
                max_selection_chars: 0,
                ..EditConfig::default()
            }),
            "edit.max_selection_chars"
        );
        assert_eq!(
            bad(EditConfig {
                prompt: "rewrite\u{1b}[2J".into(),
                ..EditConfig::default()
            }),
            "edit.prompt"
        );
    }
}
