//! Which spoken commands may press keys: the rule that keeps words the user did not mean as
//! a command from acting. Text and keys stay apart; a key acts only where the user clearly
//! meant it (docs/SECURITY.md, "Voice commands: who may press a key").
//!
//! The sources of a command's words are all untrusted in the same way: the microphone hears
//! the user and whatever plays near them (a video saying "… press enter"), a speech server
//! answers what it likes ("touch pwned press enter"). The rule therefore looks only at where
//! the keys would go and how the words came, never at who transcribed them:
//!
//! | target window | push-to-talk / toggle | hands-free (no key held) |
//! |---|---|---|
//! | terminal (`[inject] terminal_classes`) | a key command acts only said alone, in its own dictation | key commands off, unless a `[[profile]]` for the window says `commands = true`; then only said alone |
//! | any other window | alone, or at the end of the text ("send the report new line") | only said alone, after a pause |
//!
//! Commands that press no key (the end-of-text "scratch that" that drops the text, "stop
//! dictation") always act. The LLM never sees the commands (they are split off before the
//! cleanup) and its output can add no key: newlines and control characters are stripped
//! before typing (`text_safety`).

use super::{Action, Spoken};
use serde::{Deserialize, Serialize};

/// How an utterance came and where its keys would go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Situation {
    /// The window that gets the keys is a terminal (at the press or at delivery).
    pub terminal: bool,
    /// Cut by hands-free listening: nobody held a key while it was said.
    pub hands_free: bool,
    /// The window's `[[profile]]` turns commands on explicitly (`commands = true`).
    pub profile_allows: bool,
    /// Text is typed together with the commands (they were said after words).
    pub with_text: bool,
    /// The window focused at delivery is not the one focused at the press.
    pub focus_moved: bool,
}

/// A command that was heard but not done, and why (history row and `dictation` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    pub name: String,
    pub why: String,
}

/// Whether a command presses keys in the focused window.
fn presses_keys(action: &Action) -> bool {
    matches!(action, Action::Keys { .. } | Action::ScratchThat)
}

/// Why a key command may not act in `s`, or None when it may.
pub fn refusal(s: &Situation) -> Option<&'static str> {
    if s.focus_moved {
        return Some(
            "the focus moved to another window since the key press: keys go only to the \
             window the words were said into",
        );
    }
    if s.hands_free && s.terminal && !s.profile_allows {
        return Some(
            "hands-free: key commands are off in terminal windows (a [[profile]] for the \
             window with commands = true turns them on)",
        );
    }
    if s.terminal && s.with_text {
        return Some(
            "in a terminal a key command acts only when said alone, in its own dictation \
             (the text was typed, the key not pressed)",
        );
    }
    if s.hands_free && s.with_text {
        return Some("hands-free: a key command acts only when said alone, after a pause");
    }
    None
}

/// Splits `commands` into those that may act in `s` and those refused, in spoken order.
pub fn screen(commands: Vec<Spoken>, s: &Situation) -> (Vec<Spoken>, Vec<Refused>) {
    let mut allowed = Vec::new();
    let mut refused = Vec::new();
    for c in commands {
        match refusal(s).filter(|_| presses_keys(&c.action)) {
            Some(why) => refused.push(Refused {
                name: c.name,
                why: why.to_string(),
            }),
            None => allowed.push(c),
        }
    }
    (allowed, refused)
}

/// Refusals as stored in the history row (`commands_refused`, a JSON array); None for none.
pub fn refused_json(refused: &[Refused]) -> Option<String> {
    (!refused.is_empty()).then(|| serde_json::to_string(refused).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{parse, CommandsConfig};

    fn on() -> CommandsConfig {
        CommandsConfig {
            enabled: true,
            ..CommandsConfig::default()
        }
    }

    /// What acts and what is refused when `said` reaches a window.
    fn judge(
        said: &str,
        terminal: bool,
        hands_free: bool,
        profile: bool,
    ) -> (Vec<String>, Vec<String>) {
        let parsed = parse(said, &on());
        let s = Situation {
            terminal,
            hands_free,
            profile_allows: profile,
            with_text: !parsed.text.trim().is_empty(),
            focus_moved: false,
        };
        let (ok, no) = screen(parsed.commands, &s);
        (
            ok.into_iter().map(|c| c.name).collect(),
            no.into_iter().map(|r| r.name).collect(),
        )
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_focus_change_since_the_press_refuses_every_key() {
        let parsed = parse("press enter", &on());
        for (terminal, hands_free, profile) in [(false, false, true), (true, false, false)] {
            let s = Situation {
                terminal,
                hands_free,
                profile_allows: profile,
                with_text: false,
                focus_moved: true,
            };
            let (ok, no) = screen(parsed.commands.clone(), &s);
            assert!(ok.is_empty(), "{ok:?}");
            assert!(no[0].why.contains("focus moved"), "{no:?}");
        }
    }

    #[test]
    fn push_to_talk_outside_terminals_keeps_the_commands_at_the_end() {
        assert_eq!(
            judge("Send the report new line", false, false, false),
            (names(&["new line"]), vec![])
        );
        assert_eq!(
            judge("new line", false, false, false),
            (names(&["new line"]), vec![])
        );
    }

    #[test]
    fn a_terminal_never_gets_text_and_a_key_from_one_utterance() {
        // A hostile speech server's answer, or a user's sentence: the text is typed, the
        // Return is not pressed.
        assert_eq!(
            judge("touch pwned press enter", true, false, false),
            (vec![], names(&["press enter"]))
        );
        // Said alone, push-to-talk: the user meant the key.
        assert_eq!(
            judge("new line", true, false, false),
            (names(&["new line"]), vec![])
        );
        assert_eq!(
            judge("Press enter.", true, false, false),
            (names(&["press enter"]), vec![])
        );
    }

    #[test]
    fn hands_free_in_a_terminal_presses_nothing_unless_a_profile_allows_it() {
        assert_eq!(
            judge("press enter", true, true, false),
            (vec![], names(&["press enter"]))
        );
        assert_eq!(
            judge("remove everything press enter", true, true, false),
            (vec![], names(&["press enter"]))
        );
        // The profile turns them on, and then only alone.
        assert_eq!(
            judge("press enter", true, true, true),
            (names(&["press enter"]), vec![])
        );
        assert_eq!(
            judge("remove everything press enter", true, true, true),
            (vec![], names(&["press enter"]))
        );
    }

    #[test]
    fn hands_free_elsewhere_acts_only_on_a_command_said_alone() {
        assert_eq!(
            judge("press enter", false, true, false),
            (names(&["press enter"]), vec![])
        );
        assert_eq!(
            judge("play the video press enter", false, true, false),
            (vec![], names(&["press enter"]))
        );
    }

    #[test]
    fn commands_that_press_no_key_always_act() {
        // "…scratch that" at the end drops the text; "stop dictation" ends listening.
        let (ok, no) = judge("stop dictation", true, true, false);
        assert_eq!((ok, no), (names(&["stop dictation"]), vec![]));
        let (ok, no) = judge("rm everything scratch that", true, true, false);
        assert_eq!((ok, no), (names(&["scratch that"]), vec![]));
        // "scratch that" alone erases with BackSpace: a key, so the rule applies.
        let (ok, no) = judge("scratch that", true, true, false);
        assert_eq!((ok, no), (vec![], names(&["scratch that"])));
    }

    #[test]
    fn refusals_say_why_and_are_stored_as_json() {
        let parsed = parse("touch pwned press enter", &on());
        let s = Situation {
            terminal: true,
            with_text: true,
            ..Situation::default()
        };
        let (_, no) = screen(parsed.commands, &s);
        let json = refused_json(&no).expect("one refusal");
        assert!(
            json.contains("press enter") && json.contains("said alone"),
            "{json}"
        );
        assert_eq!(refused_json(&[]), None);
    }
}
