//! One dictation delivered: the text made safe (control characters out, the trailing
//! space), the focused window and its route, typing on that route (the XWayland fallback to
//! the compositor's path), stopped by the cancel key or a focus change with the rest on the
//! clipboard, and on failure the text left on the clipboard with a notification.

use super::report::{ms_since, Delivery, InjectReport};
use super::session::{Focus, TypePath};
use super::{notify, Injector, StopCheck, FOCUS_MOVED, STOPPED};
use std::time::Instant;

impl Injector {
    /// Types or pastes `text` (plus the trailing space) into the focused window. Empty or
    /// blank text does nothing. Never panics; failures are in the report, with the text left
    /// on the clipboard and a notification shown.
    pub fn inject(&mut self, text: &str) -> InjectReport {
        self.inject_until(text, None)
    }

    /// [`Injector::inject`], typing stopped at the next word once `stop` says so (the cancel
    /// key): the report then has `stopped` and the characters typed so far. Pasting is one
    /// chord and is not stopped.
    pub fn inject_until(&mut self, text: &str, stop: Option<StopCheck>) -> InjectReport {
        self.stop = stop;
        let report = self.inject_text(text);
        self.stop = None;
        report
    }

    /// [`Injector::inject_until`] of a stored text (a retry, "type again"): when the cancel
    /// key stops it, the rest is left on the clipboard (and the row keeps it all), with a
    /// notice, as for a focus change.
    pub fn inject_stored(&mut self, text: &str, stop: Option<StopCheck>) -> InjectReport {
        self.keep_rest = true;
        let report = self.inject_until(text, stop);
        self.keep_rest = false;
        report
    }

    pub(super) fn inject_text(&mut self, text: &str) -> InjectReport {
        let start = Instant::now();
        let mut report = InjectReport::default();
        if text.trim().is_empty() {
            report.total_ms = ms_since(start);
            return report;
        }
        let text = self.final_text(text);
        self.watch_keys();
        let (window, focus) = self.focused();
        report.app_class = window.class.clone();
        report.window_title = window.title.clone();
        report.focus = Some(focus);

        // The gate's focus check: typing goes on only while the window that had the focus
        // when it began still has it (asked with the cancel key, between words).
        let moved = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let user_stop = self.stop.clone();
        if let Some(still) = self.focus_check(&window, focus) {
            let moved = std::sync::Arc::clone(&moved);
            let user_stop = user_stop.clone();
            self.stop = Some(std::sync::Arc::new(move || {
                if user_stop.as_ref().is_some_and(|s| s()) {
                    return true;
                }
                let gone = !still();
                if gone {
                    moved.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                gone
            }));
        }
        let result = self.route(focus).and_then(|route| {
            let terminal = self
                .config
                .is_terminal(window.instance.as_deref(), window.class.as_deref());
            match route.typing {
                TypePath::X11 => {
                    let x11 = self.inject_x11(&text, terminal, window.id, start, &mut report);
                    // An XWayland window that XTest cannot reach (XWayland without a usable
                    // keyboard map yet): the compositor's own path reaches it too.
                    match (x11, self.route(Focus::Unknown)) {
                        (Err(e), Ok(native))
                            if focus == Focus::XWayland && native.typing.is_wayland() =>
                        {
                            tracing::info!(
                                "inject: XTest into XWayland failed ({e}); using {}",
                                native.typing.as_str()
                            );
                            self.inject_wayland(
                                &text,
                                native,
                                native.typing,
                                terminal,
                                start,
                                &mut report,
                            )
                        }
                        (x11, _) => x11,
                    }
                }
                path => self.inject_wayland(&text, route, path, terminal, start, &mut report),
            }
        });
        match result {
            Ok(method) => {
                report.method = Some(method);
                match report.stopped_at.take() {
                    Some(at) if moved.load(std::sync::atomic::Ordering::SeqCst) => {
                        // The focus moved: the rest goes to the clipboard, not to another
                        // window, and the user is told.
                        self.keep_the_rest(&text, at, focus, FOCUS_MOVED, &mut report);
                    }
                    Some(at) if self.keep_rest => {
                        // A stored text: what was not typed goes to the clipboard.
                        self.keep_the_rest(&text, at, focus, STOPPED, &mut report);
                    }
                    Some(at) => {
                        report.chars = text[..at.min(text.len())].chars().count();
                        report.stopped = true;
                        report.error = Some(format!(
                            "{STOPPED} after {} of {} characters",
                            report.chars,
                            text.chars().count()
                        ));
                    }
                    None => report.chars = text.chars().count(),
                }
            }
            Err(e) => {
                tracing::warn!("inject: {e}");
                report.inject_ms = ms_since(start);
                report.error = Some(e);
                let kept = self.leave_on_clipboard(&text, focus);
                match &kept {
                    Ok(()) => {
                        report.method = Some(Delivery::ClipboardOnly);
                        report.chars = text.chars().count();
                    }
                    Err(clip) => {
                        report.error = report
                            .error
                            .take()
                            .map(|e| format!("{e}; the clipboard fallback failed too: {clip}"));
                    }
                }
                if self.config.notify_on_failure {
                    notify::notify(&notify::failure_message(&window.describe(), kept.is_ok()));
                }
            }
        }
        self.stop = user_stop;
        report.total_ms = ms_since(start);
        if let Some(w) = &self.keywatch {
            w.own(start);
        }
        report
    }

    pub(super) fn final_text(&self, text: &str) -> String {
        // Typing never sends control characters (a newline would be Enter in a terminal);
        // whatever produced the text, transcript or cleanup, only printable text goes out.
        let mut text = crate::text_safety::strip_control(text, false);
        if self.config.trailing_space && !text.ends_with(char::is_whitespace) {
            text.push(' ');
        }
        text
    }

    /// Typing stopped at byte `at` (`why`): what was not typed goes to the clipboard, and the
    /// report and a notice say how much was typed and where the rest is.
    pub(super) fn keep_the_rest(
        &mut self,
        text: &str,
        at: usize,
        focus: Focus,
        why: &str,
        report: &mut InjectReport,
    ) {
        let at = at.min(text.len());
        report.chars = text[..at].chars().count();
        report.stopped = true;
        let kept = self.leave_on_clipboard(text[at..].trim(), focus).is_ok();
        let message = format!(
            "{why} after {} of {} characters; the rest is {}in history",
            report.chars,
            text.chars().count(),
            if kept { "on the clipboard and " } else { "" }
        );
        if self.config.notify_on_failure {
            notify::notify(&message);
        }
        report.error = Some(message);
    }
}
