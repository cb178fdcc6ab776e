//! Stand-ins for the XDG portals on systems without them (Windows, macOS): the same API,
//! every call saying the portal is not there, [`super::probe`] finding nothing. The
//! controller then never takes the portal path (`inject::session::hotkey_path`).

use super::Bus;
use std::path::Path;

const NOT_HERE: &str = "the XDG desktop portals exist on Linux desktops only";

/// One shortcut to ask the portal for (see the Linux module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortcutRequest {
    pub id: String,
    pub description: String,
    pub hotkey_spec: String,
}

impl ShortcutRequest {
    pub fn dictate(hotkey_spec: &str) -> ShortcutRequest {
        ShortcutRequest {
            id: "dictate".into(),
            description: "Dictate (hold to talk)".into(),
            hotkey_spec: hotkey_spec.into(),
        }
    }

    pub fn cancel(hotkey_spec: &str) -> ShortcutRequest {
        ShortcutRequest {
            id: "cancel".into(),
            description: "Cancel the dictation".into(),
            hotkey_spec: hotkey_spec.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortcutEvent {
    pub id: String,
    pub pressed: bool,
    pub timestamp_ms: u64,
}

#[derive(Debug)]
pub struct PortalShortcut;

impl PortalShortcut {
    pub fn start(
        _hotkey_spec: &str,
        _on_event: impl Fn(&str, bool) + Send + Sync + 'static,
    ) -> Result<PortalShortcut, String> {
        Err(NOT_HERE.into())
    }

    pub fn start_on(
        _bus: &Bus,
        _requests: Vec<ShortcutRequest>,
        _on_event: impl Fn(&ShortcutEvent) + Send + 'static,
    ) -> Result<PortalShortcut, String> {
        Err(NOT_HERE.into())
    }

    pub fn trigger_description(&self) -> Option<String> {
        None
    }

    pub fn trigger_of(&self, _id: &str) -> Option<String> {
        None
    }

    pub fn asked_to_bind(&self) -> bool {
        false
    }

    pub fn rebind(&mut self, _hotkey_spec: &str) -> Result<(), String> {
        Err(NOT_HERE.into())
    }
}

#[derive(Debug)]
pub struct RemoteKeyboard;

impl RemoteKeyboard {
    pub fn connect(_token_file: &Path) -> Result<RemoteKeyboard, String> {
        Err(NOT_HERE.into())
    }

    pub fn connect_on(_bus: &Bus, _token_file: &Path) -> Result<RemoteKeyboard, String> {
        Err(NOT_HERE.into())
    }

    pub fn portal_version(&self) -> u32 {
        0
    }

    pub fn offered_restore_token(&self) -> bool {
        false
    }

    pub fn type_text(&mut self, _text: &str) -> Result<(), String> {
        Err(NOT_HERE.into())
    }

    pub fn paste_chord(&mut self, _terminal: bool) -> Result<(), String> {
        Err(NOT_HERE.into())
    }

    pub fn key(&mut self, _keysym: u32, _pressed: bool) -> Result<(), String> {
        Err(NOT_HERE.into())
    }
}
