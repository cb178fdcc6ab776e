//! Sees whether someone typed on the keyboard since Dictum last typed (X11 sessions), so that
//! "scratch that" never erases what the user typed after a dictation.
//!
//! A thread with its own X connection listens to XInput2 raw key presses on the root window
//! (every keyboard, whatever window has the focus). A press counts as typing when its key
//! types something (a character, BackSpace, Return, Tab, Delete, keypad) and no Ctrl, Alt or
//! Super is held (shortcuts, the dictation hotkey included, type nothing). Dictum's own keys
//! arrive the same way (XTEST), so the injector declares when it types and presses in that
//! window (plus a margin for events still on their way) are not counted.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Dictum's own key events may reach the watch this long after the injector returned.
const OWN_MARGIN: Duration = Duration::from_millis(300);
/// Presses and own stretches remembered (only the most recent matter).
const KEEP: usize = 64;

#[derive(Default)]
struct Seen {
    /// When typing presses arrived.
    presses: VecDeque<Instant>,
    /// When Dictum typed (from, to).
    own: VecDeque<(Instant, Instant)>,
    /// The watch runs (false: it could not start or its connection broke).
    alive: bool,
}

pub(crate) struct KeyWatch {
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
}

impl Drop for KeyWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl KeyWatch {
    /// Starts watching the X display in `$DISPLAY`; Err when it has no XInput 2.2.
    pub(crate) fn start() -> Result<KeyWatch, String> {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (s, st) = (seen.clone(), stop.clone());
        std::thread::Builder::new()
            .name("dictum-keywatch".into())
            .spawn(move || x11::run(s, st, ready_tx))
            .map_err(|e| format!("cannot start the keyboard watch: {e}"))?;
        ready_rx
            .recv_timeout(Duration::from_secs(2))
            .map_err(|_| "the keyboard watch did not start".to_string())??;
        Ok(KeyWatch { seen, stop })
    }

    /// Dictum typed from `from` until now.
    pub(crate) fn own(&self, from: Instant) {
        let mut s = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        s.own.push_back((from, Instant::now()));
        while s.own.len() > KEEP {
            s.own.pop_front();
        }
    }

    /// Whether a typing key was pressed by someone else since `since`; None when the watch is
    /// not running.
    pub(crate) fn typed_since(&self, since: Instant) -> Option<bool> {
        let s = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if !s.alive {
            return None;
        }
        let ours = |t: Instant| {
            s.own
                .iter()
                .any(|&(from, to)| t >= from && t <= to + OWN_MARGIN)
        };
        Some(
            s.presses
                .iter()
                .any(|&t| t > since + OWN_MARGIN && !ours(t)),
        )
    }
}

/// What a key is, from its unshifted keysym.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Typing,
    /// Ctrl, Alt, Super, Meta, Hyper: held, what is pressed is a shortcut.
    ShortcutModifier,
    Other,
}

fn kind(keysym: u32) -> Kind {
    match keysym {
        0xffe3 | 0xffe4 | 0xffe7..=0xffee => Kind::ShortcutModifier,
        0x20..=0x7e | 0xa0..=0xff => Kind::Typing,
        // BackSpace, Tab, Return, Delete, keypad keys.
        0xff08 | 0xff09 | 0xff0d | 0xffff | 0xff80..=0xffbd => Kind::Typing,
        // Legacy keysym sets (Latin-2…, Cyrillic, Greek…) and Unicode keysyms.
        0x100..=0x0fff | 0x0100_0000..=0x0110_ffff => Kind::Typing,
        _ => Kind::Other,
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
mod x11 {
    use super::{kind, Kind, Seen, KEEP};
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc, Mutex};
    use std::time::{Duration, Instant};
    use x11rb::connection::Connection;
    use x11rb::protocol::xinput::{self, ConnectionExt as _};
    use x11rb::protocol::xproto::ConnectionExt as _;
    use x11rb::protocol::Event;

    fn setup() -> Result<(x11rb::rust_connection::RustConnection, Vec<Kind>, u8), String> {
        let (conn, screen) =
            x11rb::connect(None).map_err(|e| format!("cannot connect to the X display: {e}"))?;
        let err = |e: &dyn std::fmt::Display| format!("XInput 2: {e}");
        let version = conn
            .xinput_xi_query_version(2, 2)
            .map_err(|e| err(&e))?
            .reply()
            .map_err(|e| err(&e))?;
        if (version.major_version, version.minor_version) < (2, 2) {
            return Err("the X server has no XInput 2.2".into());
        }
        let setup = conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let root = setup.roots[screen].root;
        let map = conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(|e| err(&e))?
            .reply()
            .map_err(|e| err(&e))?;
        let per = map.keysyms_per_keycode.max(1) as usize;
        let kinds = map
            .keysyms
            .chunks(per)
            .map(|syms| kind(syms.first().copied().unwrap_or(0)))
            .collect();
        conn.xinput_xi_select_events(
            root,
            &[xinput::EventMask {
                deviceid: xinput::Device::ALL_MASTER.into(),
                mask: vec![
                    xinput::XIEventMask::RAW_KEY_PRESS | xinput::XIEventMask::RAW_KEY_RELEASE,
                ],
            }],
        )
        .map_err(|e| err(&e))?
        .check()
        .map_err(|e| err(&e))?;
        Ok((conn, kinds, min))
    }

    pub(super) fn run(
        seen: Arc<Mutex<Seen>>,
        stop: Arc<AtomicBool>,
        ready: mpsc::Sender<Result<(), String>>,
    ) {
        let (conn, kinds, min) = match setup() {
            Ok(s) => s,
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        seen.lock().unwrap_or_else(|e| e.into_inner()).alive = true;
        let _ = ready.send(Ok(()));
        let kind_of = |code: u32| {
            code.checked_sub(min as u32)
                .and_then(|i| kinds.get(i as usize).copied())
                .unwrap_or(Kind::Other)
        };
        let mut held: HashSet<u32> = HashSet::new();
        while !stop.load(Ordering::SeqCst) {
            let event = match conn.poll_for_event() {
                Ok(Some(e)) => e,
                Ok(None) => {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                Err(e) => {
                    tracing::debug!("keyboard watch ended: {e}");
                    break;
                }
            };
            match event {
                Event::XinputRawKeyPress(e) => match kind_of(e.detail) {
                    Kind::ShortcutModifier => {
                        held.insert(e.detail);
                    }
                    Kind::Typing if held.is_empty() => {
                        let mut s = seen.lock().unwrap_or_else(|e| e.into_inner());
                        s.presses.push_back(Instant::now());
                        while s.presses.len() > KEEP {
                            s.presses.pop_front();
                        }
                    }
                    _ => {}
                },
                Event::XinputRawKeyRelease(e) => {
                    held.remove(&e.detail);
                }
                _ => {}
            }
        }
        seen.lock().unwrap_or_else(|e| e.into_inner()).alive = false;
    }
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
mod x11 {
    use super::Seen;
    use std::sync::atomic::AtomicBool;
    use std::sync::{mpsc, Arc, Mutex};

    pub(super) fn run(
        _: Arc<Mutex<Seen>>,
        _: Arc<AtomicBool>,
        ready: mpsc::Sender<Result<(), String>>,
    ) {
        let _ = ready.send(Err("no X11 on this system".into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_type_and_keys_that_do_not() {
        for sym in [
            0x61,
            0x20,
            0xe9,
            0xff08,
            0xff0d,
            0xffff,
            0xffb5,
            0x6c1,
            0x0100_20ac,
        ] {
            assert!(kind(sym) == Kind::Typing, "{sym:#x}");
        }
        for sym in [0xffe3, 0xffe9, 0xffeb] {
            assert!(kind(sym) == Kind::ShortcutModifier, "{sym:#x}");
        }
        // F9, Escape, Shift, Caps Lock, arrows, AltGr: type nothing by themselves.
        for sym in [0xffc6, 0xff1b, 0xffe1, 0xffe5, 0xff51, 0xfe03] {
            assert!(kind(sym) == Kind::Other, "{sym:#x}");
        }
    }

    #[test]
    fn own_typing_is_not_counted() {
        let w = KeyWatch {
            seen: Arc::new(Mutex::new(Seen {
                alive: true,
                ..Seen::default()
            })),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let since = Instant::now();
        std::thread::sleep(OWN_MARGIN + Duration::from_millis(20));
        let from = Instant::now();
        w.seen.lock().unwrap().presses.push_back(Instant::now());
        w.own(from);
        assert_eq!(w.typed_since(since), Some(false));
        std::thread::sleep(OWN_MARGIN + Duration::from_millis(20));
        w.seen.lock().unwrap().presses.push_back(Instant::now());
        assert_eq!(w.typed_since(since), Some(true));
        w.seen.lock().unwrap().alive = false;
        assert_eq!(w.typed_since(since), None);
    }
}
