//! The focused window (WM_CLASS and title) and the keyboard state, over one x11rb connection.
//!
//! Focus is found the way a user sees it: `_NET_ACTIVE_WINDOW` on the root when a window
//! manager publishes it; else `GetInputFocus`, walking up parents to the window that carries
//! WM_CLASS; when focus is `PointerRoot`/`None` (bare X server, no window manager) keyboard
//! input goes to the window under the pointer, so that one is found with `QueryPointer`.

use serde::Serialize;

/// What is known about the window that receives the text. All `None` when unknown (no X
/// display, Wayland, nothing focused).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WindowInfo {
    /// X window id of the client window.
    pub id: Option<u32>,
    /// WM_CLASS instance name (first string), e.g. `xterm`.
    pub instance: Option<String>,
    /// WM_CLASS class name (second string), e.g. `XTerm`.
    pub class: Option<String>,
    /// `_NET_WM_NAME` (UTF-8) or else `WM_NAME`.
    pub title: Option<String>,
    /// The process that owns the window, when the display server says (X11: the X-Resource
    /// extension's client pid, else `_NET_WM_PID`; sway and Hyprland report it). Used to
    /// judge whether the window is a terminal by what the process is (`inject/gate.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

impl WindowInfo {
    /// How messages name the window: `"title" (Class)`, or "the focused window".
    pub fn describe(&self) -> String {
        match (&self.title, &self.class) {
            (Some(t), Some(c)) if !t.is_empty() => format!("\"{t}\" ({c})"),
            (Some(t), None) if !t.is_empty() => format!("\"{t}\""),
            (_, Some(c)) => c.clone(),
            _ => "the focused window".into(),
        }
    }
}

/// The server's core keyboard map as one client read it: keysyms per keycode and the keysyms
/// of every keycode from `min` on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Keymap {
    pub min: u8,
    pub per_keycode: u8,
    pub keysyms: Vec<u32>,
}

impl Keymap {
    /// Whether every key bound in `self` is still bound the same in `now`. Keycodes with
    /// nothing bound in `self` are not compared: those are the spares enigo binds a missing
    /// character to, and unbinds, as it types.
    ///
    /// enigo reads the map once, when it connects, and types a character the map had on
    /// some keycode by pressing that keycode: when another client has changed it since (a
    /// previous enigo unbinding the spare keycodes it had used, a layout switch), the key
    /// types nothing or something else.
    pub(crate) fn layout_kept(&self, now: &Keymap) -> bool {
        if (self.min, self.per_keycode) != (now.min, now.per_keycode)
            || self.keysyms.len() != now.keysyms.len()
        {
            return false;
        }
        let per = usize::from(self.per_keycode).max(1);
        self.keysyms
            .chunks(per)
            .zip(now.keysyms.chunks(per))
            .all(|(then, now)| then.iter().all(|&k| k == 0) || then == now)
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
pub(crate) use x11::X11;

#[cfg(all(unix, not(target_os = "macos")))]
mod x11 {
    use super::{Keymap, WindowInfo};
    use std::collections::HashSet;
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{Atom, AtomEnum, ConnectionExt as _, InputFocus, Window};
    use x11rb::rust_connection::RustConnection;

    /// Max parents walked up / children walked down before giving up (a malformed tree must
    /// not loop forever).
    const MAX_DEPTH: usize = 64;

    struct Atoms {
        net_active_window: Atom,
        net_wm_name: Atom,
        net_wm_pid: Atom,
        utf8_string: Atom,
    }

    /// A connection to the X server for queries (never for input: that is enigo's).
    pub(crate) struct X11 {
        conn: RustConnection,
        root: Window,
        atoms: Atoms,
        /// Keycodes bound to Shift, Control and Mod1–Mod5 (Alt, Super, AltGr…); Lock excluded.
        modifier_keycodes: Vec<u8>,
    }

    fn err(what: &str, e: impl std::fmt::Display) -> String {
        format!("X11 {what}: {e}")
    }

    impl X11 {
        /// Connects to `display` (None: `$DISPLAY`).
        pub(crate) fn connect(display: Option<&str>) -> Result<X11, String> {
            let (conn, screen) = x11rb::connect(display).map_err(|e| {
                format!(
                    "cannot connect to the X display {}: {e}",
                    display
                        .map(str::to_owned)
                        .or_else(|| std::env::var("DISPLAY").ok())
                        .unwrap_or_else(|| "(DISPLAY is not set)".into())
                )
            })?;
            let root = conn
                .setup()
                .roots
                .get(screen)
                .map(|s| s.root)
                .ok_or_else(|| "X11: the display has no screen".to_string())?;
            let atom = |name: &[u8]| -> Result<Atom, String> {
                Ok(conn
                    .intern_atom(false, name)
                    .map_err(|e| err("intern_atom", e))?
                    .reply()
                    .map_err(|e| err("intern_atom", e))?
                    .atom)
            };
            let atoms = Atoms {
                net_active_window: atom(b"_NET_ACTIVE_WINDOW")?,
                net_wm_name: atom(b"_NET_WM_NAME")?,
                net_wm_pid: atom(b"_NET_WM_PID")?,
                utf8_string: atom(b"UTF8_STRING")?,
            };
            let mapping = conn
                .get_modifier_mapping()
                .map_err(|e| err("get_modifier_mapping", e))?
                .reply()
                .map_err(|e| err("get_modifier_mapping", e))?;
            let per = usize::from(mapping.keycodes_per_modifier()).max(1);
            let modifier_keycodes = mapping
                .keycodes
                .chunks(per)
                .enumerate()
                .filter(|(index, _)| *index != 1) // Lock (Caps Lock) is a toggle, not held
                .flat_map(|(_, codes)| codes.iter().copied())
                .filter(|&k| k != 0)
                .collect();
            Ok(X11 {
                conn,
                root,
                atoms,
                modifier_keycodes,
            })
        }

        /// Whether the server has a modifier map yet. XWayland has none until one of its
        /// windows first gets keyboard focus (and enigo panics on an empty one).
        pub(crate) fn has_modifier_map(&self) -> Result<bool, String> {
            let mapping = self
                .conn
                .get_modifier_mapping()
                .map_err(|e| err("get_modifier_mapping", e))?
                .reply()
                .map_err(|e| err("get_modifier_mapping", e))?;
            Ok(mapping.keycodes_per_modifier() > 0)
        }

        /// The window receiving keyboard input, with class and title.
        pub(crate) fn focused_window(&self) -> Result<WindowInfo, String> {
            let Some(window) = self.focused_client()? else {
                return Ok(WindowInfo::default());
            };
            let (instance, class) = self.wm_class(window)?.unwrap_or((None, None));
            Ok(WindowInfo {
                id: Some(window),
                instance,
                class,
                title: self.title(window)?,
                pid: self.pid(window),
            })
        }

        /// The process of the client that made `window`: the X-Resource extension's pid of
        /// the connection (what the server itself saw; local clients only), else the
        /// window's own `_NET_WM_PID` (what the client says).
        fn pid(&self, window: Window) -> Option<u32> {
            use x11rb::protocol::res::{ClientIdMask, ClientIdSpec, ConnectionExt as _};
            let spec = ClientIdSpec {
                client: window,
                mask: ClientIdMask::LOCAL_CLIENT_PID,
            };
            let by_server = self
                .conn
                .res_query_client_ids(&[spec])
                .ok()
                .and_then(|c| c.reply().ok())
                .and_then(|r| {
                    r.ids
                        .iter()
                        .find(|id| id.spec.mask == ClientIdMask::LOCAL_CLIENT_PID)
                        .and_then(|id| id.value.first().copied())
                });
            by_server.filter(|&p| p > 0).or_else(|| {
                self.conn
                    .get_property(
                        false,
                        window,
                        self.atoms.net_wm_pid,
                        AtomEnum::CARDINAL,
                        0,
                        1,
                    )
                    .ok()?
                    .reply()
                    .ok()?
                    .value32()?
                    .next()
                    .filter(|&p| p > 0)
            })
        }

        /// The id of the client window receiving keyboard input (no properties read): the
        /// gate's cheap check between words that the focus has not moved.
        pub(crate) fn focused_id(&self) -> Result<Option<u32>, String> {
            self.focused_client()
        }

        fn focused_client(&self) -> Result<Option<Window>, String> {
            if let Some(active) = self.active_window()? {
                return Ok(Some(self.client_at_or_above(active)?.unwrap_or(active)));
            }
            let focus = self
                .conn
                .get_input_focus()
                .map_err(|e| err("get_input_focus", e))?
                .reply()
                .map_err(|e| err("get_input_focus", e))?
                .focus;
            if focus == u32::from(InputFocus::POINTER_ROOT)
                || focus == u32::from(InputFocus::NONE)
                || focus == self.root
            {
                return self.client_under_pointer();
            }
            match self.client_at_or_above(focus)? {
                Some(w) => Ok(Some(w)),
                None => Ok(Some(focus)),
            }
        }

        /// `_NET_ACTIVE_WINDOW` when a window manager publishes one (and it is not 0).
        fn active_window(&self) -> Result<Option<Window>, String> {
            let reply = self
                .conn
                .get_property(
                    false,
                    self.root,
                    self.atoms.net_active_window,
                    AtomEnum::ANY, // WINDOW from window managers; any 32-bit value accepted
                    0,
                    1,
                )
                .map_err(|e| err("get_property", e))?
                .reply()
                .map_err(|e| err("get_property", e))?;
            Ok(reply
                .value32()
                .and_then(|mut v| v.next())
                .filter(|&w| w != 0))
        }

        /// `window` or its nearest ancestor that has WM_CLASS (the client window).
        fn client_at_or_above(&self, window: Window) -> Result<Option<Window>, String> {
            let mut current = window;
            for _ in 0..MAX_DEPTH {
                if current == self.root || current == 0 {
                    return Ok(None);
                }
                if self.wm_class(current)?.is_some() {
                    return Ok(Some(current));
                }
                let tree = match self.conn.query_tree(current).map(|c| c.reply()) {
                    Ok(Ok(tree)) => tree,
                    // The window went away meanwhile.
                    _ => return Ok(None),
                };
                current = tree.parent;
            }
            Ok(None)
        }

        /// Descends from the root through the windows under the pointer; the topmost one
        /// with WM_CLASS is the client (below it are the toolkit's inner windows).
        fn client_under_pointer(&self) -> Result<Option<Window>, String> {
            let mut current = self.root;
            let mut deepest = None;
            for _ in 0..MAX_DEPTH {
                let reply = self
                    .conn
                    .query_pointer(current)
                    .map_err(|e| err("query_pointer", e))?
                    .reply()
                    .map_err(|e| err("query_pointer", e))?;
                if reply.child == 0 {
                    break;
                }
                current = reply.child;
                deepest = Some(current);
                if self.wm_class(current)?.is_some() {
                    return Ok(Some(current));
                }
            }
            Ok(deepest)
        }

        fn property(&self, window: Window, property: Atom, type_: Atom) -> Option<Vec<u8>> {
            let reply = self
                .conn
                .get_property(false, window, property, type_, 0, 4096)
                .ok()?
                .reply()
                .ok()?;
            (reply.format == 8 && !reply.value.is_empty()).then_some(reply.value)
        }

        /// WM_CLASS as (instance, class); None when the window has none.
        #[allow(clippy::type_complexity)]
        fn wm_class(
            &self,
            window: Window,
        ) -> Result<Option<(Option<String>, Option<String>)>, String> {
            let Some(value) =
                self.property(window, AtomEnum::WM_CLASS.into(), AtomEnum::STRING.into())
            else {
                return Ok(None);
            };
            let mut parts = value
                .split(|&b| b == 0)
                .map(|s| String::from_utf8_lossy(s).into_owned());
            let instance = parts.next().filter(|s| !s.is_empty());
            let class = parts.next().filter(|s| !s.is_empty());
            Ok(Some((instance, class)))
        }

        fn title(&self, window: Window) -> Result<Option<String>, String> {
            if let Some(v) = self.property(window, self.atoms.net_wm_name, self.atoms.utf8_string) {
                return Ok(Some(String::from_utf8_lossy(&v).into_owned()));
            }
            // WM_NAME is STRING (Latin-1) or COMPOUND_TEXT; Latin-1 decodes byte by byte.
            Ok(self
                .property(window, AtomEnum::WM_NAME.into(), AtomEnum::ANY.into())
                .map(|v| match String::from_utf8(v.clone()) {
                    Ok(s) => s,
                    Err(_) => v.iter().map(|&b| char::from(b)).collect(),
                }))
        }

        /// The core keyboard map now (one round trip).
        pub(crate) fn keymap(&self) -> Result<Keymap, String> {
            let setup = self.conn.setup();
            let (min, max) = (setup.min_keycode, setup.max_keycode);
            let map = self
                .conn
                .get_keyboard_mapping(min, max - min + 1)
                .map_err(|e| err("get_keyboard_mapping", e))?
                .reply()
                .map_err(|e| err("get_keyboard_mapping", e))?;
            Ok(Keymap {
                min,
                per_keycode: map.keysyms_per_keycode,
                keysyms: map.keysyms,
            })
        }

        /// Caps Lock is on (the Lock modifier is in the core keyboard state): simulated
        /// letters would come out in the wrong case.
        pub(crate) fn caps_lock_on(&self) -> Result<bool, String> {
            let mask = self
                .conn
                .query_pointer(self.root)
                .map_err(|e| err("query_pointer", e))?
                .reply()
                .map_err(|e| err("query_pointer", e))?
                .mask;
            Ok(mask.contains(x11rb::protocol::xproto::KeyButMask::LOCK))
        }

        /// Keycodes of every key that is down right now (physically or by XTest).
        pub(crate) fn held_keys(&self) -> Result<Vec<u8>, String> {
            let keys = self
                .conn
                .query_keymap()
                .map_err(|e| err("query_keymap", e))?
                .reply()
                .map_err(|e| err("query_keymap", e))?
                .keys;
            Ok((8..=255u8)
                .filter(|&k| keys[usize::from(k / 8)] & (1 << (k % 8)) != 0)
                .collect())
        }

        /// Keycodes of modifier keys that are down right now (physically or by XTest).
        pub(crate) fn held_modifiers(&self) -> Result<Vec<u8>, String> {
            let mut held: Vec<u8> = self
                .held_keys()?
                .into_iter()
                .filter(|k| self.modifier_keycodes.contains(k))
                .collect();
            held.sort_unstable();
            held.dedup();
            Ok(held)
        }
    }

    impl Keymap {
        /// The keysyms on the base level (column 0) of some keycode: the characters enigo
        /// finds on the layout; every other one it maps to a spare keycode.
        pub(crate) fn base_level_keysyms(&self) -> HashSet<u32> {
            let per = usize::from(self.per_keycode).max(1);
            let codes = u8::try_from(self.keysyms.len() / per).unwrap_or(u8::MAX);
            (0..codes)
                .filter_map(|i| {
                    xkeysym::keysym(
                        xkeysym::KeyCode::from(self.min.saturating_add(i)),
                        0,
                        xkeysym::KeyCode::from(self.min),
                        self.per_keycode,
                        &self.keysyms,
                    )
                })
                .map(|k| k.raw())
                .filter(|&k| k != 0)
                .collect()
        }
    }
}

/// Stand-in where there is no X11 (macOS, Windows): nothing is known about the window.
#[cfg(not(all(unix, not(target_os = "macos"))))]
pub(crate) struct X11;

#[cfg(not(all(unix, not(target_os = "macos"))))]
impl X11 {
    pub(crate) fn connect(_display: Option<&str>) -> Result<X11, String> {
        Err("window queries need X11 on this platform".into())
    }
    pub(crate) fn focused_id(&self) -> Result<Option<u32>, String> {
        Err("window queries need X11 on this platform".into())
    }
    pub(crate) fn focused_window(&self) -> Result<WindowInfo, String> {
        Ok(WindowInfo::default())
    }
    pub(crate) fn held_keys(&self) -> Result<Vec<u8>, String> {
        Ok(Vec::new())
    }
    pub(crate) fn held_modifiers(&self) -> Result<Vec<u8>, String> {
        Ok(Vec::new())
    }
    pub(crate) fn has_modifier_map(&self) -> Result<bool, String> {
        Ok(true)
    }
    pub(crate) fn caps_lock_on(&self) -> Result<bool, String> {
        Ok(false)
    }
    pub(crate) fn keymap(&self) -> Result<Keymap, String> {
        Ok(Keymap::default())
    }
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
impl Keymap {
    pub(crate) fn base_level_keysyms(&self) -> std::collections::HashSet<u32> {
        Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_names_the_window_as_well_as_known() {
        let mut w = WindowInfo {
            title: Some("notes.txt - Editor".into()),
            class: Some("Gedit".into()),
            ..WindowInfo::default()
        };
        assert_eq!(w.describe(), "\"notes.txt - Editor\" (Gedit)");
        w.title = None;
        assert_eq!(w.describe(), "Gedit");
        assert_eq!(WindowInfo::default().describe(), "the focused window");
    }

    fn map(keysyms: &[u32]) -> Keymap {
        Keymap {
            min: 8,
            per_keycode: 2,
            keysyms: keysyms.to_vec(),
        }
    }

    #[test]
    fn a_key_bound_differently_since_makes_the_map_stale() {
        const A: u32 = 0x61;
        const CAP_A: u32 = 0x41;
        const W: u32 = 0x57;
        // Keycode 8: a, A; 9: W (another client's spare key); 10: spare.
        let then = map(&[A, CAP_A, W, W, 0, 0]);
        assert!(then.layout_kept(&then.clone()));
        // A spare key bound or unbound since (enigo typing): kept.
        assert!(then.layout_kept(&map(&[A, CAP_A, W, W, 0x54, 0x54])));
        // The other client unbound its key (what enigo would press for "W" types nothing).
        assert!(!then.layout_kept(&map(&[A, CAP_A, 0, 0, 0, 0])));
        // A layout key moved, or the map's shape changed.
        assert!(!then.layout_kept(&map(&[0x62, 0x42, W, W, 0, 0])));
        assert!(!then.layout_kept(&Keymap {
            per_keycode: 3,
            ..map(&[A, CAP_A, 0, W, W, 0, 0, 0, 0])
        }));
        assert!(!then.layout_kept(&map(&[A, CAP_A, W, W])));
    }
}
