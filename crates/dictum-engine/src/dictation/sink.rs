//! Where a dictation's text goes: the [`Sink`] trait, the daemon's sink (the injector,
//! [`crate::inject::Injector`]), `--output stdout`'s [`StdoutSink`], and the factory the
//! injector thread builds its sink with (again when the config changes).

use crate::commands::Chord;
use crate::config::Config;
use crate::dictation::messages::SinkReport;
use crate::inject::{InjectMethod, Injector, StopCheck};
use std::sync::Arc;
use std::time::Instant;

/// Where text goes. The daemon's sink is [`crate::inject::Injector`]; `dictum run --output
/// stdout` prints instead.
pub trait Sink {
    /// Delivers `text`; never panics. Returns how, and the error if it failed (the text is
    /// then left on the clipboard by the sink, when it can).
    fn deliver(&mut self, text: &str) -> SinkReport;

    /// [`Sink::deliver`], stopping at the next word once `stop` says so (the cancel key while
    /// a long text is typed). A sink that cannot stop midway delivers the whole text.
    fn deliver_until(&mut self, text: &str, stop: StopCheck) -> SinkReport {
        let _ = stop;
        self.deliver(text)
    }

    /// [`Sink::deliver_until`] of a text with a snippet's line breaks: byte offsets of spaces
    /// in `text` (`crate::snippets::line_breaks`, from the config, never from the text). A
    /// sink may press Return there where the window is no terminal; by default the spaces.
    fn deliver_lines(&mut self, text: &str, breaks: &[usize], stop: StopCheck) -> SinkReport {
        let _ = breaks;
        self.deliver_until(text, stop)
    }

    /// [`Sink::deliver_until`] of a stored text (a retry, "type again"): when the cancel key
    /// stops it, the rest is left on the clipboard as well, with a notice.
    fn deliver_stored(&mut self, text: &str, stop: StopCheck) -> SinkReport {
        self.deliver_until(text, stop)
    }

    /// Whether the window keys would go to now is a terminal; None when the sink cannot
    /// tell (`commands::trust` then goes by the window at the press).
    fn focus_is_terminal(&mut self) -> Option<bool> {
        None
    }

    /// The window keys would go to now and the gate's verdict on it (`inject/gate.rs`:
    /// a window that cannot be known is a terminal); None when the sink has no keyboard.
    fn verdict(&mut self) -> Option<(crate::inject::WindowInfo, crate::inject::Verdict)> {
        None
    }

    /// The path text takes now, for the ready event: e.g. "virtual_keyboard", or
    /// "none: why" when nothing can deliver. None when the sink has no such notion.
    fn route(&mut self) -> Option<String> {
        None
    }

    /// How long after the key's release to wait before the first key is sent: the hotkey's
    /// modifiers may still be held, and keys sent meanwhile would become shortcuts.
    fn release_grace(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// Presses key chords in the focused window (voice commands); returns the path's name.
    fn press(&mut self, keys: &[Chord]) -> Result<String, String> {
        let _ = keys;
        Err("this output cannot press keys".into())
    }

    /// Names the window keys would go to now, so that "scratch that" erases only in the
    /// window the text went to. None when the sink cannot tell.
    fn focus_key(&mut self) -> Option<String> {
        None
    }

    /// Whether keys were typed on the keyboard (not by Dictum) since `since`; None when the
    /// sink cannot see other keyboards (Wayland).
    fn typed_elsewhere_since(&mut self, since: Instant) -> Option<bool> {
        let _ = since;
        None
    }

    /// Turns `[inject] trailing_space` on or off for the deliveries that follow; returns
    /// what it was. A text fitted into the text around the cursor (`dictation/caret.rs`)
    /// brings its own spaces. A sink without the notion ignores it.
    fn set_trailing_space(&mut self, on: bool) -> bool {
        on
    }

    /// Whether a dictation may go out in parts (its first words while the last are still
    /// being cleaned) and come out as if typed at once. A sink that writes each delivery on
    /// a line of its own (standard output) says no, and gets the whole text at the end.
    fn streams(&self) -> bool {
        false
    }
}

/// The product's sink: typing or pasting into the focused window.
impl Sink for Injector {
    fn deliver(&mut self, text: &str) -> SinkReport {
        self.deliver_until(text, Arc::new(|| false))
    }

    fn deliver_until(&mut self, text: &str, stop: StopCheck) -> SinkReport {
        self.deliver_lines(text, &[], stop)
    }

    fn deliver_lines(&mut self, text: &str, breaks: &[usize], stop: StopCheck) -> SinkReport {
        sink_report(self.inject_lines(text, breaks, Some(stop)))
    }

    fn deliver_stored(&mut self, text: &str, stop: StopCheck) -> SinkReport {
        sink_report(self.inject_stored(text, Some(stop)))
    }

    fn release_grace(&self) -> std::time::Duration {
        Injector::release_grace(self)
    }

    fn streams(&self) -> bool {
        true
    }

    fn set_trailing_space(&mut self, on: bool) -> bool {
        Injector::set_trailing_space(self, on)
    }

    fn focus_is_terminal(&mut self) -> Option<bool> {
        Injector::focus_is_terminal(self)
    }

    fn verdict(&mut self) -> Option<(crate::inject::WindowInfo, crate::inject::Verdict)> {
        Some(Injector::verdict(self))
    }

    fn press(&mut self, keys: &[Chord]) -> Result<String, String> {
        Injector::press(self, keys).map(str::to_string)
    }

    fn focus_key(&mut self) -> Option<String> {
        let w = self.focused_window();
        w.id.map(|id| format!("x11:{id}")).or_else(|| {
            (w.class.is_some() || w.title.is_some()).then(|| {
                format!(
                    "{}|{}",
                    w.class.unwrap_or_default(),
                    w.title.unwrap_or_default()
                )
            })
        })
    }

    fn typed_elsewhere_since(&mut self, since: Instant) -> Option<bool> {
        Injector::typed_elsewhere_since(self, since)
    }

    fn route(&mut self) -> Option<String> {
        Some(match self.check() {
            Ok(route) => route.describe(),
            Err(e) => format!("none: {e}"),
        })
    }
}

/// The injector's report as the sink's.
fn sink_report(r: crate::inject::InjectReport) -> SinkReport {
    let mut error = r.error;
    if let Some(w) = r.warning {
        if crate::inject::inject_failed(Some(&w)) {
            tracing::warn!("{w}");
        } else {
            tracing::info!("{w}");
        }
        error.get_or_insert(w);
    }
    SinkReport {
        method: r.method.map_or("none", |m| m.as_str()).to_string(),
        error,
        handed_over_ms: Some(r.inject_ms),
        app_class: r.app_class,
        window_title: r.window_title,
        chars: Some(r.chars),
    }
}

/// Builds [`Injector`] sinks from the config's `[inject]` section, with `method` (if given)
/// overriding its method.
pub fn injector_sink(method: Option<InjectMethod>) -> SinkFactory {
    Box::new(move |config: &Config| -> Result<Box<dyn Sink>, String> {
        let mut inject = config.inject.clone();
        if let Some(m) = method {
            inject.method = m;
        }
        // A session where nothing can type still runs: each dictation is stored, left on
        // the clipboard and announced (the ready event says why).
        let mut injector = Injector::new(&inject).map_err(|e| e.to_string())?;
        injector.set_profiles(
            crate::profile::Profiles::compile(&config.profiles)
                .map_err(|(k, why)| format!("{k}: {why}"))?,
        );
        Ok(Box::new(injector))
    })
}

/// Reads the focused window at the key press (for the history row) through its own X11
/// connection.
pub fn window_probe(config: &Config) -> Option<WindowProbe> {
    let injector = Injector::new(&config.inject).ok()?;
    let injector = std::sync::Mutex::new(injector);
    Some(Box::new(move || {
        let Ok(mut i) = injector.lock() else {
            return crate::inject::WindowInfo::default();
        };
        i.focused_window()
    }))
}

/// Builds the sink on the injector thread (X11 and clipboard handles stay on one thread),
/// from the config; called again when the config changes.
/// The focused window at the key press: its class and title for the history row, its
/// process for reading the text around the cursor (`dictation/caret.rs`).
pub type WindowProbe = Box<dyn Fn() -> crate::inject::WindowInfo + Send>;

pub type SinkFactory = Box<dyn Fn(&Config) -> Result<Box<dyn Sink>, String> + Send>;

/// Prints each dictation on standard output, one line each.
pub struct StdoutSink;

impl Sink for StdoutSink {
    fn deliver(&mut self, text: &str) -> SinkReport {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let error = writeln!(out, "{text}")
            .and_then(|_| out.flush())
            .err()
            .map(|e| e.to_string());
        SinkReport {
            method: "stdout".into(),
            error,
            ..SinkReport::default()
        }
    }
}
