//! Text → tokens the guard compares: lowercase words with contractions spelled out
//! ([`super::negation`]) and numbers as canonical values ([`super::numbers`]). Punctuation
//! is dropped, but a token remembers whether a pause mark (`,` `.` `-` `…`...) followed it
//! (false starts are told by it).

use super::negation::expand_contraction;
use super::numbers::{canonical, parse_spoken, spoken, Group, Spoken, Suffix};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Word(String),
    /// A number group's canonical value ("123", "15:00", "10.0.0.1").
    Num(String),
}

impl Tok {
    pub fn text(&self) -> &str {
        match self {
            Tok::Word(s) | Tok::Num(s) => s,
        }
    }

    pub fn word(&self) -> Option<&str> {
        match self {
            Tok::Word(s) => Some(s),
            Tok::Num(_) => None,
        }
    }

    pub fn is_num(&self) -> bool {
        matches!(self, Tok::Num(_))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    /// A pause mark followed it in the text.
    pub pause_after: bool,
    /// ... and the mark cuts a phrase off: `-` before a space, a dash, an ellipsis.
    pub cut_after: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Item {
    Word(String),
    /// A number: digits as written, or a spoken number's value.
    Atom(String),
    /// `.` `:` `-` `/` between two things (not before a space).
    Sep(char),
    Space,
    /// Punctuation that ends a phrase; `true` when it cuts one off (`- `, `—`, `…`).
    Break(bool),
    Sym(char),
}

/// Lowercase, with dotted initialisms ("p.m.", "a.m.", "u.s.") as one word.
fn prepare(text: &str) -> String {
    let lower = text.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    for (i, chunk) in lower.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let core = chunk.trim_end_matches([',', ';', ':', '!', '?']);
        let letters: Vec<&str> = core.split('.').filter(|p| !p.is_empty()).collect();
        if letters.len() > 1
            && letters
                .iter()
                .all(|p| p.chars().count() == 1 && p.chars().all(char::is_alphabetic))
        {
            out.push_str(&letters.concat());
            out.push_str(&chunk[core.len()..]);
        } else {
            out.push_str(chunk);
        }
    }
    out
}

fn lex(text: &str) -> Vec<Item> {
    let chars: Vec<char> = prepare(text)
        .chars()
        .map(|c| if matches!(c, '’' | '‘') { '\'' } else { c })
        .collect();
    let n = chars.len();
    let mut items = Vec::new();
    let mut i = 0;
    while i < n {
        let c = chars[i];
        if c.is_alphanumeric() && !c.is_ascii_digit() {
            let start = i;
            while i < n
                && ((chars[i].is_alphanumeric() && !chars[i].is_ascii_digit())
                    || (chars[i] == '\'' && i + 1 < n && chars[i + 1].is_alphabetic()))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut words = Vec::new();
            expand_contraction(&word, &mut words);
            items.extend(words.into_iter().map(Item::Word));
        } else if c.is_ascii_digit() {
            let mut digits = String::new();
            loop {
                while i < n && chars[i].is_ascii_digit() {
                    digits.push(chars[i]);
                    i += 1;
                }
                // Thousands separators: "25,000".
                let three = i + 3 < n
                    && chars[i] == ','
                    && chars[i + 1..i + 4].iter().all(char::is_ascii_digit)
                    && !chars.get(i + 4).is_some_and(char::is_ascii_digit);
                if !three {
                    break;
                }
                i += 1;
            }
            items.push(Item::Atom(digits));
            // Ordinal suffixes: "3rd", "21st".
            let rest: String = chars[i..n.min(i + 2)].iter().collect();
            if ["st", "nd", "rd", "th"].contains(&rest.as_str())
                && !chars.get(i + 2).is_some_and(|c| c.is_alphabetic())
            {
                i += 2;
            }
        } else if c.is_whitespace() {
            if items.last() != Some(&Item::Space) {
                items.push(Item::Space);
            }
            i += 1;
        } else {
            let next_blank = chars.get(i + 1).is_none_or(|c| c.is_whitespace());
            if c == '.' && chars.get(i + 1) == Some(&'.') {
                while chars.get(i) == Some(&'.') {
                    i += 1;
                }
                items.push(Item::Break(true));
                continue;
            }
            items.push(match c {
                '-' if next_blank => Item::Break(true),
                '.' | ':' if next_blank => Item::Break(false),
                '.' | ':' | '-' | '/' => Item::Sep(c),
                '$' | '€' | '£' | '%' => Item::Sym(c),
                '—' | '–' | '…' => Item::Break(true),
                _ => Item::Break(false),
            });
            i += 1;
        }
    }
    items
}

fn next_solid(items: &[Item], from: usize) -> Option<&Item> {
    items[from.min(items.len())..]
        .iter()
        .find(|it| **it != Item::Space)
}

fn is_number_word(it: Option<&Item>) -> bool {
    match it {
        Some(Item::Word(w)) => spoken(w).is_some(),
        Some(Item::Atom(_)) => true,
        _ => false,
    }
}

/// Spoken numbers become atoms; "point"/"dot"/"dash" between numbers become joiners.
fn spoken_pass(items: Vec<Item>) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::with_capacity(items.len());
    let mut after_point = false;
    let mut i = 0;
    while i < items.len() {
        match &items[i] {
            Item::Word(w) if spoken(w).is_some() => {
                // The run: number words (and "and") separated by spaces only.
                let mut words: Vec<&str> = Vec::new();
                let mut idx: Vec<usize> = Vec::new();
                let mut j = i;
                while let Some(Item::Word(x)) = items.get(j) {
                    if spoken(x).is_none() && x != "and" {
                        break;
                    }
                    words.push(x);
                    idx.push(j);
                    j += 1;
                    if items.get(j) == Some(&Item::Space) {
                        j += 1;
                    } else if items.get(j) == Some(&Item::Sep('-'))
                        && matches!(items.get(j + 1), Some(Item::Word(y)) if spoken(y).is_some())
                    {
                        // "twenty-two": a hyphen inside a spoken number is a space, not a
                        // dash between digit groups ("twenty-two-six" is 22 6, never 2026).
                        j += 1;
                    }
                }
                let (values, used) = parse_spoken(&words, after_point);
                after_point = false;
                if used == 0 {
                    out.push(items[i].clone());
                    i += 1;
                    continue;
                }
                for (k, v) in values.iter().enumerate() {
                    if k > 0 {
                        out.push(Item::Space);
                    }
                    out.push(Item::Atom(v.to_string()));
                }
                i = idx[used - 1] + 1;
            }
            Item::Word(w)
                if matches!(w.as_str(), "point" | "dot" | "dash")
                    && matches!(
                        out.iter().rev().find(|x| **x != Item::Space),
                        Some(Item::Atom(_))
                    )
                    && is_number_word(next_solid(&items, i + 1)) =>
            {
                while out.last() == Some(&Item::Space) {
                    out.pop();
                }
                after_point = w != "dash";
                out.push(Item::Sep(if after_point { '.' } else { '-' }));
                i += 1;
                while items.get(i) == Some(&Item::Space) {
                    i += 1;
                }
            }
            it => {
                if *it != Item::Space {
                    after_point = false;
                }
                out.push(it.clone());
                i += 1;
            }
        }
    }
    out
}

fn unit_word(w: &str) -> &str {
    match w {
        "dollar" | "dollars" | "bucks" | "buck" => "dollars",
        "euro" | "euros" => "euros",
        "pound" | "pounds" => "pounds",
        "cent" | "cents" => "cents",
        "okay" => "ok",
        "mr" => "mister",
        "mrs" => "missus",
        "dr" => "doctor",
        other => other,
    }
}

/// The tokens of `text`.
pub fn tokenize(text: &str) -> Vec<Token> {
    let items = spoken_pass(lex(text));
    let mut out: Vec<Token> = Vec::new();
    let push = |out: &mut Vec<Token>, tok: Tok| {
        out.push(Token {
            tok,
            pause_after: false,
            cut_after: false,
        })
    };
    let mut currency: Option<&str> = None;
    let mut i = 0;
    while i < items.len() {
        match &items[i] {
            Item::Atom(a) => {
                let mut group = Group {
                    atoms: vec![a.clone()],
                    seps: Vec::new(),
                };
                let mut j = i + 1;
                loop {
                    match (items.get(j), items.get(j + 1)) {
                        (Some(Item::Sep(c)), Some(Item::Atom(b))) => {
                            group.seps.push(*c);
                            group.atoms.push(b.clone());
                        }
                        (Some(Item::Space), Some(Item::Atom(b))) => {
                            group.seps.push(' ');
                            group.atoms.push(b.clone());
                        }
                        _ => break,
                    }
                    j += 2;
                }
                let k = if items.get(j) == Some(&Item::Space) {
                    j + 1
                } else {
                    j
                };
                let suffix = match items.get(k) {
                    Some(Item::Word(w)) => match (w.as_str(), spoken(w)) {
                        ("am", _) => Suffix::Am,
                        ("pm", _) => Suffix::Pm,
                        ("oclock", _) => Suffix::OClock,
                        (_, Some(Spoken::Scale(s))) => Suffix::Scale(s),
                        _ => Suffix::None,
                    },
                    _ => Suffix::None,
                };
                let value = match canonical(&group, suffix) {
                    Some(v) if suffix != Suffix::None => {
                        j = k + 1;
                        v
                    }
                    _ => canonical(&group, Suffix::None).unwrap_or_else(|| group.atoms.concat()),
                };
                push(&mut out, Tok::Num(value));
                if let Some(c) = currency.take() {
                    push(&mut out, Tok::Word(c.into()));
                }
                if items.get(j) == Some(&Item::Sym('%')) {
                    push(&mut out, Tok::Word("percent".into()));
                    j += 1;
                }
                i = j;
                continue;
            }
            Item::Word(w) => push(&mut out, Tok::Word(unit_word(w).to_string())),
            Item::Sym(c) => {
                // A currency sign counts only in front of a number ("$5", not "$(x)").
                let before_number = matches!(next_solid(&items, i + 1), Some(Item::Atom(_)));
                match c {
                    '$' if before_number => currency = Some("dollars"),
                    '€' if before_number => currency = Some("euros"),
                    '£' if before_number => currency = Some("pounds"),
                    '%' => push(&mut out, Tok::Word("percent".into())),
                    _ => {}
                }
            }
            Item::Break(cut) => {
                if let Some(last) = out.last_mut() {
                    last.pause_after = true;
                    last.cut_after |= *cut;
                }
            }
            Item::Sep(_) | Item::Space => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<String> {
        tokenize(s)
            .into_iter()
            .map(|t| t.tok.text().to_string())
            .collect()
    }

    #[test]
    fn spoken_and_written_numbers_meet() {
        let same = [
            ("one hundred and twenty three dollars", "$123"),
            ("three pm", "3 PM"),
            ("three pm", "15:00"),
            ("three p.m.", "3pm"),
            ("five five five one two three four", "555-1234"),
            ("ten dot zero dot zero dot one", "10.0.0.1"),
            ("hunter two", "hunter2"),
            ("twenty five thousand", "25,000"),
            ("one point five million", "1.5 million"),
            ("march third", "March 3rd"),
            ("three thirty", "3:30"),
            ("three o'clock", "3:00"),
            ("fifty percent", "50%"),
            ("we don't ship", "we do not ship"),
            ("nineteen ninety nine", "1999"),
        ];
        for (a, b) in same {
            assert_eq!(t(a), t(b), "{a:?} vs {b:?}");
        }
        for (a, b) in [
            ("three pm", "4 PM"),
            ("one hundred twenty three", "$124"),
            ("ten dot zero dot zero dot one", "10.0.0.2"),
            ("three pm", "3 AM"),
        ] {
            assert_ne!(t(a), t(b), "{a:?} vs {b:?}");
        }
        // Hyphens inside a spoken number join its words, they do not split digit groups.
        assert_eq!(t("twenty-two"), t("twenty two"));
        assert_ne!(t("twenty twenty six"), t("twenty-two-six"));
        assert_eq!(t("$123"), ["123", "dollars"]);
        assert_eq!(t("should- we"), ["should", "we"]);
        assert!(tokenize("should- we")[0].pause_after);
    }
}
