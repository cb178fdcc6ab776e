//! The guard: the LLM's output replaces the transcript only when it is a faithful cleanup of
//! it. Pure functions over two strings, no I/O.
//!
//! It compares *meaning*, not word counts. Both texts become tokens ([`tokens`]): lowercase
//! words with contractions spelled out ([`negation`]: "don't" → "do not") and numbers as
//! values ([`numbers`]: "one hundred and twenty three dollars" and "$123" are both `123
//! dollars`, "three pm" and "15:00" both `15:00`). What a cleanup may remove is then taken
//! out of both ([`fillers`]: um/uh, discourse markers such as "you know", "I mean", "kind
//! of", repeated words), and in the transcript false starts and self-corrected values
//! ([`corrections`]: "at three, no wait, four") are marked as optional. The two token lists
//! are aligned (longest common subsequence); every token left over is a change:
//! - a negation, a number or any other content word dropped, added or changed: rejected
//!   (negations and numbers are named as such in the reason);
//! - an optional transcript token left out: fine;
//! - a small function word ("a", "the", "that", "and", "just"...) dropped or added: fine up
//!   to `max_added_fraction` of the transcript (at least one), none for a dictated question
//!   or instruction;
//! - a word split or joined ("e-mail" / "email"): fine.
//!
//! Before that, preambles ("Sure! Here's..."), labels and empty answers are rejected; answers
//! to a dictated question and obeyed instructions fail the comparison (they add or drop
//! content) and are reported as such. Last, the output may not add a newline or a control
//! character anywhere, and — when the text goes into a terminal — no shell-significant
//! character the transcript does not have ([`crate::text_safety`]): typed into a terminal,
//! `echo one;\ntouch x` runs two commands where "echo one touch x" was said.

pub mod corrections;
pub mod fillers;
pub mod negation;
pub mod numbers;
pub mod table;
pub mod tokens;

use crate::eval::normalize;
use serde::Serialize;
use std::fmt;
use tokens::Tok;

pub use fillers::FILLERS;

/// Bounds of a faithful cleanup (the last three only name the kind of a rejection).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Small function words ("a", "the", "that", "just"...) the output may drop or add, as a
    /// fraction of the transcript's compared words (at least 1; 0 for questions and
    /// instructions).
    pub max_added_fraction: f64,
    /// Output words / transcript words below which a rejection is a `length_ratio` one.
    pub min_ratio: f64,
    /// ... and above which.
    pub max_ratio: f64,
    /// Transcript words kept below which a rejection is a `low_overlap` one.
    pub min_recall: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_added_fraction: 0.15,
            min_ratio: 0.5,
            max_ratio: 1.3,
            min_recall: 0.75,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum RejectKind {
    Empty,
    Preamble,
    AnsweredQuestion,
    ObeyedInstruction,
    /// A negation dropped or added.
    Negation,
    /// A number, quantity, date or time dropped, added or changed.
    Number,
    LengthRatio,
    AddedContent,
    LowOverlap,
    /// A content word dropped or changed.
    ChangedWords,
    UnsafeCharacters,
}

impl RejectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RejectKind::Empty => "empty",
            RejectKind::Preamble => "preamble",
            RejectKind::AnsweredQuestion => "answered_question",
            RejectKind::ObeyedInstruction => "obeyed_instruction",
            RejectKind::Negation => "negation",
            RejectKind::Number => "number",
            RejectKind::LengthRatio => "length_ratio",
            RejectKind::AddedContent => "added_content",
            RejectKind::LowOverlap => "low_overlap",
            RejectKind::ChangedWords => "changed_words",
            RejectKind::UnsafeCharacters => "unsafe_characters",
        }
    }
}

/// Why an output was not used; `Display` is what history stores (`kind: detail`).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub kind: RejectKind,
    pub detail: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.detail)
    }
}

fn reject(kind: RejectKind, detail: impl Into<String>) -> Rejection {
    Rejection {
        kind,
        detail: detail.into(),
    }
}

/// Content words: normalized words without standalone fillers, and with stutters ("i i
/// think") collapsed to one word. (Preambles, questions and instructions are told by them.)
pub fn content_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in normalize(text) {
        if FILLERS.contains(&w.as_str()) || out.last() == Some(&w) {
            continue;
        }
        out.push(w);
    }
    out
}

/// Removes what models wrap answers in: code fences and surrounding quotes.
pub fn strip_wrapping(output: &str) -> String {
    let mut s = output.trim().to_string();
    if s.starts_with("```") {
        let body = s.trim_start_matches('`');
        // Drop a language tag on the fence line.
        let body = match body.split_once('\n') {
            Some((first, rest)) if !first.contains(' ') => rest,
            _ => body,
        };
        s = body.trim_end().trim_end_matches('`').trim().to_string();
    }
    loop {
        let t = s.trim();
        let pairs = [('"', '"'), ('\'', '\''), ('“', '”'), ('«', '»'), ('`', '`')];
        let inner = pairs.iter().find_map(|&(open, close)| {
            let rest = t.strip_prefix(open)?.strip_suffix(close)?;
            // Only a pair that wraps the whole text, not `"a" and "b"`.
            (!rest.contains(open) && !rest.contains(close)).then(|| rest.to_string())
        });
        match inner {
            Some(i) if !i.trim().is_empty() => s = i.trim().to_string(),
            _ => return t.to_string(),
        }
    }
}

/// Word sequences a chatty model opens with (normalized).
const PREAMBLES: &[&[&str]] = &[
    &["sure"],
    &["certainly"],
    &["absolutely"],
    &["of", "course"],
    &["here", "is"],
    &["here", "are"],
    &["heres"],
    &["ok", "here"],
    &["alright", "here"],
    &["the", "cleaned"],
    &["the", "corrected"],
    &["cleaned", "text"],
    &["cleaned", "transcript"],
    &["corrected", "text"],
    &["corrected", "transcript"],
    &["transcript"],
    &["output"],
    &["i", "cant"],
    &["i", "cannot"],
    &["im", "sorry"],
    &["i", "am", "sorry"],
    &["sorry"],
    &["as", "an", "ai"],
    &["great", "question"],
    &["i", "apologize"],
    &["happy", "to", "help"],
];

const WH_WORDS: &[&str] = &[
    "what", "why", "how", "who", "whom", "whose", "when", "where", "which",
];
const AUX_WORDS: &[&str] = &[
    "is", "are", "am", "was", "were", "do", "does", "did", "can", "could", "will", "would",
    "should", "shall", "may", "might", "have", "has", "had", "isnt", "arent", "dont", "doesnt",
    "didnt", "cant", "wont", "wouldnt", "shouldnt",
];
const IMPERATIVES: &[&str] = &[
    "ignore",
    "disregard",
    "forget",
    "write",
    "tell",
    "say",
    "translate",
    "summarize",
    "summarise",
    "list",
    "give",
    "explain",
    "repeat",
    "print",
    "output",
    "generate",
    "rewrite",
    "answer",
    "reply",
    "respond",
    "pretend",
    "act",
    "describe",
    "draft",
    "compose",
    "create",
    "make",
    "show",
    "calculate",
    "compute",
    "name",
    "define",
    "return",
];
const INJECTION_WORDS: &[&str] = &[
    "ignore",
    "disregard",
    "instructions",
    "instruction",
    "pretend",
    "jailbreak",
];

fn starts_with_words(words: &[String], prefix: &[&str]) -> bool {
    words.len() >= prefix.len() && words.iter().zip(prefix).all(|(w, p)| w == p)
}

fn preamble_of(raw: &[String], out: &[String], cleaned: &str) -> Option<String> {
    // "can't" and "cannot" open the same sentence.
    let same = |words: &[String]| -> Vec<String> {
        words
            .iter()
            .take(4)
            .map(|w| {
                if w == "cannot" {
                    "cant".into()
                } else {
                    w.clone()
                }
            })
            .collect()
    };
    let raw_start = same(raw);
    for p in PREAMBLES {
        let p_same: Vec<&str> = p
            .iter()
            .map(|w| if *w == "cannot" { "cant" } else { *w })
            .collect();
        if starts_with_words(out, p) && !starts_with_words(&raw_start, &p_same) {
            return Some(format!("output opens with \"{}\"", p.join(" ")));
        }
    }
    // "Cleaned version:\n..." — a label line the transcript did not have.
    let mut lines = cleaned.lines().filter(|l| !l.trim().is_empty());
    if let (Some(first), Some(_)) = (lines.next(), lines.next()) {
        if first.trim_end().ends_with(':') {
            let label = content_words(first);
            if !raw.starts_with(&label) {
                return Some(format!("output opens with the label \"{}\"", first.trim()));
            }
        }
    }
    None
}

/// A dictated question (the model must not answer it).
pub fn is_question(raw_text: &str, raw: &[String]) -> bool {
    let skip = [
        "so", "and", "but", "ok", "okay", "well", "hey", "please", "also",
    ];
    let first = raw.iter().find(|w| !skip.contains(&w.as_str()));
    raw_text.contains('?')
        || first.is_some_and(|w| AUX_WORDS.contains(&w.as_str()) || WH_WORDS.contains(&w.as_str()))
        || raw.iter().take(3).any(|w| WH_WORDS.contains(&w.as_str()))
}

/// A dictated instruction (the model must not obey it).
pub fn is_instruction(raw: &[String]) -> bool {
    let skip = [
        "so", "and", "now", "ok", "okay", "please", "hey", "then", "also", "just",
    ];
    let first = raw.iter().find(|w| !skip.contains(&w.as_str()));
    first.is_some_and(|w| IMPERATIVES.contains(&w.as_str()))
        || raw.iter().any(|w| INJECTION_WORDS.contains(&w.as_str()))
}

/// How a token takes part in the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Must be in the other text.
    Core,
    /// Removed from the comparison (a filler, a marker, a repeat).
    Dropped,
    /// Transcript only: may be left out (a false start, a corrected value).
    Optional,
}

#[derive(Debug, Clone)]
struct Unit {
    tok: Tok,
    pause_after: bool,
    cut_after: bool,
    role: Role,
}

/// The tokens of a text with their roles; `transcript` also marks corrections and false
/// starts.
fn analyse(text: &str, transcript: bool) -> Vec<Unit> {
    let mut units: Vec<Unit> = tokens::tokenize(text)
        .into_iter()
        .map(|t| Unit {
            tok: t.tok,
            pause_after: t.pause_after,
            cut_after: t.cut_after,
            role: Role::Core,
        })
        .collect();
    fillers::drop_fillers(&mut units);
    if transcript {
        corrections::mark(&mut units);
    }
    fillers::drop_markers(&mut units);
    fillers::drop_repeats(&mut units);
    if transcript {
        fillers::mark_false_starts(&mut units);
    }
    units.retain(|u| u.role != Role::Dropped);
    units
}

/// Small function words a cleanup may drop or add (within a budget).
const SLACK: &[&str] = &[
    "a", "an", "the", "that", "and", "then", "just", "well", "oh", "also", "very", "really", "ok",
    "yeah", "now",
];

/// What a changed token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Negation,
    Number,
    Slack,
    Content,
}

fn class(tok: &Tok) -> Class {
    match tok {
        Tok::Num(_) => Class::Number,
        Tok::Word(w) if negation::is_negation(w) => Class::Negation,
        Tok::Word(w) if SLACK.contains(&w.as_str()) => Class::Slack,
        Tok::Word(_) => Class::Content,
    }
}

#[derive(Debug, Default)]
struct Comparison {
    /// (class, token, added?) of every change that is not allowed.
    changes: Vec<(Class, String, bool)>,
    /// Function words dropped or added.
    slack: usize,
    matched: usize,
    /// Transcript tokens that had to be there (not optional).
    required: usize,
}

/// Aligns the transcript's units with the output's tokens and sorts out every difference.
fn compare(raw: &[Unit], out: &[Unit]) -> Comparison {
    let (n, m) = (raw.len(), out.len());
    // lcs[i][j]: the heaviest common subsequence of raw[i..] and out[j..], where a required
    // transcript token weighs 2 and an optional one 1: "we should- we need" matches the
    // output's "we" with the second "we", so the false start is what is left out.
    let weight = |i: usize| if raw[i].role == Role::Optional { 1 } else { 2 };
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = lcs[at(i + 1, j)].max(lcs[at(i, j + 1)]);
            lcs[at(i, j)] = if raw[i].tok == out[j].tok {
                skip.max(weight(i) + lcs[at(i + 1, j + 1)])
            } else {
                skip
            };
        }
    }
    let mut cmp = Comparison {
        required: raw.iter().filter(|u| u.role == Role::Core).count(),
        ..Comparison::default()
    };
    let (mut dels, mut adds): (Vec<&Unit>, Vec<&Unit>) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n
            && j < m
            && raw[i].tok == out[j].tok
            && lcs[at(i, j)] == weight(i) + lcs[at(i + 1, j + 1)]
        {
            settle(&mut cmp, &mut dels, &mut adds);
            cmp.matched += 1;
            i += 1;
            j += 1;
        } else if j == m || (i < n && lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            dels.push(&raw[i]);
            i += 1;
        } else {
            adds.push(&out[j]);
            j += 1;
        }
    }
    settle(&mut cmp, &mut dels, &mut adds);
    cmp
}

/// Judges one stretch of differences between two matched tokens.
fn settle(cmp: &mut Comparison, dels: &mut Vec<&Unit>, adds: &mut Vec<&Unit>) {
    let joined = |units: &[&Unit]| units.iter().map(|u| u.tok.text()).collect::<String>();
    let required: Vec<&Unit> = dels
        .iter()
        .copied()
        .filter(|u| u.role != Role::Optional)
        .collect();
    // The same letters split or joined differently ("e-mail" / "email").
    let resplit =
        !adds.is_empty() && (joined(dels) == joined(adds) || joined(&required) == joined(adds));
    if !resplit {
        for (units, added) in [(&required, false), (&*adds, true)] {
            for u in units.iter() {
                match class(&u.tok) {
                    Class::Slack => cmp.slack += 1,
                    c => cmp.changes.push((c, u.tok.text().to_string(), added)),
                }
            }
        }
    }
    dels.clear();
    adds.clear();
}

/// "drops \"not\"; adds \"production\"" (at most four of each).
fn describe(changes: &[(Class, String, bool)]) -> String {
    let list = |added: bool| {
        let words: Vec<String> = changes
            .iter()
            .filter(|c| c.2 == added)
            .map(|c| format!("\"{}\"", c.1))
            .collect();
        let more = words.len().saturating_sub(4);
        let mut s = words.into_iter().take(4).collect::<Vec<_>>().join(", ");
        if more > 0 {
            s.push_str(&format!(" and {more} more"));
        }
        s
    };
    let (dropped, added) = (list(false), list(true));
    match (dropped.is_empty(), added.is_empty()) {
        (false, false) => format!("drops {dropped}; adds {added}"),
        (false, true) => format!("drops {dropped}"),
        (true, false) => format!("adds {added}"),
        (true, true) => "changes function words".into(),
    }
}

/// The rejection for characters `cleaned` adds (call only when it adds some).
fn unsafe_characters(raw: &str, cleaned: &str, terminal: bool) -> Rejection {
    let Some(added) = crate::text_safety::added_unsafe(raw, cleaned, terminal) else {
        return reject(
            RejectKind::UnsafeCharacters,
            "the output adds unsafe characters",
        );
    };
    let why = if crate::text_safety::is_control_like(added.c) {
        "typed, it would press keys"
    } else {
        "typed into a terminal it could run a command"
    };
    reject(
        RejectKind::UnsafeCharacters,
        format!(
            "the output adds {} ({} in the output, {} in the transcript); {why}",
            added.describe(),
            added.in_output,
            added.in_raw
        ),
    )
}

/// Judges `output` as a cleanup of `raw`: the text to use, or why not. `terminal`: the text
/// goes into a terminal (shell-significant characters may not be added).
pub fn judge(
    raw: &str,
    output: &str,
    limits: &Limits,
    terminal: bool,
) -> Result<String, Rejection> {
    let cleaned = strip_wrapping(output);
    let r = content_words(raw);
    let o = content_words(&cleaned);
    if o.is_empty() {
        return Err(reject(
            RejectKind::Empty,
            if cleaned.is_empty() {
                "the model returned nothing".to_string()
            } else {
                "the model returned no words".to_string()
            },
        ));
    }
    if r.is_empty() {
        return Err(reject(
            RejectKind::AddedContent,
            "the transcript has no words besides fillers; the output has some",
        ));
    }
    if let Some(why) = preamble_of(&r, &o, &cleaned) {
        return Err(reject(RejectKind::Preamble, why));
    }
    // A newline or a control character is refused whatever the words (and the reason names
    // the first watched character, a shell one included where the target is a terminal).
    if crate::text_safety::added_unsafe(raw, &cleaned, false).is_some() {
        return Err(unsafe_characters(raw, &cleaned, terminal));
    }

    let raw_units = analyse(raw, true);
    let out_units = analyse(&cleaned, false);
    let cmp = compare(&raw_units, &out_units);
    let question = is_question(raw, &r);
    let instruction = is_instruction(&r);
    let strict = question || instruction;
    let n = cmp.required.max(1) as f64;
    let budget = if strict {
        0
    } else {
        ((limits.max_added_fraction * n).round() as usize).max(1)
    };
    if cmp.changes.is_empty() && cmp.slack <= budget {
        // The words are faithful; the characters between them must be too. (Checked last so
        // an output that fails for other reasons is reported for those.)
        if crate::text_safety::added_unsafe(raw, &cleaned, terminal).is_some() {
            return Err(unsafe_characters(raw, &cleaned, terminal));
        }
        return Ok(cleaned);
    }
    let added = out_units.len().saturating_sub(cmp.matched);
    let ratio = out_units.len() as f64 / n;
    let recall = cmp.matched as f64 / n;
    let ratio_ok = ratio <= limits.max_ratio && ratio >= limits.min_ratio;
    let stats = format!(
        "{} of {} dictated words kept, {} added, length ratio {:.2}",
        cmp.matched, cmp.required, added, ratio
    );
    let has = |c: Class| cmp.changes.iter().any(|x| x.0 == c);
    let kind = if instruction {
        RejectKind::ObeyedInstruction
    } else if question {
        RejectKind::AnsweredQuestion
    } else if has(Class::Negation) {
        RejectKind::Negation
    } else if has(Class::Number) {
        RejectKind::Number
    } else if !ratio_ok {
        RejectKind::LengthRatio
    } else if recall < limits.min_recall {
        RejectKind::LowOverlap
    } else if cmp.changes.iter().any(|x| x.2) {
        RejectKind::AddedContent
    } else {
        RejectKind::ChangedWords
    };
    let what = if cmp.changes.is_empty() {
        format!("{} function words changed (at most {budget})", cmp.slack)
    } else {
        describe(&cmp.changes)
    };
    let note = match kind {
        RejectKind::LengthRatio => {
            format!(" (allowed {:.2}-{:.2})", limits.min_ratio, limits.max_ratio)
        }
        RejectKind::LowOverlap => format!(" (at least {:.0}% kept)", limits.min_recall * 100.0),
        RejectKind::ObeyedInstruction | RejectKind::AnsweredQuestion => {
            " (a dictated question or instruction must come back as the words dictated)".into()
        }
        _ => String::new(),
    };
    Err(reject(kind, format!("{stats}{note}; {what}")))
}

#[cfg(test)]
mod tests;
