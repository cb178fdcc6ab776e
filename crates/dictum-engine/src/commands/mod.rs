//! Offline voice commands: spoken phrases that act instead of being typed ("new line",
//! "scratch that", "stop dictation"…), matched on the transcript without an LLM, and opt-in
//! spoken punctuation ("comma", "period").
//!
//! A command acts only where a user means it: alone, or at the very end of what was said
//! ("…the report new line" is the text and a Return); never in the middle ("a new line of
//! products" stays text). Commands that are common words ("tab", "undo") act only alone.
//! The matching is in [`matcher`], the keys in [`keys`], the settings in [`config`].

pub mod config;
pub mod keys;
mod matcher;
pub(crate) mod phrase;
mod punctuation;
pub mod trust;

/// The built-in commands' names (what `[commands] disabled` takes), with the section.
pub use crate::config::commands::BUILT_IN_NAMES;
pub use config::{CommandsConfig, CustomCommand};
pub use keys::{parse_keys, Chord, Key};
pub use matcher::parse;
pub use phrase::words;
use serde::Serialize;

/// What a recognised command does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Press these keys, in order, after the text.
    Keys { keys: Vec<Chord> },
    /// Remove the previous dictation's typed text (said alone).
    ScratchThat,
    /// Do not type this dictation's text ("…scratch that" at its end).
    Discard,
    /// End hands-free listening.
    StopDictation,
}

/// A command found in a transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Spoken {
    /// The command's name ("new line", or a custom command's phrase).
    pub name: String,
    pub action: Action,
}

/// A transcript split into what is typed and the commands said at its end, in spoken order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    pub text: String,
    pub commands: Vec<Spoken>,
}

impl Parsed {
    /// The commands' names as stored in the history row (a JSON array), None when there are
    /// none.
    pub fn names_json(&self) -> Option<String> {
        names_json(self.commands.iter().map(|c| c.name.as_str()))
    }
}

/// Names as a JSON array (the history row's `commands` column); None for no names.
pub fn names_json<'a>(names: impl Iterator<Item = &'a str>) -> Option<String> {
    let names: Vec<&str> = names.collect();
    (!names.is_empty()).then(|| serde_json::to_string(&names).unwrap_or_default())
}
