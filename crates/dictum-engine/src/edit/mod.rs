//! Edit mode (issue 30): select text, hold the edit hotkey (`[edit] hotkey`, or `dictum ctl
//! edit-press` / `edit-release`), say what to do with it, let go: the LLM's answer is typed
//! over the selection.
//!
//! The flow, on the dictation's own threads and parts (no second recorder, no second model):
//! - **press** (controller, `dictation/controller/edit.rs`): [`check_press`] says whether an
//!   edit can start (edit mode on, an LLM set up, a selection read by `selection.rs`, a window
//!   known by `focus.rs` and not a terminal); then a push-to-talk recording starts as for a
//!   dictation, with [`profile_for`] (no voice commands, no cleanup: the instruction is not
//!   text to type), its history row marked `mode = 'edit'` with the selection
//!   (`store::edit`), and the [`Request`] left for the injector.
//! - **release**: the worker transcribes the instruction like any dictation (streaming,
//!   snippets and replacements included); the injector, instead of typing it, hands it to
//!   `deliver.rs`: the LLM request with its own prompt (`prompt.rs`, `llm.rs`), the answer
//!   made safe to type (`answer.rs`), the focus checked again, the selection kept on the
//!   clipboard (`clipboard.rs`), the answer typed over the selection (the app's Ctrl+Z undoes
//!   it), and the row completed: `raw_text` the instruction, `text` the answer, the LLM's
//!   timings.
//! - Refusals (nothing typed, a notice, a log line, the reason on the row when there is one):
//!   edit mode off, no LLM, no selection, a selection too long, the focus unknown or a
//!   terminal at the press; no instruction heard, an LLM error or timeout, an empty or
//!   runaway answer, the focus moved, at the release.

pub mod answer;
pub mod clipboard;
pub(crate) mod deliver;
pub mod focus;
pub mod llm;
pub mod prompt;
pub mod selection;

use crate::config::Config;
use crate::profile::Profile;
use std::time::Instant;

/// What the press captured, for the injector at the release.
#[derive(Debug, Clone)]
pub struct Request {
    /// The selected text the instruction is about.
    pub selection: String,
    /// The window focused at the press ([`focus::key`]).
    pub focus: String,
    pub pressed_at: Instant,
}

/// What was found at the press.
#[derive(Debug, Clone)]
pub struct AtPress {
    /// The selection as read (`Err`: it cannot be read in this session, and why).
    pub selection: Result<String, String>,
    /// The focused window's name, when known.
    pub focus: Option<String>,
    /// The focused window is a terminal (`[inject] terminal_classes`).
    pub terminal: bool,
}

/// Whether an edit may start now; the refusal is the message shown (nothing is recorded).
pub fn check_press(config: &Config, found: AtPress, now: Instant) -> Result<Request, String> {
    if !config.edit.enabled {
        return Err(
            "edit mode is off; set [edit] enabled = true (and an LLM in [llm]) to edit the \
             selection by voice"
                .into(),
        );
    }
    if !config.llm.enabled {
        return Err(no_llm());
    }
    let selection = found.selection.map_err(|e| format!("edit: {e}"))?;
    if selection.trim().is_empty() {
        return Err(
            "edit: nothing is selected; select the text to change first, then hold the edit key"
                .into(),
        );
    }
    let chars = selection.chars().count();
    let max = config.edit.max_selection_chars as usize;
    if chars > max {
        return Err(format!(
            "edit: the selection is {chars} characters, more than [edit] max_selection_chars \
             ({max}); select less, or raise the limit"
        ));
    }
    if found.terminal {
        return Err(
            "edit: the focused window is a terminal, where typing does not replace the \
             selection; nothing is done"
                .into(),
        );
    }
    let Some(focus) = found.focus else {
        return Err(
            "edit: cannot tell which window has the focus, so the answer could land in another \
             one; edit mode needs X11 or a compositor that names the focused window"
                .into(),
        );
    };
    Ok(Request {
        selection,
        focus,
        pressed_at: now,
    })
}

/// The refusal when no LLM is set up.
pub fn no_llm() -> String {
    "edit: no LLM is set up; set [llm] enabled = true with its backend, url and model (a \
     profile with llm = false still turns cleanup off where you want it)"
        .into()
}

/// The profile the instruction is recorded with: the focused window's (its language,
/// vocabulary, injection method, name on the row), without voice commands or cleanup.
pub fn profile_for(picked: &Profile) -> Profile {
    Profile {
        llm: Some(false),
        commands: Some(false),
        trailing_period: None,
        ..picked.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(enabled: bool, llm: bool) -> Config {
        let mut c = Config::default();
        c.edit.enabled = enabled;
        c.llm.enabled = llm;
        c
    }

    fn found(selection: &str) -> AtPress {
        AtPress {
            selection: Ok(selection.into()),
            focus: Some("x11:7".into()),
            terminal: false,
        }
    }

    #[test]
    fn an_edit_starts_with_a_selection_an_llm_and_a_known_window() {
        let r =
            check_press(&config(true, true), found("Some text."), Instant::now()).expect("starts");
        assert_eq!(r.selection, "Some text.");
        assert_eq!(r.focus, "x11:7");
    }

    #[test]
    fn each_refusal_says_what_to_do() {
        let now = Instant::now();
        let refused = |c: &Config, f: AtPress| check_press(c, f, now).expect_err("refused");
        assert!(refused(&config(false, true), found("x")).contains("[edit] enabled"));
        assert!(refused(&config(true, false), found("x")).contains("[llm] enabled"));
        assert!(refused(&config(true, true), found("  \n")).contains("nothing is selected"));
        let mut small = config(true, true);
        small.edit.max_selection_chars = 3;
        assert!(refused(&small, found("four")).contains("max_selection_chars"));
        let unreadable = AtPress {
            selection: Err("cannot read the selected text on this Wayland desktop".into()),
            ..found("x")
        };
        assert!(refused(&config(true, true), unreadable).contains("Wayland"));
        let terminal = AtPress {
            terminal: true,
            ..found("ls -la")
        };
        assert!(refused(&config(true, true), terminal).contains("terminal"));
        let unknown = AtPress {
            focus: None,
            ..found("x")
        };
        assert!(refused(&config(true, true), unknown).contains("which window"));
    }

    #[test]
    fn the_control_socket_and_stdin_take_edit_press_and_release() {
        use crate::dictation::{control::parse_command, Command};
        assert!(matches!(
            parse_command("edit-press"),
            Ok(Command::EditPress)
        ));
        assert!(matches!(
            parse_command("edit-release"),
            Ok(Command::EditRelease)
        ));
        let typo = parse_command("edit").expect_err("unknown");
        assert!(typo.contains("edit-press, edit-release"), "{typo}");
    }

    #[test]
    fn the_instruction_is_neither_cleaned_nor_a_command() {
        let picked = Profile {
            name: "writing".into(),
            language: Some("de".into()),
            llm: Some(true),
            commands: Some(true),
            trailing_period: Some(false),
            ..Profile::default()
        };
        let p = profile_for(&picked);
        assert_eq!(p.name, "writing");
        assert_eq!(p.language.as_deref(), Some("de"));
        assert_eq!(p.llm, Some(false));
        assert_eq!(p.commands, Some(false));
        assert_eq!(p.trailing_period, None);
    }
}
