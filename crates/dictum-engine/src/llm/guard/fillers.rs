//! What a cleanup may remove without changing what was said: filler sounds, discourse
//! markers, repeated words and (in the transcript) false starts.
//!
//! Fillers and markers are removed from both texts before they are compared, so keeping them
//! is as good as dropping them. A marker that is a real word somewhere else is only removed
//! where it is not: "like" stays after "I", "would", "looks"... and before a number ("like
//! fifty people" is an estimate); "you know" stays after "do", "as", "let"...; "kind of"
//! stays after "a", "what", "this"...

use super::{Role, Unit};

/// Standalone filler sounds.
pub const FILLERS: &[&str] = &[
    "um", "umm", "uhm", "uh", "uhh", "er", "erm", "ah", "ahh", "hmm", "hm", "mm", "mhm",
];

/// One-word discourse markers, removed anywhere.
const MARKERS: &[&str] = &["so", "basically", "literally", "actually"];

/// "like" after these is a verb or a comparison, not a filler.
const LIKE_KEEP: &[&str] = &[
    "i",
    "you",
    "we",
    "they",
    "he",
    "she",
    "it",
    "who",
    "would",
    "do",
    "did",
    "does",
    "not",
    "to",
    "really",
    "also",
    "might",
    "will",
    "look",
    "looks",
    "looked",
    "looking",
    "feel",
    "feels",
    "felt",
    "sound",
    "sounds",
    "seem",
    "seems",
    "something",
    "anything",
    "nothing",
    "more",
    "much",
    "just",
    "what",
    "people",
    "things",
    "stuff",
];
/// "you know" after these is a question or a verb.
const KNOW_KEEP: &[&str] = &[
    "do", "did", "does", "not", "if", "as", "what", "how", "would", "will", "can", "let", "could",
    "should", "that",
];
/// "i mean" after these means "mean".
const MEAN_KEEP: &[&str] = &["what", "do", "did", "not", "that", "is"];
/// "kind of"/"sort of" after these is a noun.
const KIND_KEEP: &[&str] = &[
    "a",
    "the",
    "this",
    "that",
    "what",
    "which",
    "any",
    "some",
    "every",
    "one",
    "no",
    "all",
    "these",
    "those",
    "same",
    "of",
    "each",
    "another",
    "different",
    "new",
];

fn word<'a>(units: &'a [Unit], i: Option<&usize>) -> &'a str {
    i.and_then(|&i| units[i].tok.word()).unwrap_or("")
}

/// Indices of the units still compared.
pub(super) fn live(units: &[Unit]) -> Vec<usize> {
    (0..units.len())
        .filter(|&i| units[i].role != Role::Dropped)
        .collect()
}

pub(super) fn drop_fillers(units: &mut [Unit]) {
    for u in units.iter_mut() {
        if u.tok.word().is_some_and(|w| FILLERS.contains(&w)) {
            u.role = Role::Dropped;
        }
    }
}

/// Marks discourse markers as dropped.
pub(super) fn drop_markers(units: &mut [Unit]) {
    let live = live(units);
    let mut drop = Vec::new();
    for p in 0..live.len() {
        let i = live[p];
        let prev = if p == 0 {
            ""
        } else {
            word(units, live.get(p - 1))
        };
        let after_pause = p == 0 || units[live[p - 1]].pause_after;
        let next = word(units, live.get(p + 1));
        let next_is_num = live.get(p + 1).is_some_and(|&n| units[n].tok.is_num());
        let Some(w) = units[i].tok.word() else {
            continue;
        };
        match w {
            w if MARKERS.contains(&w) => drop.push(i),
            "like" if !LIKE_KEEP.contains(&prev) && !next_is_num => drop.push(i),
            "you" if next == "know" && !KNOW_KEEP.contains(&prev) => {
                drop.extend([i, live[p + 1]]);
            }
            "i" if next == "mean" && !MEAN_KEEP.contains(&prev) => drop.extend([i, live[p + 1]]),
            "kind" | "sort" if next == "of" && !KIND_KEEP.contains(&prev) => {
                drop.extend([i, live[p + 1]]);
            }
            "ok" | "well" | "oh" if after_pause && (units[i].pause_after || next == "so") => {
                drop.push(i)
            }
            _ => {}
        }
    }
    for i in drop {
        if units[i].role == Role::Core {
            units[i].role = Role::Dropped;
        }
    }
}

/// Repeated words and phrases ("to to", "i think i think"): the first copy is dropped.
/// Numbers are never repeats ("five five five" is a phone number).
pub(super) fn drop_repeats(units: &mut [Unit]) {
    'again: loop {
        let live = live(units);
        for k in 1..=3 {
            for p in 0..live.len().saturating_sub(2 * k - 1) {
                let a = &live[p..p + k];
                let b = &live[p + k..p + 2 * k];
                let same = a.iter().zip(b).all(|(&x, &y)| units[x].tok == units[y].tok);
                if same && a.iter().all(|&x| !units[x].tok.is_num()) {
                    for &x in a {
                        units[x].role = Role::Dropped;
                    }
                    continue 'again;
                }
            }
        }
        return;
    }
}

/// Words a false start begins with (a subject or a determiner, started again).
const RESTARTS: &[&str] = &[
    "i", "we", "you", "he", "she", "they", "it", "the", "this", "that", "there", "my", "our",
];

/// False starts in the transcript: a phrase of two or three words cut off by a dash or an
/// ellipsis and started again with its first word, a subject or a determiner ("we should- we
/// need to", "the meeting is... the meeting was") may be left out. Never one with a number
/// or a negation, and never after a comma ("I called Anna, I called Ben" is two facts).
pub(super) fn mark_false_starts(units: &mut [Unit]) {
    let live = live(units);
    for p in 0..live.len() {
        if !units[live[p]]
            .tok
            .word()
            .is_some_and(|w| RESTARTS.contains(&w))
        {
            continue;
        }
        for k in 2..=3 {
            let Some(&restart) = live.get(p + k) else {
                break;
            };
            let span = &live[p..p + k];
            let cut = units[span[k - 1]].cut_after;
            let again = units[restart].tok == units[span[0]].tok;
            let plain = span.iter().all(|&x| {
                units[x]
                    .tok
                    .word()
                    .is_some_and(|w| !super::negation::is_negation(w))
            });
            if cut && again && plain {
                for &x in span {
                    if units[x].role == Role::Core {
                        units[x].role = Role::Optional;
                    }
                }
            }
        }
    }
}
