//! The injector's connections, each made when first needed, kept between dictations and
//! dropped after an error so the next dictation reconnects: X11 (the window and keyboard
//! state, enigo's keys, the arboard clipboard, the gate's own watch connection) and Wayland
//! (the virtual keyboard, the RemoteDesktop portal, the uinput keyboard, the data-control
//! clipboard).

use super::paste::Board;
use super::typing::Keys;
use super::window::X11;
use super::{uinput, vkbd, wlclip};
use std::path::PathBuf;

/// X11 connections, each made when first needed and dropped after an error so the next
/// dictation reconnects (the X server may have restarted).
#[derive(Default)]
pub(super) struct X11Parts {
    pub(super) x11: Option<X11>,
    pub(super) keys: Option<Keys>,
    pub(super) board: Option<Board>,
    /// Paste mode's clipboard: every format saved and served back (`clip_x11/`).
    #[cfg(all(unix, not(target_os = "macos")))]
    pub(super) clip: Option<super::clip_x11::ClipX11>,
    /// A connection of its own for the gate's focus check while typing (asked between
    /// words, while `keys` and `x11` are busy typing).
    pub(super) watch: Option<std::sync::Arc<X11>>,
}

impl X11Parts {
    pub(super) fn x11(&mut self) -> Result<&X11, String> {
        if self.x11.is_none() {
            self.x11 = Some(X11::connect(None)?);
        }
        self.x11.as_ref().ok_or_else(|| "X11: not connected".into())
    }

    pub(super) fn keys_and_x11(&mut self) -> Result<(&mut Keys, &X11), String> {
        self.x11()?;
        if self.keys.is_none() {
            let x11 = self.x11.as_ref().ok_or("X11: not connected")?;
            self.keys = Some(Keys::connect(x11)?);
        }
        match (self.keys.as_mut(), self.x11.as_ref()) {
            (Some(k), Some(x)) => Ok((k, x)),
            _ => Err("X11: not connected".into()),
        }
    }

    /// [`X11Parts::keys_and_x11`], with enigo connected again first when the keyboard map
    /// it read has changed since ([`Keys::stale`]): before the first key of each delivery.
    pub(super) fn fresh_keys_and_x11(&mut self) -> Result<(&mut Keys, &X11), String> {
        if let (Some(keys), Some(x11)) = (self.keys.as_ref(), self.x11.as_ref()) {
            if keys.stale(x11)? {
                tracing::info!("inject: the keyboard map changed; reading it again");
                // Dropped first: it unbinds its spare keys before the new one reads the map.
                self.keys = None;
            }
        }
        self.keys_and_x11()
    }

    #[cfg(all(unix, not(target_os = "macos")))]
    pub(super) fn clip(&mut self) -> Result<&mut super::clip_x11::ClipX11, String> {
        if self.clip.is_none() {
            self.clip = Some(super::clip_x11::ClipX11::connect()?);
        }
        self.clip
            .as_mut()
            .ok_or_else(|| "clipboard: not connected".into())
    }

    pub(super) fn board(&mut self) -> Result<&mut Board, String> {
        if self.board.is_none() {
            self.board = Some(Board::connect()?);
        }
        self.board
            .as_mut()
            .ok_or_else(|| "clipboard: not connected".into())
    }
}

/// Wayland connections, likewise made when first needed and dropped after an error.
#[derive(Default)]
pub(super) struct WaylandParts {
    pub(super) keyboard: Option<vkbd::VirtualKeyboard>,
    pub(super) portal: Option<crate::portal::RemoteKeyboard>,
    pub(super) uinput: Option<uinput::UinputKeyboard>,
    pub(super) clipboard: Option<wlclip::WlClipboard>,
}

impl WaylandParts {
    pub(super) fn keyboard(&mut self) -> Result<&mut vkbd::VirtualKeyboard, String> {
        if self.keyboard.is_none() {
            self.keyboard = Some(vkbd::VirtualKeyboard::connect()?);
        }
        self.keyboard
            .as_mut()
            .ok_or_else(|| "virtual keyboard: not connected".into())
    }

    pub(super) fn portal(&mut self) -> Result<&mut crate::portal::RemoteKeyboard, String> {
        if self.portal.is_none() {
            self.portal = Some(crate::portal::RemoteKeyboard::connect(
                &portal_token_file()?
            )?);
        }
        self.portal
            .as_mut()
            .ok_or_else(|| "RemoteDesktop portal: not connected".into())
    }

    pub(super) fn uinput(&mut self) -> Result<&mut uinput::UinputKeyboard, String> {
        if self.uinput.is_none() {
            self.uinput = Some(uinput::UinputKeyboard::connect()?);
        }
        self.uinput
            .as_mut()
            .ok_or_else(|| "uinput keyboard: not connected".into())
    }

    pub(super) fn clipboard(&mut self) -> Result<&mut wlclip::WlClipboard, String> {
        if self.clipboard.is_none() {
            self.clipboard = Some(wlclip::WlClipboard::connect()?);
        }
        self.clipboard
            .as_mut()
            .ok_or_else(|| "Wayland clipboard: not connected".into())
    }
}

/// Where the RemoteDesktop portal's restore token is kept (so consent is asked once).
pub fn portal_token_file() -> Result<PathBuf, String> {
    crate::paths::data_dir()
        .map(|d| d.join("portal-remote-desktop.token"))
        .map_err(|e| e.to_string())
}
