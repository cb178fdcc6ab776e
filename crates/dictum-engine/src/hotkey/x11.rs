//! The global hotkey on X11, without polling: a thread blocks on the X connection and reports
//! each press and release of a grabbed key the moment the server sends it.
//!
//! `global-hotkey`'s X11 thread looks at its connection every 50 ms (a sleep in its loop), so
//! a key-up reached the dictation 0–50 ms late, and that delay was invisible to the daemon's
//! own `release_to_text_ms` (it starts when the event is handled). Each (un)registration also
//! waited for that loop: arming the cancel key at a key press blocked the controller up to
//! 100 ms. Here grabs are made on the caller's thread over the shared connection (x11rb's
//! connection may be used from several threads) and checked at once, so a key another
//! program holds fails right away with a clear message.
//!
//! Same behaviour as before otherwise: XGrabKey on the root window for the key with its
//! modifiers, also with NumLock and CapsLock on; XKB detectable auto-repeat, so holding the
//! key gives one press and one release; events carry `HotKey::id()`.
//!
//! A mouse button as the hotkey ("mouse:9"): XGrabButton on the root window, without
//! modifiers and with the same NumLock/CapsLock variants; its ButtonPress/ButtonRelease give
//! the same press and release, with `Binding::id()`. While the button is held the server
//! hands the pointer to us (a passive button grab), so clicks made meanwhile are not seen by
//! applications; the buttons that click or scroll (1-7) are refused by the parser.

use super::GrabError;
use global_hotkey::hotkey::{Code, HotKey, Modifiers};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::xkb::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    self, ButtonIndex, ClientMessageEvent, ConnectionExt as _, CreateWindowAux, EventMask,
    GrabMode, KeyButMask, ModMask, WindowClass,
};
use x11rb::protocol::{ErrorKind, Event};
use x11rb::rust_connection::RustConnection;
use xkeysym::key;

struct Grab {
    mods: ModMask,
    id: u32,
    pressed: bool,
}

type Grabs = Arc<Mutex<HashMap<u8, Vec<Grab>>>>;
/// Grabbed mouse buttons by button number (no modifiers, so one grab per button).
type Buttons = Arc<Mutex<HashMap<u8, Grab>>>;

pub struct Grabber {
    conn: Arc<RustConnection>,
    root: xproto::Window,
    /// Receives the message that ends the event thread.
    wake: xproto::Window,
    grabs: Grabs,
    buttons: Buttons,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// `mods` with each combination of the lock keys that must not stop the hotkey from
/// matching: none, NumLock, CapsLock, both.
fn with_locks(mods: ModMask) -> [ModMask; 4] {
    let (num, caps) = (u16::from(ModMask::M2), u16::from(ModMask::LOCK));
    let m = u16::from(mods);
    [m, m | num, m | caps, m | num | caps].map(ModMask::from)
}

fn x_err(what: &str, e: impl std::fmt::Display) -> String {
    format!("X11 {what}: {e}")
}

impl Grabber {
    /// Connects to `$DISPLAY` and starts the event thread; `on_event(id, pressed)` is called
    /// from it.
    pub fn start(on_event: impl Fn(u32, bool) + Send + 'static) -> Result<Grabber, String> {
        let (conn, screen) = x11rb::connect(None).map_err(|e| x_err("connection", e))?;
        let conn = Arc::new(conn);
        let root = conn.setup().roots[screen].root;
        // Without detectable auto-repeat a held key sends release+press pairs all along.
        conn.xkb_use_extension(1, 0)
            .map_err(|e| x_err("XKB", e))?
            .reply()
            .map_err(|e| x_err("XKB", e))?;
        conn.xkb_per_client_flags(
            xkb::ID::USE_CORE_KBD.into(),
            xkb::PerClientFlag::DETECTABLE_AUTO_REPEAT,
            xkb::PerClientFlag::DETECTABLE_AUTO_REPEAT,
            Default::default(),
            Default::default(),
            Default::default(),
        )
        .map_err(|e| x_err("XKB auto-repeat", e))?
        .reply()
        .map_err(|e| x_err("XKB auto-repeat", e))?;
        let wake = conn.generate_id().map_err(|e| x_err("window id", e))?;
        conn.create_window(
            0,
            wake,
            root,
            0,
            0,
            1,
            1,
            0,
            WindowClass::INPUT_ONLY,
            0,
            &CreateWindowAux::new(),
        )
        .map_err(|e| x_err("window", e))?
        .check()
        .map_err(|e| x_err("window", e))?;
        let grabs: Grabs = Arc::default();
        let buttons: Buttons = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (conn, grabs, buttons, stop) =
                (conn.clone(), grabs.clone(), buttons.clone(), stop.clone());
            std::thread::Builder::new()
                .name("dictum-hotkey".into())
                .spawn(move || events(&conn, &grabs, &buttons, &stop, on_event))
                .map_err(|e| format!("cannot start the hotkey thread: {e}"))?
        };
        Ok(Grabber {
            conn,
            root,
            wake,
            grabs,
            buttons,
            stop,
            thread: Some(thread),
        })
    }

    /// Grabs `hotkey` (with NumLock/CapsLock variants). Nothing stays grabbed on failure.
    pub fn register(&self, hotkey: HotKey) -> Result<(), GrabError> {
        let code = self.keycode(hotkey.key)?;
        let mods = mod_mask(hotkey.mods);
        let mut grabs = self.grabs.lock().unwrap_or_else(|e| e.into_inner());
        if grabs
            .get(&code)
            .is_some_and(|v| v.iter().any(|g| g.mods == mods))
        {
            return Err(GrabError::Other(format!("{hotkey} is registered twice")));
        }
        let mut done = Vec::new();
        for m in with_locks(mods) {
            let result = self
                .conn
                .grab_key(false, self.root, m, code, GrabMode::ASYNC, GrabMode::ASYNC)
                .map_err(ReplyError::from)
                .and_then(|c| c.check());
            match result {
                Ok(()) => done.push(m),
                Err(e) => {
                    for m in done {
                        let _ = self.conn.ungrab_key(code, self.root, m);
                    }
                    let _ = self.conn.flush();
                    return Err(match e {
                        ReplyError::X11Error(x) if x.error_kind == ErrorKind::Access => {
                            GrabError::Taken
                        }
                        other => GrabError::Other(x_err("grab", other)),
                    });
                }
            }
        }
        grabs.entry(code).or_default().push(Grab {
            mods,
            id: hotkey.id(),
            pressed: false,
        });
        Ok(())
    }

    /// Lets go of `hotkey`; a key that was not grabbed is ignored.
    pub fn unregister(&self, hotkey: HotKey) {
        let Ok(code) = self.keycode(hotkey.key) else {
            return;
        };
        let mods = mod_mask(hotkey.mods);
        let mut grabs = self.grabs.lock().unwrap_or_else(|e| e.into_inner());
        let Some(list) = grabs.get_mut(&code) else {
            return;
        };
        let before = list.len();
        list.retain(|g| g.mods != mods);
        if list.len() == before {
            return;
        }
        for m in with_locks(mods) {
            let _ = self.conn.ungrab_key(code, self.root, m);
        }
        let _ = self.conn.flush();
    }

    /// Grabs mouse `button` (with NumLock/CapsLock variants); its press and release are
    /// reported with `id`. Nothing stays grabbed on failure.
    pub fn register_button(&self, button: u8, id: u32) -> Result<(), GrabError> {
        let mut buttons = self.buttons.lock().unwrap_or_else(|e| e.into_inner());
        if buttons.contains_key(&button) {
            return Err(GrabError::Other(format!(
                "mouse:{button} is registered twice"
            )));
        }
        let mask = EventMask::BUTTON_PRESS | EventMask::BUTTON_RELEASE;
        let mut done = Vec::new();
        for m in with_locks(ModMask::from(0u16)) {
            let result = self
                .conn
                .grab_button(
                    false,
                    self.root,
                    mask,
                    GrabMode::ASYNC,
                    GrabMode::ASYNC,
                    x11rb::NONE,
                    x11rb::NONE,
                    ButtonIndex::from(button),
                    m,
                )
                .map_err(ReplyError::from)
                .and_then(|c| c.check());
            match result {
                Ok(()) => done.push(m),
                Err(e) => {
                    for m in done {
                        let _ = self
                            .conn
                            .ungrab_button(ButtonIndex::from(button), self.root, m);
                    }
                    let _ = self.conn.flush();
                    return Err(match e {
                        ReplyError::X11Error(x) if x.error_kind == ErrorKind::Access => {
                            GrabError::Taken
                        }
                        other => GrabError::Other(x_err("button grab", other)),
                    });
                }
            }
        }
        buttons.insert(
            button,
            Grab {
                mods: ModMask::from(0u16),
                id,
                pressed: false,
            },
        );
        Ok(())
    }

    /// Lets go of mouse `button`; one that was not grabbed is ignored.
    pub fn unregister_button(&self, button: u8) {
        let mut buttons = self.buttons.lock().unwrap_or_else(|e| e.into_inner());
        if buttons.remove(&button).is_none() {
            return;
        }
        ungrab_button(&self.conn, self.root, button);
    }

    /// The keycode that makes `key`'s keysym on the current keyboard map.
    fn keycode(&self, key: Code) -> Result<u8, GrabError> {
        let sym = keysym(key)
            .ok_or_else(|| GrabError::NoKey(format!("{key:?} cannot be grabbed on X11")))?;
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let map = self
            .conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(|e| GrabError::Other(x_err("keyboard map", e)))?
            .reply()
            .map_err(|e| GrabError::Other(x_err("keyboard map", e)))?;
        let per = usize::from(map.keysyms_per_keycode.max(1));
        map.keysyms
            .chunks(per)
            .position(|syms| syms.contains(&sym))
            .and_then(|i| u8::try_from(i).ok())
            .map(|i| min + i)
            .ok_or_else(|| GrabError::NoKey(format!("no key on this keyboard makes {key:?}")))
    }
}

impl Drop for Grabber {
    fn drop(&mut self) {
        let grabs = std::mem::take(&mut *self.grabs.lock().unwrap_or_else(|e| e.into_inner()));
        for (code, list) in grabs {
            for g in list {
                for m in with_locks(g.mods) {
                    let _ = self.conn.ungrab_key(code, self.root, m);
                }
            }
        }
        let buttons = std::mem::take(&mut *self.buttons.lock().unwrap_or_else(|e| e.into_inner()));
        for button in buttons.into_keys() {
            ungrab_button(&self.conn, self.root, button);
        }
        // Wake the event thread so that it sees `stop`.
        self.stop.store(true, Ordering::SeqCst);
        let msg = ClientMessageEvent::new(32, self.wake, xproto::AtomEnum::STRING, [0u32; 5]);
        let _ = self
            .conn
            .send_event(false, self.wake, EventMask::NO_EVENT, msg);
        let _ = self.conn.flush();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn ungrab_button(conn: &RustConnection, root: xproto::Window, button: u8) {
    for m in with_locks(ModMask::from(0u16)) {
        let _ = conn.ungrab_button(ButtonIndex::from(button), root, m);
    }
    let _ = conn.flush();
}

/// The event thread: blocks until the server sends something.
fn events(
    conn: &RustConnection,
    grabs: &Grabs,
    buttons: &Buttons,
    stop: &AtomicBool,
    on_event: impl Fn(u32, bool),
) {
    // Only these modifiers tell hotkeys apart (not the lock keys).
    let relevant = u16::from(KeyButMask::CONTROL)
        | u16::from(KeyButMask::SHIFT)
        | u16::from(KeyButMask::MOD1)
        | u16::from(KeyButMask::MOD4);
    while !stop.load(Ordering::SeqCst) {
        let event = match conn.wait_for_event() {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("the X11 hotkey connection ended: {e}; restart Dictum");
                return;
            }
        };
        // Collected under the lock, reported after it (the callback may re-register).
        let mut fire = Vec::new();
        match event {
            Event::KeyPress(e) => {
                let mods = u16::from(e.state) & relevant;
                let mut grabs = grabs.lock().unwrap_or_else(|e| e.into_inner());
                for g in grabs.get_mut(&e.detail).into_iter().flatten() {
                    if u16::from(g.mods) == mods && !g.pressed {
                        g.pressed = true;
                        fire.push((g.id, true));
                    }
                }
            }
            Event::KeyRelease(e) => {
                let mut grabs = grabs.lock().unwrap_or_else(|e| e.into_inner());
                for g in grabs.get_mut(&e.detail).into_iter().flatten() {
                    if g.pressed {
                        g.pressed = false;
                        fire.push((g.id, false));
                    }
                }
            }
            // Only grabbed buttons come here, and while one is held every button of the
            // pointer does (the grab is ours until all are up): those others are ignored.
            Event::ButtonPress(e) => {
                let mut buttons = buttons.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(g) = buttons.get_mut(&e.detail) {
                    if !g.pressed {
                        g.pressed = true;
                        fire.push((g.id, true));
                    }
                }
            }
            Event::ButtonRelease(e) => {
                let mut buttons = buttons.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(g) = buttons.get_mut(&e.detail) {
                    if g.pressed {
                        g.pressed = false;
                        fire.push((g.id, false));
                    }
                }
            }
            _ => {}
        }
        for (id, pressed) in fire {
            on_event(id, pressed);
        }
    }
}

fn mod_mask(mods: Modifiers) -> ModMask {
    let mut m = 0u16;
    for (from, to) in [
        (Modifiers::SHIFT, ModMask::SHIFT),
        (Modifiers::CONTROL, ModMask::CONTROL),
        (Modifiers::ALT, ModMask::M1),
        (Modifiers::SUPER, ModMask::M4),
        (Modifiers::META, ModMask::M4),
    ] {
        if mods.contains(from) {
            m |= u16::from(to);
        }
    }
    ModMask::from(m)
}

/// The X keysym of each key `hotkey::parse` accepts.
fn keysym(code: Code) -> Option<u32> {
    use Code::*;
    let letters = [
        KeyA, KeyB, KeyC, KeyD, KeyE, KeyF, KeyG, KeyH, KeyI, KeyJ, KeyK, KeyL, KeyM, KeyN, KeyO,
        KeyP, KeyQ, KeyR, KeyS, KeyT, KeyU, KeyV, KeyW, KeyX, KeyY, KeyZ,
    ];
    if let Some(i) = letters.iter().position(|&c| c == code) {
        return Some(key::a + i as u32);
    }
    let digits = [
        Digit0, Digit1, Digit2, Digit3, Digit4, Digit5, Digit6, Digit7, Digit8, Digit9,
    ];
    if let Some(i) = digits.iter().position(|&c| c == code) {
        return Some(key::_0 + i as u32);
    }
    let numpad = [
        Numpad0, Numpad1, Numpad2, Numpad3, Numpad4, Numpad5, Numpad6, Numpad7, Numpad8, Numpad9,
    ];
    if let Some(i) = numpad.iter().position(|&c| c == code) {
        return Some(key::KP_0 + i as u32);
    }
    let function = [
        F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13, F14, F15, F16, F17, F18, F19, F20,
        F21, F22, F23, F24,
    ];
    if let Some(i) = function.iter().position(|&c| c == code) {
        return Some(key::F1 + i as u32);
    }
    Some(match code {
        Backquote => key::grave,
        Backslash => key::backslash,
        BracketLeft => key::bracketleft,
        BracketRight => key::bracketright,
        Comma => key::comma,
        Equal => key::equal,
        Minus => key::minus,
        Period => key::period,
        Quote => key::apostrophe,
        Semicolon => key::semicolon,
        Slash => key::slash,
        Space => key::space,
        Backspace => key::BackSpace,
        Tab => key::Tab,
        Enter => key::Return,
        Escape => key::Escape,
        Delete => key::Delete,
        Insert => key::Insert,
        Home => key::Home,
        End => key::End,
        PageUp => key::Prior,
        PageDown => key::Next,
        ArrowUp => key::Up,
        ArrowDown => key::Down,
        ArrowLeft => key::Left,
        ArrowRight => key::Right,
        Pause => key::Pause,
        PrintScreen => key::Print,
        ScrollLock => key::Scroll_Lock,
        CapsLock => key::Caps_Lock,
        NumLock => key::Num_Lock,
        NumpadAdd => key::KP_Add,
        NumpadSubtract => key::KP_Subtract,
        NumpadMultiply => key::KP_Multiply,
        NumpadDivide => key::KP_Divide,
        NumpadDecimal => key::KP_Decimal,
        NumpadEnter => key::KP_Enter,
        NumpadEqual => key::KP_Equal,
        AudioVolumeDown => key::XF86_AudioLowerVolume,
        AudioVolumeUp => key::XF86_AudioRaiseVolume,
        AudioVolumeMute => key::XF86_AudioMute,
        MediaPlay => key::XF86_AudioPlay,
        MediaPause => key::XF86_AudioPause,
        MediaPlayPause => key::XF86_AudioPlay,
        MediaStop => key::XF86_AudioStop,
        MediaTrackNext => key::XF86_AudioNext,
        MediaTrackPrevious => key::XF86_AudioPrev,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_the_parser_accepts_has_a_keysym() {
        let names = [
            "`",
            "\\",
            "[",
            "]",
            "pause",
            ",",
            "=",
            "-",
            ".",
            "'",
            ";",
            "/",
            "backspace",
            "capslock",
            "enter",
            "space",
            "tab",
            "delete",
            "end",
            "home",
            "insert",
            "pagedown",
            "pageup",
            "printscreen",
            "scrolllock",
            "down",
            "left",
            "right",
            "up",
            "numlock",
            "numadd",
            "numdecimal",
            "numdivide",
            "numenter",
            "numequal",
            "nummultiply",
            "numsubtract",
            "escape",
            "volumedown",
            "volumeup",
            "volumemute",
            "mediaplay",
            "mediapause",
            "mediaplaypause",
            "mediastop",
            "mediatracknext",
            "mediatrackprev",
        ];
        let mut all: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        all.extend(('a'..='z').map(String::from));
        all.extend(('0'..='9').map(String::from));
        all.extend((0..=9).map(|d| format!("num{d}")));
        all.extend((1..=24).map(|f| format!("f{f}")));
        for name in all {
            let hk = super::super::parse(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                keysym(hk.key).is_some(),
                "{name} ({:?}) has no keysym",
                hk.key
            );
        }
        assert_eq!(keysym(Code::KeyD), Some(0x64));
        assert_eq!(keysym(Code::Digit7), Some(0x37));
        assert_eq!(keysym(Code::F9), Some(0xffc6));
        assert_eq!(keysym(Code::Numpad3), Some(0xffb3));
    }

    #[test]
    fn modifiers_map_to_the_core_masks() {
        assert_eq!(
            mod_mask(Modifiers::CONTROL | Modifiers::ALT),
            ModMask::from(u16::from(ModMask::CONTROL) | u16::from(ModMask::M1))
        );
        assert_eq!(mod_mask(Modifiers::SUPER), ModMask::M4);
        assert_eq!(mod_mask(Modifiers::empty()), ModMask::from(0u16));
    }
}
