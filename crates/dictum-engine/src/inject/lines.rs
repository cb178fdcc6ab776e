//! A snippet's newlines typed as line breaks (issue 30 item 2). Text and keys stay apart: the
//! text never carries a newline to the keyboard ([`Injector::final_text`] makes every control
//! character a space); where a break goes comes from the caller as byte offsets of spaces in
//! the text (`crate::snippets::line_breaks`: the newlines of the user's own `[[snippet]]`
//! texts, never a newline of speech, a speech server or an LLM), and the Return key is pressed
//! there, between pieces of text typed as usual, only while the focused window is the same
//! one and no terminal (`[inject] terminal_classes`). Anywhere else the spaces are typed: a
//! Return in a terminal runs a command.

use super::{InjectReport, Injector, StopCheck};
use crate::commands::{Chord, Key};

/// A piece of text and the Returns pressed before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    /// Returns before the piece (0 for the first).
    pub returns: usize,
    /// Byte offset in the text where this piece's break starts (the space typed instead of
    /// the Returns, when they cannot be pressed); the piece's start for the first.
    pub from: usize,
    pub start: usize,
    pub end: usize,
}

/// `text` cut at `breaks` (byte offsets of spaces; an offset repeated once per further
/// newline). An offset that is not a space of `text`, or not after the previous one, is no
/// break: nothing but a space ever becomes a Return.
pub(crate) fn split(text: &str, breaks: &[usize]) -> Vec<Line> {
    let mut lines = vec![Line {
        returns: 0,
        from: 0,
        start: 0,
        end: text.len(),
    }];
    for &at in breaks {
        let Some(last) = lines.last_mut() else {
            break;
        };
        if at + 1 == last.start && last.returns > 0 {
            // The same space again: one more Return (a blank line).
            last.returns += 1;
            continue;
        }
        if at < last.start || text.get(at..at + 1) != Some(" ") {
            continue;
        }
        last.end = at;
        lines.push(Line {
            returns: 1,
            from: at,
            start: at + 1,
            end: text.len(),
        });
    }
    lines
}

impl Injector {
    /// [`Injector::inject_until`] for a text with line breaks (see the module doc): pieces
    /// typed (or pasted) as usual, the trailing space after the last only, and the Return key
    /// between them while the window that got the first piece is still focused and is no
    /// terminal. Otherwise (a terminal, an unknown window, the focus moved, Return cannot be
    /// pressed) the rest is typed with its spaces. The report covers the whole text.
    pub fn inject_lines(
        &mut self,
        text: &str,
        breaks: &[usize],
        stop: Option<StopCheck>,
    ) -> InjectReport {
        let lines = split(text, breaks);
        if lines.len() < 2 || self.focus_is_terminal() != Some(false) {
            return self.inject_until(text, stop);
        }
        let target = self.focused().0;
        let trailing = self.config.trailing_space;
        let mut total = InjectReport::default();
        for (i, line) in lines.iter().enumerate() {
            let mut piece = &text[line.start..line.end];
            let mut last = i + 1 == lines.len();
            if line.returns > 0 {
                let stopped = stop.as_ref().is_some_and(|s| s());
                let same = !stopped
                    && self.focused().0 == target
                    && self.focus_is_terminal() == Some(false);
                let pressed = if same {
                    self.press(&vec![Chord::key(Key::Return); line.returns])
                        .map_err(|e| format!("a snippet's line break was typed as a space: {e}"))
                } else {
                    Err(String::new())
                };
                match pressed {
                    Ok(_) => total.chars += line.returns,
                    Err(why) => {
                        if !why.is_empty() {
                            tracing::warn!("inject: {why}");
                            total.warning.get_or_insert(why);
                        }
                        // The rest as one line, from the space on.
                        piece = &text[line.from..];
                        last = true;
                    }
                }
            }
            self.config.trailing_space = trailing && last;
            let r = self.inject_until(piece, stop.clone());
            self.config.trailing_space = trailing;
            let failed = r.error.is_some() || r.stopped || r.method.is_none();
            merge(&mut total, r, i == 0);
            if failed {
                if !total.stopped {
                    // What is left, whole, where the failure left this piece.
                    let _ = self.copy(&text[line.start..]);
                }
                break;
            }
            if last {
                break;
            }
        }
        total
    }
}

/// Adds a piece's report to the whole text's.
fn merge(total: &mut InjectReport, r: InjectReport, first: bool) {
    if first {
        total.app_class = r.app_class;
        total.window_title = r.window_title;
        total.focus = r.focus;
    }
    total.method = r.method.or(total.method);
    total.inject_ms += r.inject_ms;
    total.total_ms += r.total_ms;
    total.modifier_wait_ms += r.modifier_wait_ms;
    total.modifiers_forced |= r.modifiers_forced;
    total.chars += r.chars;
    total.stopped |= r.stopped;
    if total.error.is_none() {
        total.error = r.error;
    }
    if total.warning.is_none() {
        total.warning = r.warning;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces<'a>(text: &'a str, breaks: &[usize]) -> Vec<(usize, &'a str)> {
        split(text, breaks)
            .into_iter()
            .map(|l| (l.returns, &text[l.start..l.end]))
            .collect()
    }

    #[test]
    fn only_spaces_become_breaks() {
        let text = "Send it to 12 Main Street Springfield, please.";
        let at = text.find(" Springfield").expect("space");
        assert_eq!(
            pieces(text, &[at]),
            [
                (0, "Send it to 12 Main Street"),
                (1, "Springfield, please.")
            ]
        );
        // A repeated offset is a blank line.
        assert_eq!(
            pieces(text, &[at, at]),
            [
                (0, "Send it to 12 Main Street"),
                (2, "Springfield, please.")
            ]
        );
        // Not a space, out of the text, backwards: no break.
        assert_eq!(pieces(text, &[1]), [(0, text)]);
        assert_eq!(pieces(text, &[text.len(), 999]), [(0, text)]);
        let first = text.find(' ').expect("space");
        assert_eq!(pieces(text, &[at, first]).len(), 2);
        assert_eq!(pieces(text, &[]), [(0, text)]);
        // Inside a multi-byte character: no panic, no break.
        assert_eq!(pieces("é b", &[1]), [(0, "é b")]);
        assert_eq!(pieces("é b", &[2]), [(0, "é"), (1, "b")]);
    }

    #[test]
    fn a_break_keeps_where_the_space_was() {
        let text = "a b c";
        let lines = split(text, &[1, 3]);
        assert_eq!(lines.len(), 3);
        assert_eq!(&text[lines[1].from..], " b c");
        assert_eq!(&text[lines[2].from..], " c");
        assert_eq!(lines[0].end, 1);
    }
}
