//! The text around the cursor for one dictation (issue 41, `[context]`), read through
//! accessibility (`crate::context::atspi`) twice:
//!
//! - **at the press**, for the LLM (`llm_context.rs`);
//! - **at typing** ([`fit`], here), in the injector, once the dictations before it are typed
//!   and the key is released: the text as it is then decides the capital, the spaces and
//!   the final period (`crate::context::join`).
//!
//! Never read: a window the gate judges a terminal (or cannot judge: fail closed), a
//! password field, an app on `[context] opt_out`. The text read is never stored or logged
//! (the row keeps what was done with it and how long the read took).

use crate::config::Config;
use crate::context::atspi::{read_around_caret, Read, Target};
use crate::context::join::join;
use crate::dictation::sink::Sink;
use std::time::Instant;

/// What [`fit`] did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fitted {
    /// What to type.
    pub text: String,
    /// Text follows the cursor: `text` has its own space at its end (no `[inject]
    /// trailing_space` added). At the end of a field the usual trailing space is kept, as
    /// before, so a next dictation or typing goes on after it.
    pub own_spaces: bool,
    /// For the row (`context`): "joined", "as heard" (known, nothing to change), "not read: …"
    /// or "unavailable: …".
    pub how: String,
    /// How long the read took.
    pub ms: f64,
}

/// Fits `text` into the text around the cursor of the window keys would go to now. None
/// when `[context] around_cursor` is off or the sink has no keyboard (standard output).
pub(crate) fn fit(sink: &mut dyn Sink, config: &Config, text: &str) -> Option<Fitted> {
    if !config.context.around_cursor {
        return None;
    }
    let t0 = Instant::now();
    let (window, verdict) = sink.verdict()?;
    let unchanged = |how: String| Fitted {
        text: text.to_string(),
        own_spaces: false,
        how,
        ms: crate::timing::ms_since(t0),
    };
    if verdict.terminal {
        return Some(unchanged("not read: a terminal".into()));
    }
    let target = Target {
        pid: window.pid,
        class: window.class.as_deref(),
    };
    let read = read_around_caret(&target, &config.context.opt_out, config.context.budget());
    let caret = match read {
        Read::Known(caret) => caret,
        Read::Refused(why) => return Some(unchanged(format!("not read: {why}"))),
        Read::Unavailable(why) => {
            let why = crate::net::snippet(&why, 120);
            return Some(unchanged(format!("unavailable: {why}")));
        }
    };
    if caret.before.trim().is_empty() && caret.after.trim().is_empty() {
        // An empty field: as heard, with the usual trailing space.
        return Some(Fitted {
            how: "as heard: an empty field".into(),
            ..unchanged(String::new())
        });
    }
    let joined = join(text, &caret.around());
    tracing::debug!(
        ?caret,
        changed = joined != text,
        "the dictation fitted into the text around the cursor"
    );
    Some(Fitted {
        how: if joined.trim() == text.trim() {
            "as heard".into()
        } else {
            "joined".into()
        },
        text: joined,
        own_spaces: !caret.after.is_empty(),
        ms: crate::timing::ms_since(t0),
    })
}

/// Delivers `text` (or its [`fit`], when there is one) with `deliver`, the sink's trailing
/// space off while a fit that has text after the cursor brings its own; the row gets what
/// the fit did.
pub(crate) fn deliver_fitted<R>(
    sink: &mut dyn Sink,
    fitted: Option<Fitted>,
    text: &str,
    entry: &mut crate::store::Entry,
    deliver: impl FnOnce(&mut dyn Sink, &str) -> R,
) -> R {
    let Some(fitted) = fitted else {
        return deliver(sink, text);
    };
    entry.context = Some(fitted.how);
    entry.context_ms = Some(fitted.ms);
    if !fitted.own_spaces {
        return deliver(sink, &fitted.text);
    }
    let was = sink.set_trailing_space(false);
    let out = deliver(sink, &fitted.text);
    sink.set_trailing_space(was);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dictation::messages::SinkReport;
    use crate::inject::{Verdict, WindowInfo};

    /// A sink whose window is a terminal (or has no keyboard at all).
    struct Fake {
        keyboard: bool,
        trailing: bool,
        typed: Vec<String>,
    }

    impl Sink for Fake {
        fn deliver(&mut self, text: &str) -> SinkReport {
            let space = if self.trailing { " " } else { "" };
            self.typed.push(format!("{text}{space}"));
            SinkReport::default()
        }
        fn verdict(&mut self) -> Option<(WindowInfo, Verdict)> {
            self.keyboard.then(|| {
                (
                    WindowInfo::default(),
                    Verdict {
                        terminal: true,
                        reason: "unknown".into(),
                    },
                )
            })
        }
        fn set_trailing_space(&mut self, on: bool) -> bool {
            std::mem::replace(&mut self.trailing, on)
        }
    }

    #[test]
    fn a_terminal_or_an_unknown_window_is_never_read_and_the_text_goes_as_heard() {
        let config = Config::default();
        let mut sink = Fake {
            keyboard: true,
            trailing: true,
            typed: Vec::new(),
        };
        let fitted = fit(&mut sink, &config, "The report.").expect("looked at");
        assert_eq!(fitted.how, "not read: a terminal");
        assert!(!fitted.own_spaces);
        let mut entry = crate::store::Entry::new(crate::store::Source::Mic);
        deliver_fitted(
            &mut sink,
            Some(fitted),
            "The report.",
            &mut entry,
            |s, t| s.deliver(t),
        );
        assert_eq!(sink.typed, ["The report. "]);
        assert_eq!(entry.context.as_deref(), Some("not read: a terminal"));
        assert!(entry.context_ms.is_some());
        // Off, or no keyboard (standard output): not looked at.
        let off = Config {
            context: crate::config::context::ContextConfig {
                around_cursor: false,
                ..crate::config::context::ContextConfig::default()
            },
            ..Config::default()
        };
        assert!(fit(&mut sink, &off, "x").is_none());
        sink.keyboard = false;
        assert!(fit(&mut sink, &config, "x").is_none());
    }

    #[test]
    fn a_known_fit_brings_its_own_spaces() {
        let mut sink = Fake {
            keyboard: true,
            trailing: true,
            typed: Vec::new(),
        };
        let fitted = Fitted {
            text: "the report ".into(),
            own_spaces: true,
            how: "joined".into(),
            ms: 1.0,
        };
        let mut entry = crate::store::Entry::new(crate::store::Source::Mic);
        deliver_fitted(
            &mut sink,
            Some(fitted),
            "The report.",
            &mut entry,
            |s, t| s.deliver(t),
        );
        assert_eq!(sink.typed, ["the report "]);
        assert!(sink.trailing, "the trailing space is back on afterwards");
        assert_eq!(entry.context.as_deref(), Some("joined"));
    }
}
