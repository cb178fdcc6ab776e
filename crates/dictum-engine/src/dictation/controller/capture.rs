//! The microphone stream as the controller holds it: `ensure_capture` answers a press with a
//! working stream or a notice (never waiting for the sound server), and `poll_reopen` takes
//! the background re-open's result (a device back, new settings applied, or the error told
//! once).

use super::Controller;
use crate::audio::capture::{drop_in_background, CaptureOptions};
use crate::config::Config;
use std::time::Duration;

pub(super) fn capture_options(config: &Config) -> CaptureOptions {
    let d = &config.dictation;
    CaptureOptions {
        device: (!d.input_device.trim().is_empty()).then(|| d.input_device.clone()),
        preroll_ms: d.preroll_ms,
        max_utterance: Duration::from_secs(d.max_utterance_s as u64),
        ..CaptureOptions::default()
    }
}

impl Controller {
    /// True when a working microphone stream is there. Never waits: without one, a re-open
    /// is started in the background (one at a time) and this press is not recorded.
    pub(super) fn ensure_capture(&mut self) -> bool {
        self.poll_reopen();
        if self.capture.as_ref().is_some_and(|c| !c.has_failed()) {
            return true;
        }
        if let Some(c) = self.capture.take() {
            drop_in_background(c);
        }
        self.reopener.request(capture_options(&self.config));
        let why = match self.reopener.waiting_for() {
            Some(waited) if waited >= Duration::from_secs(2) => format!(
                "the audio server has not answered for {} s (is PulseAudio/PipeWire frozen? \
                 `pactl info` tells)",
                waited.as_secs()
            ),
            Some(_) => "it is being re-opened".to_string(),
            None => self
                .last_open_error
                .clone()
                .unwrap_or_else(|| "it is being re-opened".into()),
        };
        self.notice(format!(
            "no microphone: {why}; this press was not recorded, try again once it is back"
        ));
        false
    }

    /// Takes the background re-open's result, if it has one.
    /// Takes the background re-open's result, if it has one. Called only while nothing is
    /// being recorded (the stream is never swapped under an utterance).
    pub(super) fn poll_reopen(&mut self) {
        let working = self.capture.as_ref().is_some_and(|c| !c.has_failed());
        match self.reopener.poll() {
            Some(Ok(c)) => {
                self.last_open_error = None;
                if std::mem::take(&mut self.reopen_stale) {
                    // Opened with the settings from before the last change: again.
                    drop_in_background(c);
                    self.reopener.request(capture_options(&self.config));
                    return;
                }
                if working && !self.capture_wanted {
                    drop_in_background(c);
                    return;
                }
                let message = if working {
                    format!(
                        "microphone {} opened with the new settings",
                        c.info().device
                    )
                } else {
                    format!("microphone {} is back", c.info().device)
                };
                self.capture_wanted = false;
                if let Some(old) = self.capture.take() {
                    drop_in_background(old);
                }
                self.notice(message);
                self.capture = Some(c);
            }
            Some(Err(e)) => {
                if std::mem::take(&mut self.reopen_stale) {
                    self.reopener.request(capture_options(&self.config));
                    return;
                }
                let message = e.to_string();
                if working && std::mem::take(&mut self.capture_wanted) {
                    // The old stream goes on; the new settings could not be had.
                    self.notice(format!(
                        "the new microphone settings could not be applied ({message}); \
                         recording goes on with {}",
                        self.capture
                            .as_ref()
                            .map_or(String::new(), |c| c.info().device.clone())
                    ));
                    return;
                }
                if self.last_open_error.as_deref() != Some(message.as_str()) {
                    self.notice(format!("no microphone: {message}"));
                }
                self.last_open_error = Some(message);
            }
            None => {}
        }
    }
}
