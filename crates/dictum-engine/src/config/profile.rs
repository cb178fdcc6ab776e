//! The `[[profile]]` tables (per-app overrides, `profile.rs`) as written in the config file,
//! and their checks: a unique name, at least one pattern, valid regular expressions, a known
//! language (a `task` is checked against the model by `Config::validate`). The patterns compiled here are the ones `profile::Profiles` matches with.

use super::inject::InjectMethod;
use super::stt::SttTask;
use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The name of the profile used when no `[[profile]]` matches or the app is unknown.
pub const DEFAULT_PROFILE: &str = "default";

/// Largest compiled pattern (bytes); a user's window pattern never needs more.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// One `[[profile]]` table, as written in the config file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct ProfileConfig {
    /// Shown in history, events and the log; unique; not "default".
    pub name: String,
    /// Regex searched (any case) in the focused window's class / Wayland app id.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub match_class: Option<String>,
    /// Regex searched (any case) in the focused window's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub match_title: Option<String>,
    /// "type" or "paste" instead of `[inject] method`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub inject_method: Option<InjectMethod>,
    /// LLM cleanup on or off instead of `[llm] enabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub llm: Option<bool>,
    /// The LLM's system prompt instead of `[llm] system_prompt` (`{vocabulary}` works).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub llm_prompt: Option<String>,
    /// Replaces `[stt] vocabulary` (whisper's prompt and the LLM's vocabulary line).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub vocabulary: Option<Vec<String>>,
    /// Replaces `[stt] language` (a two-letter code or "auto").
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub language: Option<String>,
    /// Replaces `[stt] task`: "translate" types English whatever language is spoken
    /// (multilingual models only), "transcribe" the language spoken.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub task: Option<SttTask>,
    /// Voice commands on or off for this app.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub commands: Option<bool>,
    /// false: one final "." is dropped (terminals, search boxes).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub trailing_period: Option<bool>,
    /// Whether the window counts as a terminal (key commands only said alone, snippet line
    /// breaks as spaces). Only a profile with `match_class` decides it; false is the way out
    /// of a false positive (an editor whose process holds a pseudo-terminal).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub terminal: Option<bool>,
    /// The style (`[[style]]`) this app's dictations are written in unless one is picked at
    /// the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub style: Option<String>,
}

/// Why a `[[profile]]` table is refused: the key (`profile "name".match_class`) and why.
pub type ProfileError = (String, String);

/// One table's name (trimmed) and compiled patterns.
#[derive(Debug, Clone)]
pub struct Patterns {
    pub name: String,
    pub class: Option<Regex>,
    pub title: Option<Regex>,
}

/// Checks the `[[profile]]` tables in order and compiles their patterns; the first refusal
/// is the error.
pub fn compile_patterns(configs: &[ProfileConfig]) -> Result<Vec<Patterns>, ProfileError> {
    let mut list = Vec::with_capacity(configs.len());
    for (i, p) in configs.iter().enumerate() {
        let name = p.name.trim();
        if name.is_empty() {
            return Err((
                format!("profile #{}.name", i + 1),
                "every [[profile]] needs a name".into(),
            ));
        }
        if name.eq_ignore_ascii_case(DEFAULT_PROFILE) {
            return Err((
                format!("profile \"{name}\".name"),
                "\"default\" is the name of the built-in profile; choose another".into(),
            ));
        }
        if configs[..i].iter().any(|q| q.name.trim() == name) {
            return Err((
                format!("profile \"{name}\".name"),
                "two profiles have this name; names must be unique".into(),
            ));
        }
        let blank = |s: &Option<String>| s.as_deref().is_none_or(|s| s.trim().is_empty());
        if blank(&p.match_class) && blank(&p.match_title) {
            return Err((
                format!("profile \"{name}\""),
                "needs match_class and/or match_title (a regular expression on the \
                     window's class or title)"
                    .into(),
            ));
        }
        let compile = |key: &str, s: &Option<String>| {
            s.as_deref()
                .filter(|s| !s.trim().is_empty())
                .map(|s| compile_pattern(name, key, s))
                .transpose()
        };
        let class = compile("match_class", &p.match_class)?;
        let title = compile("match_title", &p.match_title)?;
        if let Some(lang) = p.language.as_deref() {
            if lang != "auto" && whisper_rs::get_lang_id(lang).is_none() {
                return Err((
                    format!("profile \"{name}\".language"),
                    "unknown language code; use a two-letter code like \"en\" or \"auto\"".into(),
                ));
            }
        }
        list.push(Patterns {
            name: name.to_string(),
            class,
            title,
        });
    }
    Ok(list)
}

fn compile_pattern(name: &str, key: &str, pattern: &str) -> Result<Regex, ProfileError> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            // regex's messages span lines (the pattern, a caret, the error): keep the last.
            let msg = e.to_string();
            let why = msg
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid")
                .trim()
                .trim_start_matches("error: ")
                .to_string();
            (
                format!("profile \"{name}\".{key}"),
                format!("`{pattern}` is not a valid regular expression: {why}"),
            )
        })
}
