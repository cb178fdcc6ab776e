//! The words of a spoken phrase, as the matcher compares them: lowercase, no punctuation
//! around them, hyphens splitting words. A leaf (it imports nothing from the crate), so the
//! `[commands]` config section can check a custom phrase without importing the matcher.

/// A word of the transcript: lowercase, no punctuation around it, and where its piece of text
/// starts (a cut there keeps everything said before it).
pub(crate) struct Token {
    pub word: String,
    pub start: usize,
}

pub(crate) fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut at = 0;
    for piece in text.split_inclusive(char::is_whitespace) {
        let start = at;
        at += piece.len();
        for part in piece.split('-') {
            let word = part
                .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .trim_matches('\'')
                .to_lowercase();
            if !word.is_empty() {
                out.push(Token { word, start });
            }
        }
    }
    out
}

/// The lowercase words of `text`, without punctuation around them; hyphens split words
/// ("new-line" is "new", "line").
pub fn words(text: &str) -> Vec<String> {
    tokens(text).into_iter().map(|t| t.word).collect()
}
