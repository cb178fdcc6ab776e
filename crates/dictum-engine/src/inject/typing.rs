//! Simulated key presses with enigo (its default x11rb backend, XTest underneath): the text
//! itself, the paste chord, and releasing the hotkey's modifiers before either.
//!
//! enigo's `text()` maps characters missing from the current layout to spare keycodes and
//! back, so any Unicode text types on any layout.
//!
//! enigo 0.6 (x11rb backend) asks the X server to hold a key event 12 ms when a remapped
//! keysym (one not on the layout's base level: a capital, a shifted symbol, `€`) comes again
//! after the last remapped-key repeat, and then keeps that delay on *every* following key
//! until a different remapped key comes (enigo-rs/enigo#489): "The … The …" types at ~60
//! instead of ~380 chars/s. [`plan_pauses`] predicts those repeats and `type_text` sleeps
//! 11 ms before each instead (the pause enigo wants there), so the delay enigo computes is
//! its usual 1 ms (12 minus the elapsed 11) and that is what lingers: no slowdown.

use super::window::{Keymap, X11};
use enigo::{Direction, Enigo, Key, Keyboard, Settings};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// How long to sleep between two looks at the keyboard while waiting for modifiers.
const POLL: Duration = Duration::from_millis(10);

/// enigo's delay before a repeated remapped key (its `DEFAULT_DELAY`, 12 ms) minus the 1 ms
/// it puts on every other key event. Measured: sleeping 13 ms (delay 0 thereafter) types
/// 2–6× faster, but 1 ms is what enigo uses everywhere else, so that is what is kept.
const REPEAT_PAUSE: Duration = Duration::from_millis(11);

/// The enigo connection, made once and reused (connecting costs a few ms and a keymap read).
pub(crate) struct Keys {
    enigo: Enigo,
    /// Keysyms enigo finds on the layout (read when enigo read it).
    on_layout: HashSet<u32>,
    /// Remapped keysyms typed since enigo last saw a repeat (its `last_keys`).
    recent: Vec<u32>,
    /// The keyboard map as it was just before enigo read it (see [`Keys::stale`]).
    keymap: Keymap,
}

/// Byte offsets in `text` before which enigo would see a repeated remapped keysym; updates
/// `recent` (enigo's memory of them) as enigo would.
pub(crate) fn plan_pauses(
    text: &str,
    on_layout: &HashSet<u32>,
    recent: &mut Vec<u32>,
) -> Vec<usize> {
    let mut pauses = Vec::new();
    for (at, c) in text.char_indices() {
        // Return and Tab are typed as layout keys; '\r' is dropped.
        if matches!(c, '\n' | '\t' | '\r') {
            continue;
        }
        let Some(sym) = keysym_of(c) else { continue };
        if on_layout.contains(&sym) {
            continue;
        }
        if recent.contains(&sym) {
            pauses.push(at);
            recent.clear();
        }
        recent.push(sym);
    }
    pauses
}

#[cfg(all(unix, not(target_os = "macos")))]
fn keysym_of(c: char) -> Option<u32> {
    Some(xkeysym::Keysym::from_char(c).raw())
}

/// Other platforms have no such delay logic: nothing to plan.
#[cfg(not(all(unix, not(target_os = "macos"))))]
fn keysym_of(_c: char) -> Option<u32> {
    None
}

/// Bytes typed at most between two looks at the cancel key inside one long word.
pub(crate) const PIECE_CHARS: usize = 64;

/// How [`Keys::type_text`] went.
#[derive(Debug, Default)]
pub(crate) struct Typed {
    /// Time spent waiting for keys the user held meanwhile to come up.
    pub waited_ms: f64,
    /// Stopped by the cancel key: the byte offset in the text where typing ended.
    pub stopped_at: Option<usize>,
}

/// What [`Keys::release_modifiers`] found and did.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ModifierRelease {
    pub waited_ms: f64,
    /// Keycodes still down after the wait, released by us.
    pub forced: Vec<u8>,
}

impl Keys {
    pub(crate) fn connect(x11: &X11) -> Result<Keys, String> {
        // XWayland has no keyboard map until a keyboard with modifiers was active in one of
        // its windows (a virtual keyboard's map may have none): XTest cannot type there, and
        // the caller takes the compositor's path instead.
        if !x11.has_modifier_map()? {
            return Err(
                "XWayland has no usable keyboard map (no keyboard with modifiers \
                        was active in its windows yet)"
                    .into(),
            );
        }
        // Read before enigo reads it: a change in between makes `stale` true, never false.
        let keymap = x11.keymap()?;
        // enigo panics on some replies it does not expect: a failure, not a dead thread.
        let enigo = std::panic::catch_unwind(|| Enigo::new(&Settings::default()))
            .map_err(|_| {
                "cannot simulate key presses: enigo failed on this X server's keyboard map"
                    .to_string()
            })?
            .map_err(|e| {
                format!(
                    "cannot simulate key presses (enigo: {e}); is an X display (DISPLAY) available?"
                )
            })?;
        Ok(Keys {
            enigo,
            on_layout: keymap.base_level_keysyms(),
            recent: Vec::new(),
            keymap,
        })
    }

    /// Whether a key enigo took from the keyboard map is bound differently now. enigo reads
    /// the map once and never again: a character the map then had on a key is typed by
    /// pressing that key, so when another client has changed it since (the injector this
    /// one replaced at a config reload unbinding the spare keys it had bound "W" and "T"
    /// to, a layout switch), it types nothing or something else. Then this `Keys` must be
    /// connected again. One round trip.
    pub(crate) fn stale(&self, x11: &X11) -> Result<bool, String> {
        Ok(!self.keymap.layout_kept(&x11.keymap()?))
    }

    /// Waits up to `timeout` for every key to be up (the user lets go of the hotkey: its
    /// modifiers, and its own key, whose passive grab sends typed keys to the grabbing client
    /// until it comes up — a toggle ends on a key press, and the text can be ready before the
    /// key is released); modifiers still down then get a key-up, so typed letters never
    /// become shortcuts.
    pub(crate) fn release_modifiers(
        &mut self,
        x11: &X11,
        timeout: Duration,
    ) -> Result<ModifierRelease, String> {
        let start = Instant::now();
        while !x11.held_keys()?.is_empty() && start.elapsed() < timeout {
            std::thread::sleep(POLL);
        }
        let held = x11.held_modifiers()?;
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

    /// Turns Caps Lock off when it is on (simulated letters would come out in the wrong
    /// case); returns whether it did, so [`Keys::restore_caps_lock`] can turn it back on.
    pub(crate) fn suspend_caps_lock(&mut self, x11: &X11) -> Result<bool, String> {
        if !x11.caps_lock_on()? {
            return Ok(false);
        }
        self.enigo
            .key(Key::CapsLock, Direction::Click)
            .map_err(|e| format!("cannot turn Caps Lock off for typing: {e}"))?;
        if x11.caps_lock_on()? {
            return Err("Caps Lock stays on; turn it off and dictate again".into());
        }
        Ok(true)
    }

    pub(crate) fn restore_caps_lock(&mut self) -> Result<(), String> {
        self.enigo
            .key(Key::CapsLock, Direction::Click)
            .map_err(|e| format!("cannot turn Caps Lock back on: {e}"))
    }

    /// Types `text`; newlines become Return, tabs Tab. Before each word it looks at the
    /// keyboard: when the user has pressed keys meanwhile (the hotkey again, for the next
    /// dictation, while a long text is still being typed), it stops and waits for them to
    /// come up (`release_modifiers`, up to `hold_timeout`), so no typed letter becomes a
    /// shortcut or goes to the hotkey's grab. After each word (and every [`PIECE_CHARS`]
    /// characters of a long one) it asks `stop` (the cancel key): yes ends the typing there.
    pub(crate) fn type_text(
        &mut self,
        text: &str,
        x11: &X11,
        hold_timeout: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Typed, String> {
        let pauses = plan_pauses(text, &self.on_layout, &mut self.recent);
        let mut pauses = pauses.into_iter().peekable();
        let fail = |e: enigo::InputError| {
            format!(
                "typing failed: {e} (simulated key presses need the X server's XTEST extension)"
            )
        };
        let mut out = Typed::default();
        let mut chunk = String::new();
        for (at, c) in text.char_indices() {
            if pauses.next_if_eq(&at).is_some() {
                if !chunk.is_empty() {
                    self.enigo.text(&chunk).map_err(fail)?;
                    chunk.clear();
                }
                std::thread::sleep(REPEAT_PAUSE);
            }
            let key = match c {
                '\n' => Key::Return,
                '\t' => Key::Tab,
                '\r' => continue,
                ' ' => {
                    chunk.push(c);
                    self.enigo.text(&chunk).map_err(fail)?;
                    chunk.clear();
                    if !x11.held_keys()?.is_empty() {
                        out.waited_ms += self.release_modifiers(x11, hold_timeout)?.waited_ms;
                    }
                    if stop() {
                        out.stopped_at = Some(at + c.len_utf8());
                        return Ok(out);
                    }
                    continue;
                }
                c => {
                    chunk.push(c);
                    // A very long "word" (a runaway answer) is typed in pieces, each a point
                    // where the cancel key is heard.
                    if chunk.len() >= PIECE_CHARS {
                        self.enigo.text(&chunk).map_err(fail)?;
                        chunk.clear();
                        if stop() {
                            out.stopped_at = Some(at + c.len_utf8());
                            return Ok(out);
                        }
                    }
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
        Ok(out)
    }

    /// Presses chords (voice commands). Modifiers are released even when the key fails.
    pub(crate) fn press_chords(&mut self, chords: &[crate::commands::Chord]) -> Result<(), String> {
        use crate::commands::Key as K;
        for chord in chords {
            let key = match chord.key {
                K::Return => Key::Return,
                K::Tab => Key::Tab,
                K::BackSpace => Key::Backspace,
                K::Escape => Key::Escape,
                K::Char(c) => Key::Unicode(c),
            };
            let mods: Vec<Key> = [
                (chord.ctrl, Key::Control),
                (chord.alt, Key::Alt),
                (chord.shift, Key::Shift),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, k)| *k)
            .collect();
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
                    .key(key, Direction::Click)
                    .map_err(|e| format!("cannot press {chord}: {e}"));
            }
            for &m in pressed.iter().rev() {
                if let Err(e) = self.enigo.key(m, Direction::Release) {
                    result = result.and(Err(format!("cannot release {m:?}: {e}")));
                }
            }
            result?;
        }
        Ok(())
    }

    /// Ctrl+V, or Ctrl+Shift+V for terminals. The modifiers are released even when pressing
    /// V fails, so a failed paste never leaves Ctrl stuck.
    pub(crate) fn paste_chord(&mut self, with_shift: bool) -> Result<(), String> {
        use crate::commands::{Chord, Key as K};
        self.press_chords(&[Chord {
            shift: with_shift,
            ..Chord::ctrl(K::Char('v'))
        }])
    }
}

#[cfg(all(test, unix, not(target_os = "macos")))]
mod tests {
    use super::*;

    fn layout(chars: &str) -> HashSet<u32> {
        chars.chars().filter_map(keysym_of).collect()
    }

    #[test]
    fn pauses_only_before_a_repeated_remapped_key() {
        let on_layout = layout("abcdefghijklmnopqrstuvwxyz ,.");
        let mut recent = Vec::new();
        let text = "The fox. The dog. Then";
        // 'T' (not on the base level) comes back at 9: pause; memory restarts with it, so
        // the next 'T' at 18 is a repeat again.
        assert_eq!(plan_pauses(text, &on_layout, &mut recent), vec![9, 18]);
        // Memory carries over to the next dictation, as enigo's does.
        assert_eq!(plan_pauses("Tea", &on_layout, &mut recent), vec![0]);
        // Different remapped keys in a row: no pause.
        let mut recent = Vec::new();
        assert_eq!(
            plan_pauses("A B C €", &on_layout, &mut recent),
            Vec::<usize>::new()
        );
        // Byte offsets, after multi-byte characters.
        let mut recent = Vec::new();
        assert_eq!(plan_pauses("€é€", &on_layout, &mut recent), vec![5]);
        // Lowercase text never pauses.
        let mut recent = Vec::new();
        assert!(plan_pauses("the the the", &on_layout, &mut recent).is_empty());
    }
}
