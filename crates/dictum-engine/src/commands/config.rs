//! The `[commands]` config section: which spoken commands act, and your own. Documented with
//! its defaults in `config::DEFAULT_TOML`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

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
            if !super::BUILT_IN_NAMES.contains(&name.trim().to_lowercase().as_str()) {
                return Err((
                    "commands.disabled",
                    format!(
                        "{name:?} is not a built-in command; the names are: {}",
                        super::BUILT_IN_NAMES.join(", ")
                    ),
                ));
            }
        }
        for c in &self.custom {
            if super::words(&c.phrase).is_empty() {
                return Err((
                    "commands.custom",
                    format!("the phrase {:?} has no words", c.phrase),
                ));
            }
            if let Err(e) = super::parse_keys(&c.keys) {
                return Err((
                    "commands.custom",
                    format!("\"{}\": keys {:?}: {e}", c.phrase, c.keys),
                ));
            }
        }
        Ok(())
    }
}
