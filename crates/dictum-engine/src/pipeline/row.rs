//! The finished row of an utterance, for files and live dictation alike: [`Words`] (the
//! pieces' texts in order → text, raw text, outcome), [`fail_row`] (outcome, error kind and
//! message, a rejected server answer) and [`store_finished`] (the write). Rows of utterances
//! that never reach the stages are written where they end (see ARCHITECTURE.md).

use super::segment::Segment;
use crate::snippets::Rewriter;
use crate::store::{Entry, History, Outcome, Source};
use crate::{Error, Result};
use std::sync::Arc;

/// The row's text from the transcript: replacements, then snippets. A file's text keeps a
/// snippet's newlines; a typed dictation's get spaces (the typing path sends no newline: in a
/// terminal it would be Enter).
pub(super) fn rewritten(rewriter: Option<&Arc<Rewriter>>, text: String, entry: &Entry) -> String {
    let Some(r) = rewriter.filter(|r| !r.is_empty() && !text.is_empty()) else {
        return text;
    };
    let out = r.apply(&text, entry.source == Source::File);
    if !out.applied.is_empty() {
        tracing::debug!(applied = ?out.applied, "snippets and replacements applied");
    }
    out.text.trim().to_string()
}

/// Keeps in `entry.raw_text` the speech server's answer `e` set aside (judged not a
/// transcript, and nothing could redo it), after whatever raw text the row already has.
pub fn keep_rejected_answer(entry: &mut Entry, e: &Error) {
    if let Some(answer) = e.rejected_answer() {
        let raw = entry.raw_text.get_or_insert_with(String::new);
        if !raw.trim().is_empty() {
            raw.push(' ');
        }
        raw.push_str(answer);
    }
}

/// The words of one utterance transcribed in pieces, in order: a file's pieces, or a live
/// dictation's committed chunks and its tail. The text so far is the next piece's context.
/// Both paths turn them into the finished row here ([`Words::into_row`], [`fail_row`]).
#[derive(Debug, Default, Clone)]
pub struct Words {
    /// The pieces' texts, empty ones left out.
    pub texts: Vec<String>,
    /// Whisper's raw text of every piece.
    pub raws: Vec<String>,
    /// The snippets and replacements the row's text gets (the latest piece's engine's).
    pub rewriter: Option<Arc<Rewriter>>,
}

impl Words {
    /// Adds the next piece.
    pub fn push(&mut self, seg: &Segment) {
        self.adopt(seg);
        if !seg.text.is_empty() {
            self.texts.push(seg.text.clone());
        }
        self.raws.push(seg.raw.clone());
    }

    /// Takes `seg`'s snippets and replacements for the row (the engine's latest tables).
    pub(super) fn adopt(&mut self, seg: &Segment) {
        if seg.rewriter.is_some() {
            self.rewriter = seg.rewriter.clone();
        }
    }

    /// The text so far: whisper's prompt for the next piece. Whisper's words as they came:
    /// snippets and replacements are applied once, to the whole, by [`Words::into_row`] (a
    /// phrase may span two pieces).
    pub fn text(&self) -> String {
        self.texts.join(" ")
    }

    /// The raw texts, each trimmed, joined by spaces.
    pub fn raw(&self) -> String {
        self.raws
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Makes these the finished row's words: its text (with the snippets and replacements),
    /// raw text (whisper's), and the outcome they give (no text: no speech). Call after every
    /// piece's [`Segment::apply_to`].
    pub fn into_row(self, entry: &mut Entry) {
        let text = rewritten(self.rewriter.as_ref(), self.text(), entry);
        entry.outcome = if text.is_empty() {
            Outcome::NoSpeech
        } else {
            Outcome::Ok
        };
        entry.raw_text = Some(self.raw());
        entry.text = Some(text);
    }
}

/// Fails the finished row with `e` (file and live path alike): `outcome` (`Error`, or `Ok`
/// when the live path still delivers what its committed chunks hold), the error's kind,
/// `message` for the user, and the server answer `e` set aside, if any.
pub fn fail_row(entry: &mut Entry, e: &Error, outcome: Outcome, message: String) {
    keep_rejected_answer(entry, e);
    entry.outcome = outcome;
    entry.error_kind = Some(e.kind().to_string());
    entry.error = Some(message);
}

/// Writes the finished row (the file path's, the live path's before it is typed). Rows of
/// utterances that never reach the stages are written where they end (see ARCHITECTURE.md).
pub fn store_finished(history: &History, entry: &Entry) -> Result<()> {
    history.update(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::snippets::{ReplaceConfig, SnippetConfig};

    fn rules() -> Arc<Rewriter> {
        Arc::new(Rewriter::new(
            &[SnippetConfig {
                phrase: "my address".into(),
                text: "12 Main Street\nSpringfield".into(),
            }],
            &[ReplaceConfig {
                from: "cooper netties".into(),
                to: "Kubernetes".into(),
            }],
        ))
    }

    fn seg(text: &str, rewriter: Option<Arc<Rewriter>>) -> Segment {
        Segment {
            text: text.into(),
            raw: format!(" {text}"),
            rewriter,
            ..Segment::default()
        }
    }

    /// The row of a live dictation (microphone) and of a file, from pieces as the worker and
    /// `run_file` push them: the rules apply to the whole text (a phrase across two pieces
    /// too), the raw text stays whisper's, a typed dictation gets no newline.
    #[test]
    fn the_rows_text_gets_replacements_and_snippets() {
        // (pieces, source, text, outcome)
        #[rustfmt::skip]
        let table: &[(&[&str], Source, &str, Outcome)] = &[
            (&["We run Cooper", "Netties."], Source::Mic, "We run Kubernetes.", Outcome::Ok),
            (&["My address."], Source::Mic, "12 Main Street Springfield", Outcome::Ok),
            (&["My address."], Source::File, "12 Main Street\nSpringfield", Outcome::Ok),
            (&["Send it to", "my address, please."], Source::Mic,
             "Send it to 12 Main Street Springfield, please.", Outcome::Ok),
            (&[], Source::Mic, "", Outcome::NoSpeech),
        ];
        for &(pieces, source, text, outcome) in table {
            let mut words = Words::default();
            for p in pieces {
                words.push(&seg(p, Some(rules())));
            }
            let mut entry = Entry::new(source);
            words.into_row(&mut entry);
            assert_eq!(entry.text.as_deref(), Some(text), "{pieces:?}");
            assert_eq!(entry.outcome, outcome, "{pieces:?}");
            assert_eq!(
                entry.raw_text.as_deref(),
                Some(pieces.join(" ").as_str()),
                "{pieces:?}"
            );
        }
        // A retried dictation's one segment, and a segment made without rules.
        let mut entry = Entry::new(Source::Mic);
        seg("cooper netties", Some(rules())).into_row_text(&mut entry);
        assert_eq!(entry.text.as_deref(), Some("Kubernetes"));
        let mut entry = Entry::new(Source::Mic);
        seg("cooper netties", None).into_row_text(&mut entry);
        assert_eq!(entry.text.as_deref(), Some("cooper netties"));
    }
}
