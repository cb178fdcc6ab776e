//! Typing and pasting on X11: XTest key presses through enigo after the hotkey's modifiers
//! are up (Caps Lock suspended, paused while the user holds keys, stopped between words by
//! the cancel key), or the paste (`paste_x11.rs`).

use super::report::{ms_since, Delivery, InjectReport};
use super::session::TypePath;
use super::{InjectMethod, Injector};
use std::time::{Duration, Instant};

/// Longest pause of X11 typing while the user holds keys (the hotkey, for the next
/// dictation); modifiers still down then are released and typing goes on.
const TYPING_HOLD_TIMEOUT: Duration = Duration::from_secs(120);

impl Injector {
    pub(super) fn inject_x11(
        &mut self,
        text: &str,
        terminal: bool,
        window: Option<u32>,
        start: Instant,
        report: &mut InjectReport,
    ) -> Result<Delivery, String> {
        let timeout = Duration::from_millis(self.config.modifier_release_timeout_ms);
        let released = self
            .x
            .fresh_keys_and_x11()
            .and_then(|(keys, x11)| keys.release_modifiers(x11, timeout))
            .inspect_err(|_| self.reset_x11())?;
        report.modifier_wait_ms = released.waited_ms;
        report.modifiers_forced = !released.forced.is_empty();
        match self.config.method {
            InjectMethod::Type => self.type_x11(text, start, report),
            #[cfg(all(unix, not(target_os = "macos")))]
            InjectMethod::Paste => self.paste_x11(text, terminal, window, start, report),
            #[cfg(not(all(unix, not(target_os = "macos"))))]
            InjectMethod::Paste => {
                let _ = (terminal, window);
                Err("paste mode on X11 needs Linux or a BSD; use method = \"type\"".into())
            }
        }
    }

    /// Types `text` with XTest (the hotkey's modifiers already up).
    pub(super) fn type_x11(
        &mut self,
        text: &str,
        start: Instant,
        report: &mut InjectReport,
    ) -> Result<Delivery, String> {
        let typed = self.x.keys_and_x11().and_then(|(keys, x11)| {
            let caps = keys.suspend_caps_lock(x11)?;
            // Keys pressed while typing (the hotkey again) pause it until they
            // are up: the next dictation is being spoken meanwhile.
            let stop = self.stop.clone();
            let stop = move || stop.as_ref().is_some_and(|s| s());
            let typed = keys.type_text(text, x11, TYPING_HOLD_TIMEOUT, &stop);
            if caps {
                if let Err(e) = keys.restore_caps_lock() {
                    report.warning = Some(e);
                }
            }
            typed
        });
        let typed = typed.inspect_err(|_| self.reset_x11())?;
        report.stopped_at = typed.stopped_at;
        let paused_ms = typed.waited_ms;
        if paused_ms > 0.0 {
            tracing::info!(paused_ms, "typing paused while keys were held");
        }
        report.inject_ms = ms_since(start);
        Ok(Delivery::Typed(TypePath::X11))
    }
}
