//! Spoken punctuation (opt-in, `[commands] punctuation`): "comma", "period", "question
//! mark"… become the mark, attached to the word before it. After "a", "the", "this"… the
//! word stays a word ("a period of time").

/// The marks, by their spoken words (one or two words).
const MARKS: &[(&[&str], &str)] = &[
    (&["question", "mark"], "?"),
    (&["exclamation", "mark"], "!"),
    (&["exclamation", "point"], "!"),
    (&["full", "stop"], "."),
    (&["comma"], ","),
    (&["period"], "."),
    (&["colon"], ":"),
    (&["semicolon"], ";"),
];

/// After these words a mark's name is a noun, not a mark.
const NOUN_BEFORE: &[&str] = &[
    "a", "an", "the", "this", "that", "one", "each", "every", "per", "trial", "grace",
];

fn norm(piece: &str) -> String {
    piece
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
}

/// `text` with spoken marks replaced.
pub(super) fn punctuate(text: &str) -> String {
    let pieces: Vec<&str> = text.split_whitespace().collect();
    let mut out: Vec<String> = Vec::with_capacity(pieces.len());
    let mut capitalize = false;
    let mut i = 0;
    while i < pieces.len() {
        let prev = out.last().map(|p| norm(p)).unwrap_or_default();
        let mark = MARKS.iter().find(|(words, _)| {
            words.len() <= pieces.len() - i
                && words
                    .iter()
                    .enumerate()
                    .all(|(k, w)| norm(pieces[i + k]) == *w)
        });
        match mark {
            Some((words, mark)) if !NOUN_BEFORE.contains(&prev.as_str()) => {
                match out.last_mut() {
                    Some(last) => {
                        let kept = last
                            .trim_end_matches([',', '.', ';', ':', '!', '?'])
                            .to_string();
                        *last = format!("{kept}{mark}");
                    }
                    None => out.push(mark.to_string()),
                }
                capitalize = matches!(*mark, "." | "?" | "!");
                i += words.len();
            }
            _ => {
                let piece = pieces[i];
                out.push(if capitalize {
                    let mut c = piece.chars();
                    c.next()
                        .map(|f| f.to_uppercase().chain(c).collect())
                        .unwrap_or_default()
                } else {
                    piece.to_string()
                });
                capitalize = false;
                i += 1;
            }
        }
    }
    out.join(" ")
}
