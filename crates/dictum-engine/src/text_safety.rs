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

/// Invisible format characters that hide text or change how it reads without being seen:
/// zero-width space and non-joiner (U+200B/C), LRM/RLM (U+200E/F), the Arabic
/// letter mark (U+061C), word joiner and invisible operators (U+2060–U+2064), deprecated
/// format controls (U+206A–U+206F), the BOM / zero-width no-break space (U+FEFF),
/// interlinear annotation (U+FFF9–U+FFFB), the Mongolian vowel separator (U+180E), the
/// soft hyphen (U+00AD) and tag characters (U+E0000–U+E007F). The zero-width joiner
/// (U+200D) is not here: [`strip_control`] drops it except between two emoji (👩‍💻 stays
/// one emoji).
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200C}'
            | '\u{200E}'..='\u{200F}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206A}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// Zero-width joiner: kept only inside an emoji sequence.
const ZWJ: char = '\u{200D}';

/// A character an emoji ZWJ sequence is made of (pictographs, their variation selector and
/// skin tones), as far as a joiner next to it needs to know.
fn is_emoji_part(c: char) -> bool {
    matches!(
        c,
        '\u{2600}'..='\u{27BF}'
            | '\u{2B00}'..='\u{2BFF}'
            | '\u{FE0F}'
            | '\u{1F000}'..='\u{1FAFF}'
    )
}

/// A character that ends a line, presses a key chord, or changes how text reads or runs,
/// invisible format characters included ([`is_invisible`]).
pub fn is_control_like(c: char) -> bool {
    c.is_control() || LINE_BREAKS.contains(&c) || is_bidi_control(c) || is_invisible(c)
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

/// `text` without control characters, line separators, direction overrides and invisible
/// format characters ([`is_invisible`]). With `keep_newline_tab`, `\n` and `\t` stay (for
/// voice commands that ask for them); `\r` never does (it is Enter too; a `\r\n` pair keeps
/// its `\n`). A zero-width joiner stays between two emoji (👩‍💻). Everything else, letters,
/// punctuation, emoji, is kept as is.
pub fn strip_control(text: &str, keep_newline_tab: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let keep = if c == ZWJ {
            // Between two emoji parts, looking past other joiners' neighbours only.
            i > 0
                && chars.get(i + 1).is_some_and(|&n| is_emoji_part(n))
                && is_emoji_part(chars[i - 1])
        } else {
            (keep_newline_tab && (c == '\n' || c == '\t')) || !is_control_like(c)
        };
        if keep {
            out.push(c);
        }
    }
    out
}

/// Whether `text` holds anything [`strip_control`] would drop (for the row: "invisible
/// characters removed").
pub fn has_hidden(text: &str) -> bool {
    strip_control(text, true) != text
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
    fn invisible_characters_are_dropped_and_emoji_joiners_kept() {
        // Hidden text: zero-width space, word joiner, LRM/RLM, BOM, tags (an invisible
        // "rm" spelled in tag characters), soft hyphen, zero-width joiner between letters.
        let hidden = "pay\u{200B} Bob\u{2060} \u{200E}now\u{200F}\u{FEFF} ok\u{E0072}\u{E006D}\u{E007F} a\u{00AD}b c\u{200D}d";
        assert_eq!(strip_control(hidden, false), "pay Bob now ok ab cd");
        assert!(has_hidden(hidden));
        // An emoji sequence keeps its joiner (👩‍💻, 🏳️‍🌈); a joiner at either end goes.
        for kept in [
            "👩\u{200D}💻",
            "🏳\u{FE0F}\u{200D}🌈",
            "👨\u{200D}👩\u{200D}👧",
        ] {
            assert_eq!(strip_control(kept, false), kept);
            assert!(!has_hidden(kept), "{kept:?}");
        }
        assert_eq!(strip_control("\u{200D}👩\u{200D}", false), "👩");
        // Each one is watched by the guard: a cleanup may not add it.
        for c in ['\u{200B}', '\u{2060}', '\u{200E}', '\u{FEFF}', '\u{E0041}'] {
            let out = format!("hello{c} there");
            assert_eq!(
                added_unsafe("hello there", &out, false).map(|a| a.c),
                Some(c)
            );
        }
        // Look-alikes are text, not something to strip: full-width letters stay.
        let wide = "ｐｒｅｓｓ ｅｎｔｅｒ";
        assert_eq!(strip_control(wide, false), wide);
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
