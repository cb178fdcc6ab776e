//! Self-corrections: "at three, no wait, four", "on Tuesday, sorry, Wednesday", "fifty,
//! actually sixty". The cleanup may drop the corrected value and the marker, and only then:
//! the value after the marker must be of the same kind as the one it replaces (a number or
//! time for a number or time, a day for a day, a month for a month), found at most four
//! words before the marker. Anything else stays protected: "on Tuesday, sorry, at three"
//! drops no Tuesday.

use super::fillers::live;
use super::tokens::Tok;
use super::{Role, Unit};

/// Phrases that announce a correction, longest first.
const MARKERS: &[&[&str]] = &[
    &["no", "wait"],
    &["wait", "no"],
    &["no", "sorry"],
    &["scratch", "that"],
    &["make", "that"],
    &["or", "rather"],
    &["i", "mean"],
    &["sorry"],
    &["actually"],
    &["wait"],
    &["no"],
];

/// Words between the marker and the new value ("no wait, at four", "sorry, on the fifth").
const LEAD_IN: &[&str] = &[
    "at", "on", "the", "to", "for", "in", "by", "it", "is", "make",
];

const DAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "today",
    "tomorrow",
    "tonight",
    "yesterday",
];
const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Number,
    Day,
    Month,
}

pub fn kind(tok: &Tok) -> Option<Kind> {
    match tok {
        Tok::Num(_) => Some(Kind::Number),
        Tok::Word(w) if DAYS.contains(&w.as_str()) => Some(Kind::Day),
        Tok::Word(w) if MONTHS.contains(&w.as_str()) => Some(Kind::Month),
        Tok::Word(_) => None,
    }
}

/// Marks each corrected value, the words up to the marker, the marker and its lead-in as
/// [`Role::Optional`] (the cleanup may leave them out).
pub(super) fn mark(units: &mut [Unit]) {
    let live = live(units);
    let word = |p: usize| live.get(p).and_then(|&i| units[i].tok.word()).unwrap_or("");
    let mut optional = Vec::new();
    let mut p = 0;
    while p < live.len() {
        let Some(m) = MARKERS
            .iter()
            .find(|m| m.iter().enumerate().all(|(k, w)| word(p + k) == *w))
        else {
            p += 1;
            continue;
        };
        let after = p + m.len();
        let mut q = after;
        while q < live.len() && q < after + 2 && LEAD_IN.contains(&word(q)) {
            q += 1;
        }
        let new_kind = live.get(q).and_then(|&i| kind(&units[i].tok));
        let old = new_kind.and_then(|k| {
            (p.saturating_sub(4)..p)
                .rev()
                .find(|&x| kind(&units[live[x]].tok) == Some(k))
        });
        match old {
            Some(x) => {
                optional.extend(live[x..q].iter().copied());
                p = q;
            }
            None => p += 1,
        }
    }
    for i in optional {
        units[i].role = Role::Optional;
    }
}
