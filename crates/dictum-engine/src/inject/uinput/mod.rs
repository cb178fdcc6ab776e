//! The last-resort typing path: an in-process uinput virtual keyboard (`/dev/uinput`) that
//! types each character with the key and modifiers the *user's* layout needs.
//!
//! uinput works under every compositor (the kernel's keyboard, read like a real one), but it
//! sends key codes, which the compositor translates with the user's XKB keymap: `z` on a
//! German layout is the key labelled Y on a US keyboard. [`layout`] compiles the user's
//! keymap with libxkbcommon (the compositor's own keymap when it sends one, else the system
//! configuration) and finds, for each character, the key and modifiers that produce it,
//! each checked on an XKB state machine. Text with a character the layout cannot produce is
//! not typed at all (the injector pastes it instead): never a wrong character. This is what
//! ydotool does not do (it assumes a US layout).
//!
//! The device is created once and kept (the compositor needs a moment to pick up a new
//! keyboard, [`device::SETTLE`]); each key change is its own `SYN_REPORT` frame; a short
//! pause after each character ([`KEY_DELAY`]) lets the compositor keep up.
//!
//! Not exercised on a real `/dev/uinput` where this was built (no uinput in that kernel):
//! the layout mapping is tested against real XKB keymaps, and the event stream by writing it
//! to a pipe and decoding it (`tests/uinput_layout.rs`).
//!
//! Needs: `/dev/uinput` writable (udev rule in the user guide), libxkbcommon (every
//! Wayland desktop has it), xkb-data for keymaps by name.
//!
//! | file | does |
//! |---|---|
//! | `layout.rs` | which layout, and character → key + modifiers |
//! | `events.rs` | the `input_event` stream |
//! | `device.rs` | `/dev/uinput` ioctls: create, destroy |

pub mod device;
pub mod events;
pub mod layout;

use events::Event;
// `Names` is for the backend tests (`inject::backends`, feature `test-hooks`).
#[cfg_attr(not(feature = "test-hooks"), allow(unused_imports))]
pub use layout::{LayoutMap, LayoutSource, Names, Stroke};
use std::io::Write;
use std::time::Duration;

/// Pause after each character.
pub const KEY_DELAY: Duration = Duration::from_millis(2);

/// Whether `/dev/uinput` exists and this process may write it.
pub fn available() -> bool {
    device::writable()
}

/// The user's layout, best source first: the Wayland compositor's keymap (when it sends a
/// full keyboard's), then `XKB_DEFAULT_LAYOUT`, `localectl`, `/etc/default/keyboard`, US.
pub fn user_layout() -> Result<LayoutMap, String> {
    if std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty()) {
        match super::vkbd::seat_keymap()
            .and_then(|text| LayoutMap::from_keymap_text(&text, LayoutSource::Compositor))
        {
            Ok(map) if map.is_full_keyboard() => return Ok(map),
            Ok(_) => tracing::info!(
                "uinput: the compositor's keymap is a virtual keyboard's; using the configured layout"
            ),
            Err(e) => tracing::info!("uinput: compositor keymap unknown ({e})"),
        }
    }
    let (names, source) = layout::configured_names(|k| std::env::var(k).ok());
    LayoutMap::from_names(&names, source)
}

/// A uinput keyboard typing with the user's layout. `Send`: create anywhere, use on one
/// thread.
pub struct UinputKeyboard {
    out: Box<dyn Write + Send>,
    layout: LayoutMap,
    key_delay: Duration,
}

impl UinputKeyboard {
    /// Learns the layout and creates the device (about half a second: the compositor must
    /// pick it up); an error says what is missing.
    pub fn connect() -> Result<UinputKeyboard, String> {
        let layout = user_layout()?;
        let device = device::Device::create()?;
        tracing::info!("uinput: typing with layout {}", layout.describe());
        Ok(UinputKeyboard::with_output(layout, device))
    }

    /// A keyboard that writes its `input_event` stream to `out` (the device, or a pipe/file
    /// to check what would be sent).
    pub fn with_output(layout: LayoutMap, out: impl Write + Send + 'static) -> UinputKeyboard {
        UinputKeyboard {
            out: Box::new(out),
            layout,
            key_delay: KEY_DELAY,
        }
    }

    pub fn set_key_delay(&mut self, delay: Duration) {
        self.key_delay = delay;
    }

    pub fn layout(&self) -> &LayoutMap {
        &self.layout
    }

    /// Ok when every character of `text` has a key on this layout; else the reason, naming
    /// the characters.
    pub fn can_type(&self, text: &str) -> Result<(), String> {
        self.layout.plan(text).map(drop)
    }

    /// Types `text` exactly, or nothing at all when the layout lacks one of its characters.
    pub fn type_text(&mut self, text: &str) -> Result<(), String> {
        let strokes: Vec<Stroke> = self.layout.plan(text)?.into_iter().cloned().collect();
        for stroke in &strokes {
            self.send(stroke)?;
        }
        Ok(())
    }

    /// Ctrl+V, or Ctrl+Shift+V for a terminal.
    pub fn paste_chord(&mut self, terminal: bool) -> Result<(), String> {
        let chord = self.layout.paste_chord(terminal)?;
        self.send(&chord)
    }

    fn send(&mut self, stroke: &Stroke) -> Result<(), String> {
        let mut events: Vec<Event> = Vec::with_capacity(12);
        events::stroke_events(stroke, &mut events);
        self.out
            .write_all(&events::encode(&events))
            .map_err(|e| format!("writing to the uinput keyboard failed: {e}"))?;
        if !self.key_delay.is_zero() {
            std::thread::sleep(self.key_delay);
        }
        Ok(())
    }
}

const _: () = {
    const fn send<T: Send>() {}
    send::<UinputKeyboard>();
};
