//! The `[context]` config section (issue 41): the text around the cursor, read through
//! accessibility (`crate::context::atspi`), used to fit a dictation into it and, for a local
//! LLM, as context. Documented with its defaults in `config::DEFAULT_TOML`. A leaf.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct ContextConfig {
    /// Read the text around the cursor (where the focused app exposes it) to fit the words
    /// in: a capital or not, a space at each side or not, no final period mid-sentence.
    pub around_cursor: bool,
    /// Apps whose text is never read (window class, app id, program or Flatpak id).
    pub opt_out: Vec<String>,
    /// Give the LLM the app, the window title and the text before the cursor, fenced as data,
    /// when the LLM server is on this machine.
    pub llm: bool,
    /// ... and when it is on another machine too.
    pub llm_remote: bool,
    /// How long one read may take, in ms; past it the text is typed as today.
    pub budget_ms: u32,
    /// Turn on the desktop's accessibility switch while Dictum runs, so that Qt and
    /// Chromium/Electron apps expose their text too (GTK apps always do); turned off again
    /// when this is turned off, if Dictum turned it on.
    pub switch_on_accessibility: bool,
}

/// The apps whose text is never read unless the user's list replaces this one: password
/// managers and the desktops' password prompts.
pub const DEFAULT_OPT_OUT: &[&str] = &[
    "keepassxc",
    "org.keepassxc.KeePassXC",
    "keepass",
    "keepass2",
    "keepassx",
    "1password",
    "bitwarden",
    "com.bitwarden.desktop",
    "enpass",
    "seahorse",
    "org.gnome.seahorse.Application",
    "gcr-prompter",
    "gnome-keyring",
    "kwalletmanager5",
    "org.kde.kwalletmanager5",
    "org.gnome.World.Secrets",
    "gnome-secrets",
    "keeweb",
    "proton-pass",
    "pinentry",
];

/// The default opt-out list as owned strings (the shape a config list has).
pub fn default_opt_out() -> Vec<String> {
    DEFAULT_OPT_OUT.iter().map(|s| s.to_string()).collect()
}

/// The range `budget_ms` may take.
pub const BUDGET_MS: std::ops::RangeInclusive<u32> = 10..=2000;

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            around_cursor: true,
            opt_out: default_opt_out(),
            llm: true,
            llm_remote: false,
            budget_ms: 150,
            switch_on_accessibility: false,
        }
    }
}

impl ContextConfig {
    /// Checks values. Err(key, reason).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !BUDGET_MS.contains(&self.budget_ms) {
            return Err((
                "context.budget_ms",
                format!(
                    "{} is out of range ({}-{} ms)",
                    self.budget_ms,
                    BUDGET_MS.start(),
                    BUDGET_MS.end()
                ),
            ));
        }
        Ok(())
    }

    /// How long one read may take.
    pub fn budget(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.budget_ms))
    }

    /// Whether the desktop's accessibility switch should be on for Dictum.
    pub fn wants_accessibility(&self) -> bool {
        self.around_cursor && self.switch_on_accessibility
    }

    /// Whether the LLM may be given the context, for a server at `loopback` or not.
    pub fn llm_allowed(&self, loopback: bool) -> bool {
        self.llm && (loopback || self.llm_remote)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_read_locally_and_check_the_budget() {
        let c = ContextConfig::default();
        assert!(c.around_cursor && c.llm && !c.llm_remote);
        assert!(c.opt_out.iter().any(|a| a == "keepassxc"));
        assert!(c.llm_allowed(true));
        assert!(!c.llm_allowed(false));
        let remote = ContextConfig {
            llm_remote: true,
            ..c.clone()
        };
        assert!(remote.llm_allowed(false));
        let off = ContextConfig {
            llm: false,
            ..c.clone()
        };
        assert!(!off.llm_allowed(true));
        assert!(c.validate().is_ok());
        let bad = ContextConfig { budget_ms: 5, ..c };
        assert_eq!(bad.validate().map_err(|e| e.0), Err("context.budget_ms"));
    }
}
