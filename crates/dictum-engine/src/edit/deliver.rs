//! The release of an edit, on the injector's thread (`dictation/injector.rs` hands the
//! transcribed instruction here instead of typing it): the LLM request, the answer made safe,
//! the focus checked again, the selection kept on the clipboard, the answer typed over the
//! selection, and the row completed. Every refusal types nothing, says why (a notice, which
//! the controller logs and publishes) and leaves the reason on the row.

use super::answer::{self, Unfit};
use super::Request;
use crate::commands::{Chord, Key};
use crate::config::Config;
use crate::dictation::sink::Sink;
use crate::store::{Entry, Outcome};
use crate::timing::ms_since;
use std::time::Instant;

/// What the injector lends an edit.
pub(crate) struct Delivery<'a> {
    /// Types into the focused window (built without the trailing space).
    pub sink: &'a mut dyn Sink,
    pub config: &'a Config,
    pub notice: &'a dyn Fn(String),
    /// Why the answer must not be typed now (cancelled, given up on), asked right before
    /// typing; None: go ahead.
    pub stop: &'a dyn Fn() -> Option<String>,
}

fn refuse(d: &Delivery, entry: &mut Entry, kind: &str, message: String) {
    if entry.outcome == Outcome::Ok {
        entry.outcome = Outcome::Error;
    }
    entry.error_kind = Some(format!("edit_{kind}"));
    entry.error = Some(message.clone());
    entry.inject_method = Some("none".into());
    (d.notice)(message);
}

/// Completes the edit whose instruction is `entry` (whisper's words in `raw_text` and
/// `text`); returns its row.
pub(crate) fn deliver(d: Delivery, mut entry: Entry, req: Request) -> Entry {
    entry.commands = None;
    let instruction = entry.text.clone().unwrap_or_default();
    // The row's text is what was typed over the selection: nothing until it is.
    entry.text = Some(String::new());
    if let Some(why) = (d.stop)() {
        entry.inject_method = Some("none".into());
        entry.inject_error = Some(why);
        return entry;
    }
    if entry.outcome != Outcome::Ok || instruction.trim().is_empty() {
        if entry.outcome == Outcome::Ok {
            entry.outcome = Outcome::NoSpeech;
        }
        let message = "edit: no instruction was heard; hold the edit key and say what to do \
                       with the selection (nothing was changed)"
            .to_string();
        entry.error_kind = Some("edit_no_instruction".into());
        entry.error.get_or_insert_with(|| message.clone());
        entry.inject_method = Some("none".into());
        (d.notice)(message);
        return entry;
    }
    if !d.config.llm.enabled {
        refuse(&d, &mut entry, "no_llm", super::no_llm());
        return entry;
    }
    let asked = super::llm::ask(d.config, &req.selection, &instruction);
    super::llm::record(&mut entry, d.config, &asked);
    let raw = match asked {
        Ok(a) => a.completion.text,
        Err(e) => {
            tracing::debug!("edit: the LLM gave no answer: {e}");
            let message = format!(
                "edit: the LLM gave no answer ({}); nothing was changed",
                e.without_words()
            );
            refuse(&d, &mut entry, "llm_failed", message);
            return entry;
        }
    };
    type_answer(d, entry, &req, &raw, instruction.chars().count())
}

/// The LLM answered `raw`: made safe, checked against the window, typed over the selection.
fn type_answer(
    d: Delivery,
    mut entry: Entry,
    req: &Request,
    raw: &str,
    instruction_chars: usize,
) -> Entry {
    let selection_chars = req.selection.chars().count();
    // The budget: from what the user gave, the selection and the instruction said.
    let budget_base = selection_chars.saturating_add(instruction_chars);
    // A terminal never gets a newline; the press refused terminals, this is the release's look.
    let terminal_now = d.sink.focus_is_terminal() == Some(true);
    let newlines = d.config.edit.type_newlines && !terminal_now;
    let answer = match answer::prepare(raw, budget_base, newlines) {
        Ok(a) => a,
        Err(Unfit::Empty) => {
            let message = "edit: the LLM's answer was empty; nothing was changed".to_string();
            refuse(&d, &mut entry, "empty_answer", message);
            return entry;
        }
        Err(Unfit::TooLong { chars, limit }) => {
            entry.text = Some(crate::text_safety::strip_control(raw, true));
            let message = format!(
                "edit: the LLM's answer is {chars} characters, more than {limit} for a \
                 {selection_chars}-character selection and a {instruction_chars}-character \
                 instruction; not typed (it is in history)"
            );
            refuse(&d, &mut entry, "too_long", message);
            return entry;
        }
    };
    let text = answer.text();
    if terminal_now {
        entry.text = Some(text);
        let message = "edit: the focused window is now a terminal, where typing does not \
                       replace the selection; nothing was typed (the answer is in history)"
            .to_string();
        refuse(&d, &mut entry, "terminal", message);
        return entry;
    }
    let now = d.sink.focus_key();
    if !super::focus::unchanged(&req.focus, now.as_deref()) {
        entry.text = Some(text);
        let message = "edit: the focus moved to another window since the edit key was pressed; \
                       nothing was typed (the answer is in history)"
            .to_string();
        refuse(&d, &mut entry, "focus_changed", message);
        return entry;
    }
    if let Some(why) = (d.stop)() {
        entry.text = Some(text);
        entry.inject_method = Some("none".into());
        entry.inject_error = Some(why);
        return entry;
    }
    if d.config.edit.keep_on_clipboard {
        if let Err(e) = super::clipboard::keep(&req.selection) {
            tracing::warn!("edit: the original selection could not be put on the clipboard: {e}");
        }
    }
    let t0 = Instant::now();
    let (method, error) = type_lines(&mut *d.sink, &answer.lines, &req.focus, d.stop);
    entry.inject_ms = Some(ms_since(t0));
    entry.inject_method = Some(method);
    entry.text = Some(text);
    if let Some(e) = error {
        (d.notice)(format!("edit: the answer could not be typed whole: {e}"));
        entry.inject_error = Some(e);
    }
    tracing::info!(
        selection_chars,
        answer_chars = answer.chars(),
        "edit: answer typed over the selection"
    );
    entry
}

/// Types `lines` with Return between them; the first keys replace the selection. Returns the
/// path used and the first error (typing stops there). Before each line and each Return
/// the gate looks again: the cancel key (`stop`), the focus still on the window of the
/// press (`focus`), and that window still no terminal; any of them stops the typing, and a
/// line stops at its next word once the cancel key is pressed.
fn type_lines(
    sink: &mut dyn Sink,
    lines: &[String],
    focus: &str,
    stop: &dyn Fn() -> Option<String>,
) -> (String, Option<String>) {
    let mut method = "none".to_string();
    let total = lines.len();
    for (i, line) in lines.iter().enumerate() {
        let stopped = |why: String| format!("typing stopped after {i} of {total} lines: {why}");
        if let Some(why) = stop() {
            return (method, Some(stopped(why)));
        }
        if !super::focus::unchanged(focus, sink.focus_key().as_deref()) {
            let why = "the focus moved to another window (the rest is in history)".to_string();
            return (method, Some(stopped(why)));
        }
        if i > 0 {
            if sink.focus_is_terminal() == Some(true) {
                let why = "the window is now a terminal (the rest is in history)".to_string();
                return (method, Some(stopped(why)));
            }
            if let Err(e) = sink.press(&[Chord::key(Key::Return)]) {
                return (method, Some(format!("Return not pressed: {e}")));
            }
        }
        if line.is_empty() {
            continue;
        }
        let r = sink.deliver(line);
        method = r.method;
        if r.error.is_some() || matches!(method.as_str(), "none" | "clipboard_only") {
            let e = r
                .error
                .unwrap_or_else(|| "the text did not reach the window".into());
            return (method, Some(e));
        }
    }
    (method, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dictation::SinkReport;
    use crate::store::Source;
    use std::cell::RefCell;

    /// A sink that records what it was asked to do (the typing itself is the live test's).
    struct Recorder {
        focus: Option<String>,
        terminal: bool,
        got: RefCell<Vec<String>>,
        /// After this many lines typed, the focus moves to this window (a terminal).
        moves_after: Option<(usize, String)>,
    }

    impl Sink for Recorder {
        fn deliver(&mut self, text: &str) -> SinkReport {
            self.got.borrow_mut().push(text.to_string());
            let typed = self
                .got
                .borrow()
                .iter()
                .filter(|g| !g.contains("Return"))
                .count();
            if let Some((after, to)) = &self.moves_after {
                if typed >= *after {
                    self.focus = Some(to.clone());
                    self.terminal = true;
                }
            }
            SinkReport {
                method: "x11_type".into(),
                ..SinkReport::default()
            }
        }
        fn press(&mut self, keys: &[Chord]) -> Result<String, String> {
            self.got.borrow_mut().push(format!("{keys:?}"));
            Ok("x11_keys".into())
        }
        fn focus_key(&mut self) -> Option<String> {
            self.focus.clone()
        }
        fn focus_is_terminal(&mut self) -> Option<bool> {
            Some(self.terminal)
        }
    }

    fn instruction(text: &str, outcome: Outcome) -> Entry {
        let mut e = Entry::new(Source::Mic);
        e.outcome = outcome;
        e.raw_text = Some(text.into());
        e.text = Some(text.into());
        e
    }

    fn request() -> Request {
        Request {
            selection: "the original".into(),
            focus: "x11:5".into(),
            pressed_at: Instant::now(),
        }
    }

    fn run(sink: &mut Recorder, config: &Config, entry: Entry) -> (Entry, Vec<String>) {
        let notices = RefCell::new(Vec::new());
        let notice = |m: String| notices.borrow_mut().push(m);
        let entry = deliver(
            Delivery {
                sink,
                config,
                notice: &notice,
                stop: &|| None,
            },
            entry,
            request(),
        );
        (entry, notices.into_inner())
    }

    fn sink(focus: &str) -> Recorder {
        Recorder {
            focus: Some(focus.into()),
            terminal: false,
            got: RefCell::new(Vec::new()),
            moves_after: None,
        }
    }

    #[test]
    fn silence_is_refused_before_any_request() {
        let mut config = Config::default();
        config.llm.enabled = true;
        // A server that is not there: reaching it would fail differently.
        config.llm.url = "http://127.0.0.1:9".into();
        let mut s = sink("x11:5");
        let (row, notices) = run(&mut s, &config, instruction("", Outcome::NoSpeech));
        assert_eq!(row.error_kind.as_deref(), Some("edit_no_instruction"));
        assert_eq!(row.llm_outcome, None, "no request was sent");
        assert!(
            notices[0].contains("no instruction was heard"),
            "{notices:?}"
        );
        assert!(s.got.borrow().is_empty());
    }

    #[test]
    fn without_an_llm_nothing_is_typed() {
        let mut s = sink("x11:5");
        let (row, notices) = run(
            &mut s,
            &Config::default(),
            instruction("make it formal", Outcome::Ok),
        );
        assert_eq!(row.outcome, Outcome::Error);
        assert_eq!(row.error_kind.as_deref(), Some("edit_no_llm"));
        assert!(notices[0].contains("[llm] enabled"), "{notices:?}");
        assert!(s.got.borrow().is_empty());
    }

    #[test]
    fn an_llm_that_cannot_be_reached_types_nothing() {
        let mut config = Config::default();
        config.llm.enabled = true;
        config.llm.backend = crate::config::llm::BackendKind::Openai;
        config.llm.url = "http://127.0.0.1:9".into();
        let mut s = sink("x11:5");
        let (row, notices) = run(&mut s, &config, instruction("shorter", Outcome::Ok));
        assert_eq!(
            row.error_kind.as_deref(),
            Some("edit_llm_failed"),
            "{row:?}"
        );
        assert_eq!(row.llm_outcome.as_deref(), Some("failed"));
        assert!(notices[0].contains("the LLM gave no answer"), "{notices:?}");
        assert!(s.got.borrow().is_empty());
    }

    fn answered(sink: &mut Recorder, raw: &str) -> (Entry, Vec<String>) {
        let notices = RefCell::new(Vec::new());
        let notice = |m: String| notices.borrow_mut().push(m);
        let mut config = Config::default();
        config.llm.enabled = true;
        config.edit.keep_on_clipboard = false;
        let entry = type_answer(
            Delivery {
                sink,
                config: &config,
                notice: &notice,
                stop: &|| None,
            },
            instruction("make it formal", Outcome::Ok),
            &request(),
            raw,
            "make it formal".len(),
        );
        (entry, notices.into_inner())
    }

    #[test]
    fn the_answer_goes_only_to_the_window_of_the_press() {
        let mut s = sink("x11:5");
        let (row, notices) = answered(&mut s, "Good day.");
        assert_eq!(row.text.as_deref(), Some("Good day."));
        assert_eq!(row.inject_method.as_deref(), Some("x11_type"));
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(*s.got.borrow(), ["Good day."]);

        let mut moved = sink("x11:6");
        let (row, notices) = answered(&mut moved, "Good day.");
        assert_eq!(row.error_kind.as_deref(), Some("edit_focus_changed"));
        assert_eq!(row.inject_method.as_deref(), Some("none"));
        assert_eq!(row.text.as_deref(), Some("Good day."), "kept in history");
        assert!(notices[0].contains("focus moved"), "{notices:?}");
        assert!(moved.got.borrow().is_empty());

        let mut unknown = Recorder {
            focus: None,
            ..sink("")
        };
        let (row, _) = answered(&mut unknown, "Good day.");
        assert_eq!(row.error_kind.as_deref(), Some("edit_focus_changed"));
        assert!(unknown.got.borrow().is_empty());
    }

    #[test]
    fn a_terminal_or_an_empty_answer_gets_nothing() {
        let mut term = Recorder {
            terminal: true,
            ..sink("x11:5")
        };
        let (row, _) = answered(&mut term, "rm -rf ~\nreboot");
        assert_eq!(row.error_kind.as_deref(), Some("edit_terminal"));
        assert!(term.got.borrow().is_empty());
        let mut s = sink("x11:5");
        let (row, notices) = answered(&mut s, " \u{1b} ");
        assert_eq!(row.error_kind.as_deref(), Some("edit_empty_answer"));
        assert!(notices[0].contains("empty"), "{notices:?}");
        assert!(s.got.borrow().is_empty());
    }

    #[test]
    fn lines_are_typed_with_return_between_them() {
        let mut s = sink("x11:5");
        let (method, error) = type_lines(
            &mut s,
            &["- one".into(), String::new(), "- two".into()],
            "x11:5",
            &|| None,
        );
        assert_eq!(method, "x11_type");
        assert_eq!(error, None);
        let got = s.got.borrow();
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0], "- one");
        assert!(
            got[1].contains("Return") && got[2].contains("Return"),
            "{got:?}"
        );
        assert_eq!(got[3], "- two");
    }

    #[test]
    fn a_focus_switch_or_the_cancel_key_stops_a_long_answer_between_lines() {
        let lines: Vec<String> = (1..=60).map(|i| format!("line {i}")).collect();
        // The focus moves to an xterm after 3 lines: no Return after that, nothing more.
        let mut s = sink("x11:5");
        s.moves_after = Some((3, "x11:9".into()));
        let (_, error) = type_lines(&mut s, &lines, "x11:5", &|| None);
        let error = error.expect("stopped");
        assert!(error.contains("focus moved"), "{error}");
        let got = s.got.borrow();
        assert_eq!(got.len(), 5, "3 lines and 2 Returns between them: {got:?}");
        assert!(!got.last().is_some_and(|g| g.contains("Return")), "{got:?}");
        drop(got);
        // The cancel key (Escape) after 2 lines: typing stops there.
        let mut s = sink("x11:5");
        let count = std::cell::Cell::new(0);
        let stop = || {
            count.set(count.get() + 1);
            (count.get() > 2).then(|| "cancelled with the cancel key".to_string())
        };
        let (_, error) = type_lines(&mut s, &lines, "x11:5", &stop);
        assert!(error.is_some_and(|e| e.contains("after 2 of 60 lines")));
        assert_eq!(s.got.borrow().len(), 3, "{:?}", s.got.borrow());
    }
}
