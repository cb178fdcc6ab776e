//! The `[[style]]` tables: how one dictation is written (the LLM's prompt, the LLM on or off,
//! the final period, another LLM model), picked per dictation at the key. A style is picked
//! by a modifier held with the dictation hotkey (`modifier = "shift"`: shift+ctrl+alt+space),
//! by a key of its own (`hotkey`), by `dictum ctl press --style NAME`, per app by a profile's
//! `style`, or for every dictation by `[dictation] style` (the tray menu sets it). What a
//! style changes is applied to that dictation only (`profile::Profile::with_style`).
//!
//! No `[[style]]` table in the config means the built-in ones ([`builtin`]); a config with
//! tables has exactly those.

use super::hotkey::{parse_binding, Binding};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Longest style name: it is stored in every row and shown in the indicator.
pub const NAME_MAX: usize = 40;

/// One `[[style]]` table, as written in the config file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(default, deny_unknown_fields)]
#[ts(export)]
pub struct StyleConfig {
    /// Unique; letters, digits, '-' and '_' (it is a word of `dictum ctl press --style`).
    pub name: String,
    /// The LLM's system prompt for this style (`{vocabulary}` works); none or empty: the
    /// configured `[llm] system_prompt` (or the profile's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub prompt: Option<String>,
    /// LLM cleanup on or off for this style; none: as the profile or `[llm] enabled` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub llm: Option<bool>,
    /// false: one final "." is dropped (chat lines, commit subjects).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub trailing_period: Option<bool>,
    /// Another model of the same LLM server (`[llm] model` otherwise); `num_ctx` and
    /// `keep_alive` stay `[llm]`'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    /// A modifier held with the dictation hotkey picks this style: "shift", "super", "ctrl"
    /// or "alt" (not one the hotkey has already). Grabbed on X11.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub modifier: Option<String>,
    /// A key of its own that dictates in this style (held like the dictation hotkey; same
    /// syntax). Grabbed on X11.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hotkey: Option<String>,
}

/// The styles a config without `[[style]]` tables has. Every prompt keeps the cleanup's
/// rule (no words added or dropped): the guard (`llm/guard`) discards output that is not a
/// faithful cleanup, whatever the style asked for.
pub fn builtin() -> Vec<StyleConfig> {
    let style = |name: &str, llm: bool, prompt: Option<&str>, period: Option<bool>| StyleConfig {
        name: name.into(),
        prompt: prompt.map(str::to_string),
        llm: Some(llm),
        trailing_period: period,
        ..StyleConfig::default()
    };
    vec![
        style("spoken", false, None, None),
        style("clean", true, None, None),
        style("formal", true, Some(FORMAL), None),
        style("chat", true, Some(CHAT), Some(false)),
        style("commit", true, Some(COMMIT), Some(false)),
    ]
}

const FORMAL: &str = "Style: formal. You clean up dictated text for a letter or a report. The \
user message is a raw speech-to-text transcript. Fix punctuation, capitalization and obvious \
transcription errors, drop filler words (um, uh) and write contractions out in full (don't -> \
do not). Keep every other word and its meaning; add nothing. Output only the cleaned text, \
no quotes.{vocabulary}";

const CHAT: &str = "Style: chat. You clean up a dictated chat message. The user message is a \
raw speech-to-text transcript. Fix obvious transcription errors and drop filler words (um, uh); \
keep it casual, lower-case where a chat line would be, with light punctuation. Keep every \
other word; add nothing. Output only the cleaned text, no quotes.{vocabulary}";

const COMMIT: &str = "Style: commit. You clean up a dictated commit message or code comment. \
The user message is a raw speech-to-text transcript. Fix obvious transcription errors, drop \
filler words (um, uh), start with a capital letter and write identifiers as they are spoken. \
Keep every other word; add nothing. Output only the cleaned text, no quotes.{vocabulary}";

/// The styles in force: the config's tables, or the built-in ones when it has none.
pub fn in_force(tables: &[StyleConfig]) -> Vec<StyleConfig> {
    if tables.is_empty() {
        builtin()
    } else {
        tables.to_vec()
    }
}

/// The style named `name` (any case) among those in force.
pub fn find(tables: &[StyleConfig], name: &str) -> Option<StyleConfig> {
    let name = name.trim();
    in_force(tables)
        .into_iter()
        .find(|s| s.name.eq_ignore_ascii_case(name))
}

/// Modifiers a style may add to the dictation hotkey.
pub const MODIFIERS: &[&str] = &["shift", "ctrl", "alt", "super"];

/// The key a style's modifier makes of the dictation hotkey ("shift" + "ctrl+alt+space" =
/// "shift+ctrl+alt+space"); `Err` when the hotkey is a mouse button or already holds it.
pub fn with_modifier(hotkey: &str, modifier: &str) -> Result<String, String> {
    let m = modifier.trim().to_ascii_lowercase();
    if !MODIFIERS.contains(&m.as_str()) {
        return Err(format!(
            "modifier `{}` is not one of {}",
            modifier.trim(),
            MODIFIERS.join(", ")
        ));
    }
    let hotkey = hotkey.trim();
    if let Ok(Binding::Button(_)) = parse_binding(hotkey) {
        return Err(format!(
            "the dictation hotkey `{hotkey}` is a mouse button: give the style a key of its own (hotkey) instead of a modifier"
        ));
    }
    let held = hotkey.split('+').any(|part| {
        part.trim().eq_ignore_ascii_case(&m)
            || (m == "ctrl" && part.trim().eq_ignore_ascii_case("control"))
    });
    if held {
        return Err(format!(
            "the dictation hotkey `{hotkey}` already holds {m}: pick another modifier"
        ));
    }
    Ok(format!("{m}+{hotkey}"))
}

/// The keys that pick a style at the press, each with its style's name: the dictation
/// hotkey with a style's modifier, and a style's own key.
pub fn keys(tables: &[StyleConfig], hotkey: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in in_force(tables) {
        if let Some(m) = s.modifier.as_deref().filter(|m| !m.trim().is_empty()) {
            if let Ok(spec) = with_modifier(hotkey, m) {
                out.push((spec, s.name.clone()));
            }
        }
        if let Some(k) = s.hotkey.as_deref().filter(|k| !k.trim().is_empty()) {
            out.push((k.trim().to_string(), s.name.clone()));
        }
    }
    out
}

/// Checks the tables: names unique and plain, modifiers and keys that can be grabbed and
/// take no key Dictum already has (`taken`: the dictation hotkey, the cancel key, the edit
/// and retype keys, each with its config key). Returns the key (`style "chat".modifier`)
/// and why.
pub fn validate(
    tables: &[StyleConfig],
    hotkey: &str,
    taken: &[(&str, &str)],
) -> Result<(), (String, String)> {
    let mut seen: Vec<String> = Vec::new();
    let mut bound: Vec<(Binding, String)> = taken
        .iter()
        .filter(|(_, spec)| !spec.trim().is_empty())
        .filter_map(|(key, spec)| parse_binding(spec).ok().map(|b| (b, key.to_string())))
        .collect();
    for (i, s) in tables.iter().enumerate() {
        let name = s.name.trim();
        let at = |field: &str| format!("style \"{name}\".{field}");
        if name.is_empty() {
            return Err((
                format!("style #{}.name", i + 1),
                "a style needs a name".into(),
            ));
        }
        if name.chars().count() > NAME_MAX
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            return Err((
                at("name"),
                format!("letters, digits, '-' and '_' only, at most {NAME_MAX}"),
            ));
        }
        let lower = name.to_lowercase();
        if seen.contains(&lower) {
            return Err((at("name"), "two styles have this name".into()));
        }
        seen.push(lower);
        let mut specs = Vec::new();
        if let Some(m) = s.modifier.as_deref().filter(|m| !m.trim().is_empty()) {
            specs.push((
                "modifier",
                with_modifier(hotkey, m).map_err(|e| (at("modifier"), e))?,
            ));
        }
        if let Some(k) = s.hotkey.as_deref().filter(|k| !k.trim().is_empty()) {
            specs.push(("hotkey", k.trim().to_string()));
        }
        for (field, spec) in specs {
            let binding = parse_binding(&spec).map_err(|e| (at(field), e))?;
            if let Some((_, other)) = bound.iter().find(|(b, _)| *b == binding) {
                return Err((
                    at(field),
                    format!("`{spec}` is also {other}; pick another key"),
                ));
            }
            bound.push((binding, at(field)));
        }
    }
    Ok(())
}

/// Checks that a style named where one is picked (`[dictation] style`, a profile's
/// `style`) exists; empty names none.
pub fn check_named(tables: &[StyleConfig], name: &str) -> Result<(), String> {
    if name.trim().is_empty() || find(tables, name).is_some() {
        return Ok(());
    }
    let names: Vec<String> = in_force(tables).into_iter().map(|s| s.name).collect();
    Err(format!(
        "no style is named `{}` (the styles: {})",
        name.trim(),
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style(name: &str) -> StyleConfig {
        StyleConfig {
            name: name.into(),
            ..StyleConfig::default()
        }
    }

    #[test]
    fn no_tables_means_the_builtin_styles() {
        let names: Vec<String> = in_force(&[]).into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["spoken", "clean", "formal", "chat", "commit"]);
        assert!(validate(&builtin(), "ctrl+alt+space", &[]).is_ok());
        assert_eq!(
            find(&[], "CHAT").map(|s| s.trailing_period),
            Some(Some(false))
        );
        // Tables replace the built-in list.
        assert!(find(&[style("mine")], "chat").is_none());
        for s in builtin().iter().filter_map(|s| s.prompt.as_deref()) {
            assert!(
                s.contains("add nothing") && s.ends_with("{vocabulary}"),
                "{s}"
            );
        }
    }

    #[test]
    fn the_user_guide_example_is_a_valid_config() {
        let guide = include_str!("../../../../docs/user-guide.md");
        let section = guide
            .split("### Styles")
            .nth(1)
            .and_then(|s| s.split("```toml\n").nth(1))
            .and_then(|s| s.split("```").next())
            .unwrap_or_default();
        let (config, warnings) =
            match super::super::Config::parse(section, std::path::Path::new("user-guide.md")) {
                Ok(c) => c,
                Err(e) => panic!("{e}\n{section}"),
            };
        assert!(warnings.is_empty(), "{warnings:?}");
        let names: Vec<&str> = config.styles.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["chat", "mail"]);
        assert_eq!(
            keys(&config.styles, &config.dictation.hotkey),
            [
                ("shift+ctrl+alt+space".to_string(), "chat".to_string()),
                ("ctrl+alt+m".to_string(), "mail".to_string())
            ]
        );
        assert!(config.styles[0]
            .prompt
            .as_deref()
            .is_some_and(|p| p.contains("fillers, keep")));
    }

    #[test]
    fn a_modifier_is_added_to_the_dictation_hotkey() {
        assert_eq!(
            with_modifier("ctrl+alt+space", "Shift").as_deref(),
            Ok("shift+ctrl+alt+space")
        );
        assert!(with_modifier("ctrl+alt+space", "ctrl").is_err());
        assert!(with_modifier("control+space", "ctrl").is_err());
        assert!(with_modifier("ctrl+alt+space", "hyper").is_err());
        assert!(with_modifier("mouse:9", "shift").is_err());
        let mut s = style("chat");
        s.modifier = Some("shift".into());
        let mut t = style("mail");
        t.hotkey = Some("ctrl+alt+m".into());
        assert_eq!(
            keys(&[s, t], "ctrl+alt+space"),
            [
                ("shift+ctrl+alt+space".to_string(), "chat".to_string()),
                ("ctrl+alt+m".to_string(), "mail".to_string())
            ]
        );
    }

    #[test]
    fn bad_tables_are_refused_with_their_key() {
        let hk = "ctrl+alt+space";
        let err = |t: &[StyleConfig]| validate(t, hk, &[("dictation.hotkey", hk)]).unwrap_err();
        assert_eq!(err(&[style("")]).0, "style #1.name");
        assert_eq!(err(&[style("a b")]).0, "style \"a b\".name");
        assert_eq!(err(&[style("x"), style("X")]).0, "style \"X\".name");
        let mut own = style("mine");
        own.hotkey = Some("ctrl+alt+space".into());
        let (key, why) = err(&[own]);
        assert_eq!(key, "style \"mine\".hotkey");
        assert!(why.contains("dictation.hotkey"), "{why}");
        let (mut a, mut b) = (style("a"), style("b"));
        a.modifier = Some("shift".into());
        b.hotkey = Some("shift+ctrl+alt+space".into());
        let (key, why) = err(&[a, b]);
        assert_eq!(key, "style \"b\".hotkey");
        assert!(why.contains("style \"a\".modifier"), "{why}");
        let mut m = style("m");
        m.modifier = Some("alt".into());
        assert_eq!(err(&[m]).0, "style \"m\".modifier");
        assert!(check_named(&[], "formal").is_ok());
        assert!(check_named(&[], "").is_ok());
        assert!(check_named(&[], "nope")
            .unwrap_err()
            .contains("spoken, clean"));
    }
}
