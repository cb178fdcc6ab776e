//! Simulated key presses with enigo (its default x11rb backend, XTest underneath): the text
//! itself, the paste chord, and releasing the hotkey's modifiers before either.
//!
//! enigo's `text()` maps characters missing from the current layout to spare keycodes and
//! back, so any Unicode text types on any layout.

use super::window::X11;
use enigo::{Direction, Enigo, Key, Keyboard, Settings};
use std::time::{Duration, Instant};

/// How long to sleep between two looks at the keyboard while waiting for modifiers.
const POLL: Duration = Duration::from_millis(10);

/// The enigo connection, made once and reused (connecting costs a few ms and a keymap read).
pub(crate) struct Keys {
    enigo: Enigo,
}

/// What [`Keys::release_modifiers`] found and did.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ModifierRelease {
    pub waited_ms: f64,
    /// Keycodes still down after the wait, released by us.
    pub forced: Vec<u8>,
}

impl Keys {
    pub(crate) fn connect() -> Result<Keys, String> {
        let enigo = Enigo::new(&Settings::default()).map_err(|e| {
            format!(
                "cannot simulate key presses (enigo: {e}); is an X display (DISPLAY) available?"
            )
        })?;
        Ok(Keys { enigo })
    }

    /// Waits up to `timeout` for every modifier to be up (the user lets go of the hotkey);
    /// whatever is still down then gets a key-up, so typed letters never become shortcuts.
    pub(crate) fn release_modifiers(
        &mut self,
        x11: &X11,
        timeout: Duration,
    ) -> Result<ModifierRelease, String> {
        let start = Instant::now();
        let mut held = x11.held_modifiers()?;
        while !held.is_empty() && start.elapsed() < timeout {
            std::thread::sleep(POLL);
            held = x11.held_modifiers()?;
        }
        let waited_ms = start.elapsed().as_secs_f64() * 1e3;
        for &keycode in &held {
            self.enigo
                .raw(u16::from(keycode), Direction::Release)
                .map_err(|e| format!("cannot release modifier keycode {keycode}: {e}"))?;
        }
        if !held.is_empty() {
            let still = x11.held_modifiers()?;
            if !still.is_empty() {
                return Err(format!(
                    "modifier keys (keycodes {still:?}) stay pressed; release the hotkey and try again"
                ));
            }
        }
        Ok(ModifierRelease {
            waited_ms,
            forced: held,
        })
    }

    /// Types `text`; newlines become Return, tabs Tab.
    pub(crate) fn type_text(&mut self, text: &str) -> Result<(), String> {
        let fail = |e: enigo::InputError| format!("typing failed: {e}");
        let mut chunk = String::new();
        for c in text.chars() {
            let key = match c {
                '\n' => Key::Return,
                '\t' => Key::Tab,
                '\r' => continue,
                c => {
                    chunk.push(c);
                    continue;
                }
            };
            if !chunk.is_empty() {
                self.enigo.text(&chunk).map_err(fail)?;
                chunk.clear();
            }
            self.enigo.key(key, Direction::Click).map_err(fail)?;
        }
        if !chunk.is_empty() {
            self.enigo.text(&chunk).map_err(fail)?;
        }
        Ok(())
    }

    /// Ctrl+V, or Ctrl+Shift+V for terminals. The modifiers are released even when pressing
    /// V fails, so a failed paste never leaves Ctrl stuck.
    pub(crate) fn paste_chord(&mut self, with_shift: bool) -> Result<(), String> {
        let mut mods = vec![Key::Control];
        if with_shift {
            mods.push(Key::Shift);
        }
        let mut result = Ok(());
        let mut pressed = Vec::new();
        for &m in &mods {
            match self.enigo.key(m, Direction::Press) {
                Ok(()) => pressed.push(m),
                Err(e) => {
                    result = Err(format!("cannot press {m:?}: {e}"));
                    break;
                }
            }
        }
        if result.is_ok() {
            result = self
                .enigo
                .key(Key::Unicode('v'), Direction::Click)
                .map_err(|e| format!("cannot press V: {e}"));
        }
        for &m in pressed.iter().rev() {
            if let Err(e) = self.enigo.key(m, Direction::Release) {
                result = result.and(Err(format!("cannot release {m:?}: {e}")));
            }
        }
        result
    }
}
