//! The `[commands]` config section: which spoken commands act, and your own. Documented with
//! its defaults in `config::DEFAULT_TOML`.

// The two imports above this layer (docs/ARCHITECTURE.md "Module graph"): the phrase and
// key-chord syntax belong to the commands feature; both are leaves that import nothing from
// the crate, so no circle runs through here.
use crate::commands::keys::parse_keys;
use crate::commands::phrase::words;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The built-in commands' names (what `[commands] disabled` takes).
pub const BUILT_IN_NAMES: &[&str] = &[
    "new line",
    "new paragraph",
    "press enter",
    "tab",
    "scratch that",
    "undo",
    "stop dictation",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct CommandsConfig {
    /// Spoken commands ("new line", "scratch that"…) act instead of being typed.
    pub enabled: bool,
    /// "comma", "period", "question mark"… become punctuation marks.
    pub punctuation: bool,
    /// Built-in commands turned off, by name ("undo", "tab"…).
    pub disabled: Vec<String>,
    /// Your own commands: a phrase and the keys it presses.
    pub custom: Vec<CustomCommand>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CustomCommand {
    /// What you say, e.g. "save the file" (matched like the built-ins: alone, or at the end).
    pub phrase: String,
    /// Keys pressed, chords separated by spaces: "ctrl+s", "Return Return", "ctrl+shift+t".
    pub keys: String,
}

impl Default for CommandsConfig {
    fn default() -> Self {
        CommandsConfig {
            enabled: true,
            punctuation: false,
            disabled: Vec::new(),
            custom: Vec::new(),
        }
    }
}

impl CommandsConfig {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        for name in &self.disabled {
            if !BUILT_IN_NAMES.contains(&name.trim().to_lowercase().as_str()) {
                return Err((
                    "commands.disabled",
                    format!(
                        "{name:?} is not a built-in command; the names are: {}",
                        BUILT_IN_NAMES.join(", ")
                    ),
                ));
            }
        }
        for c in &self.custom {
            if words(&c.phrase).is_empty() {
                return Err((
                    "commands.custom",
                    format!("the phrase {:?} has no words", c.phrase),
                ));
            }
            if let Err(e) = parse_keys(&c.keys) {
                return Err((
                    "commands.custom",
                    format!("\"{}\": keys {:?}: {e}", c.phrase, c.keys),
                ));
            }
        }
        Ok(())
    }
}
