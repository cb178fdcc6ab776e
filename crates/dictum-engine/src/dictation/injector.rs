//! The injector thread: types (or pastes) each finished dictation into the focused window,
//! strictly in the order the utterances were spoken, and completes their history rows.

use crate::config::Config;
use crate::dictation::worker::{report, Typed};
use crate::dictation::{Input, Shared};
use crate::store::{History, Outcome};
use crate::timing::ms_since;
use std::sync::{mpsc, Arc};
use std::time::Instant;

/// Where text goes. The daemon's sink is [`crate::inject::Injector`]; `dictum run --output
/// stdout` prints instead.
pub trait Sink {
    /// Delivers `text`; never panics. Returns how, and the error if it failed (the text is
    /// then left on the clipboard by the sink, when it can).
    fn deliver(&mut self, text: &str) -> Delivery;
}

#[derive(Debug, Clone, Default)]
pub struct Delivery {
    pub method: String,
    pub error: Option<String>,
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
    fn deliver(&mut self, text: &str) -> Delivery {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let error = writeln!(out, "{text}")
            .and_then(|_| out.flush())
            .err()
            .map(|e| e.to_string());
        Delivery {
            method: "stdout".into(),
            error,
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
            shared.set_injecting(true);
            let _ = to_controller.send(Input::StateChanged);
            let t0 = Instant::now();
            let delivery = sink.deliver(&text);
            entry.inject_ms = Some(ms_since(t0));
            entry.inject_method = Some(delivery.method);
            entry.inject_error = delivery.error;
            shared.set_injecting(false);
        }
        entry.release_to_typed_ms = Some(ms_since(release_at));
        if let Err(e) = history.update(&entry) {
            let _ =
                to_controller.send(Input::Notice(format!("could not store the dictation: {e}")));
        }
        let _ = to_controller.send(Input::Done(Box::new(report(&entry))));
    }
}
