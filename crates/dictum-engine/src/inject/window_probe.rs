//! Which window has the focus: asked of the session (X11 over the injector's connection,
//! sway and Hyprland over their sockets, KDE and GNOME over D-Bus), and, while typing, the
//! gate's check that the window that had the focus when typing began still has it.

use super::session::{Focus, SessionKind};
use super::window::{WindowInfo, X11};
use super::{focus, InjectMethod, Injector};
#[cfg(target_os = "linux")]
use super::{focus_dbus, session::Desktop};

impl Injector {
    /// The window that would receive the text; all `None` when unknown (no display, GNOME
    /// or KDE, nothing focused). Never fails.
    pub fn focused_window(&mut self) -> WindowInfo {
        if crate::fault::active("focus_unknown") {
            return WindowInfo::default();
        }
        #[cfg(target_os = "linux")]
        if self.session.kind == SessionKind::Wayland {
            // KDE and GNOME tell only through D-Bus (the app, not how to reach it).
            let asked = match self.session.desktop {
                Desktop::Kde => Some(focus_dbus::kde_focused(&crate::portal::Bus::Session)),
                Desktop::Gnome => Some(focus_dbus::gnome_focused(&crate::portal::Bus::Session)),
                _ => None,
            };
            if let Some(asked) = asked {
                return asked.unwrap_or_else(|e| {
                    tracing::debug!("focused app unknown: {e}");
                    WindowInfo::default()
                });
            }
        }
        self.focused().0
    }

    /// The focused window and its kind.
    pub fn focused(&mut self) -> (WindowInfo, Focus) {
        if crate::fault::active("focus_unknown") {
            return (WindowInfo::default(), Focus::Unknown);
        }
        match self.session.kind {
            SessionKind::X11 => {
                let result = self.x.x11().and_then(|x| x.focused_window());
                match result {
                    Ok(w) => (w, Focus::X11),
                    Err(e) => {
                        tracing::debug!("inject: focused window unknown: {e}");
                        self.reset();
                        (WindowInfo::default(), Focus::Unknown)
                    }
                }
            }
            SessionKind::Wayland => focus::focused(&self.session),
            SessionKind::None => (WindowInfo::default(), Focus::Unknown),
        }
    }

    /// A check that `window` (focused when typing began) still has the focus, where the
    /// session can tell: X11 through a connection of its own, sway and Hyprland through
    /// their sockets. None where the focus cannot be seen (GNOME, KDE).
    pub(super) fn focus_check(
        &mut self,
        window: &WindowInfo,
        focus: Focus,
    ) -> Option<std::sync::Arc<dyn Fn() -> bool + Send + Sync>> {
        if self.config.method != InjectMethod::Type {
            return None; // one paste chord: nothing to stop midway
        }
        match (self.session.kind, focus) {
            (SessionKind::X11, _) => {
                let id = window.id?;
                if self.x.watch.is_none() {
                    self.x.watch = X11::connect(None).ok().map(std::sync::Arc::new);
                }
                let x = std::sync::Arc::clone(self.x.watch.as_ref()?);
                Some(std::sync::Arc::new(move || {
                    // A failed query is no proof of a move: typing goes on.
                    x.focused_id().map_or(true, |w| w == Some(id))
                }))
            }
            (SessionKind::Wayland, Focus::Native | Focus::XWayland) => {
                let session = self.session.clone();
                let then = (window.class.clone(), window.pid, window.id);
                Some(std::sync::Arc::new(move || {
                    let (now, f) = focus::focused(&session);
                    f == Focus::Unknown || (now.class, now.pid, now.id) == then
                }))
            }
            _ => None,
        }
    }
}
