//! The table of guard cases, `crates/dictum-engine/tests/data/guard_cases.tsv`: a raw
//! transcript, an LLM output, the expected verdict, a category and the target (`terminal` or
//! `other`). The unit tests assert every row; `dictum bench llm --guard-table` reports
//! precision and recall over it (an accepted cleanup is a positive).
//!
//! In the file, `\n`, `\r`, `\t`, `\e` (ESC) and `\u{XXXX}` stand for those characters.

use super::{judge, Limits};
use std::collections::BTreeMap;

/// The table, compiled in.
pub const GUARD_CASES: &str = include_str!("../../../tests/data/guard_cases.tsv");

#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// 1-based line in the file.
    pub line: usize,
    pub raw: String,
    pub output: String,
    pub accept: bool,
    pub category: String,
    pub terminal: bool,
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('e') => out.push('\u{1b}'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let rest: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let hex = rest.trim_start_matches('{');
                let c = u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("bad escape \\u{rest}}}"))?;
                out.push(c);
            }
            other => return Err(format!("bad escape \\{}", other.unwrap_or(' '))),
        }
    }
    Ok(out)
}

/// Parses the table (header line and `#` comments skipped).
pub fn parse(text: &str) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') || line.starts_with("raw\t") {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [raw, output, verdict, category, target] = cols.as_slice() else {
            return Err(format!("line {}: {} columns, not 5", i + 1, cols.len()));
        };
        let accept = match *verdict {
            "accept" => true,
            "reject" => false,
            v => return Err(format!("line {}: verdict {v:?}", i + 1)),
        };
        let terminal = match *target {
            "terminal" => true,
            "other" => false,
            t => return Err(format!("line {}: target {t:?}", i + 1)),
        };
        cases.push(Case {
            line: i + 1,
            raw: unescape(raw).map_err(|e| format!("line {}: {e}", i + 1))?,
            output: unescape(output).map_err(|e| format!("line {}: {e}", i + 1))?,
            accept,
            category: category.to_string(),
            terminal,
        });
    }
    Ok(cases)
}

/// The built-in table.
pub fn cases() -> Result<Vec<Case>, String> {
    parse(GUARD_CASES)
}

/// A confusion matrix; "positive" = accepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Score {
    pub true_accept: usize,
    pub false_accept: usize,
    pub true_reject: usize,
    pub false_reject: usize,
}

impl Score {
    pub fn add(&mut self, expected: bool, got: bool) {
        match (expected, got) {
            (true, true) => self.true_accept += 1,
            (false, true) => self.false_accept += 1,
            (false, false) => self.true_reject += 1,
            (true, false) => self.false_reject += 1,
        }
    }

    pub fn rows(&self) -> usize {
        self.true_accept + self.false_accept + self.true_reject + self.false_reject
    }

    /// Accepted outputs that should have been: 1.0 when nothing was accepted.
    pub fn precision(&self) -> f64 {
        let got = self.true_accept + self.false_accept;
        if got == 0 {
            1.0
        } else {
            self.true_accept as f64 / got as f64
        }
    }

    /// Good cleanups that were accepted: 1.0 when there were none.
    pub fn recall(&self) -> f64 {
        let want = self.true_accept + self.false_reject;
        if want == 0 {
            1.0
        } else {
            self.true_accept as f64 / want as f64
        }
    }
}

/// One row the guard got wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Miss {
    pub case: Case,
    /// The guard's reason when it rejected.
    pub reason: Option<String>,
}

/// Every row through [`judge`]: the overall score, the score per category (a category
/// `shell_chars` row is filed as `shell_chars/terminal` or `shell_chars/other`) and the misses.
pub fn score(cases: &[Case], limits: &Limits) -> (Score, BTreeMap<String, Score>, Vec<Miss>) {
    let mut all = Score::default();
    let mut per: BTreeMap<String, Score> = BTreeMap::new();
    let mut misses = Vec::new();
    for c in cases {
        let verdict = judge(&c.raw, &c.output, limits, c.terminal);
        let got = verdict.is_ok();
        all.add(c.accept, got);
        let key = if c.category == "shell_chars" {
            format!(
                "shell_chars/{}",
                if c.terminal { "terminal" } else { "other" }
            )
        } else {
            c.category.clone()
        };
        per.entry(key).or_default().add(c.accept, got);
        if got != c.accept {
            misses.push(Miss {
                case: c.clone(),
                reason: verdict.err().map(|r| r.to_string()),
            });
        }
    }
    (all, per, misses)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CATEGORIES: &[&str] = &[
        "negation",
        "number",
        "date_time",
        "name_content_word",
        "self_correction",
        "filler",
        "repetition",
        "preamble",
        "answer",
        "instruction",
        "translation",
        "summary",
        "added_sentence",
        "shell_chars",
    ];

    #[test]
    fn every_row_of_the_table_gets_its_verdict() {
        let cases = cases().expect("the table parses");
        assert!(cases.len() >= 80, "{} rows", cases.len());
        for cat in CATEGORIES {
            let rows: Vec<&Case> = cases.iter().filter(|c| c.category == *cat).collect();
            assert!(rows.len() >= 5, "{cat}: {} rows", rows.len());
            assert!(rows.iter().any(|c| c.accept), "{cat}: no accept row");
            assert!(rows.iter().any(|c| !c.accept), "{cat}: no reject row");
        }
        for c in &cases {
            assert!(
                CATEGORIES.contains(&c.category.as_str()),
                "line {}: category {:?}",
                c.line,
                c.category
            );
        }
        let (_, _, misses) = score(&cases, &Limits::default());
        let report: Vec<String> = misses
            .iter()
            .map(|m| {
                format!(
                    "line {} [{}] expected {}, got {}: {:?} -> {:?}",
                    m.case.line,
                    m.case.category,
                    if m.case.accept { "accept" } else { "reject" },
                    m.reason.as_deref().unwrap_or("accept"),
                    m.case.raw,
                    m.case.output
                )
            })
            .collect();
        assert!(
            misses.is_empty(),
            "{} of {} rows wrong:\n{}",
            misses.len(),
            cases.len(),
            report.join("\n")
        );
    }

    #[test]
    fn escapes_and_bad_rows() {
        assert_eq!(
            unescape(r"a\nb\e\u{202E}\\").as_deref(),
            Ok("a\nb\u{1b}\u{202E}\\")
        );
        assert!(parse("a\tb\tmaybe\tnumber\tother").is_err());
        assert!(parse("a\tb\taccept\tnumber").is_err());
        let s = Score {
            true_accept: 9,
            false_accept: 1,
            true_reject: 5,
            false_reject: 3,
        };
        assert_eq!((s.precision(), s.recall(), s.rows()), (0.9, 0.75, 18));
    }
}
