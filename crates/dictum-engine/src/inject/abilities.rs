//! What this session offers for injection, probed: the X display, the compositor's
//! globals, the portals, the tools on PATH.

use super::session::{Abilities, Session, SessionKind};
use super::window::X11;
use super::{uinput, vkbd, wayland};

/// What this session offers for injection, probed now: the X display, the compositor's
/// globals, the portals, the tools on PATH. Bounded (about a second at worst, when a
/// compositor or the portal does not answer).
pub fn probe_abilities(session: &Session) -> Abilities {
    let mut ab = Abilities {
        wtype: wayland::on_path("wtype"),
        ydotool: wayland::on_path("ydotool"),
        uinput: uinput::available(),
        wl_clipboard: wayland::on_path("wl-copy") && wayland::on_path("wl-paste"),
        ..Abilities::default()
    };
    if session.x_display {
        ab.x11 = X11::connect(None).is_ok();
    }
    if session.kind == SessionKind::Wayland {
        match vkbd::probe_globals() {
            Ok(g) => {
                ab.virtual_keyboard = g.virtual_keyboard;
                ab.data_control = g.data_control;
            }
            Err(e) => tracing::info!("inject: Wayland globals unknown: {e}"),
        }
        let portals = crate::portal::probe();
        ab.remote_desktop = portals.remote_desktop.is_some();
        ab.global_shortcuts = portals.global_shortcuts.is_some();
    }
    ab
}
