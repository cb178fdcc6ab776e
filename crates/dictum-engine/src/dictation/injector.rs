//! The injector thread: types (or pastes) each finished dictation into the focused window,
//! strictly in the order the utterances were spoken, and completes their history rows.

use crate::config::Config;
use crate::dictation::worker::{report, Typed};
use crate::dictation::{Input, Shared};
use crate::inject::{InjectMethod, Injector};
use crate::store::{History, Outcome};
use crate::timing::ms_since;
use std::sync::{mpsc, Arc};
use std::time::Instant;

/// Where text goes. The daemon's sink is [`crate::inject::Injector`]; `dictum run --output
/// stdout` prints instead.
pub trait Sink {
    /// Delivers `text`; never panics. Returns how, and the error if it failed (the text is
    /// then left on the clipboard by the sink, when it can).
    fn deliver(&mut self, text: &str) -> SinkReport;

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
}

#[derive(Debug, Clone, Default)]
pub struct SinkReport {
    pub method: String,
    pub error: Option<String>,
    /// Ms from the call until the text was handed over (last key sent, or the paste chord),
    /// when the sink does more afterwards (paste: restoring the clipboard).
    pub handed_over_ms: Option<f64>,
    /// The window that received the text, when the sink knows it.
    pub app_class: Option<String>,
    pub window_title: Option<String>,
}

/// The product's sink: typing or pasting into the focused window.
impl Sink for Injector {
    fn deliver(&mut self, text: &str) -> SinkReport {
        let r = self.inject(text);
        let mut error = r.error;
        if let Some(w) = r.warning {
            tracing::warn!("{w}");
            error.get_or_insert(w);
        }
        SinkReport {
            method: r.method.map_or("none", |m| m.as_str()).to_string(),
            error,
            handed_over_ms: Some(r.inject_ms),
            app_class: r.app_class,
            window_title: r.window_title,
        }
    }

    fn release_grace(&self) -> std::time::Duration {
        Injector::release_grace(self)
    }

    fn route(&mut self) -> Option<String> {
        Some(match self.check() {
            Ok(route) => route.describe(),
            Err(e) => format!("none: {e}"),
        })
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
        let injector = Injector::new(&inject).map_err(|e| e.to_string())?;
        Ok(Box::new(injector))
    })
}

/// Reads the focused window at the key press (for the history row) through its own X11
/// connection.
pub fn window_probe(config: &Config) -> Option<crate::dictation::WindowProbe> {
    let injector = Injector::new(&config.inject).ok()?;
    let injector = std::sync::Mutex::new(injector);
    Some(Box::new(move || {
        let Ok(mut i) = injector.lock() else {
            return (None, None);
        };
        let w = i.focused_window();
        (w.class, w.title)
    }))
}

/// Builds the sink on the injector thread (X11 and clipboard handles stay on one thread),
/// from the config; called again when the config changes.
pub type SinkFactory = Box<dyn Fn(&Config) -> Result<Box<dyn Sink>, String> + Send>;

pub(crate) enum InjectorMsg {
    Type(Box<Typed>),
    Reconfigure(Box<Config>),
    Stop,
}

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

pub(crate) fn run(
    mut sink: Box<dyn Sink>,
    factory: SinkFactory,
    history: History,
    jobs: mpsc::Receiver<InjectorMsg>,
    to_controller: mpsc::Sender<Input>,
    shared: Arc<Shared>,
) {
    while let Ok(msg) = jobs.recv() {
        let Typed {
            mut entry,
            release_at,
        } = match msg {
            InjectorMsg::Type(t) => *t,
            InjectorMsg::Reconfigure(config) => {
                match factory(&config) {
                    Ok(new) => sink = new,
                    Err(e) => {
                        let _ = to_controller.send(Input::Notice(format!(
                            "injection settings not applied: {e}"
                        )));
                    }
                }
                continue;
            }
            InjectorMsg::Stop => break,
        };
        let id = entry.id.unwrap_or(0);
        let text = entry.text.clone().unwrap_or_default();
        if shared.cancelled(id) {
            entry.inject_method = Some("cancelled".into());
        } else if entry.outcome != Outcome::Ok || text.trim().is_empty() {
            // Silence, noise, errors: nothing is typed.
            entry.inject_method = Some("none".into());
        } else {
            // A result that is ready while the push-to-talk key is held for the next
            // utterance waits for the release (order is kept: later ones queue behind it).
            while shared.key_held() && !shared.shutting_down() {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let ready_at = release_at + sink.release_grace();
            let now = Instant::now();
            if ready_at > now {
                std::thread::sleep(ready_at - now);
            }
            shared.set_injecting(true);
            let _ = to_controller.send(Input::StateChanged);
            let t0 = Instant::now();
            let delivery = sink.deliver(&text);
            let handed_over = delivery.handed_over_ms.unwrap_or_else(|| ms_since(t0));
            entry.inject_ms = Some(handed_over);
            entry.release_to_typed_ms =
                Some(t0.saturating_duration_since(release_at).as_secs_f64() * 1000.0 + handed_over);
            entry.inject_method = Some(delivery.method);
            entry.inject_error = delivery.error;
            if entry.app_class.is_none() {
                entry.app_class = delivery.app_class;
                entry.window_title = delivery.window_title;
            }
            shared.set_injecting(false);
        }
        entry
            .release_to_typed_ms
            .get_or_insert(ms_since(release_at));
        if let Err(e) = history.update(&entry) {
            let _ =
                to_controller.send(Input::Notice(format!("could not store the dictation: {e}")));
        }
        let _ = to_controller.send(Input::Done(Box::new(report(&entry))));
    }
}
