//! Typing into the focused Wayland window in-process, through the virtual-keyboard protocol
//! (`zwp_virtual_keyboard_v1`: wlroots compositors such as sway and Hyprland, and KWin).
//!
//! [`VirtualKeyboard`] uploads its own XKB keymap with one key per character to type (see
//! `keymap.rs`), so what arrives does not depend on the user's layout, and any Unicode
//! character can be typed. Keys carry `CLOCK_MONOTONIC` millisecond timestamps, like the
//! kernel's. Every call ends with a round trip: when it returns, the compositor has handled
//! every key (and forwarded it to the focused client).
//!
//! A keymap change reaches X clients through XWayland with a delay: an X client translates a
//! key with the keymap it fetches when it handles the key, so changing the keymap again
//! before it has handled the previous keys would turn them into the wrong characters. The
//! keyboard therefore never changes its keymap within [`KEYMAP_SETTLE`] of its last key,
//! keeps the current keymap while it can take the new characters (its first keymap already
//! holds all of ASCII and Latin-1, so most dictations need no upload at all), and only chunks texts with more distinct characters than fit in one
//! keymap (247).
//!
//! [`probe_globals`] lists what the compositor offers (for the session decision and
//! `dictum doctor`), bounded to about a second.
//!
//! | file | does |
//! |---|---|
//! | `keymap.rs` | characters to keys, keymap text, chunking |
//! | `wire.rs` | connection, globals, bounded round trips |

mod keymap;
mod wire;

use keymap::{Keymap, Sym};
use std::io::Write as _;
use std::time::{Duration, Instant};
use wayland_client::protocol::wl_seat;
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
    zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
    zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
};
use wire::Wire;

/// How long after its last key the keymap is not changed (XWayland clients still translating
/// those keys would see the new keymap). Measured under headless sway with xterm on a loaded
/// 2-core machine: 0 and 20 ms garble characters, 40 ms and more were exact; 100 ms leaves a
/// margin. Only paid when the keymap changes right after keys (rare: see `keymap.rs`).
pub const KEYMAP_SETTLE: Duration = Duration::from_millis(100);
/// Keys sent between two round trips (keeps the socket from filling up).
const KEYS_PER_ROUNDTRIP: usize = 64;

const VIRTUAL_KEYBOARD: &str = "zwp_virtual_keyboard_manager_v1";
const SEAT: &str = "wl_seat";
const WLR_DATA_CONTROL: &str = "zwlr_data_control_manager_v1";
const EXT_DATA_CONTROL: &str = "ext_data_control_manager_v1";

/// `wl_keyboard.keymap_format.xkb_v1`.
const XKB_V1: u32 = 1;
const PRESSED: u32 = 1;
const RELEASED: u32 = 0;
/// Modifier masks of the real modifiers (fixed in every XKB keymap).
const SHIFT: u32 = 1;
const CONTROL: u32 = 4;

/// Which relevant globals the compositor offers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WaylandGlobals {
    /// `zwp_virtual_keyboard_manager_v1`: [`VirtualKeyboard`] can type.
    pub virtual_keyboard: bool,
    /// `zwlr_data_control_manager_v1` or `ext_data_control_manager_v1`: the clipboard can be
    /// read and set without a window.
    pub data_control: bool,
    pub seat: bool,
    /// Every interface offered, sorted.
    pub names: Vec<String>,
}

impl WaylandGlobals {
    fn from_wire(wire: &Wire) -> WaylandGlobals {
        let mut names: Vec<String> = wire
            .state
            .globals
            .iter()
            .map(|g| g.interface.clone())
            .collect();
        names.sort();
        names.dedup();
        let has = |n: &str| names.iter().any(|i| i == n);
        WaylandGlobals {
            virtual_keyboard: has(VIRTUAL_KEYBOARD),
            data_control: has(WLR_DATA_CONTROL) || has(EXT_DATA_CONTROL),
            seat: has(SEAT),
            names,
        }
    }

    /// The desktop, guessed from its private globals (for error messages).
    fn desktop(&self) -> Option<&'static str> {
        let any = |prefix: &str| self.names.iter().any(|n| n.starts_with(prefix));
        if any("gtk_shell") || any("org_gnome_") {
            Some("GNOME")
        } else if any("org_kde_kwin") || any("org_kde_plasma") {
            Some("KDE Plasma")
        } else {
            None
        }
    }

    /// Why the virtual keyboard cannot be used here, in one line.
    pub fn virtual_keyboard_missing(&self) -> String {
        match self.desktop() {
            Some("GNOME") => "this compositor does not offer the virtual-keyboard protocol (GNOME); Dictum uses the RemoteDesktop portal there".to_string(),
            Some(d) => format!("this compositor does not offer the virtual-keyboard protocol to applications ({d}); Dictum uses the RemoteDesktop portal there"),
            None => "this compositor does not offer the virtual-keyboard protocol (zwp_virtual_keyboard_manager_v1); use the RemoteDesktop portal or wtype/ydotool".to_string(),
        }
    }
}

/// Lists the globals of the compositor at `$WAYLAND_DISPLAY`; fails after about a second
/// when it does not answer.
pub fn probe_globals() -> Result<WaylandGlobals, String> {
    let wire = Wire::connect()?;
    Ok(WaylandGlobals::from_wire(&wire))
}

/// The keymap (XKB text) the compositor sends its clients' keyboards: the layout it applies
/// to key codes. Errors after about a second, or when the seat has no keyboard yet (a
/// compositor with no keyboard attached sends none).
pub fn seat_keymap() -> Result<String, String> {
    let mut wire = Wire::connect()?;
    let seat = wire
        .global(SEAT)
        .cloned()
        .ok_or("the Wayland compositor has no seat")?;
    let seat: wl_seat::WlSeat = wire
        .registry
        .bind(seat.name, seat.version.min(7), &wire.qh, ());
    let keyboard = seat.get_keyboard(&wire.qh, ());
    // The keymap is sent right after the keyboard is made; a second round trip covers
    // compositors that send it from an idle callback.
    for _ in 0..2 {
        wire.roundtrip()?;
        if wire.state.keymap.is_some() {
            break;
        }
    }
    if wayland_client::Proxy::version(&seat) >= 3 {
        keyboard.release();
    }
    wire.state
        .keymap
        .take()
        .unwrap_or_else(|| Err("the compositor sent no keymap (no keyboard on its seat)".into()))
}

/// A virtual keyboard on the compositor's seat. `Send`: create it anywhere, use it on one
/// thread.
pub struct VirtualKeyboard {
    wire: Wire,
    keyboard: ZwpVirtualKeyboardV1,
    /// The keymap the compositor has (None before the first upload).
    keymap: Option<Keymap>,
    /// When the last key was sent.
    last_key: Option<Instant>,
    /// When the keymap was last changed.
    uploaded: Option<Instant>,
    key_delay: Duration,
    settle: Duration,
}

const _: () = {
    const fn send<T: Send>() {}
    send::<VirtualKeyboard>();
};

impl VirtualKeyboard {
    /// Connects to `$WAYLAND_DISPLAY` and creates the virtual keyboard; an error says what
    /// is missing.
    pub fn connect() -> Result<VirtualKeyboard, String> {
        let mut wire = Wire::connect()?;
        let globals = WaylandGlobals::from_wire(&wire);
        let manager = wire
            .global(VIRTUAL_KEYBOARD)
            .cloned()
            .ok_or_else(|| globals.virtual_keyboard_missing())?;
        let seat = wire
            .global(SEAT)
            .cloned()
            .ok_or("the Wayland compositor has no seat (no keyboard to type with)")?;
        let seat: wl_seat::WlSeat =
            wire.registry
                .bind(seat.name, seat.version.min(7), &wire.qh, ());
        let manager: ZwpVirtualKeyboardManagerV1 =
            wire.registry.bind(manager.name, 1, &wire.qh, ());
        let keyboard = manager.create_virtual_keyboard(&seat, &wire.qh, ());
        // A compositor that refuses (KWin without the permission) fails here.
        wire.roundtrip()
            .map_err(|e| format!("the compositor refused a virtual keyboard: {e}"))?;
        Ok(VirtualKeyboard {
            wire,
            keyboard,
            keymap: None,
            last_key: None,
            uploaded: None,
            key_delay: Duration::ZERO,
            settle: KEYMAP_SETTLE,
        })
    }

    /// A pause after each key (default none), for applications that drop fast keys.
    pub fn set_key_delay(&mut self, delay: Duration) {
        self.key_delay = delay;
    }

    /// How long after its last key the keymap is not changed (default [`KEYMAP_SETTLE`]).
    pub fn set_keymap_settle(&mut self, settle: Duration) {
        self.settle = settle;
    }

    /// Types `text` exactly: any Unicode, newline as Return, tab as Tab (other control
    /// characters are left out). Returns once the compositor has handled every key.
    pub fn type_text(&mut self, text: &str) -> Result<(), String> {
        let syms = keymap::tokens(text);
        if syms.is_empty() {
            return Ok(());
        }
        let chunks = keymap::plan(self.keymap.as_ref(), &syms);
        if self.keymap.is_some() {
            // No modifiers held (the protocol allows modifiers only after a keymap).
            self.keyboard.modifiers(0, 0, 0, 0);
        }
        for chunk in chunks {
            if let Some(km) = chunk.upload {
                self.upload(km)?;
            }
            for (i, code) in chunk.codes.iter().enumerate() {
                self.tap(*code)?;
                if (i + 1) % KEYS_PER_ROUNDTRIP == 0 {
                    self.wire.roundtrip()?;
                }
            }
            self.wire.roundtrip()?;
        }
        Ok(())
    }

    /// Ctrl+V, or Ctrl+Shift+V when `terminal`.
    pub fn paste_chord(&mut self, terminal: bool) -> Result<(), String> {
        if self.keymap.is_none() {
            self.upload(Keymap::default())?;
        }
        let code = self
            .keymap
            .as_ref()
            .and_then(|k| k.code(Sym::Char('v')))
            .ok_or("internal error: the keymap has no V key")?;
        let mods = if terminal { CONTROL | SHIFT } else { CONTROL };
        self.settle_after_upload();
        self.keyboard.modifiers(mods, 0, 0, 0);
        self.tap(code)?;
        self.keyboard.modifiers(0, 0, 0, 0);
        self.wire.roundtrip()
    }

    /// Presses one chord (voice commands): the key is added to the keymap when it lacks it,
    /// the modifiers are held only for this key.
    pub fn press(&mut self, chord: &crate::commands::Chord) -> Result<(), String> {
        use crate::commands::Key;
        let sym = match chord.key {
            Key::Return => Sym::Return,
            Key::Tab => Sym::Tab,
            Key::BackSpace => Sym::BackSpace,
            Key::Escape => Sym::Escape,
            Key::Char(c) => Sym::Char(c),
        };
        if chord.alt {
            return Err(format!(
                "the virtual keyboard cannot press {chord} (Alt is not supported here)"
            ));
        }
        for chunk in keymap::plan(self.keymap.as_ref(), &[sym]) {
            if let Some(km) = chunk.upload {
                self.upload(km)?;
            }
        }
        let code = self
            .keymap
            .as_ref()
            .and_then(|k| k.code(sym))
            .ok_or_else(|| format!("internal error: the keymap has no key for {chord}"))?;
        let mut mods = 0;
        if chord.ctrl {
            mods |= CONTROL;
        }
        if chord.shift {
            mods |= SHIFT;
        }
        if mods != 0 {
            self.settle_after_upload();
        }
        self.keyboard.modifiers(mods, 0, 0, 0);
        self.tap(code)?;
        self.keyboard.modifiers(0, 0, 0, 0);
        self.wire.roundtrip()
    }

    fn tap(&mut self, code: u32) -> Result<(), String> {
        let time = now_ms();
        self.keyboard.key(time, code, PRESSED);
        self.keyboard.key(time, code, RELEASED);
        self.last_key = Some(Instant::now());
        if !self.key_delay.is_zero() {
            self.wire.flush(Instant::now() + wire::TIMEOUT)?;
            std::thread::sleep(self.key_delay);
        }
        Ok(())
    }

    /// Uploads `keymap`, after [`KEYMAP_SETTLE`] has passed since the last key.
    /// Before a chord (modifiers held): XWayland applies a new keymap a moment after the
    /// compositor forwards it, and a chord sent into an X window before then is lost whole
    /// (`inject_wayland::paste_chord_into_an_xwayland_window`: nothing pasted in ~1 of 5 runs
    /// of a release build when the chord followed the first keymap at once; 0 of 10 after a
    /// wait). Plain keys are not affected. Paid once per keymap change, and only when a
    /// chord follows it within [`KEYMAP_SETTLE`].
    fn settle_after_upload(&self) {
        if let Some(at) = self.uploaded {
            std::thread::sleep(self.settle.saturating_sub(at.elapsed()));
        }
    }

    fn upload(&mut self, keymap: Keymap) -> Result<(), String> {
        if let Some(last) = self.last_key {
            let since = last.elapsed();
            if since < self.settle {
                // The keys already sent must be translated with the keymap they were sent with.
                self.wire.roundtrip()?;
                std::thread::sleep(self.settle.saturating_sub(last.elapsed()));
            }
        }
        let text = keymap.render();
        let fd = rustix::fs::memfd_create("dictum-keymap", rustix::fs::MemfdFlags::CLOEXEC)
            .map_err(|e| format!("cannot create the keymap file (memfd): {e}"))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(text.as_bytes())
            .map_err(|e| format!("cannot write the keymap file: {e}"))?;
        let size = u32::try_from(text.len()).map_err(|_| "keymap too large".to_string())?;
        {
            use std::os::fd::AsFd as _;
            self.keyboard.keymap(XKB_V1, file.as_fd(), size);
        }
        self.wire.roundtrip()?;
        drop(file);
        self.keymap = Some(keymap);
        self.uploaded = Some(Instant::now());
        Ok(())
    }
}

impl Drop for VirtualKeyboard {
    fn drop(&mut self) {
        self.keyboard.destroy();
        let _ = self.wire.conn.flush();
    }
}

/// `CLOCK_MONOTONIC` in milliseconds (what libinput stamps real keys with), wrapping.
fn now_ms() -> u32 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64)
        .wrapping_mul(1000)
        .wrapping_add(t.tv_nsec as u64 / 1_000_000) as u32
}
