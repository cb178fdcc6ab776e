//! Keys other than dictated text: a voice command's chords, pressed by the path text would
//! take in the focused window, and the X11 keyboard watch that tells "scratch that" whether
//! the user typed since.

use super::deliver_wayland::Keystrokes;
use super::session::TypePath;
use super::{keywatch, wayland, Injector, SessionKind};
use std::time::{Duration, Instant};

impl Injector {
    /// Starts the keyboard watch once, in X11 sessions.
    pub(super) fn watch_keys(&mut self) {
        if self.keywatch.is_none() && self.session.kind == SessionKind::X11 {
            match keywatch::KeyWatch::start() {
                Ok(w) => self.keywatch = Some(w),
                Err(e) => tracing::info!("scratch that cannot see the keyboard: {e}"),
            }
        }
    }

    /// Whether the user typed on the keyboard since `since` (not counting Dictum's own keys);
    /// None where that cannot be seen (Wayland).
    pub fn typed_elsewhere_since(&mut self, since: Instant) -> Option<bool> {
        self.keywatch.as_ref().and_then(|w| w.typed_since(since))
    }

    /// Presses `chords` (voice commands) in the focused window, by the path text would take
    /// there. Returns the path's name.
    pub fn press(&mut self, chords: &[crate::commands::Chord]) -> Result<&'static str, String> {
        let start = Instant::now();
        let pressed = self.press_keys(chords);
        if let Some(w) = &self.keywatch {
            w.own(start);
        }
        pressed
    }

    pub(super) fn press_keys(
        &mut self,
        chords: &[crate::commands::Chord],
    ) -> Result<&'static str, String> {
        let (_, focus) = self.focused();
        let route = self.route(focus)?;
        match route.typing {
            TypePath::X11 => {
                let timeout = Duration::from_millis(self.config.modifier_release_timeout_ms);
                self.x
                    .fresh_keys_and_x11()
                    .and_then(|(keys, x11)| keys.release_modifiers(x11, timeout))
                    .and_then(|_| self.x.keys_and_x11())
                    .and_then(|(keys, _)| keys.press_chords(chords))
                    .inspect_err(|_| self.reset_x11())?;
            }
            path => {
                for chord in chords {
                    let pressed = match path {
                        TypePath::VirtualKeyboard => self.wl.keyboard()?.press(chord),
                        TypePath::Wtype => wayland::press(wayland::Typer::Wtype, chord),
                        TypePath::Ydotool => wayland::press(wayland::Typer::Ydotool, chord),
                        // Return and Tab are typed like text on every path.
                        _ if chord.is_plain() && !chord.shift => match chord.key {
                            crate::commands::Key::Return => {
                                self.wayland_keys(path, Keystrokes::Text("\n"))
                            }
                            crate::commands::Key::Tab => {
                                self.wayland_keys(path, Keystrokes::Text("\t"))
                            }
                            _ => Err(format!(
                                "{} cannot press {chord}; the virtual-keyboard or wtype backend can",
                                path.as_str()
                            )),
                        },
                        _ => Err(format!(
                            "{} cannot press {chord}; the virtual-keyboard or wtype backend can",
                            path.as_str()
                        )),
                    };
                    if let Err(e) = pressed {
                        self.reprobe();
                        return Err(e);
                    }
                }
            }
        }
        Ok(route.typing.as_str())
    }
}
