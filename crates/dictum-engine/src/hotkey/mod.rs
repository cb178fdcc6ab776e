//! The global dictation hotkey (and the cancel key): on X11 our own grab (`x11.rs`: XGrabKey,
//! detectable auto-repeat, so holding the key gives one press and one release, and a thread
//! that blocks on the connection, so a key-up is seen the moment it happens); the OS APIs
//! through `global-hotkey` on Windows and macOS. Keys are parsed with `global-hotkey`'s
//! [`HotKey`] everywhere. On X11 the dictation hotkey can also be a mouse button ("mouse:9",
//! [`Binding::Button`]): grabbed there too, its press and release are the key's.
//!
//! [`Hotkeys::new`] checks the display first: a daemon that says "ready" has a hotkey that
//! works.

#[cfg(test)]
use global_hotkey::hotkey::Code;
use global_hotkey::hotkey::HotKey;

#[cfg(all(unix, not(target_os = "macos")))]
mod x11;

/// Grabs keys and reports their presses and releases.
#[cfg(all(unix, not(target_os = "macos")))]
use x11::Grabber as Backend;

/// A registration that failed.
#[derive(Debug)]
pub enum GrabError {
    /// Another program holds the key.
    Taken,
    /// The key has no X keysym we know, or no key on this keyboard makes it.
    NoKey(String),
    Other(String),
}

impl std::fmt::Display for GrabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GrabError::Taken => write!(f, "another application has grabbed it"),
            GrabError::NoKey(why) | GrabError::Other(why) => write!(f, "{why}"),
        }
    }
}

/// Windows and macOS: `global-hotkey`'s manager and its global event handler.
#[cfg(not(all(unix, not(target_os = "macos"))))]
struct Backend(global_hotkey::GlobalHotKeyManager);

#[cfg(not(all(unix, not(target_os = "macos"))))]
impl Backend {
    fn start(on_event: impl Fn(u32, bool) + Send + Sync + 'static) -> Result<Backend, String> {
        use global_hotkey::{GlobalHotKeyEvent, HotKeyState};
        let manager = global_hotkey::GlobalHotKeyManager::new()
            .map_err(|e| format!("cannot start the global hotkey service: {e}"))?;
        GlobalHotKeyEvent::set_event_handler(Some(move |ev: GlobalHotKeyEvent| {
            on_event(ev.id, ev.state == HotKeyState::Pressed)
        }));
        Ok(Backend(manager))
    }

    fn register(&self, hotkey: HotKey) -> Result<(), GrabError> {
        self.0.register(hotkey).map_err(|e| match e {
            global_hotkey::Error::AlreadyRegistered(_) => GrabError::Taken,
            other => GrabError::Other(other.to_string()),
        })
    }

    fn unregister(&self, hotkey: HotKey) {
        let _ = self.0.unregister(hotkey);
    }

    fn register_button(&self, button: u8, _id: u32) -> Result<(), GrabError> {
        Err(GrabError::Other(format!(
            "mouse:{button}: a mouse button can be the hotkey only on X11"
        )))
    }

    fn unregister_button(&self, _button: u8) {}
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
impl Drop for Backend {
    fn drop(&mut self) {
        global_hotkey::GlobalHotKeyEvent::set_event_handler(
            None::<fn(global_hotkey::GlobalHotKeyEvent)>,
        );
    }
}

/// What a hotkey event means to the dictation controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEvent {
    Pressed,
    Released,
    Cancel,
}

/// The key syntax ("ctrl+alt+space") is the `[dictation]` setting's, parsed where the section
/// lives (`config/hotkey.rs`, a leaf at the bottom of the crate).
pub use crate::config::hotkey::{parse, parse_binding, Binding, MOUSE_ON_WAYLAND};

/// Why no hotkey can be had here, or None when a display server is reachable.
pub fn display_problem() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some();
        if std::env::var_os("DISPLAY").is_none() {
            return Some(if wayland {
                "global hotkeys need X11 and this is a Wayland session without XWayland (DISPLAY is not set); enable XWayland, or run `dictum run --no-hotkey --stdin-commands` and drive it from a compositor shortcut".into()
            } else {
                "no display: DISPLAY is not set, so no global hotkey can be grabbed; run Dictum inside your desktop session".into()
            });
        }
        if let Err(e) = x11rb::connect(None) {
            return Some(format!(
                "cannot reach the X display {:?} ({e}); run Dictum inside your desktop session",
                std::env::var("DISPLAY").unwrap_or_default()
            ));
        }
        None
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The registered hotkeys. Events arrive on the callback given to [`Hotkeys::new`].
pub struct Hotkeys {
    manager: Backend,
    main: Option<Binding>,
    cancel: Option<HotKey>,
    cancel_armed: bool,
    paused: bool,
}

impl Hotkeys {
    /// Starts the hotkey service; `on_event` is called (from the hotkey thread) with every
    /// press and release of a registered key as `(hotkey id, pressed)`.
    pub fn new(on_event: impl Fn(u32, bool) + Send + Sync + 'static) -> Result<Hotkeys, String> {
        if let Some(problem) = display_problem() {
            return Err(problem);
        }
        let manager = Backend::start(on_event)?;
        Ok(Hotkeys {
            manager,
            main: None,
            cancel: None,
            cancel_armed: false,
            paused: false,
        })
    }

    /// Registers `spec` as the dictation hotkey, replacing the previous one. On failure the
    /// previous hotkey stays registered.
    pub fn set_main(&mut self, spec: &str) -> Result<(), String> {
        let hotkey = parse_binding(spec)?;
        if self.main == Some(hotkey) {
            return Ok(());
        }
        let armed = self.cancel_armed;
        self.arm_cancel(false);
        let result = self.replace_main(spec, hotkey);
        self.arm_cancel(armed);
        result
    }

    fn replace_main(&mut self, spec: &str, hotkey: Binding) -> Result<(), String> {
        if !self.paused {
            self.grab(hotkey).map_err(|e| register_error(spec, &e))?;
            if let Some(old) = self.main.take() {
                self.let_go(old);
            }
        }
        self.main = Some(hotkey);
        Ok(())
    }

    fn grab(&self, binding: Binding) -> Result<(), GrabError> {
        match binding {
            Binding::Key(h) => self.manager.register(h),
            Binding::Button(b) => self.manager.register_button(b, binding.id()),
        }
    }

    fn let_go(&self, binding: Binding) {
        match binding {
            Binding::Key(h) => self.manager.unregister(h),
            Binding::Button(b) => self.manager.unregister_button(b),
        }
    }

    /// Sets the cancel key ("" = none). It is only grabbed while armed.
    pub fn set_cancel(&mut self, spec: &str) -> Result<(), String> {
        let new = if spec.trim().is_empty() {
            None
        } else {
            Some(parse(spec)?)
        };
        let armed = self.cancel_armed;
        self.arm_cancel(false);
        self.cancel = new;
        if armed {
            self.arm_cancel(true);
        }
        Ok(())
    }

    /// The cancel key as grabbed: alone, and with the dictation hotkey's modifiers added
    /// (in push-to-talk they are still held when the cancel key is pressed).
    fn cancel_variants(&self) -> Vec<HotKey> {
        let Some(cancel) = self.cancel else {
            return Vec::new();
        };
        let mut v = vec![cancel];
        // A mouse button has no modifiers to add.
        if let Some(Binding::Key(main)) = self.main {
            let held = HotKey::new(Some(cancel.mods | main.mods), cancel.key);
            if held != cancel && held != main {
                v.push(held);
            }
        }
        v
    }

    /// Grabs the cancel key while a dictation is under way, and lets go of it afterwards.
    pub fn arm_cancel(&mut self, on: bool) {
        if on == self.cancel_armed {
            return;
        }
        let variants = self.cancel_variants();
        if variants.is_empty() {
            self.cancel_armed = false;
            return;
        }
        if on {
            for hk in &variants {
                if let Err(e) = self.manager.register(*hk) {
                    tracing::warn!("cancel key {hk} not available: {e}");
                }
            }
            self.cancel_armed = true;
        } else {
            for hk in variants {
                self.manager.unregister(hk);
            }
            self.cancel_armed = false;
        }
    }

    /// Lets go of the hotkey (tray: "pause hotkey") or takes it again.
    pub fn set_paused(&mut self, paused: bool) -> Result<(), String> {
        if paused == self.paused {
            return Ok(());
        }
        if let Some(main) = self.main {
            if paused {
                self.let_go(main);
            } else {
                self.grab(main)
                    .map_err(|e| register_error(&format!("{main}"), &e))?;
            }
        }
        self.paused = paused;
        Ok(())
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// What an event from the callback means, or None for a key that is not ours.
    pub fn classify(&self, id: u32, pressed: bool) -> Option<KeyEvent> {
        if self.main.map(|h| h.id()) == Some(id) {
            return Some(if pressed {
                KeyEvent::Pressed
            } else {
                KeyEvent::Released
            });
        }
        if self.cancel_armed && pressed && self.cancel_variants().iter().any(|h| h.id() == id) {
            return Some(KeyEvent::Cancel);
        }
        None
    }
}

impl Drop for Hotkeys {
    fn drop(&mut self) {
        if let Some(main) = self.main {
            self.let_go(main);
        }
        self.arm_cancel(false);
    }
}

fn register_error(spec: &str, e: &GrabError) -> String {
    match e {
        GrabError::Taken => format!(
            "the hotkey `{spec}` is already taken by another application; pick another one in [dictation] hotkey"
        ),
        other => format!("cannot register the hotkey `{spec}`: {other}; pick another one in [dictation] hotkey"),
    }
}

/// For `dictum doctor`: can `spec` be grabbed right now? Registers and releases it.
pub fn check_registrable(spec: &str) -> Result<(), String> {
    let mut hk = Hotkeys::new(|_, _| {})?;
    hk.set_main(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use global_hotkey::hotkey::Modifiers;

    #[test]
    fn parses_the_usual_spellings() {
        let h = parse("ctrl+alt+space").expect("parses");
        assert_eq!(h.key, Code::Space);
        assert_eq!(h.mods, Modifiers::CONTROL | Modifiers::ALT);
        assert_eq!(parse("Ctrl+Alt+Space").expect("parses"), h);
        assert_eq!(parse("f9").expect("parses").key, Code::F9);
        assert_eq!(parse("escape").expect("parses").key, Code::Escape);
        let h = parse("super+shift+d").expect("parses");
        assert_eq!(h.mods, Modifiers::SUPER | Modifiers::SHIFT);
        assert_eq!(h.key, Code::KeyD);
    }

    #[test]
    fn refuses_lone_modifiers_and_nonsense() {
        for bad in ["ctrl", "ctrl+alt", "ControlRight", "", "ctrl+nosuchkey"] {
            let e = parse(bad).expect_err(bad);
            assert!(!e.is_empty());
        }
        assert!(parse("ctrl+shift").expect_err("x").contains("main key"));
    }
}
