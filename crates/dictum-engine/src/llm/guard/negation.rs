//! Negations: the words that flip what a sentence says. A contraction is spelled out first
//! ("don't", "dont" → "do not"; "can't", "cannot" → "can not"; "won't" → "will not"), so
//! "we don't ship" and "We do not ship." carry the same `not`, and a dropped "n't" is a
//! dropped `not`. Every negation is protected: the cleanup may neither drop nor add one.

/// Words that negate (after contractions are spelled out).
pub const NEGATIONS: &[&str] = &[
    "not", "no", "never", "nothing", "without", "none", "nobody", "noone", "neither", "nor",
    "nowhere",
];

/// Whether `word` (lowercase, apostrophes removed) negates.
pub fn is_negation(word: &str) -> bool {
    NEGATIONS.contains(&word)
}

/// Negative contractions written without their apostrophe, as whisper sometimes does.
const BARE_NT: &[&str] = &[
    "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "hasnt", "havent", "hadnt",
    "wouldnt", "shouldnt", "couldnt", "mustnt", "neednt",
];

/// Pronouns whose `'s` is "is" ("it's" → "it is"); elsewhere `'s` is a possessive.
const S_IS: &[&str] = &[
    "it", "that", "there", "what", "he", "she", "who", "here", "where", "how", "lets",
];

/// Spells out one lowercase word with apostrophes (`'`) into the words it stands for.
pub fn expand_contraction(word: &str, out: &mut Vec<String>) {
    let w = word.trim_matches('\'');
    let two = |out: &mut Vec<String>, a: &str, b: &str| {
        out.push(a.to_string());
        out.push(b.to_string());
    };
    match w {
        "" => return,
        "can't" | "cant" | "cannot" => return two(out, "can", "not"),
        "won't" => return two(out, "will", "not"),
        "shan't" => return two(out, "shall", "not"),
        "ain't" | "aint" => return two(out, "is", "not"),
        "gonna" => return two(out, "going", "to"),
        "wanna" => return two(out, "want", "to"),
        "gotta" => return two(out, "got", "to"),
        "kinda" => return two(out, "kind", "of"),
        "sorta" => return two(out, "sort", "of"),
        "let's" => return two(out, "let", "us"),
        _ => {}
    }
    if let Some(stem) = w.strip_suffix("n't") {
        return two(out, stem, "not");
    }
    if BARE_NT.contains(&w) {
        return two(out, &w[..w.len() - 2], "not");
    }
    for (suffix, full) in [
        ("'re", "are"),
        ("'m", "am"),
        ("'ll", "will"),
        ("'ve", "have"),
        ("'d", "would"),
    ] {
        if let Some(stem) = w.strip_suffix(suffix) {
            return two(out, stem, full);
        }
    }
    if let Some(stem) = w.strip_suffix("'s") {
        out.push(stem.replace('\'', ""));
        if S_IS.contains(&stem) {
            out.push("is".into());
        }
        return;
    }
    out.push(w.replace('\'', ""));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(w: &str) -> Vec<String> {
        let mut v = Vec::new();
        expand_contraction(w, &mut v);
        v
    }

    #[test]
    fn contractions_spell_out_their_not() {
        assert_eq!(ex("don't"), ["do", "not"]);
        assert_eq!(ex("dont"), ["do", "not"]);
        assert_eq!(ex("can't"), ["can", "not"]);
        assert_eq!(ex("cannot"), ["can", "not"]);
        assert_eq!(ex("won't"), ["will", "not"]);
        assert_eq!(ex("it's"), ["it", "is"]);
        assert_eq!(ex("john's"), ["john"]);
        assert_eq!(ex("o'clock"), ["oclock"]);
        assert_eq!(ex("we're"), ["we", "are"]);
        assert!(is_negation("never") && is_negation("without") && !is_negation("know"));
    }
}
