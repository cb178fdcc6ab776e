//! Once a second, between inputs: hands-free's idle stop, the check that its source is still
//! there, the microphone re-open, and the config file watched and applied without a restart
//! (`reconfigure`: hotkeys rebound, the stream re-opened with new settings, the worker,
//! injector and hands-free cutter told).

use super::Controller;
use crate::config::Config;
use crate::dictation::hands_free::{idle_expired, Listening};
use crate::dictation::messages::{Event, InjectorMsg, Job};
use std::time::{Duration, Instant};

/// How often hands-free asks the audio server whether its source is still there.
const SOURCE_CHECK_EVERY: Duration = Duration::from_secs(3);

impl Controller {
    pub(super) fn housekeeping(&mut self) {
        if !self.watch.round_due() {
            return;
        }
        if let Some(hf) = &self.hands_free {
            let idle_s = self.config.dictation.hands_free_idle_s;
            // Time without a microphone is not idle time: listening resumes when it is back.
            if self.live.is_none()
                && !hf.mic_lost
                && idle_expired(idle_s, hf.last_activity.elapsed())
            {
                self.hands_free_off(
                    Instant::now(),
                    Some(format!(
                        "hands-free stopped: no speech for {idle_s} s ([dictation] hands_free_idle_s)"
                    )),
                );
            }
        }
        // Hands-free records all along, so no release asks whether the source went away:
        // ask between two utterances (PulseAudio silently moves such a stream elsewhere).
        if let Some(hf) = self.hands_free.as_mut() {
            if self.live.is_none() && hf.source_checked.elapsed() >= SOURCE_CHECK_EVERY {
                hf.source_checked = Instant::now();
                if let Some(why) = self.mic.check_source() {
                    tracing::warn!("hands-free: {why}");
                }
            }
        }
        // A device that failed comes back by itself when it returns: re-opened in the
        // background, one attempt at a time (a frozen sound server costs one waiting
        // thread, and the hotkey is still answered meanwhile).
        if self.live.is_none() {
            self.keep_mic_open();
        }
        // Config changes apply without a restart.
        match self.watch.changed() {
            Some(Ok((config, warnings))) => {
                for w in warnings {
                    self.notice(w);
                }
                self.reconfigure(config);
            }
            Some(Err(message)) => self.notice(message),
            None => {}
        }
    }

    pub(super) fn reconfigure(&mut self, config: Config) {
        if config == self.config {
            return;
        }
        for p in self.keys.rebind(&self.config, &config) {
            self.notice(p);
        }
        self.apps.reconfigure(&config, &self.links.events);
        self.links
            .queue
            .push(Job::Reconfigure(Box::new(config.clone())));
        let _ = self
            .links
            .to_injector
            .send(InjectorMsg::Reconfigure(Box::new(config.clone())));
        self.config = config;
        // A new device, pre-roll or length limit re-opens the stream in the background; the
        // stream in use records until the new one delivers.
        self.mic.reconfigure(&self.config.dictation, Instant::now());
        // Hands-free picks up a new pause or pre-roll between two utterances.
        if let Some(hf) = self.hands_free.as_mut() {
            if !hf.cutter.is_open() {
                hf.cutter = Listening::cutter(&self.config);
            }
        }
        let message = format!(
            "config applied (hotkey {}, {})",
            self.config.dictation.hotkey,
            self.config.dictation.mode.describe()
        );
        let _ = self.links.events.send(Event::Notice { message });
    }
}
