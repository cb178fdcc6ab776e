//! The `[[snippet]]` and `[[replace]]` tables (issue 30 item 2) as written in the config file,
//! and their checks: a phrase with words, no phrase twice, no control characters but the
//! snippet's newlines and tabs, sizes bounded. Applying them is `crate::snippets`. A leaf: the
//! word rule both use ([`phrase_words`]) lives here so the check needs nothing above config.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Most `[[snippet]]` plus `[[replace]]` tables (each is compared at every word).
pub const MAX_RULES: usize = 1000;
/// Most words in a phrase or a `from`.
pub const MAX_PHRASE_WORDS: usize = 12;
/// Longest snippet text or `to`, in characters (a signature, an address, a short template).
pub const MAX_TEXT_CHARS: usize = 4000;

/// One `[[snippet]]`: saying `phrase` (alone or inside a sentence, any case) types `text`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct SnippetConfig {
    /// What you say, e.g. "my address"; matched as whole words, in any case.
    pub phrase: String,
    /// What is typed instead. Newlines are kept in `dictum transcribe`'s text; a typed
    /// dictation gets them as line breaks outside terminals and as spaces in a terminal.
    pub text: String,
}

/// One `[[replace]]`: whisper's `from` (whole words, any case) is always written `to`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct ReplaceConfig {
    /// The words whisper writes, e.g. "cooper netties".
    pub from: String,
    /// What to write instead, e.g. "Kubernetes"; "" removes the words.
    pub to: String,
}

/// The words of a phrase as they are compared: letters and digits (with apostrophes inside
/// a word), lowercase; anything else separates words ("Cooper-Netties," is "cooper",
/// "netties"). The matcher (`crate::snippets`) splits the transcript the same way.
pub fn phrase_words(text: &str) -> Vec<String> {
    word_spans(text)
        .into_iter()
        .map(|(s, e)| normalize(&text[s..e]))
        .collect()
}

/// Byte ranges of the words of `text` (see [`phrase_words`]).
pub fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut last_alnum_end = 0;
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        if c.is_alphanumeric() {
            start.get_or_insert(i);
            last_alnum_end = end;
        } else if is_apostrophe(c) && start.is_some() {
            // Inside a word only ("don't"); a trailing one is cut below.
        } else if let Some(s) = start.take() {
            out.push((s, last_alnum_end));
        }
    }
    if let Some(s) = start {
        out.push((s, last_alnum_end));
    }
    out
}

/// One word as compared: lowercase, curly apostrophes straight.
pub fn normalize(word: &str) -> String {
    word.chars()
        .map(|c| if is_apostrophe(c) { '\'' } else { c })
        .flat_map(char::to_lowercase)
        .collect()
}

fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '\u{2019}'
}

/// `(key, reason)` of the first refused table.
pub fn validate(
    snippets: &[SnippetConfig],
    replacements: &[ReplaceConfig],
) -> Result<(), (String, String)> {
    if snippets.len() + replacements.len() > MAX_RULES {
        return Err((
            "snippet".into(),
            format!(
                "{} [[snippet]] and [[replace]] tables; at most {MAX_RULES} are allowed",
                snippets.len() + replacements.len()
            ),
        ));
    }
    let mut seen_from: Vec<Vec<String>> = Vec::new();
    for (i, r) in replacements.iter().enumerate() {
        let key = format!("replace #{}.from", i + 1);
        let words = check_phrase(
            &r.from,
            &key,
            "the words whisper writes, e.g. \"cooper netties\"",
        )?;
        if seen_from.contains(&words) {
            return Err((
                key,
                format!(
                    "\"{}\" is replaced twice; keep one [[replace]] for it",
                    words.join(" ")
                ),
            ));
        }
        check_text(&r.to, &format!("replace #{}.to", i + 1), false)?;
        seen_from.push(words);
    }
    let mut seen_phrase: Vec<Vec<String>> = Vec::new();
    for (i, s) in snippets.iter().enumerate() {
        let key = format!("snippet #{}.phrase", i + 1);
        let words = check_phrase(&s.phrase, &key, "what you will say, e.g. \"my address\"")?;
        if seen_phrase.contains(&words) {
            return Err((
                key,
                format!(
                    "\"{}\" has two snippets; keep one [[snippet]] for it",
                    words.join(" ")
                ),
            ));
        }
        if seen_from.contains(&words) {
            return Err((
                key,
                format!(
                    "\"{}\" is also a [[replace]] from; replacements run first, so this snippet \
                     would never be typed: remove one of them",
                    words.join(" ")
                ),
            ));
        }
        let text_key = format!("snippet #{}.text", i + 1);
        if s.text.trim().is_empty() {
            return Err((
                text_key,
                format!(
                    "the snippet for \"{}\" has no text; write what it types (to remove words, \
                     use a [[replace]] with to = \"\")",
                    words.join(" ")
                ),
            ));
        }
        check_text(&s.text, &text_key, true)?;
        seen_phrase.push(words);
    }
    Ok(())
}

fn check_phrase(phrase: &str, key: &str, example: &str) -> Result<Vec<String>, (String, String)> {
    let words = phrase_words(phrase);
    if words.is_empty() {
        return Err((
            key.to_string(),
            format!("{phrase:?} has no words; write {example}"),
        ));
    }
    if words.len() > MAX_PHRASE_WORDS {
        return Err((
            key.to_string(),
            format!(
                "{phrase:?} has {} words; at most {MAX_PHRASE_WORDS}",
                words.len()
            ),
        ));
    }
    Ok(words)
}

fn check_text(text: &str, key: &str, newlines: bool) -> Result<(), (String, String)> {
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err((
            key.to_string(),
            format!("is {chars} characters long; at most {MAX_TEXT_CHARS}"),
        ));
    }
    let allowed = |c: char| newlines && (c == '\n' || c == '\t');
    if let Some(c) = text.chars().find(|&c| c.is_control() && !allowed(c)) {
        let what = if newlines {
            "only newlines and tabs are allowed"
        } else {
            "write it on one line"
        };
        return Err((
            key.to_string(),
            format!("holds the control character U+{:04X}; {what}", c as u32),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snip(phrase: &str, text: &str) -> SnippetConfig {
        SnippetConfig {
            phrase: phrase.into(),
            text: text.into(),
        }
    }

    fn rep(from: &str, to: &str) -> ReplaceConfig {
        ReplaceConfig {
            from: from.into(),
            to: to.into(),
        }
    }

    #[test]
    fn words_are_split_and_lowercased() {
        assert_eq!(phrase_words("Cooper-Netties,"), ["cooper", "netties"]);
        assert_eq!(phrase_words("  My   ADDRESS. "), ["my", "address"]);
        assert_eq!(phrase_words("don’t 'quote'"), ["don't", "quote"]);
        assert_eq!(phrase_words("v2.0"), ["v2", "0"]);
        assert!(phrase_words(" ,.! ").is_empty());
    }

    /// Snippets, replacements, the refused key (None: accepted), words its reason holds.
    type Case = (
        Vec<SnippetConfig>,
        Vec<ReplaceConfig>,
        Option<&'static str>,
        &'static str,
    );

    #[test]
    fn what_is_refused_and_why() {
        // (snippets, replacements, refused key, words the reason holds)
        #[rustfmt::skip]
        let table: Vec<Case> = vec![
            (
                vec![snip("my address", "1 Main St\nSpringfield")],
                vec![rep("cooper netties", "Kubernetes")],
                None,
                "",
            ),
            (vec![], vec![rep("um", "")], None, ""),
            (
                vec![snip("", "x")],
                vec![],
                Some("snippet #1.phrase"),
                "has no words",
            ),
            (
                vec![snip(" ... ", "x")],
                vec![],
                Some("snippet #1.phrase"),
                "has no words",
            ),
            (
                vec![],
                vec![rep("", "x")],
                Some("replace #1.from"),
                "has no words",
            ),
            (
                vec![snip("sig", "a"), snip("SIG.", "b")],
                vec![],
                Some("snippet #2.phrase"),
                "two snippets",
            ),
            (
                vec![],
                vec![rep("a b", "x"), rep("A-B", "y")],
                Some("replace #2.from"),
                "replaced twice",
            ),
            (
                vec![snip("cooper netties", "x")],
                vec![rep("Cooper Netties", "K")],
                Some("snippet #1.phrase"),
                "never be typed",
            ),
            (
                vec![snip("sig", "  ")],
                vec![],
                Some("snippet #1.text"),
                "no text",
            ),
            (
                vec![snip("sig", "a\u{1b}[31m")],
                vec![],
                Some("snippet #1.text"),
                "U+001B",
            ),
            (
                vec![snip("sig", "a\rb")],
                vec![],
                Some("snippet #1.text"),
                "U+000D",
            ),
            (
                vec![],
                vec![rep("x", "a\nb")],
                Some("replace #1.to"),
                "one line",
            ),
            (
                vec![snip("a b c d e f g h i j k l m", "x")],
                vec![],
                Some("snippet #1.phrase"),
                "at most 12",
            ),
            (
                vec![snip("sig", &"x".repeat(4001))],
                vec![],
                Some("snippet #1.text"),
                "at most 4000",
            ),
        ];
        for (snippets, replacements, key, why) in table {
            match (validate(&snippets, &replacements), key) {
                (Ok(()), None) => {}
                (Err((k, reason)), Some(want)) => {
                    assert_eq!(k, want, "{snippets:?} {replacements:?}: {reason}");
                    assert!(reason.contains(why), "{k}: {reason}");
                }
                (got, want) => panic!("{snippets:?} {replacements:?}: {got:?}, wanted {want:?}"),
            }
        }
    }
}
