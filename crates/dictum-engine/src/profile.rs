//! Per-app profiles: `[[profile]]` tables in the config, picked by the window focused at the
//! key press, each overriding a few settings for the dictations made into that window.
//!
//! ```toml
//! [[profile]]
//! name = "terminal"
//! match_class = "^(xterm|foot|kitty|alacritty)$"
//! llm = false
//! trailing_period = false
//! ```
//!
//! - Matching: `match_class` (the window's class, or Wayland app id) and `match_title` are
//!   regular expressions, searched case-insensitively (`term` matches `XTerm`; anchor with
//!   `^…$` for a whole name). With both, both must match. The first matching profile wins;
//!   none matching (or an app that cannot be known) means the built-in `default` profile,
//!   which overrides nothing.
//! - Overrides, all optional: `inject_method`, `llm` (on/off), `llm_prompt` (the system
//!   prompt), `vocabulary`, `language`, `task` ("translate": English text whatever is
//!   spoken), `commands` (voice commands on/off) and `trailing_period` (false: one final "."
//!   is dropped).
//! - The resolved [`Profile`] travels with the utterance (an `Arc<Profile>` in the
//!   controller's live utterance, the worker's chunk and finish jobs, and the injector's
//!   job): overrides apply to that dictation only; the global config is never changed.
//!
//! Validation happens when the config is loaded: a bad pattern is an error naming the
//! profile and the pattern.

use crate::config::inject::InjectMethod;
pub use crate::config::profile::{ProfileConfig, ProfileError, DEFAULT_PROFILE};
use crate::config::style::StyleConfig;
use crate::config::{Config, SttTask};
use regex::Regex;
#[cfg(test)]
use serde::Deserialize;
use serde::Serialize;
use std::sync::Arc;
use ts_rs::TS;

/// The profile one utterance runs with: the overrides of the `[[profile]]` that matched the
/// window focused at the press, or none (`name == "default"`). `None` everywhere means "as
/// the config says".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Profile {
    pub name: String,
    pub inject_method: Option<InjectMethod>,
    pub llm: Option<bool>,
    pub llm_prompt: Option<String>,
    pub vocabulary: Option<Vec<String>>,
    pub language: Option<String>,
    /// Transcribe or translate (`[stt] task`) for this utterance.
    pub task: Option<SttTask>,
    /// Voice commands on/off for this utterance (read by the voice-command stage).
    pub commands: Option<bool>,
    pub trailing_period: Option<bool>,
    /// The window counts as a terminal or not (`inject/gate.rs`); only a profile matched by
    /// class decides it.
    pub terminal: Option<bool>,
    /// The profile has a `match_class` pattern: it was picked by the window's class or app
    /// id, not by its title alone (a title can be set by what runs in a terminal). Only
    /// such a profile can turn voice commands on or say the window is no terminal.
    pub by_class: bool,
    /// The profile's own `style` (`[[profile]] style`): the one its dictations are written
    /// in unless another is picked at the key.
    pub default_style: Option<String>,
    /// The style this utterance is written in (`[[style]]`), applied by [`Profile::with_style`].
    pub style: Option<String>,
    /// Another LLM model for this utterance (a style's `model`).
    pub llm_model: Option<String>,
}

impl Default for Profile {
    fn default() -> Profile {
        Profile {
            name: DEFAULT_PROFILE.into(),
            inject_method: None,
            llm: None,
            llm_prompt: None,
            vocabulary: None,
            language: None,
            task: None,
            commands: None,
            trailing_period: None,
            terminal: None,
            by_class: false,
            default_style: None,
            style: None,
            llm_model: None,
        }
    }
}

impl From<&ProfileConfig> for Profile {
    fn from(p: &ProfileConfig) -> Profile {
        Profile {
            name: p.name.clone(),
            inject_method: p.inject_method,
            llm: p.llm,
            llm_prompt: p.llm_prompt.clone(),
            vocabulary: p.vocabulary.clone(),
            language: p.language.clone(),
            task: p.task,
            commands: p.commands,
            trailing_period: p.trailing_period,
            terminal: p.terminal,
            by_class: p.match_class.is_some(),
            default_style: p.style.clone().filter(|s| !s.trim().is_empty()),
            style: None,
            llm_model: None,
        }
    }
}

impl Profile {
    /// The built-in profile that overrides nothing.
    pub fn default_arc() -> Arc<Profile> {
        Arc::new(Profile::default())
    }

    pub fn is_default(&self) -> bool {
        self.name == DEFAULT_PROFILE
    }

    /// This profile with `style` over it: the style's prompt, LLM on/off, final period and
    /// model win over the profile's for this utterance; the rest stays the profile's.
    pub fn with_style(&self, style: &StyleConfig) -> Profile {
        let mut p = self.clone();
        if let Some(prompt) = style.prompt.as_ref().filter(|p| !p.trim().is_empty()) {
            p.llm_prompt = Some(prompt.clone());
        }
        p.llm = style.llm.or(p.llm);
        p.trailing_period = style.trailing_period.or(p.trailing_period);
        p.llm_model = style.model.clone().filter(|m| !m.trim().is_empty());
        p.style = Some(style.name.clone());
        p
    }

    /// The key of the LLM client this profile needs: the profile and its style (each pair
    /// may ask for another prompt or model).
    pub fn llm_key(&self) -> String {
        match &self.style {
            Some(style) => format!("{}/{style}", self.name),
            None => self.name.clone(),
        }
    }

    /// The spoken language for this utterance.
    pub fn language<'a>(&'a self, config: &'a Config) -> &'a str {
        self.language.as_deref().unwrap_or(&config.stt.language)
    }

    /// Transcribe or translate, for this utterance.
    pub fn task(&self, config: &Config) -> SttTask {
        self.task.unwrap_or(config.stt.task)
    }

    /// The language whisper (or the speech server) is told for this utterance: the
    /// profile's or the config's, except that translating from "en" means detecting it
    /// (`config::stt::source_language`).
    pub fn source_language<'a>(&'a self, config: &'a Config) -> &'a str {
        crate::config::stt::source_language(self.language(config), self.task(config))
    }

    /// The vocabulary for this utterance (whisper's prompt, the LLM's vocabulary line).
    pub fn vocabulary<'a>(&'a self, config: &'a Config) -> &'a [String] {
        self.vocabulary.as_deref().unwrap_or(&config.stt.vocabulary)
    }

    /// Whether the LLM cleans this utterance.
    pub fn llm_enabled(&self, config: &Config) -> bool {
        self.llm.unwrap_or(config.llm.enabled)
    }

    /// The injection method for this utterance.
    pub fn inject_method(&self, config: &Config) -> InjectMethod {
        self.inject_method.unwrap_or(config.inject.method)
    }

    /// Whether voice commands are matched in this utterance, given the configured default.
    pub fn commands_enabled(&self, configured: bool) -> bool {
        self.commands.unwrap_or(configured)
    }

    /// Whether this profile turns key commands on where they are otherwise off (hands-free
    /// in a terminal): `commands = true` in a profile matched by class. A title-only match
    /// never does (a terminal's title is set by what runs in it).
    pub fn allows_keys(&self) -> bool {
        self.by_class && self.commands == Some(true)
    }

    /// What this profile says about the window being a terminal: only a profile matched by
    /// class says anything.
    pub fn says_terminal(&self) -> Option<bool> {
        self.terminal.filter(|_| self.by_class)
    }

    /// True when the LLM needs a cleaner of its own for this profile (another prompt or
    /// vocabulary than the config's).
    pub fn changes_llm_request(&self, config: &Config) -> bool {
        self.llm_model
            .as_ref()
            .is_some_and(|m| *m != config.llm.model)
            || self
                .llm_prompt
                .as_ref()
                .is_some_and(|p| *p != config.llm.system_prompt)
            || self
                .vocabulary
                .as_ref()
                .is_some_and(|v| *v != config.stt.vocabulary)
    }

    /// `config` with every override of this profile applied (a copy; the config itself is
    /// never changed).
    pub fn applied_to(&self, config: &Config) -> Config {
        let mut c = config.clone();
        if let Some(l) = &self.language {
            c.stt.language = l.clone();
        }
        if let Some(v) = &self.vocabulary {
            c.stt.vocabulary = v.clone();
        }
        if let Some(t) = self.task {
            c.stt.task = t;
        }
        if let Some(on) = self.llm {
            c.llm.enabled = on;
        }
        if let Some(p) = &self.llm_prompt {
            c.llm.system_prompt = p.clone();
        }
        if let Some(m) = &self.llm_model {
            c.llm.model = m.clone();
        }
        if let Some(m) = self.inject_method {
            c.inject.method = m;
        }
        c
    }

    /// The text to type: with `trailing_period = false`, one final "." is dropped (not an
    /// ellipsis).
    pub fn finish_text(&self, text: &str) -> String {
        if self.trailing_period != Some(false) {
            return text.to_string();
        }
        let trimmed = text.trim_end();
        match trimmed.strip_suffix('.') {
            Some(rest) if !rest.ends_with('.') => rest.to_string(),
            _ => text.to_string(),
        }
    }
}

/// One profile ready to match.
#[derive(Debug, Clone)]
struct Compiled {
    profile: Arc<Profile>,
    class: Option<Regex>,
    title: Option<Regex>,
}

/// The config's profiles, compiled, in order.
#[derive(Debug, Clone, Default)]
pub struct Profiles {
    list: Vec<Compiled>,
    default: Arc<Profile>,
}

impl Profiles {
    /// Compiles and checks the `[[profile]]` tables: each needs a unique name (not
    /// "default") and at least one pattern; patterns must be valid regular expressions and
    /// a language a known code (the checks are the section's, `config/profile.rs`).
    pub fn compile(configs: &[ProfileConfig]) -> Result<Profiles, ProfileError> {
        let patterns = crate::config::profile::compile_patterns(configs)?;
        let list = configs
            .iter()
            .zip(patterns)
            .map(|(p, patterns)| {
                let mut profile = Profile::from(p);
                profile.name = patterns.name;
                profile.by_class = patterns.class.is_some();
                Compiled {
                    profile: Arc::new(profile),
                    class: patterns.class,
                    title: patterns.title,
                }
            })
            .collect();
        Ok(Profiles {
            list,
            default: Profile::default_arc(),
        })
    }

    /// The profile for a window: the first whose patterns all match, else `default`. A
    /// pattern on something the window does not have (no title) does not match.
    pub fn pick(&self, class: Option<&str>, title: Option<&str>) -> Arc<Profile> {
        let hit = |re: &Option<Regex>, s: Option<&str>| match re {
            None => true,
            Some(re) => s.is_some_and(|s| re.is_match(s)),
        };
        self.list
            .iter()
            .find(|c| hit(&c.class, class) && hit(&c.title, title))
            .map_or_else(|| self.default.clone(), |c| c.profile.clone())
    }

    /// The built-in profile (no overrides).
    pub fn default_profile(&self) -> Arc<Profile> {
        self.default.clone()
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// A window as the settings panel's "use the window focused 3 seconds from now" picker
/// sees it, through the probe dictation uses at a key press.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct FocusedWindow {
    pub class: Option<String>,
    pub title: Option<String>,
    /// False where the focused app cannot be known (GNOME/KDE Wayland, no display):
    /// dictations there use the default profile.
    pub known: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prof(name: &str, class: Option<&str>, title: Option<&str>) -> ProfileConfig {
        ProfileConfig {
            name: name.into(),
            match_class: class.map(Into::into),
            match_title: title.map(Into::into),
            ..ProfileConfig::default()
        }
    }

    fn compiled(list: &[ProfileConfig]) -> Profiles {
        match Profiles::compile(list) {
            Ok(p) => p,
            Err(e) => panic!("{e:?}"),
        }
    }

    #[test]
    fn only_a_class_matched_profile_turns_keys_on_or_says_no_terminal() {
        let with = |p: ProfileConfig| ProfileConfig {
            commands: Some(true),
            terminal: Some(false),
            ..p
        };
        let list = compiled(&[
            with(prof("by-title", None, Some("^vim"))),
            with(prof("by-class", Some("^gedit$"), None)),
        ]);
        // A terminal titled "vim notes" (OSC 0 sets it): the title-only profile is picked
        // but turns nothing on and says nothing about the terminal.
        let p = list.pick(Some("XTerm"), Some("vim notes"));
        assert_eq!(p.name, "by-title");
        assert!(!p.allows_keys());
        assert_eq!(p.says_terminal(), None);
        let p = list.pick(Some("gedit"), Some("notes.txt"));
        assert_eq!(p.name, "by-class");
        assert!(p.allows_keys());
        assert_eq!(p.says_terminal(), Some(false));
        assert!(!Profile::default().allows_keys());
    }

    #[test]
    fn class_patterns_are_searched_in_any_case() {
        let p = compiled(&[prof("term", Some("xterm|kitty"), None)]);
        assert_eq!(p.pick(Some("XTerm"), Some("bash")).name, "term");
        assert_eq!(p.pick(Some("UXTerm"), None).name, "term");
        assert_eq!(p.pick(Some("Kitty"), None).name, "term");
        assert_eq!(p.pick(Some("Firefox"), None).name, "default");
        let anchored = compiled(&[prof("term", Some("^xterm$"), None)]);
        assert_eq!(anchored.pick(Some("UXTerm"), None).name, "default");
        assert_eq!(anchored.pick(Some("XTerm"), None).name, "term");
    }

    #[test]
    fn both_patterns_must_match_when_both_are_given() {
        let p = compiled(&[prof("gmail", Some("firefox"), Some("gmail"))]);
        assert_eq!(p.pick(Some("firefox"), Some("Inbox - Gmail")).name, "gmail");
        assert_eq!(p.pick(Some("firefox"), Some("GitHub")).name, "default");
        assert_eq!(p.pick(Some("chromium"), Some("Gmail")).name, "default");
        // A title pattern never matches a window without a title.
        assert_eq!(p.pick(Some("firefox"), None).name, "default");
    }

    #[test]
    fn the_first_matching_profile_wins() {
        let p = compiled(&[
            prof("mail", None, Some("mail")),
            prof("browser", Some("firefox"), None),
        ]);
        assert_eq!(p.pick(Some("firefox"), Some("Mail - Outlook")).name, "mail");
        assert_eq!(p.pick(Some("firefox"), Some("News")).name, "browser");
    }

    #[test]
    fn an_unknown_app_gets_the_default_profile() {
        let p = compiled(&[prof("any-title", None, Some(".*"))]);
        let d = p.pick(None, None);
        assert!(d.is_default());
        assert_eq!(*d, Profile::default());
        // A title-only profile matches whatever the class.
        assert_eq!(p.pick(None, Some("x")).name, "any-title");
        assert!(compiled(&[]).pick(Some("XTerm"), Some("t")).is_default());
    }

    #[test]
    fn a_bad_pattern_is_refused_naming_the_profile_and_the_pattern() {
        let Err((key, why)) = Profiles::compile(&[prof("mail", None, Some("(unclosed"))]) else {
            panic!("accepted a bad regex");
        };
        assert_eq!(key, "profile \"mail\".match_title");
        assert!(why.contains("`(unclosed`"), "{why}");
        assert!(!why.contains('\n'), "one line: {why}");
        let Err((key, _)) = Profiles::compile(&[prof("t", Some("[z-a]"), None)]) else {
            panic!("accepted a bad regex");
        };
        assert_eq!(key, "profile \"t\".match_class");
    }

    #[test]
    fn names_must_be_given_unique_and_not_default_and_a_pattern_is_needed() {
        let bad = [
            vec![prof("", Some("x"), None)],
            vec![prof("Default", Some("x"), None)],
            vec![prof("a", Some("x"), None), prof("a", Some("y"), None)],
            vec![prof("a", None, None)],
            vec![prof("a", Some("  "), Some(""))],
            vec![ProfileConfig {
                language: Some("klingon".into()),
                ..prof("a", Some("x"), None)
            }],
        ];
        for list in bad {
            assert!(Profiles::compile(&list).is_err(), "{list:?}");
        }
        let ok = ProfileConfig {
            language: Some("de".into()),
            ..prof("a", Some("x"), None)
        };
        assert!(Profiles::compile(&[ok]).is_ok());
    }

    #[test]
    fn overrides_apply_to_a_copy_and_only_where_given() {
        let mut config = Config::default();
        config.llm.enabled = true;
        config.stt.vocabulary = vec!["Dictum".into()];
        let none = Profile::default();
        assert_eq!(none.applied_to(&config), config);
        assert!(none.llm_enabled(&config));
        assert_eq!(none.language(&config), "en");
        assert_eq!(none.vocabulary(&config), ["Dictum".to_string()]);
        assert!(!none.changes_llm_request(&config));
        assert!(none.commands_enabled(true));

        let p = Profile {
            name: "mail".into(),
            inject_method: Some(InjectMethod::Paste),
            llm: Some(false),
            llm_prompt: Some("Write full sentences.".into()),
            vocabulary: Some(vec!["Acme".into()]),
            language: Some("de".into()),
            task: Some(SttTask::Translate),
            commands: Some(false),
            trailing_period: Some(true),
            terminal: None,
            by_class: true,
            ..Profile::default()
        };
        let c = p.applied_to(&config);
        assert_eq!(c.inject.method, InjectMethod::Paste);
        assert!(!c.llm.enabled);
        assert_eq!(c.llm.system_prompt, "Write full sentences.");
        assert_eq!(c.stt.vocabulary, ["Acme".to_string()]);
        assert_eq!(c.stt.language, "de");
        assert_eq!(c.stt.task, SttTask::Translate);
        assert_eq!(p.task(&config), SttTask::Translate);
        assert_eq!(none.task(&config), SttTask::Transcribe);
        assert!(!p.llm_enabled(&config));
        assert_eq!(p.inject_method(&config), InjectMethod::Paste);
        assert_eq!(p.language(&config), "de");
        assert!(!p.commands_enabled(true));
        assert!(p.changes_llm_request(&config));
        // The config itself is untouched.
        assert!(config.llm.enabled);
        assert_eq!(config.stt.language, "en");
        assert_eq!(config.stt.task, SttTask::Transcribe);
    }

    /// A profile that only says `task = "translate"` works with the default config
    /// (language "en", which then means "detect it") as long as the model is multilingual;
    /// with the default English-only model the config is refused, naming the profile and a
    /// model to pick.
    #[test]
    fn a_translate_profile_needs_a_multilingual_model_and_detects_the_language() {
        let text = |model: &str| {
            format!(
                "[stt]\nmodel = \"{model}\"\n\n[[profile]]\nname = \"chat\"\n\
                 match_class = \"signal\"\ntask = \"translate\"\n"
            )
        };
        let path = std::path::Path::new("test.toml");
        let err = Config::parse(&text("tiny.en-q8_0"), path)
            .expect_err("translate with tiny.en")
            .to_string();
        assert!(err.contains("profile \"chat\".task"), "{err}");
        assert!(
            err.contains("English-only") && err.contains("\"tiny-q8_0\""),
            "{err}"
        );
        let (config, _) = match Config::parse(&text("base-q8_0"), path) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let chat = compiled(&config.profiles).pick(Some("Signal"), None);
        assert_eq!(chat.task(&config), SttTask::Translate);
        assert_eq!(chat.language(&config), "en");
        assert_eq!(chat.source_language(&config), "auto");
        let with_language = Profile {
            language: Some("de".into()),
            ..(*chat).clone()
        };
        assert_eq!(with_language.source_language(&config), "de");
        assert_eq!(Profile::default().source_language(&config), "en");
    }

    #[test]
    fn a_style_wins_over_the_profile_for_its_utterance_only() {
        let config = Config::default();
        let mail = Profile {
            name: "mail".into(),
            llm: Some(false),
            llm_prompt: Some("Mail.".into()),
            trailing_period: Some(true),
            ..Profile::default()
        };
        let chat = crate::config::style::find(&[], "chat").expect("built-in chat style");
        let styled = mail.with_style(&chat);
        assert_eq!(styled.style.as_deref(), Some("chat"));
        assert_eq!(styled.llm, Some(true));
        assert_eq!(styled.trailing_period, Some(false));
        assert!(styled
            .llm_prompt
            .as_deref()
            .is_some_and(|p| p.starts_with("Style: chat.")));
        assert_eq!(styled.llm_key(), "mail/chat");
        assert!(styled.changes_llm_request(&config));
        assert_eq!(mail.llm_key(), "mail");
        // "clean" has no prompt of its own: the profile's stays; a model is another request.
        let clean = crate::config::style::StyleConfig {
            model: Some("other".into()),
            ..crate::config::style::find(&[], "clean").expect("built-in clean style")
        };
        let c = mail.with_style(&clean);
        assert_eq!(c.llm_prompt.as_deref(), Some("Mail."));
        assert_eq!(c.applied_to(&config).llm.model, "other");
        assert!(Profile::default()
            .with_style(&clean)
            .changes_llm_request(&config));
        // "spoken" turns the LLM off.
        let spoken = crate::config::style::find(&[], "spoken").expect("built-in spoken style");
        assert!(!Profile::default().with_style(&spoken).llm_enabled(&config));
    }

    #[test]
    fn trailing_period_false_drops_one_final_period() {
        let keep = Profile::default();
        assert_eq!(keep.finish_text("ls -la."), "ls -la.");
        let strip = Profile {
            trailing_period: Some(false),
            ..Profile::default()
        };
        assert_eq!(strip.finish_text("git status."), "git status");
        assert_eq!(strip.finish_text("git status. "), "git status");
        assert_eq!(strip.finish_text("Wait..."), "Wait...");
        assert_eq!(strip.finish_text("Done!"), "Done!");
        assert_eq!(strip.finish_text("A. B."), "A. B");
        assert_eq!(strip.finish_text(""), "");
    }

    #[test]
    fn the_user_guide_example_is_a_valid_config() {
        let guide = include_str!("../../../docs/user-guide.md");
        let section = guide
            .split("### Per-app profiles")
            .nth(1)
            .and_then(|s| s.split("```toml\n").nth(1))
            .and_then(|s| s.split("```").next())
            .unwrap_or_default();
        let (config, warnings) = match Config::parse(section, std::path::Path::new("user-guide.md"))
        {
            Ok(c) => c,
            Err(e) => panic!("{e}\n{section}"),
        };
        assert!(warnings.is_empty(), "{warnings:?}");
        let p = compiled(&config.profiles);
        let term = p.pick(Some("org.gnome.Terminal"), Some("~"));
        assert_eq!(term.name, "terminal");
        assert_eq!(term.finish_text("ls."), "ls");
        let mail = p.pick(Some("thunderbird"), Some("Write: (no subject)"));
        assert_eq!(mail.name, "email");
        assert!(mail.changes_llm_request(&config));
        assert_eq!(p.pick(Some("thunderbird"), Some("Inbox")).name, "default");
    }

    #[test]
    fn profile_tables_parse_from_toml() {
        let text = r#"
            [[profile]]
            name = "terminal"
            match_class = "xterm"
            llm = false
            trailing_period = false
            inject_method = "paste"

            [[profile]]
            name = "email"
            match_title = "mail"
            llm_prompt = "Write full sentences."
            vocabulary = ["Acme"]
            language = "en"
            task = "translate"
            commands = false
        "#;
        #[derive(Deserialize)]
        struct W {
            profile: Vec<ProfileConfig>,
        }
        let w: W = match toml::from_str(text) {
            Ok(w) => w,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(w.profile.len(), 2);
        assert_eq!(w.profile[0].inject_method, Some(InjectMethod::Paste));
        assert_eq!(w.profile[1].commands, Some(false));
        assert_eq!(w.profile[1].task, Some(SttTask::Translate));
        let p = compiled(&w.profile);
        assert_eq!(p.len(), 2);
        assert_eq!(p.pick(Some("XTerm"), None).llm, Some(false));
    }
}
