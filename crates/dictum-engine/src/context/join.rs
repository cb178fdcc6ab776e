//! Fitting a dictation into the text around the cursor (issue 41): a capital or not, a space
//! at each side or not, a final period or not.
//!
//! Whisper writes every dictation as if it began and ended a sentence ("The report."). Typed
//! into the middle of "I think | is right" that gives "I think The report.is right". Given
//! the text before and after the caret (read through accessibility where the widget offers it),
//! [`join`] returns what to type instead: "the report " → "I think the report is right".
//!
//! Rules, in order:
//! - **Leading space:** one when the text before ends in a letter, digit or closing mark and
//!   the dictation starts with a word; none after white space, an opening bracket or quote, or
//!   at the start of the field; none before punctuation ("," "." …).
//! - **Capital:** at the start of the field, after a sentence end (. ! ? …) or a line break,
//!   the first letter is made upper case. Mid-sentence, a first word that whisper capitalised
//!   only because it began its sentence is lowered, but only a common word of a closed list
//!   ("The", "And", "It" …): a name ("Anna") or "I" keeps its capital, since nothing here can
//!   tell a name from a word.
//! - **Final period:** dropped when the text after the caret continues the sentence (its first
//!   character past spaces is a lower-case letter or a digit) or starts with its own
//!   punctuation. A "?" or "!" or
//!   an ellipsis is the speaker's and stays.
//! - **Trailing space:** one when the text after starts with a letter or digit right at the
//!   caret; none when it starts with white space or punctuation, or is empty.
//!
//! With nothing known around the caret (`Around::default()`), the text is returned unchanged:
//! today's behaviour for terminals and apps without accessibility.
//!
//! Pure: no I/O.

/// The text on each side of the caret, as much as was read (a few hundred characters).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Around<'a> {
    pub before: &'a str,
    pub after: &'a str,
    /// False when nothing could be read (no accessibility): `join` changes nothing.
    pub known: bool,
}

impl<'a> Around<'a> {
    pub fn new(before: &'a str, after: &'a str) -> Around<'a> {
        Around {
            before,
            after,
            known: true,
        }
    }
}

/// Common words whisper capitalises at a sentence start that are lower case mid-sentence.
/// Closed-class words only: a name is never lowered.
const LOWER_MID_SENTENCE: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "because", "before", "but", "by", "can", "could", "did", "do", "does", "each", "even", "every",
    "for", "from", "had", "has", "have", "he", "her", "here", "him", "his", "how", "if", "in",
    "into", "is", "it", "its", "just", "let's", "maybe", "more", "most", "my", "no", "not", "now",
    "of", "on", "once", "one", "only", "or", "our", "she", "should", "so", "some", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "two",
    "under", "until", "up", "very", "was", "we", "well", "were", "what", "when", "where", "which",
    "while", "who", "why", "will", "with", "would", "yes", "yet", "you",
    "your", // and interjections
    "hello", "hi", "oh", "okay", "please", "sorry", "thanks",
];

/// What to type for `text` at a caret with `around` on its sides.
pub fn join(text: &str, around: &Around) -> String {
    let body = text.trim();
    if !around.known || body.is_empty() {
        return text.to_string();
    }
    let before = around.before;
    let after = around.after;
    let mut out = fit_start(body, before);
    out = fit_end(out, after);
    let first = out.chars().next();
    let lead = match (before.chars().last(), first) {
        (None, _) | (_, None) => false,
        (Some(b), Some(f)) => {
            !b.is_whitespace() && !is_opening(b) && !is_punct_start(f) && !f.is_whitespace()
        }
    };
    let last = out.chars().last();
    let trail = match (last, after.chars().next()) {
        (Some(_), Some(a)) => a.is_alphanumeric(),
        _ => false,
    };
    let mut typed = String::new();
    if lead {
        typed.push(' ');
    }
    typed.push_str(&out);
    if trail {
        typed.push(' ');
    }
    typed
}

/// The capital rule on the first word.
fn fit_start(body: &str, before: &str) -> String {
    let starts_sentence = {
        let t = before.trim_end_matches([' ', '\t']);
        t.is_empty()
            || t.ends_with(['\n', '\r'])
            || t.trim_end_matches(['"', '\'', ')', ']', '»', '”', '’'])
                .ends_with(['.', '!', '?', '…'])
    };
    let mut chars = body.chars();
    let Some(first) = chars.next() else {
        return String::new();
    };
    if starts_sentence {
        return first.to_uppercase().chain(chars).collect();
    }
    let word: String = body
        .split(|c: char| c.is_whitespace() || (c.is_ascii_punctuation() && c != '\''))
        .next()
        .unwrap_or("")
        .to_string();
    let lowered = word.to_lowercase();
    let capitalised_only_first = word.chars().skip(1).all(|c| !c.is_uppercase());
    if capitalised_only_first && LOWER_MID_SENTENCE.contains(&lowered.as_str()) {
        return first.to_lowercase().chain(chars).collect();
    }
    body.to_string()
}

/// The final-period rule.
fn fit_end(body: String, after: &str) -> String {
    let Some(next) = after.trim_start_matches([' ', '\t']).chars().next() else {
        return body;
    };
    let continues = next.is_lowercase() || next.is_ascii_digit() || is_punct_start(next);
    let single_period = body.ends_with('.') && !body.ends_with("..");
    if continues && single_period {
        let mut b = body;
        b.pop();
        return b;
    }
    body
}

fn is_opening(c: char) -> bool {
    matches!(
        c,
        '(' | '[' | '{' | '"' | '\'' | '«' | '“' | '‘' | '/' | '-'
    )
}

fn is_punct_start(c: char) -> bool {
    matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | ')' | ']' | '}' | '…')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(before: &str, text: &str, after: &str) -> String {
        format!("{before}{}{after}", join(text, &Around::new(before, after)))
    }

    #[test]
    fn mid_sentence_gets_no_capital_no_period_and_one_space_each_side() {
        assert_eq!(
            typed("I think ", "The report.", "is right"),
            "I think the report is right"
        );
        assert_eq!(
            typed("I think", "The report.", " is right"),
            "I think the report is right"
        );
    }

    #[test]
    fn after_a_sentence_end_or_a_line_break_the_capital_stays() {
        assert_eq!(typed("Done. ", "the report.", ""), "Done. The report.");
        assert_eq!(typed("Done.", "the report.", ""), "Done. The report.");
        assert_eq!(
            typed("Line one\n", "the report.", ""),
            "Line one\nThe report."
        );
        assert_eq!(typed("Really?\" ", "yes.", ""), "Really?\" Yes.");
    }

    #[test]
    fn an_empty_field_or_an_unknown_caret_changes_nothing() {
        assert_eq!(typed("", "The report.", ""), "The report.");
        assert_eq!(join(" The report. ", &Around::default()), " The report. ");
    }

    #[test]
    fn names_and_i_keep_their_capital_mid_sentence() {
        assert_eq!(typed("ask ", "Anna tomorrow.", ""), "ask Anna tomorrow.");
        assert_eq!(typed("and then ", "I left.", ""), "and then I left.");
        assert_eq!(typed("we use ", "NASA data.", ""), "we use NASA data.");
    }

    #[test]
    fn the_period_goes_only_where_the_sentence_goes_on() {
        // Text after that starts a new sentence: the period stays.
        assert_eq!(typed("", "It works.", " Next one."), "It works. Next one.");
        // Punctuation of its own after the caret: the period goes, no space before it.
        assert_eq!(
            typed("say ", "Hello.", ", then leave"),
            "say hello, then leave"
        );
        // A question mark is the speaker's.
        assert_eq!(typed("so ", "Why?", " because"), "so why? because");
    }

    #[test]
    fn no_space_after_an_opening_bracket_or_before_punctuation() {
        assert_eq!(typed("(", "see below.", ")"), "(see below)");
        assert_eq!(typed("word", ", and more.", ""), "word, and more.");
    }

    #[test]
    fn a_number_after_the_caret_continues_the_sentence() {
        assert_eq!(
            typed("costs ", "The same.", "5 times over"),
            "costs the same 5 times over"
        );
    }
}
