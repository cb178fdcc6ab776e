//! Snippets and replacements (issue 30 item 2), applied to a finished transcript: first every
//! `[[replace]]` (whisper's "Cooper Netties" is always written "Kubernetes"), then every
//! `[[snippet]]` ("my address" becomes the address). Both match whole words in any case;
//! whisper's capitals and the punctuation it puts around the words do not matter. A snippet
//! said alone ("My address.") becomes exactly its text; said inside a sentence, its text takes
//! the phrase's place and the sentence's punctuation stays.
//!
//! One pass each, left to right, longest phrase first at each word: what a rule wrote is never
//! matched again (no rule can feed another, nothing can loop). Pure: the engine applies it
//! where a row's text is made (`store::row::Words::into_row`, `Segment::into_row_text`), so
//! files, live dictation and the speech server's text all get it, before voice commands and
//! the LLM see the text.

use crate::config::snippets::{
    normalize, word_spans, ReplaceConfig, SnippetConfig, MAX_TEXT_CHARS,
};
use crate::config::Config;

/// The compiled rules (phrases split into words once).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rewriter {
    replacements: Vec<Rule>,
    snippets: Vec<Rule>,
    /// The tables this was built from (to know when the config changed).
    source: (Vec<SnippetConfig>, Vec<ReplaceConfig>),
}

#[derive(Debug, Clone, PartialEq)]
struct Rule {
    words: Vec<String>,
    with: String,
}

/// What [`Rewriter::apply`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rewritten {
    pub text: String,
    /// The phrases replaced, in order (`from` or `phrase` as configured, trimmed).
    pub applied: Vec<String>,
}

impl Rewriter {
    /// Compiles the tables (checked by `config::snippets::validate` when the file was read;
    /// a phrase without words is skipped here).
    pub fn new(snippets: &[SnippetConfig], replacements: &[ReplaceConfig]) -> Rewriter {
        let compile = |phrase: &str, with: &str| {
            let words = crate::config::snippets::phrase_words(phrase);
            (!words.is_empty()).then(|| Rule {
                words,
                with: with.to_string(),
            })
        };
        let mut r = Rewriter {
            replacements: replacements
                .iter()
                .filter_map(|r| compile(&r.from, &r.to))
                .collect(),
            snippets: snippets
                .iter()
                .filter_map(|s| compile(&s.phrase, &s.text))
                .collect(),
            source: (snippets.to_vec(), replacements.to_vec()),
        };
        // Longest first: "my work address" wins over "my address" where both fit.
        r.replacements
            .sort_by_key(|rule| std::cmp::Reverse(rule.words.len()));
        r.snippets
            .sort_by_key(|rule| std::cmp::Reverse(rule.words.len()));
        r
    }

    /// True when this was built from exactly these tables.
    pub fn built_from(&self, snippets: &[SnippetConfig], replacements: &[ReplaceConfig]) -> bool {
        self.source.0 == snippets && self.source.1 == replacements
    }

    /// No rules: [`Rewriter::apply`] returns the text as it is.
    pub fn is_empty(&self) -> bool {
        self.replacements.is_empty() && self.snippets.is_empty()
    }

    /// Replacements, then snippets. `keep_newlines`: a snippet's newlines stay (a file's
    /// text); otherwise each run of whitespace holding a newline or a tab becomes one space
    /// (typed text: a newline would be Enter, in a terminal a command run).
    pub fn apply(&self, text: &str, keep_newlines: bool) -> Rewritten {
        let mut applied = Vec::new();
        if self.is_empty() {
            return Rewritten {
                text: text.to_string(),
                applied,
            };
        }
        let replaced = rewrite(text, &self.replacements, false, &mut applied);
        let mut out = rewrite(&replaced, &self.snippets, true, &mut applied);
        if !keep_newlines {
            out = one_line(&out);
        }
        Rewritten { text: out, applied }
    }
}

/// One pass of `rules` over `text`. `alone_takes_all`: a match that is the text's only words
/// becomes the whole text (whisper's "My address." is the snippet, without the ".").
fn rewrite(text: &str, rules: &[Rule], alone_takes_all: bool, applied: &mut Vec<String>) -> String {
    let spans = word_spans(text);
    let words: Vec<String> = spans.iter().map(|&(s, e)| normalize(&text[s..e])).collect();
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    let mut i = 0;
    while i < spans.len() {
        let hit = rules.iter().find(|rule| {
            let n = rule.words.len();
            i + n <= spans.len()
                && words[i..i + n] == rule.words[..]
                // The words of a phrase are said together: only spaces or hyphens between
                // them, never a sentence's punctuation ("my. Address book" is no match).
                && spans[i..i + n]
                    .windows(2)
                    .all(|w| text[w[0].1..w[1].0].chars().all(|c| c.is_whitespace() || c == '-'))
        });
        let Some(rule) = hit else {
            i += 1;
            continue;
        };
        let n = rule.words.len();
        applied.push(rule.words.join(" "));
        if alone_takes_all && i == 0 && n == spans.len() {
            return rule.with.clone();
        }
        out.push_str(&text[cursor..spans[i].0]);
        out.push_str(&rule.with);
        cursor = spans[i + n - 1].1;
        i += n;
        if rule.with.is_empty() {
            // Words removed ("um"): their comma and space go with them, and no space is
            // left before a mark ("Well, um, yes" is "Well, yes"; "say um." is "say.").
            let rest = &text[cursor..];
            let after_comma = rest.strip_prefix([',', ';']).unwrap_or(rest);
            let after_space = after_comma.trim_start();
            cursor = text.len() - after_space.len();
            if !after_space.starts_with(char::is_alphanumeric) {
                out.truncate(out.trim_end().len());
            }
        }
    }
    out.push_str(&text[cursor..]);
    out
}

/// Characters the typing budget (`[inject] max_chars_per_second`, counted on the audio's
/// length) may grant on top for what snippets added: the row's `text` longer than whisper's
/// `raw` text, at most one snippet's worth ([`MAX_TEXT_CHARS`]). A speech server saying a
/// phrase a hundred times still cannot type for minutes.
pub fn budget_allowance(raw: &str, text: &str) -> usize {
    text.chars()
        .count()
        .saturating_sub(raw.chars().count())
        .min(MAX_TEXT_CHARS)
}

/// The most characters a typed dictation may have: `[inject] max_chars_per_second` on its
/// audio ([`crate::config::InjectConfig::char_budget`]) plus what its snippets and
/// replacements added to whisper's words ([`budget_allowance`]). What they added is found by
/// applying the configured tables to whisper's `raw` text again, never by looking at the text
/// to type: an LLM (or anything after the tables) that writes more gets no allowance, and a
/// long snippet said in a short dictation is not cut.
pub fn typing_budget(config: &Config, audio_ms: Option<i64>, raw: Option<&str>) -> usize {
    let base = config.inject.char_budget(audio_ms);
    match raw {
        Some(raw) if !raw.is_empty() && !config.snippets.is_empty() => {
            let rules = Rewriter::new(&config.snippets, &config.replacements);
            base + budget_allowance(raw, &rules.apply(raw, false).text)
        }
        _ => base,
    }
}

/// Where a typed dictation's `text` gets a line break (issue 30 item 2: a snippet's newlines
/// arrive as line breaks where the window is no terminal). The configured tables are applied
/// to whisper's `raw` text again to know which snippets were said, in order; for each one
/// whose text has a newline, its one-line form (as typed: [`Rewriter::apply`] without
/// newlines) is looked for in `text`, after the previous one, and the spaces that stand for
/// its newlines are returned: byte offsets into `text`, ascending, an offset repeated once per
/// newline (a blank line is two). The newlines come only from the config, never from the text:
/// a newline whisper, a speech server or an LLM wrote is no break, and a snippet the LLM
/// changed is found nowhere and stays on one line.
pub fn line_breaks(config: &Config, raw: Option<&str>, text: &str) -> Vec<usize> {
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Vec::new();
    };
    if !config.snippets.iter().any(|s| s.text.contains('\n')) {
        return Vec::new();
    }
    let rules = Rewriter::new(&config.snippets, &config.replacements);
    let mut ignored = Vec::new();
    let replaced = rewrite(raw, &rules.replacements, false, &mut ignored);
    let mut said = Vec::new();
    let _ = rewrite(&replaced, &rules.snippets, true, &mut said);
    let mut breaks = Vec::new();
    let mut from = 0;
    for words in said {
        let Some(rule) = rules.snippets.iter().find(|r| r.words.join(" ") == words) else {
            continue;
        };
        let (one, at) = one_line_with_breaks(rule.with.trim());
        if at.is_empty() {
            continue;
        }
        let Some(found) = text.get(from..).and_then(|rest| rest.find(&one)) else {
            continue;
        };
        let start = from + found;
        breaks.extend(at.iter().map(|a| start + a));
        from = start + one.len();
    }
    breaks
}

/// [`one_line`] of `text`, and the byte offset in it of each space that stands for a run of
/// whitespace holding newlines, once per newline of the run.
fn one_line_with_breaks(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut at = Vec::new();
    let mut run = String::new();
    let end_run = |out: &mut String, run: &mut String, at: &mut Vec<usize>| {
        let newlines = run.matches('\n').count();
        at.extend(std::iter::repeat_n(out.len(), newlines));
        flush(out, run);
    };
    for c in text.chars() {
        if c.is_whitespace() {
            run.push(c);
            continue;
        }
        end_run(&mut out, &mut run, &mut at);
        out.push(c);
    }
    end_run(&mut out, &mut run, &mut at);
    (out, at)
}

/// `text` on one line: each run of whitespace that holds a newline or a tab is one space.
fn one_line(text: &str) -> String {
    if !text.contains(['\n', '\t', '\r']) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    for c in text.chars() {
        if c.is_whitespace() {
            run.push(c);
            continue;
        }
        flush(&mut out, &mut run);
        out.push(c);
    }
    flush(&mut out, &mut run);
    out
}

fn flush(out: &mut String, run: &mut String) {
    if run.contains(['\n', '\t', '\r']) {
        out.push(' ');
    } else {
        out.push_str(run);
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDRESS: &str = "12 Main Street\nSpringfield";

    fn rewriter() -> Rewriter {
        Rewriter::new(
            &[
                SnippetConfig {
                    phrase: "my address".into(),
                    text: ADDRESS.into(),
                },
                SnippetConfig {
                    phrase: "my work address".into(),
                    text: "Acme Ltd, 1 Road".into(),
                },
                SnippetConfig {
                    phrase: "sig".into(),
                    text: "Best regards,\n\n\tAnn".into(),
                },
                SnippetConfig {
                    phrase: "kube config".into(),
                    text: "~/.kube/config".into(),
                },
            ],
            &[
                ReplaceConfig {
                    from: "cooper netties".into(),
                    to: "Kubernetes".into(),
                },
                ReplaceConfig {
                    from: "dictem".into(),
                    to: "Dictum".into(),
                },
                ReplaceConfig {
                    from: "um".into(),
                    to: "".into(),
                },
                ReplaceConfig {
                    from: "kubernetes".into(),
                    to: "kube".into(),
                },
            ],
        )
    }

    #[test]
    fn the_table() {
        let r = rewriter();
        // (whisper's text, keep newlines, expected)
        let table: &[(&str, bool, &str)] = &[
            // Replacements: whole words, any case, punctuation around kept.
            ("We run Cooper Netties.", false, "We run Kubernetes."),
            ("cooper netties", false, "Kubernetes"),
            ("COOPER NETTIES, again", false, "Kubernetes, again"),
            ("Cooper-Netties is up", false, "Kubernetes is up"),
            ("cooper nettiesx", false, "cooper nettiesx"),
            ("xcooper netties", false, "xcooper netties"),
            ("cooper. Netties", false, "cooper. Netties"),
            ("cooper", false, "cooper"),
            // Several occurrences; a rule's output is never matched again ("Kubernetes" is
            // not turned into "kube" by the next rule).
            (
                "Cooper Netties and cooper netties",
                false,
                "Kubernetes and Kubernetes",
            ),
            ("kubernetes or cooper netties", false, "kube or Kubernetes"),
            ("Open dictem now", false, "Open Dictum now"),
            ("Well, um, yes", false, "Well, yes"),
            ("Um hello", false, "hello"),
            ("say um.", false, "say."),
            // Snippets: alone (whisper's capital and period), inside a sentence, several.
            ("My address.", true, ADDRESS),
            ("my address", true, ADDRESS),
            ("  My Address!  ", true, ADDRESS),
            ("My address.", false, "12 Main Street Springfield"),
            (
                "Send it to my address, please.",
                true,
                "Send it to 12 Main Street\nSpringfield, please.",
            ),
            (
                "Send it to my address, please.",
                false,
                "Send it to 12 Main Street Springfield, please.",
            ),
            (
                "My address or my address.",
                false,
                "12 Main Street Springfield or 12 Main Street Springfield.",
            ),
            // The longest phrase wins; a phrase cut by a sentence's end is no match.
            ("Use my work address.", false, "Use Acme Ltd, 1 Road."),
            (
                "That is my. Address book",
                false,
                "That is my. Address book",
            ),
            ("my addresses", false, "my addresses"),
            // Newlines and the tab of a multi-line snippet.
            ("Sig.", true, "Best regards,\n\n\tAnn"),
            ("Thanks. Sig.", false, "Thanks. Best regards, Ann."),
            // A replacement feeds a snippet (replacements run first), but never another
            // replacement.
            ("Kubernetes config.", false, "~/.kube/config"),
            ("cooper netties config", false, "Kubernetes config"),
            ("Kube config?", false, "~/.kube/config"),
            // Nothing to do.
            ("", false, ""),
            ("Nothing here.", false, "Nothing here."),
            ("Ünïcode ADDRESS my", false, "Ünïcode ADDRESS my"),
        ];
        for &(input, keep, want) in table {
            assert_eq!(r.apply(input, keep).text, want, "{input:?} keep={keep}");
        }
    }

    #[test]
    fn what_was_applied_is_said() {
        let r = rewriter();
        let out = r.apply("Cooper Netties at my address", false);
        assert_eq!(out.applied, ["cooper netties", "my address"]);
        assert!(r.apply("plain words", false).applied.is_empty());
    }

    #[test]
    fn the_typing_budget_grows_by_what_snippets_added_only() {
        assert_eq!(
            budget_allowance("My address.", "12 Main Street Springfield"),
            15
        );
        assert_eq!(budget_allowance("cooper netties", "Kubernetes"), 0);
        assert_eq!(
            budget_allowance("sig sig", &"x".repeat(9000)),
            MAX_TEXT_CHARS
        );
    }

    fn config_with(snippets: &[(&str, &str)]) -> Config {
        Config {
            snippets: snippets
                .iter()
                .map(|(phrase, text)| SnippetConfig {
                    phrase: (*phrase).into(),
                    text: (*text).into(),
                })
                .collect(),
            replacements: vec![ReplaceConfig {
                from: "cooper netties".into(),
                to: "Kubernetes".into(),
            }],
            ..Config::default()
        }
    }

    #[test]
    fn a_long_snippet_gets_its_allowance_llm_output_none() {
        let long = "x".repeat(1500);
        let config = config_with(&[("my template", &long)]);
        let one_second = Some(1000);
        let base = config.inject.char_budget(one_second);
        assert!(
            base < long.len(),
            "the test needs a snippet over the budget"
        );
        // A long snippet said in one second: its text fits the budget.
        let budget = typing_budget(&config, one_second, Some("My template."));
        assert_eq!(budget, base + long.len() - "My template.".len());
        let typed = Rewriter::new(&config.snippets, &config.replacements)
            .apply("My template.", false)
            .text;
        assert!(typed.chars().count() <= budget);
        // No snippet said: no allowance, however long the text to type (an LLM that wrote
        // pages, or a speech server's answer) is: the budget never looks at it.
        assert_eq!(
            typing_budget(&config, one_second, Some("hello there")),
            base
        );
        assert_eq!(typing_budget(&config, one_second, None), base);
        assert_eq!(
            typing_budget(&Config::default(), one_second, Some("My template.")),
            base
        );
        // Said a hundred times (a speech server gone wild): at most one snippet's worth.
        let many = "my template ".repeat(100);
        assert_eq!(
            typing_budget(&config, one_second, Some(&many)),
            base + MAX_TEXT_CHARS
        );
    }

    #[test]
    fn line_breaks_come_from_the_snippets_said_only() {
        let config = config_with(&[
            ("my address", ADDRESS),
            ("sig", "Best regards,\n\n\tAnn"),
            ("kube config", "~/.kube/config"),
        ]);
        let typed = |raw: &str| {
            Rewriter::new(&config.snippets, &config.replacements)
                .apply(raw, false)
                .text
        };
        // (whisper's text, the text to type, the lines it is typed as)
        let lines = |raw: &str, text: &str| -> Vec<String> {
            let breaks = line_breaks(&config, Some(raw), text);
            let mut out = vec![String::new()];
            for (i, c) in text.char_indices() {
                let n = breaks.iter().filter(|&&b| b == i).count();
                if n > 0 {
                    assert_eq!(c, ' ', "a break on {c:?} in {text:?}");
                    out.extend(std::iter::repeat_n(String::new(), n));
                } else if let Some(last) = out.last_mut() {
                    last.push(c);
                }
            }
            out
        };
        let raw = "Send it to my address, please.";
        assert_eq!(
            lines(raw, &typed(raw)),
            ["Send it to 12 Main Street", "Springfield, please."]
        );
        // A blank line is two breaks; the tab is a space.
        assert_eq!(
            lines("Thanks. Sig.", &typed("Thanks. Sig.")),
            ["Thanks. Best regards,", "", "Ann."]
        );
        // Twice said, twice broken; a snippet without newlines breaks nothing.
        let raw = "My address or my address, kube config.";
        assert_eq!(
            lines(raw, &typed(raw)),
            [
                "12 Main Street",
                "Springfield or 12 Main Street",
                "Springfield, ~/.kube/config."
            ]
        );
        // Nothing said: no break, whatever the text holds (an LLM or a speech server that
        // writes the address's words, or newlines, gets none).
        for (raw, text) in [
            ("send it home", "Send it to 12 Main Street Springfield."),
            ("two lines", "line one\nline two"),
            ("", "12 Main Street Springfield"),
        ] {
            assert!(line_breaks(&config, Some(raw), text).is_empty(), "{raw:?}");
        }
        assert!(line_breaks(&config, None, "12 Main Street Springfield").is_empty());
        // The LLM changed the snippet's text: it is not found, and stays on one line.
        assert!(line_breaks(&config, Some(raw), "Send it to 12 Main St. Springfield.").is_empty());
        // Said once, written twice by the LLM: one snippet's breaks only.
        assert_eq!(
            line_breaks(
                &config,
                Some("my address"),
                "12 Main Street Springfield and 12 Main Street Springfield"
            ),
            [14]
        );
    }

    #[test]
    fn no_rules_is_a_no_op() {
        let r = Rewriter::new(&[], &[]);
        assert!(r.is_empty());
        // Even the newlines of a text stay when there is nothing to apply.
        assert_eq!(r.apply("a\nb  c", false).text, "a\nb  c");
        assert!(r.built_from(&[], &[]));
        assert!(!rewriter().built_from(&[], &[]));
    }
}
