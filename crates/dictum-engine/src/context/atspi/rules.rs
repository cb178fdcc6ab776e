//! The pure decisions of the AT-SPI reader: which children to walk into, which node is the
//! focused text, how many characters to ask for around the caret (AT-SPI offsets count
//! characters, not bytes), whether an app is on the opt-out list and whether a text is a
//! masked password. No I/O.

/// How many characters before the caret are read.
pub const BEFORE_CHARS: usize = 300;
/// How many characters after the caret are read.
pub const AFTER_CHARS: usize = 100;

/// AT-SPI state bits (`AtspiStateType`, at-spi2-core's atspi-constants.h): bit N of the
/// 64-bit set `GetState` returns as two `u32`, low word first.
pub mod state {
    pub const ACTIVE: u32 = 1;
    pub const DEFUNCT: u32 = 6;
    pub const EDITABLE: u32 = 7;
    pub const FOCUSED: u32 = 12;
    pub const ICONIFIED: u32 = 15;
    pub const SHOWING: u32 = 25;
    pub const VISIBLE: u32 = 30;
    pub const MANAGES_DESCENDANTS: u32 = 31;
}

/// AT-SPI roles (`AtspiRole`) the reader acts on.
pub mod role {
    pub const PASSWORD_TEXT: u32 = 40;
    pub const TERMINAL: u32 = 60;
}

/// A node's state set as `GetState` answers it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct States(pub u64);

impl States {
    pub fn from_words(words: &[u32]) -> States {
        let low = u64::from(words.first().copied().unwrap_or(0));
        let high = u64::from(words.get(1).copied().unwrap_or(0));
        States(low | (high << 32))
    }

    pub fn has(self, bit: u32) -> bool {
        bit < 64 && self.0 & (1u64 << bit) != 0
    }

    #[cfg(test)]
    pub fn of(bits: &[u32]) -> States {
        States(bits.iter().fold(0, |s, b| s | (1u64 << b)))
    }
}

/// What the walk knows of one child before deciding about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub states: States,
    pub role: u32,
}

/// The children worth walking into, in the order to walk them: not defunct, not a minimised
/// window, not a container that manages its descendants (a table or list with thousands of
/// transient cells); those SHOWING, or, where no child says SHOWING (a toolkit that does not
/// set it), those VISIBLE, or else all. Active windows come first.
pub fn to_descend(children: &[Seen]) -> Vec<usize> {
    let alive = |s: &Seen| {
        !s.states.has(state::DEFUNCT)
            && !s.states.has(state::ICONIFIED)
            && !s.states.has(state::MANAGES_DESCENDANTS)
    };
    let pick = |bit: Option<u32>| -> Vec<usize> {
        children
            .iter()
            .enumerate()
            .filter(|(_, s)| alive(s) && bit.is_none_or(|b| s.states.has(b)))
            .map(|(i, _)| i)
            .collect()
    };
    let mut chosen = pick(Some(state::SHOWING));
    if chosen.is_empty() {
        chosen = pick(Some(state::VISIBLE));
    }
    if chosen.is_empty() {
        chosen = pick(None);
    }
    // Stable: active ones first, the rest in the app's order.
    chosen.sort_by_key(|&i| !children[i].states.has(state::ACTIVE));
    chosen
}

/// The first child that has the keyboard focus.
pub fn focused_child(children: &[Seen]) -> Option<usize> {
    children
        .iter()
        .position(|s| s.states.has(state::FOCUSED) && !s.states.has(state::DEFUNCT))
}

/// The character ranges to read: `(start, caret)` before and `(caret, end)` after, clamped to
/// the text (`count` < 0: the length is unknown, the app clamps). None without a caret
/// (offset < 0).
pub fn ranges(caret: i32, count: i32) -> Option<((i32, i32), (i32, i32))> {
    if caret < 0 {
        return None;
    }
    let caret = if count >= 0 { caret.min(count) } else { caret };
    let before = caret.saturating_sub(BEFORE_CHARS as i32).max(0);
    let mut after = caret.saturating_add(AFTER_CHARS as i32);
    if count >= 0 {
        after = after.min(count);
    }
    Some(((before, caret), (caret, after)))
}

/// The last `n` characters of `s` (an app may answer more than was asked).
pub fn last_chars(s: &str, n: usize) -> &str {
    match s.char_indices().rev().nth(n.saturating_sub(1)) {
        Some((i, _)) if n > 0 => &s[i..],
        _ if n == 0 => "",
        _ => s,
    }
}

/// The first `n` characters of `s`.
pub fn first_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A text that is nothing but the bullets toolkits show for a hidden entry ("••••"): an entry
/// that hides its text without the password role still gives nothing away.
pub fn looks_masked(before: &str, after: &str) -> bool {
    let mut all = before.chars().chain(after.chars()).peekable();
    all.peek().is_some() && all.all(|c| matches!(c, '•' | '●' | '∗' | '⏺'))
}

pub use crate::config::context::{default_opt_out, DEFAULT_OPT_OUT};

/// The entry of `list` that one of the app's `names` (window class, app id, AT-SPI app name,
/// process name) matches, case-insensitively: the whole name; for an entry without a dot, one
/// dot-separated part of the name ("keepassxc" matches "org.keepassxc.KeePassXC") or the name
/// with a dash suffix ("pinentry" matches "pinentry-gnome3"). An entry with a dot must match a
/// name whole.
pub fn opted_out<'l>(list: &'l [String], names: &[&str]) -> Option<&'l str> {
    list.iter().map(String::as_str).find(|entry| {
        let entry = entry.trim().to_lowercase();
        !entry.is_empty()
            && names.iter().any(|name| {
                let name = name.trim().to_lowercase();
                name == entry
                    || (!entry.contains('.')
                        && (name.split('.').any(|part| part == entry)
                            || name
                                .strip_prefix(entry.as_str())
                                .is_some_and(|rest| rest.starts_with('-'))))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(bits: &[u32]) -> Seen {
        Seen {
            states: States::of(bits),
            role: 0,
        }
    }

    #[test]
    fn state_words_are_low_then_high() {
        let s = States::from_words(&[1 << state::FOCUSED, 1]);
        assert!(s.has(state::FOCUSED));
        assert!(s.has(32));
        assert!(!s.has(state::SHOWING));
        assert_eq!(States::from_words(&[]), States(0));
    }

    #[test]
    fn the_focused_child_is_found_and_a_defunct_one_is_not() {
        let kids = [
            seen(&[state::SHOWING]),
            seen(&[state::FOCUSED, state::DEFUNCT]),
            seen(&[state::SHOWING, state::FOCUSED]),
        ];
        assert_eq!(focused_child(&kids), Some(2));
        assert_eq!(focused_child(&kids[..2]), None);
    }

    #[test]
    fn hidden_minimised_and_huge_children_are_not_walked_active_first() {
        let kids = [
            seen(&[state::SHOWING]),
            seen(&[state::VISIBLE]),
            seen(&[state::SHOWING, state::ICONIFIED]),
            seen(&[state::SHOWING, state::MANAGES_DESCENDANTS]),
            seen(&[state::SHOWING, state::ACTIVE]),
            seen(&[state::SHOWING, state::DEFUNCT]),
        ];
        assert_eq!(to_descend(&kids), vec![4, 0]);
        // Nothing says SHOWING: the visible ones; nothing says either: all living ones.
        assert_eq!(to_descend(&[seen(&[]), seen(&[state::VISIBLE])]), vec![1]);
        assert_eq!(
            to_descend(&[seen(&[]), seen(&[state::DEFUNCT]), seen(&[])]),
            vec![0, 2]
        );
    }

    #[test]
    fn ranges_are_clamped_to_the_text() {
        assert_eq!(ranges(8, 16), Some(((0, 8), (8, 16))));
        assert_eq!(ranges(1000, 2000), Some(((700, 1000), (1000, 1100))));
        // A caret past the end (an app that is behind): the end.
        assert_eq!(ranges(50, 10), Some(((0, 10), (10, 10))));
        // Unknown length: the app clamps the end.
        assert_eq!(ranges(5, -1), Some(((0, 5), (5, 105))));
        assert_eq!(ranges(-1, 10), None);
        assert_eq!(
            ranges(i32::MAX, -1),
            Some(((i32::MAX - 300, i32::MAX), (i32::MAX, i32::MAX)))
        );
    }

    #[test]
    fn clamping_counts_characters_not_bytes() {
        let s = "àé€😀x";
        assert_eq!(last_chars(s, 2), "😀x");
        assert_eq!(last_chars(s, 10), s);
        assert_eq!(last_chars(s, 0), "");
        assert_eq!(first_chars(s, 3), "àé€");
        assert_eq!(first_chars(s, 10), s);
        assert_eq!(first_chars(s, 0), "");
        let long: String = "é".repeat(BEFORE_CHARS + 5);
        assert_eq!(
            last_chars(&long, BEFORE_CHARS).chars().count(),
            BEFORE_CHARS
        );
    }

    #[test]
    fn bullets_alone_are_masked_text() {
        assert!(looks_masked("••••", ""));
        assert!(looks_masked("●●", "●"));
        assert!(!looks_masked("", ""));
        assert!(!looks_masked("a•", ""));
        assert!(!looks_masked("• item", ""));
    }

    #[test]
    fn opt_out_matches_ids_classes_and_process_names() {
        let list = default_opt_out();
        for name in [
            "org.keepassxc.KeePassXC",
            "KeePassXC",
            "keepassxc",
            "1Password",
            "Bitwarden",
            "com.bitwarden.desktop",
            "seahorse",
            "org.gnome.seahorse.Application",
            "gcr-prompter",
            "pinentry-gnome3",
            "Enpass",
        ] {
            assert!(opted_out(&list, &[name]).is_some(), "{name}");
        }
        for name in [
            "gedit",
            "org.gnome.TextEditor",
            "firefox",
            "notkeepassxc",
            "",
            "org",
        ] {
            assert_eq!(opted_out(&list, &[name]), None, "{name}");
        }
        // Any of the names counts; an entry with a dot matches whole names only.
        let mine = vec!["org.example.Vault".to_string(), " ".to_string()];
        assert_eq!(
            opted_out(&mine, &["python3", "org.example.vault"]),
            Some("org.example.Vault")
        );
        assert_eq!(opted_out(&mine, &["org.example.Vault.Helper"]), None);
        assert_eq!(opted_out(&mine, &[" "]), None);
        assert_eq!(opted_out(&[], &["keepassxc"]), None);
    }
}
