//! What of the LLM's answer may be typed over the selection. The cleanup guard does not apply
//! (an edit may change the meaning); the typing rules do (`text_safety`): no control
//! characters, no Tab (it moves the focus), no newline into a terminal. Pure functions.

use crate::text_safety::strip_control;

/// The answer, ready to type: its lines (typed with Return between them), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub lines: Vec<String>,
}

impl Answer {
    /// The text as typed (lines joined with `\n`), for the row.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    pub fn chars(&self) -> usize {
        self.lines.iter().map(|l| l.chars().count()).sum::<usize>() + self.lines.len() - 1
    }
}

/// Why an answer is not typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfit {
    Empty,
    TooLong { chars: usize, limit: usize },
}

/// The longest answer typed for a selection of `selection_chars` characters: four times as
/// long plus 400 (a bullet list, a longer version), so a model gone wild cannot type for
/// minutes.
pub fn limit(selection_chars: usize) -> usize {
    selection_chars.saturating_mul(4).saturating_add(400)
}

/// The answer to type: the model's wrapping taken off (a Markdown code fence, the selection
/// tags of the request, quotes around the whole), control characters and Tabs out, `\r\n`
/// as `\n`; lines kept when `newlines` (else joined with spaces: a terminal, or `[edit]
/// type_newlines = false`). Leading and trailing blank lines go.
pub fn prepare(raw: &str, selection_chars: usize, newlines: bool) -> Result<Answer, Unfit> {
    let mut text = raw.trim().replace("\r\n", "\n").replace('\t', " ");
    text = unwrap_fence(&text);
    if let Some(inner) = text
        .strip_prefix("<selection>")
        .and_then(|t| t.strip_suffix("</selection>"))
    {
        text = inner.trim().to_string();
    }
    let (first, last) = (text.chars().next(), text.chars().last());
    let quoted = text.chars().count() >= 2
        && matches!(
            (first, last),
            (Some('"'), Some('"')) | (Some('\u{201c}'), Some('\u{201d}'))
        );
    if quoted {
        let (f, l) = (
            first.map_or(1, char::len_utf8),
            last.map_or(1, char::len_utf8),
        );
        let inner = &text[f..text.len() - l];
        if !inner.contains(['"', '\u{201c}', '\u{201d}']) {
            text = inner.to_string();
        }
    }
    let text = strip_control(&text, true);
    let mut lines: Vec<String> = text.split('\n').map(|l| l.trim_end().to_string()).collect();
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    if lines.is_empty() {
        return Err(Unfit::Empty);
    }
    if !newlines {
        let joined = lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        lines = vec![joined];
    }
    let answer = Answer { lines };
    let chars = answer.chars();
    let limit = limit(selection_chars);
    if chars > limit {
        return Err(Unfit::TooLong { chars, limit });
    }
    Ok(answer)
}

/// The inside of a Markdown code fence that wraps the whole text.
fn unwrap_fence(text: &str) -> String {
    let Some(rest) = text.strip_prefix("```") else {
        return text.to_string();
    };
    let Some(body) = rest.strip_suffix("```") else {
        return text.to_string();
    };
    // The fence's language tag, if any, ends at the first newline.
    match body.split_once('\n') {
        Some((tag, inside)) if !tag.contains(' ') => inside.trim().to_string(),
        _ => body.trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(raw: &str, newlines: bool) -> Vec<String> {
        prepare(raw, 100, newlines).expect("fit").lines
    }

    #[test]
    fn wrapping_and_control_characters_are_taken_off() {
        let rows: &[(&str, &[&str])] = &[
            ("  Dear Sir, thank you.  ", &["Dear Sir, thank you."]),
            ("\"Quoted whole.\"", &["Quoted whole."]),
            ("“Curly.”", &["Curly."]),
            // Quotes inside are the text's own.
            ("\"A\" and \"B\"", &["\"A\" and \"B\""]),
            ("```\nfenced\n```", &["fenced"]),
            ("```text\nfenced too\n```", &["fenced too"]),
            ("<selection>\nechoed tags\n</selection>", &["echoed tags"]),
            ("bell\u{7} and esc\u{1b}[2J", &["bell and esc[2J"]),
            ("tab\tmoves focus", &["tab moves focus"]),
            ("- one\r\n- two\n\n", &["- one", "- two"]),
            ("\n\n- one\n\n- two", &["- one", "", "- two"]),
            (
                "right-to-left \u{202e}override",
                &["right-to-left override"],
            ),
        ];
        for (raw, want) in rows {
            assert_eq!(lines(raw, true), *want, "{raw:?}");
        }
    }

    #[test]
    fn without_newlines_the_lines_become_one() {
        assert_eq!(
            lines("- one\n- two\n\n- three", false),
            ["- one - two - three"]
        );
        let a = prepare("- one\n- two", 100, true).expect("fit");
        assert_eq!(a.text(), "- one\n- two");
        assert_eq!(a.chars(), 11);
    }

    #[test]
    fn empty_and_runaway_answers_are_refused() {
        assert_eq!(prepare("   \n ", 10, true), Err(Unfit::Empty));
        assert_eq!(prepare("\u{1b}\u{7}", 10, true), Err(Unfit::Empty));
        assert_eq!(prepare("``````", 10, true), Err(Unfit::Empty));
        let long = "word ".repeat(200);
        assert_eq!(
            prepare(&long, 10, true),
            Err(Unfit::TooLong {
                chars: 999,
                limit: 440
            })
        );
        assert!(prepare(&long, 200, true).is_ok());
    }
}
