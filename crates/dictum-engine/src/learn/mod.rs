//! Learning from corrections (issue 30 item 3). The user corrects a dictation in the history
//! (`dictum history --correct ID "text"`); this module compares whisper's words (the row's
//! `raw_text`) with the correction and proposes what to learn. Nothing is learned here: the
//! caller shows the numbered proposals and writes only the ones the user accepts
//! ([`write_accepted`]), through the same checks as any config file.
//!
//! The rules, kept simple so a user can predict them:
//! - **Alignment**: both texts are split into words as `[[replace]]` matches them
//!   ([`phrase_words`]: letters and digits, lowercase; punctuation separates words). A word-level
//!   edit distance aligns them; each run of consecutive differing words is one *edit*
//!   (whisper's words → the corrected words). Case and punctuation alone are never an edit.
//! - **Vocabulary**: a word of an edit's corrected side that is not anywhere in whisper's text,
//!   is not a common English word ([`is_common`]: a built-in list of frequent words and their
//!   -s/-es/-ed/-ing/-ly forms), and looks like a name or term: it has a capital letter
//!   ("Kubernetes", "iPhone") or mixes letters and digits ("k8s"). Proposed for
//!   `[stt] vocabulary` (whisper's prompt). Lowercase ordinary-looking words are not proposed:
//!   a vocabulary full of junk is what users dislike in the apps that learn silently.
//! - **Replacement**: an edit of 1–3 words into 1–3 words (no sentence punctuation inside the
//!   corrected side) that appears in at least [`MIN_SEEN`] corrected rows, counted over the
//!   whole history. An edit where both sides are only common words ("jump" → "jumps") is a
//!   grammar fix, not a mishearing, and is not proposed: replacing it everywhere would break
//!   other sentences. Proposed as `[[replace]] from = "<whisper's words>" to = "<corrected>"`.

use crate::config::snippets::{phrase_words, word_spans, ReplaceConfig};
use crate::config::Config;
use crate::store::row::{RowUpdate, RowWriter};
use crate::store::{Corrected, History};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;
use ts_rs::TS;

/// A replacement is proposed once the same edit is in this many corrected rows.
pub const MIN_SEEN: usize = 2;
/// Most words on either side of a proposed replacement.
pub const MAX_EDIT_WORDS: usize = 3;
/// Longest word proposed for the vocabulary, in characters.
pub const MAX_TERM_CHARS: usize = 48;
/// Texts longer than this many words on both sides together are not aligned (the table is
/// words × words; a dictation is far shorter).
const MAX_ALIGN_CELLS: usize = 4_000_000;

/// One run of differing words: whisper's words (`from`, lowercase as compared) and the
/// corrected words (`to` as the user wrote them, from the first word to the last with what is
/// between; `to_words` lowercase). An insertion has no `from`, a deletion no `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub from: Vec<String>,
    pub to: String,
    pub to_words: Vec<String>,
}

/// Something that could be learned from a correction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[ts(export)]
pub enum Proposal {
    /// Add `word` to `[stt] vocabulary`.
    Vocabulary {
        word: String,
        /// Already in the vocabulary: accepting it changes nothing.
        known: bool,
    },
    /// Add `[[replace]] from = .. to = ..`.
    Replace {
        from: String,
        to: String,
        /// In how many corrected rows this edit was made (this one included).
        seen: usize,
        /// A `[[replace]]` for these words exists already: accepting it changes nothing.
        known: bool,
    },
}

impl std::fmt::Display for Proposal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Proposal::Vocabulary { word, known } => {
                write!(f, "vocabulary: add \"{word}\" to [stt] vocabulary")?;
                if *known {
                    write!(f, " (already there)")?;
                }
            }
            Proposal::Replace {
                from,
                to,
                seen,
                known,
            } => {
                write!(
                    f,
                    "replace: \"{from}\" -> \"{to}\" (corrected in {seen} dictations)"
                )?;
                if *known {
                    write!(f, " (already a [[replace]])")?;
                }
            }
        }
        Ok(())
    }
}

/// The edits that turn whisper's `raw` into `corrected`, in text order (see the module doc).
/// Empty when they differ only in case and punctuation, or are too long to align.
pub fn align(raw: &str, corrected: &str) -> Vec<Edit> {
    let a = phrase_words(raw);
    let spans = word_spans(corrected);
    let b: Vec<String> = phrase_words(corrected);
    let (n, m) = (a.len(), b.len());
    if (n + 1).saturating_mul(m + 1) > MAX_ALIGN_CELLS {
        return Vec::new();
    }
    // d[i][j] = edit distance between a[..i] and b[..j].
    let w = m + 1;
    let mut d = vec![0u32; (n + 1) * w];
    for (i, cell) in d.iter_mut().step_by(w).enumerate() {
        *cell = i as u32;
    }
    for (j, cell) in d.iter_mut().enumerate().take(m + 1) {
        *cell = j as u32;
    }
    for i in 1..=n {
        for j in 1..=m {
            let sub = d[(i - 1) * w + j - 1] + u32::from(a[i - 1] != b[j - 1]);
            let del = d[(i - 1) * w + j] + 1;
            let ins = d[i * w + j - 1] + 1;
            d[i * w + j] = sub.min(del).min(ins);
        }
    }
    // Walk back; `same[k]` pairs of equal words split the runs of edits.
    #[derive(Clone, Copy, PartialEq)]
    enum Op {
        Same,
        Sub,
        Del,
        Ins,
    }
    let mut ops = Vec::with_capacity(n + m);
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let here = d[i * w + j];
        if i > 0 && j > 0 && a[i - 1] == b[j - 1] && here == d[(i - 1) * w + j - 1] {
            ops.push(Op::Same);
            i -= 1;
            j -= 1;
        } else if i > 0 && j > 0 && here == d[(i - 1) * w + j - 1] + 1 {
            ops.push(Op::Sub);
            i -= 1;
            j -= 1;
        } else if i > 0 && here == d[(i - 1) * w + j] + 1 {
            ops.push(Op::Del);
            i -= 1;
        } else {
            ops.push(Op::Ins);
            j -= 1;
        }
    }
    ops.reverse();
    let mut edits = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut k = 0;
    while k < ops.len() {
        if ops[k] == Op::Same {
            i += 1;
            j += 1;
            k += 1;
            continue;
        }
        let (i0, j0) = (i, j);
        while k < ops.len() && ops[k] != Op::Same {
            match ops[k] {
                Op::Sub => {
                    i += 1;
                    j += 1;
                }
                Op::Del => i += 1,
                Op::Ins => j += 1,
                Op::Same => {}
            }
            k += 1;
        }
        let to = if j > j0 {
            corrected[spans[j0].0..spans[j - 1].1].to_string()
        } else {
            String::new()
        };
        edits.push(Edit {
            from: a[i0..i].to_vec(),
            to,
            to_words: b[j0..j].to_vec(),
        });
    }
    edits
}

/// What to propose for `current` (a corrected row), counting replacements over `all` corrected
/// rows (normally every one in the history; `current` is counted once whether or not it is
/// in `all`). Proposals already in `config` are kept, marked `known`, so the numbering does
/// not change once some are accepted.
pub fn propose(current: &Corrected, all: &[Corrected], config: &Config) -> Vec<Proposal> {
    let edits = align(&current.raw_text, &current.correction);
    let raw_words: HashSet<String> = phrase_words(&current.raw_text).into_iter().collect();
    let vocabulary: HashSet<String> = config
        .stt
        .vocabulary
        .iter()
        .flat_map(|v| phrase_words(v))
        .collect();
    let mut out = Vec::new();
    let mut seen_words = HashSet::new();
    for e in &edits {
        for (s, t) in word_spans(&e.to) {
            let word = &e.to[s..t];
            let key = crate::config::snippets::normalize(word);
            if raw_words.contains(&key) || !looks_like_term(word) || !seen_words.insert(key.clone())
            {
                continue;
            }
            out.push(Proposal::Vocabulary {
                word: word.to_string(),
                known: vocabulary.contains(&key),
            });
        }
    }
    let others: Vec<Vec<(Vec<String>, Vec<String>)>> = all
        .iter()
        .filter(|c| c.id != current.id)
        .map(|c| {
            align(&c.raw_text, &c.correction)
                .into_iter()
                .map(|e| (e.from, e.to_words))
                .collect()
        })
        .collect();
    let mut proposed: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for e in edits.iter().filter(|e| replaceable(e)) {
        let key = (e.from.clone(), e.to_words.clone());
        if proposed.contains(&key) {
            continue;
        }
        let seen = 1 + others.iter().filter(|edits| edits.contains(&key)).count();
        if seen < MIN_SEEN {
            continue;
        }
        let known = config
            .replacements
            .iter()
            .any(|r| phrase_words(&r.from) == e.from);
        out.push(Proposal::Replace {
            from: e.from.join(" "),
            to: e.to.clone(),
            seen,
            known,
        });
        proposed.push(key);
    }
    out
}

/// A name or term worth teaching whisper (see the module doc).
fn looks_like_term(word: &str) -> bool {
    let chars = word.chars().count();
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    let digits = word.chars().filter(|c| c.is_numeric()).count();
    (2..=MAX_TERM_CHARS).contains(&chars)
        && letters > 0
        && !is_common(word)
        && (word.chars().any(char::is_uppercase) || digits > 0)
}

/// An edit worth a `[[replace]]` when seen often enough (see the module doc).
fn replaceable(e: &Edit) -> bool {
    (1..=MAX_EDIT_WORDS).contains(&e.from.len())
        && (1..=MAX_EDIT_WORDS).contains(&e.to_words.len())
        && !e.to.contains([',', ';', ':', '!', '?', '\n', '\t', '"'])
        && !e.to.contains(". ")
        && !(e.from.iter().all(|w| is_common(w)) && e.to_words.iter().all(|w| is_common(w)))
}

/// A frequent English word, or its -s / -es / -ed / -ing / -ly / 's form (any case).
pub fn is_common(word: &str) -> bool {
    let w = crate::config::snippets::normalize(word);
    let w = w.strip_suffix("'s").unwrap_or(&w);
    let listed = |s: &str| COMMON_WORDS.split_ascii_whitespace().any(|c| c == s);
    if listed(w) {
        return true;
    }
    ["s", "es", "ed", "d", "ing", "ly"].iter().any(|suffix| {
        w.strip_suffix(suffix)
            .is_some_and(|stem| stem.len() > 1 && listed(stem))
    })
}

/// What [`write_accepted`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct Written {
    /// Words added to `[stt] vocabulary`.
    pub vocabulary: Vec<String>,
    /// `[[replace]]` tables added.
    pub replacements: Vec<(String, String)>,
    /// The file was rewritten whole (documented like `dictum config --print-default`; your
    /// own comments in it are not kept) because it could not be edited in place.
    pub rewritten: bool,
}

/// Writes the accepted proposals into the config file at `path`: vocabulary words appended
/// to `[stt] vocabulary`, replacements appended as `[[replace]]` tables. The file is edited in
/// place (your comments and other keys stay) and the result must parse back to exactly the
/// old settings plus the additions, with the same checks as any config (`Config::parse`);
/// when it cannot be edited in place it is rewritten with `Config::save_to`. A file that does
/// not parse is an error and left untouched. Known proposals are skipped.
pub fn write_accepted(path: &Path, accepted: &[&Proposal]) -> Result<Written> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(Error::ConfigIo {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })
        }
    };
    let base = match &existing {
        Some(text) => Config::parse(text, path)?.0,
        None => Config::default(),
    };
    let mut expected = base.clone();
    let mut written = Written::default();
    for p in accepted {
        match p {
            Proposal::Vocabulary { word, .. } => {
                let key = phrase_words(word);
                if !expected
                    .stt
                    .vocabulary
                    .iter()
                    .any(|v| phrase_words(v) == key)
                {
                    expected.stt.vocabulary.push(word.clone());
                    written.vocabulary.push(word.clone());
                }
            }
            Proposal::Replace { from, to, .. } => {
                let key = phrase_words(from);
                if !expected
                    .replacements
                    .iter()
                    .any(|r| phrase_words(&r.from) == key)
                {
                    expected.replacements.push(ReplaceConfig {
                        from: from.clone(),
                        to: to.clone(),
                    });
                    written.replacements.push((from.clone(), to.clone()));
                }
            }
        }
    }
    if expected == base {
        return Ok(written);
    }
    // The same checks as a config file read from disk (control characters, sizes, a phrase
    // that is also a snippet, ...): a learned text that would be refused is not written.
    expected.check()?;
    let edited = existing.as_deref().map(|text| {
        edit_text(
            text,
            (expected.stt.vocabulary != base.stt.vocabulary)
                .then_some(expected.stt.vocabulary.as_slice()),
            &expected.replacements[base.replacements.len()..],
        )
    });
    match edited {
        Some(text) if matches!(Config::parse(&text, path), Ok((c, _)) if c == expected) => {
            let io = |e: std::io::Error| Error::ConfigIo {
                path: path.to_path_buf(),
                reason: format!("{e}; check the folder is writable"),
            };
            let tmp = path.with_extension("toml.tmp");
            crate::paths::write_private(&tmp, text.as_bytes()).map_err(io)?;
            std::fs::rename(&tmp, path).map_err(io)?;
        }
        _ => {
            expected.save_to(path)?;
            written.rewritten = existing.is_some();
        }
    }
    Ok(written)
}

/// What the history window shows once a correction is saved: whisper's text, the correction
/// and the numbered proposals of [`propose`]. Nothing has been learned yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct Review {
    #[ts(type = "number")]
    pub id: i64,
    pub raw_text: String,
    pub correction: String,
    pub proposals: Vec<Proposal>,
}

/// The history window's Save (and `dictum history --correct ID "text"`'s first half): stores
/// `text` as row `id`'s correction (`None`: the stored one is used) and returns what could be
/// learned from it, counted over every corrected row. The config is not touched.
pub fn review(history: &History, id: i64, text: Option<&str>, config: &Config) -> Result<Review> {
    let store_err = |reason: String| Error::Store {
        path: history.path().to_path_buf(),
        reason,
    };
    let entry = history
        .get(id)?
        .ok_or_else(|| store_err(format!("no entry #{id}; it may have been deleted")))?;
    let raw_text = entry
        .raw_text
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            store_err(format!(
                "entry #{id} has no transcript to correct (nothing was heard or it failed); pick another entry"
            ))
        })?;
    let correction = match text {
        Some(text) => {
            RowWriter::new(history).update(id, RowUpdate::Corrected { text })?;
            text.to_string()
        }
        None => history.correction(id)?.ok_or_else(|| {
            store_err(format!(
                "entry #{id} has not been corrected yet; write the text as it should have been first"
            ))
        })?,
    };
    let current = Corrected {
        id,
        raw_text,
        correction,
    };
    let all = history.corrections()?;
    let proposals = propose(&current, &all, config);
    Ok(Review {
        id,
        raw_text: current.raw_text,
        correction: current.correction,
        proposals,
    })
}

/// Writes the proposals the user accepted for row `id` into the config file at `path`
/// ([`write_accepted`]). Each one must be what [`review`] proposes *now* for the stored
/// correction (the same word, or the same `from` and `to`): whoever calls this (the history
/// window's page) can only confirm the engine's proposals, never teach words of its own, and a
/// list that went stale is refused whole, with nothing written.
pub fn accept(
    history: &History,
    id: i64,
    accepted: &[Proposal],
    config: &Config,
    path: &Path,
) -> Result<Written> {
    let current = review(history, id, None, config)?;
    let same = |a: &Proposal, b: &Proposal| match (a, b) {
        (Proposal::Vocabulary { word: x, .. }, Proposal::Vocabulary { word: y, .. }) => x == y,
        (
            Proposal::Replace {
                from: f1, to: t1, ..
            },
            Proposal::Replace {
                from: f2, to: t2, ..
            },
        ) => f1 == f2 && t1 == t2,
        _ => false,
    };
    let mut chosen: Vec<&Proposal> = Vec::with_capacity(accepted.len());
    for a in accepted {
        let fresh = current
            .proposals
            .iter()
            .find(|p| same(p, a))
            .ok_or_else(|| Error::Store {
                path: history.path().to_path_buf(),
                reason: format!(
                    "entry #{id}: ({a}) is not proposed for its correction now; save the correction again to see what it proposes (nothing was written)"
                ),
            })?;
        if !chosen.contains(&fresh) {
            chosen.push(fresh);
        }
    }
    if chosen.is_empty() {
        return Ok(Written::default());
    }
    write_accepted(path, &chosen)
}

/// `text` with `[stt] vocabulary` set to `vocabulary` (when given: the one-line key replaced,
/// or added under `[stt]`, or an `[stt]` table added) and `replacements` appended as
/// `[[replace]]` tables. The caller checks the result parses to what it meant.
fn edit_text(text: &str, vocabulary: Option<&[String]>, replacements: &[ReplaceConfig]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if let Some(vocabulary) = vocabulary {
        let value = toml::Value::Array(
            vocabulary
                .iter()
                .map(|v| toml::Value::String(v.clone()))
                .collect(),
        );
        let new_line = format!("vocabulary = {value}");
        let is_header = |l: &str| l.trim_start().starts_with('[');
        let stt = lines.iter().position(|l| {
            let t = l.trim();
            t.strip_prefix("[stt]")
                .is_some_and(|rest| rest.trim().is_empty() || rest.trim().starts_with('#'))
        });
        match stt {
            Some(h) => {
                let end = lines[h + 1..]
                    .iter()
                    .position(|l| is_header(l))
                    .map_or(lines.len(), |k| h + 1 + k);
                let key = lines[h + 1..end].iter().position(|l| {
                    l.trim_start()
                        .strip_prefix("vocabulary")
                        .is_some_and(|rest| rest.trim_start().starts_with('='))
                });
                match key {
                    Some(k) => {
                        // A comment after the list stays.
                        let line = &lines[h + 1 + k];
                        let comment = line
                            .rfind(']')
                            .map(|i| line[i + 1..].trim())
                            .filter(|t| t.starts_with('#'))
                            .map(|t| format!(" {t}"))
                            .unwrap_or_default();
                        lines[h + 1 + k] = format!("{new_line}{comment}");
                    }
                    None => lines.insert(h + 1, new_line),
                }
            }
            None => {
                lines.push(String::new());
                lines.push("[stt]".into());
                lines.push(new_line);
            }
        }
    }
    for r in replacements {
        lines.push(String::new());
        lines.push("# Learned from a correction (dictum history --correct).".into());
        lines.push("[[replace]]".into());
        lines.push(format!("from = {}", toml::Value::String(r.from.clone())));
        lines.push(format!("to = {}", toml::Value::String(r.to.clone())));
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Frequent English words (function words and the commonest nouns, verbs and adjectives),
/// lowercase; [`is_common`] also accepts their plain inflections.
const COMMON_WORDS: &str = "
a about above across act add after again against age ago agree air all almost alone along
already also although always am among an and animal another answer any anyone anything are
area arm around as ask at away baby back bad bag ball bank be bear beat beautiful because
become bed been before begin behind being believe below best better between big bird bit black
blue board boat body book both box boy bring brother brown build business but buy by call came
can car card care carry case cat catch cause center certain chair change check child children
city class clean clear close cold color come common company complete could country course cover
cut dark day dead deal dear decide deep did die different do doctor does dog done door down draw
dream dress drink drive drop dry during each ear early earth easy eat edge eight either else
end enough even evening ever every example eye face fact fall family far farm fast father fear
feel feet few field fight figure fill final finance find fine finish fire first fish five floor fly
follow food foot for force form forward four fox free friend from front full fun game garden gave
get girl give glass go god gold good got great green ground group grow guess had hair half hand
happen happy hard has hat have he head hear heart heavy help her here high hill him his history
hit hold home hope horse hot hour house how however hundred i ice idea if important in inside
into is it its job join jump just keep kept key kid kind king knew know land language large
last late later laugh law lay lazy lead learn least leave left leg less let letter level lie life
light like line list listen little live long look lose lot love low made main make man many map
mark market matter may me mean meet meeting men middle might mile mind minute miss money month
moon more morning most mother mountain mouth move much music must my name near need never new
news next nice night nine no noise none nor north not note nothing now number of off offer office
often oh oil ok okay old on once one only open or order other our out over own page paper part
party pass past pay people perhaps person pick picture piece place plan plant play please point
poor possible power present pretty price problem program pull push put question quick quickly
quiet quite rain ran reach read ready real really reason red remember report rest right river
road rock room round rule run said same saw say school sea second see seem send sense sent set
seven several shall she ship short should show side simple since sing sir sister sit six size
sleep slow small snow so some someone something sometimes son song soon sorry sound south space
speak special spring stand star start state stay step still stop story street strong study
such summer sun sure table take talk team tell ten test than thank thanks that the their them then
there these they thing think third this those though thought thousand three through time to
today together told tomorrow too took top toward town tree true try turn twenty two under
understand until up upon us use usual very voice wait walk wall want war warm was watch water way
we week well went were west what when where whether which while white who whole why wide will
wind window winter wish with within without woman women wonder word work world would write
wrong year yellow yes yesterday yet you young your
monday tuesday wednesday thursday friday saturday sunday january february march april june july
august september october november december mr mrs ms dr st
";

#[cfg(test)]
mod tests;
