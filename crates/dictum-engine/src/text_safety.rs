//! What text may do once it is typed: pure functions, no I/O.
//!
//! Typed text lands wherever the focus is, a terminal included. A newline there is Enter
//! (the command runs), a control character is a key chord (Ctrl+C, Escape sequences), and
//! shell syntax turns words into commands. Whisper writes plain words and punctuation; the
//! LLM cleanup could write anything, so its output may not *add* any of these
//! ([`added_unsafe`], used by the guard in `llm/guard/`; shell-significant characters only
//! where the text goes into a terminal), and the typing path strips
//! control characters whatever their source ([`strip_control`]).
//!
//! The characters watched ([`is_watched`]):
//! - line breaks and control characters: every Unicode `Cc` character (`\n`, `\r`, `\t`,
//!   ESC, DEL, C1 controls...), U+2028/U+2029 (line/paragraph separators), U+0085 (NEL);
//! - invisible direction overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make
//!   typed text read differently from what it does ("Trojan Source");
//! - shell-significant characters ([`SHELL_SIGNIFICANT`]): `;` `|` `&` `$` `` ` `` `<` `>`
//!   `(` `)` `{` `}` `\`. Each one chains, substitutes, redirects, groups or escapes in
//!   POSIX shells. Left out on purpose, because a faithful cleanup adds them all the time and
//!   none runs anything without the others: `?` `!` `*` `'` `"` `#` `~` `=` `%` `-` `:`.

/// Characters a cleanup may not add (besides line breaks and control characters).
pub const SHELL_SIGNIFICANT: &[char] =
    &[';', '|', '&', '$', '`', '<', '>', '(', ')', '{', '}', '\\'];

/// Line and paragraph separators outside `Cc`.
const LINE_BREAKS: &[char] = &['\u{2028}', '\u{2029}'];

/// Bidirectional embeddings, overrides and isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A character that ends a line, presses a key chord, or changes how text reads or runs.
pub fn is_control_like(c: char) -> bool {
    c.is_control() || LINE_BREAKS.contains(&c) || is_bidi_control(c)
}

/// Whether the guard watches `c`: control-like or shell-significant.
pub fn is_watched(c: char) -> bool {
    is_control_like(c) || SHELL_SIGNIFICANT.contains(&c)
}

/// What the output added: a watched character it has more of than the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    pub c: char,
    /// How often it occurs in the output and in the transcript.
    pub in_output: usize,
    pub in_raw: usize,
}

impl Added {
    /// `'\n'`, `';'`, `U+202E`: readable in a one-line message.
    pub fn describe(&self) -> String {
        match self.c {
            '\n' => "a newline (Enter)".into(),
            '\r' => "a carriage return (Enter)".into(),
            '\t' => "a tab".into(),
            c if is_control_like(c) => format!("control character U+{:04X}", c as u32),
            c => format!("`{c}`"),
        }
    }
}

/// The first watched character (in output order) that `output` holds more often than `raw`,
/// if any. Counting, not mere presence: a transcript with one `;` does not license three.
///
/// Shell-significant characters are watched only when the text goes into a `terminal`:
/// elsewhere (a mail, a document) "$123", "50%", "R&D" or "10/12" run nothing, and a
/// cleanup that writes numbers as digits needs them. Line breaks and control characters are
/// watched everywhere (a newline is Enter in any window).
pub fn added_unsafe(raw: &str, output: &str, terminal: bool) -> Option<Added> {
    let count = |text: &str, c: char| text.chars().filter(|&x| x == c).count();
    let watched = |c: char| {
        if terminal {
            is_watched(c)
        } else {
            is_control_like(c)
        }
    };
    let mut seen: Vec<char> = Vec::new();
    for c in output.chars().filter(|&c| watched(c)) {
        if seen.contains(&c) {
            continue;
        }
        seen.push(c);
        let (in_output, in_raw) = (count(output, c), count(raw, c));
        if in_output > in_raw {
            return Some(Added {
                c,
                in_output,
                in_raw,
            });
        }
    }
    None
}

/// `text` without control characters, line separators and direction overrides. With
/// `keep_newline_tab`, `\n` and `\t` stay (for voice commands that ask for them); `\r` never
/// does (it is Enter too; a `\r\n` pair keeps its `\n`). Everything else, letters,
/// punctuation, emoji (zero-width joiners included), is kept as is.
pub fn strip_control(text: &str, keep_newline_tab: bool) -> String {
    text.chars()
        .filter(|&c| (keep_newline_tab && (c == '\n' || c == '\t')) || !is_control_like(c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_is_caught() {
        let raw = "echo one touch tmp pwned";
        let out = "echo one;\ntouch tmp pwned";
        let added = added_unsafe(raw, out, true).expect("caught");
        assert_eq!(added.c, ';');
        assert_eq!(
            added_unsafe(raw, "echo one\ntouch tmp pwned", true).map(|a| a.c),
            Some('\n')
        );
    }

    #[test]
    fn what_may_and_may_not_be_added() {
        let raw = "so i said hello what is it she asked";
        // A faithful cleanup: case, commas, quotes, question and exclamation marks.
        for ok in [
            "So I said, \"Hello!\" \"What is it?\" she asked.",
            "So, I said hello - what's it? She asked: 50% #1 ~ok*",
        ] {
            assert_eq!(added_unsafe(raw, ok, true), None, "{ok}");
        }
        for (bad, c) in [
            ("so i said hello\nwhat is it", '\n'),
            ("so i said hello\r", '\r'),
            ("so i said hello\twhat", '\t'),
            ("so i said \u{1b}[2Khello", '\u{1b}'),
            ("so i said hello\u{2028}what", '\u{2028}'),
            ("so i said \u{202E}olleh", '\u{202E}'),
            ("so i said hello | sh", '|'),
            ("so i said hello && rm", '&'),
            ("so i said $(hello)", '$'),
            ("so i said `hello`", '`'),
            ("so i said hello > out", '>'),
            ("so i said hello < in", '<'),
            ("so i said (hello)", '('),
            ("so i said {hello}", '{'),
            ("so i said hello\\", '\\'),
        ] {
            assert_eq!(
                added_unsafe(raw, bad, true).map(|a| a.c),
                Some(c),
                "{bad:?}"
            );
        }
        // What was dictated may stay, as often as it was dictated.
        assert_eq!(added_unsafe("a; b", "A; b.", true), None);
        assert_eq!(
            added_unsafe("a; b", "A; b; c;", true).map(|a| (a.in_output, a.in_raw)),
            Some((3, 1))
        );
    }

    #[test]
    fn outside_a_terminal_only_keys_are_watched() {
        let raw = "one hundred and twenty three dollars for r and d";
        for ok in ["$123 for R&D.", "50% off (10/12) at <noon>; ok | no"] {
            assert_eq!(added_unsafe(raw, ok, false), None, "{ok}");
        }
        assert_eq!(
            added_unsafe(raw, "$123 for R&D.", true).map(|a| a.c),
            Some('$')
        );
        for (bad, c) in [
            ("$123\nfor R&D", '\n'),
            ("$123\rfor", '\r'),
            ("\u{1b}[2K$123", '\u{1b}'),
            ("$123\u{2028}for", '\u{2028}'),
            ("\u{202E}$123", '\u{202E}'),
        ] {
            assert_eq!(
                added_unsafe(raw, bad, false).map(|a| a.c),
                Some(c),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn strip_control_keeps_words_and_drops_keys() {
        let text = "rm -rf x\r\n\u{1b}[A\u{7f}ok\ttab\u{0}\u{85}\u{2029}\u{202E}evil\u{2069} 👩\u{200D}💻 é";
        assert_eq!(
            strip_control(text, false),
            "rm -rf x[Aoktabevil 👩\u{200D}💻 é"
        );
        assert_eq!(
            strip_control(text, true),
            "rm -rf x\n[Aok\ttabevil 👩\u{200D}💻 é"
        );
        assert_eq!(
            strip_control("plain; text (kept)", false),
            "plain; text (kept)"
        );
    }
}
