//! Typing and pasting on Wayland: the virtual keyboard, the RemoteDesktop portal, `wtype`,
//! the uinput keyboard or `ydotool` (a long text in pieces, the cancel key asked between
//! them); text a path cannot type is pasted through the session's clipboard, what it held
//! kept (`clipboard.rs`). Nothing on Wayland tells which window fetched a paste: each
//! paste's report says it is unconfirmed ([`PASTE_UNCONFIRMED`]).

use super::clipboard::not_restored;
use super::report::{ms_since, Delivery, InjectReport, PASTE_UNCONFIRMED};
use super::session::{Route, TypePath};
use super::{wayland, InjectMethod, Injector};
use std::time::{Duration, Instant};

pub(super) enum Keystrokes<'a> {
    Text(&'a str),
    Paste { terminal: bool },
}

/// Wayland typing with a stop check: bytes per piece (each piece a call of the path's tool).
const WAYLAND_PIECE: usize = 96;

impl Injector {
    pub(super) fn inject_wayland(
        &mut self,
        text: &str,
        route: Route,
        path: TypePath,
        terminal: bool,
        start: Instant,
        report: &mut InjectReport,
    ) -> Result<Delivery, String> {
        // The RemoteDesktop portal maps keysyms onto the user's layout and drops characters
        // the layout lacks (seen on KDE 5.27): such text is pasted, never typed with gaps.
        // The uinput keyboard types only what the user's layout has keys for: other text is
        // pasted too (or, with no clipboard, refused with the characters named).
        let untypable = match path {
            TypePath::Portal => !text.is_ascii(),
            TypePath::Uinput => match self.wl.uinput() {
                Ok(k) => k.can_type(text).is_err(),
                Err(e) => {
                    self.reprobe();
                    return Err(e);
                }
            },
            _ => false,
        };
        let paste =
            self.config.method == InjectMethod::Paste || (untypable && route.clipboard.is_some());
        let result = match paste {
            false => self.wayland_type(path, text, report).map(|()| {
                report.inject_ms = ms_since(start);
                Delivery::Typed(path)
            }),
            true => {
                let clip = route.clipboard.ok_or("no Wayland clipboard")?;
                let previous = self.save_wayland(clip);
                self.set_clipboard(clip, text)?;
                self.wayland_keys(path, Keystrokes::Paste { terminal })
                    .map(|()| {
                        report.inject_ms = ms_since(start);
                        // Nothing tells who fetched the clipboard: the row says so.
                        report.add_warning(PASTE_UNCONFIRMED.into());
                        if previous.to_restore(text) {
                            std::thread::sleep(Duration::from_millis(
                                self.config.paste_restore_delay_ms,
                            ));
                        }
                        match self.restore_wayland(clip, previous, text) {
                            Ok(note) => note.into_iter().for_each(|n| report.add_warning(n)),
                            Err(why) => report.add_warning(not_restored(why)),
                        }
                        Delivery::Pasted(path)
                    })
            }
        };
        if result.is_err() {
            self.reprobe();
        }
        result
    }

    /// Types `text` on a Wayland path; with a stop check, a long text goes in pieces of a
    /// few words, the cancel key asked between them.
    pub(super) fn wayland_type(
        &mut self,
        path: TypePath,
        text: &str,
        report: &mut InjectReport,
    ) -> Result<(), String> {
        let Some(stop) = self.stop.clone().filter(|_| text.len() > WAYLAND_PIECE) else {
            return self.wayland_keys(path, Keystrokes::Text(text));
        };
        for (at, piece) in pieces(text, WAYLAND_PIECE) {
            if stop() {
                report.stopped_at = Some(at);
                return Ok(());
            }
            self.wayland_keys(path, Keystrokes::Text(piece))?;
        }
        Ok(())
    }

    pub(super) fn wayland_keys(
        &mut self,
        path: TypePath,
        keys: Keystrokes<'_>,
    ) -> Result<(), String> {
        match (path, keys) {
            (TypePath::VirtualKeyboard, Keystrokes::Text(t)) => self.wl.keyboard()?.type_text(t),
            (TypePath::VirtualKeyboard, Keystrokes::Paste { terminal }) => {
                self.wl.keyboard()?.paste_chord(terminal)
            }
            (TypePath::Portal, Keystrokes::Text(t)) => self.wl.portal()?.type_text(t),
            (TypePath::Portal, Keystrokes::Paste { terminal }) => {
                self.wl.portal()?.paste_chord(terminal)
            }
            (TypePath::Wtype, Keystrokes::Text(t)) => wayland::type_text(wayland::Typer::Wtype, t),
            (TypePath::Wtype, Keystrokes::Paste { terminal }) => {
                wayland::paste_chord(wayland::Typer::Wtype, terminal)
            }
            (TypePath::Uinput, Keystrokes::Text(t)) => self.wl.uinput()?.type_text(t),
            (TypePath::Uinput, Keystrokes::Paste { terminal }) => {
                self.wl.uinput()?.paste_chord(terminal)
            }
            (TypePath::Ydotool, Keystrokes::Text(t)) => {
                wayland::type_text(wayland::Typer::Ydotool, t)
            }
            (TypePath::Ydotool, Keystrokes::Paste { terminal }) => {
                wayland::paste_chord(wayland::Typer::Ydotool, terminal)
            }
            (TypePath::X11, _) => Err("X11 is not a Wayland path".into()),
        }
    }
}

/// `text` cut after whitespace into pieces of about `max` bytes (a longer word is cut on a
/// character boundary), each with its byte offset.
fn pieces(text: &str, max: usize) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let rest = &text[start..];
        let mut end = rest.len();
        if rest.len() > max {
            let mut cut = max;
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            end = rest[..cut]
                .rfind(char::is_whitespace)
                .map(|i| i + rest[i..].chars().next().map_or(1, char::len_utf8))
                .filter(|&e| e > 0)
                .unwrap_or(cut.max(rest.chars().next().map_or(1, char::len_utf8)));
        }
        out.push((start, &rest[..end]));
        start += end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_into_pieces_after_whitespace_and_within_long_words() {
        let text = "one two three four five six seven eight nine ten";
        let p = pieces(text, 16);
        assert!(p.iter().all(|(_, s)| s.len() <= 16), "{p:?}");
        assert_eq!(p.iter().map(|(_, s)| *s).collect::<String>(), text);
        assert_eq!(p[1].0, p[0].1.len(), "offsets are where each piece starts");
        assert!(p[0].1.ends_with(' '), "cut after a space: {p:?}");
        // One long "word" (a runaway answer), multi-byte: cut on character boundaries.
        let word = "é".repeat(100);
        let p = pieces(&word, 15);
        assert!(p.iter().all(|(_, s)| s.len() <= 15 && !s.is_empty()));
        assert_eq!(p.iter().map(|(_, s)| *s).collect::<String>(), word);
        assert_eq!(pieces("", 10), vec![]);
    }
}
