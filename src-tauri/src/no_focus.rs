//! The recording indicator never takes the keyboard focus and never receives typed text: the
//! words Dictum types while it is shown must reach the window the user was in.
//!
//! - X11: the window does not accept the focus (`WM_HINTS` input = False, through
//!   `gtk_window_set_accept_focus(false)`, kept false for the window's life: Tauri's
//!   `focusable(false)`), is not focused when mapped (`set_focus_on_map(false)`) and is a
//!   notification (`_NET_WM_WINDOW_TYPE_NOTIFICATION`), which window managers neither focus
//!   nor list in the taskbar or the Alt+Tab switcher.
//! - Wayland with the layer-shell protocol (sway and the other wlroots compositors, KDE
//!   Plasma): the window is a layer-shell surface on the overlay layer, anchored to the
//!   bottom of the screen, with keyboard interactivity "none" (the compositor never gives it
//!   the keyboard). libgtk-layer-shell is loaded at run time (`libgtk-layer-shell.so.0`,
//!   Debian/Ubuntu package libgtk-layer-shell0): without it, or on a compositor without the
//!   protocol, the fallback below is used and the app log says so.
//! - Wayland without layer-shell (GNOME's mutter): the window could only be an ordinary
//!   toplevel, and GTK 3 cannot ask a Wayland compositor not to focus it: mutter 43 gives it the
//!   keyboard when it appears (`crates/dictum-cli/tests/tray_indicator_wayland.rs`), so the
//!   typed words would go into it. It is never shown there (`windows::indicator`) and the log
//!   says so ([`WAYLAND_TOPLEVEL`], then [`NOT_SHOWN`]). So on GNOME the app runs as an
//!   XWayland client by itself when XWayland is there and the user has not set `GDK_BACKEND`
//!   (`xwayland.rs`, from `main`): the X11 rules above hold and the indicator is shown. This
//!   case remains for `GDK_BACKEND=wayland`, GNOME without XWayland (no `DISPLAY`), and
//!   compositors without the protocol or without libgtk-layer-shell.

use tauri::WebviewWindow;

/// How the indicator window was set up (logged as `dictum-tray: indicator: <how>`).
pub const X11: &str = "X11 window that never takes the focus (notification, input hint off)";
pub const LAYER_SHELL: &str = "Wayland layer-shell overlay, keyboard interactivity none";
/// Logged (`dictum-tray: indicator: <this>`) when the first map of the layer surface did not
/// paint and the window was mapped again ([`repaint_if_frozen`]).
pub const REMAPPED: &str = "layer surface mapped again: its first map painted nothing";
pub const WAYLAND_TOPLEVEL: &str =
    "Wayland toplevel that does not accept the focus (no layer-shell here: the compositor decides)";
/// Logged after [`WAYLAND_TOPLEVEL`]: such a window is never shown (`windows::indicator`):
/// mutter gives an ordinary toplevel the keyboard when it appears, whatever GTK 3 asks.
pub const NOT_SHOWN: &str = "not shown: without layer-shell the compositor would give it the keyboard and the typed words would go into it; run the tray app under XWayland (GDK_BACKEND=x11 dictum-tray) to have it";

/// Sets up `win` (built hidden, not yet realized) before its first show. Runs on the GTK
/// main thread. Returns how the window was set up.
#[cfg(target_os = "linux")]
pub fn prepare(win: &WebviewWindow) -> Result<&'static str, String> {
    use gtk::prelude::*;

    let gtk_win = win
        .gtk_window()
        .map_err(|e| format!("no GTK window for the indicator: {e}"))?;
    gtk_win.set_accept_focus(false);
    gtk_win.set_focus_on_map(false);
    gtk_win.set_skip_taskbar_hint(true);
    gtk_win.set_skip_pager_hint(true);
    let wayland = WidgetExt::display(&gtk_win)
        .type_()
        .name()
        .contains("Wayland");
    if !wayland {
        gtk_win.set_type_hint(gtk::gdk::WindowTypeHint::Notification);
        return Ok(X11);
    }
    if gtk_win.is_realized() {
        return Ok(WAYLAND_TOPLEVEL); // too late for a layer surface: never expected
    }
    match layer_shell::make_overlay(gtk_win.upcast_ref()) {
        Ok(true) => {
            repaint_if_frozen(gtk_win.upcast_ref());
            Ok(LAYER_SHELL)
        }
        Ok(false) => Ok(WAYLAND_TOPLEVEL),
        Err(e) => {
            println!("dictum-tray: indicator: {e}");
            Ok(WAYLAND_TOPLEVEL)
        }
    }
}

/// Works around a first map that never paints: on sway 1.7 with GTK 3.24 and gtk-layer-shell
/// 0.8, the Tauri window made a layer surface is mapped and configured (420x110) but its frame
/// clock never ticks, so GTK attaches no buffer and the indicator stays invisible until it is
/// mapped again (found by `crates/dictum-cli/tests/tray_indicator_wayland.rs`; a plain GTK
/// window with a WebKit view does paint there, so it is something of the Tauri window's
/// set-up). Once the window is shown, if it is still mapped and has not painted a single frame
/// after ~0.5 s, it is hidden and shown again, once; every later map paints. Where the first
/// map paints, nothing happens.
#[cfg(target_os = "linux")]
fn repaint_if_frozen(win: &gtk::Window) {
    use gtk::prelude::*;
    let win = win.clone();
    let (mut ticks, mut mapped_ticks) = (0u32, 0u32);
    gtk::glib::timeout_add_local(std::time::Duration::from_millis(100), move || {
        ticks += 1;
        let painted = win
            .frame_clock()
            .is_some_and(|clock| clock.frame_counter() > 0);
        if painted || ticks > 40 {
            return gtk::glib::ControlFlow::Break;
        }
        // Not shown yet (the show request is queued behind this set-up) or hidden again.
        if !win.is_mapped() {
            return gtk::glib::ControlFlow::Continue;
        }
        mapped_ticks += 1;
        if mapped_ticks >= 5 {
            println!("dictum-tray: indicator: {REMAPPED}");
            win.hide();
            win.show_all();
            return gtk::glib::ControlFlow::Break;
        }
        gtk::glib::ControlFlow::Continue
    });
}

#[cfg(not(target_os = "linux"))]
pub fn prepare(_win: &WebviewWindow) -> Result<&'static str, String> {
    Ok("not Linux: the window builder's focus settings only")
}

/// libgtk-layer-shell (0.8, GTK 3), loaded at run time so the app runs without it.
#[cfg(target_os = "linux")]
mod layer_shell {
    use gtk::glib::translate::ToGlibPtr;
    use std::ffi::{c_char, c_int};
    use std::sync::OnceLock;

    type Win = *mut gtk::ffi::GtkWindow;
    // From gtk-layer-shell.h.
    const LAYER_OVERLAY: c_int = 3;
    const EDGE_BOTTOM: c_int = 3;
    const KEYBOARD_MODE_NONE: c_int = 0;

    /// Loaded once for the app's life (the functions are used while the window lives).
    static LIB: OnceLock<Result<libloading::Library, String>> = OnceLock::new();

    fn lib() -> Result<&'static libloading::Library, String> {
        LIB.get_or_init(|| {
            // SAFETY: loading a C library whose initialisers only register GObject types.
            unsafe { libloading::Library::new("libgtk-layer-shell.so.0") }.map_err(|e| {
                format!(
                    "libgtk-layer-shell not loaded ({e}); install libgtk-layer-shell0 for an overlay that never takes the focus"
                )
            })
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    /// The function `name` of the library, typed `T`.
    ///
    /// # Safety
    /// `T` must be the function's C signature.
    unsafe fn get<T>(
        lib: &'static libloading::Library,
        name: &str,
    ) -> Result<libloading::Symbol<'static, T>, String> {
        lib.get(name.as_bytes())
            .map_err(|e| format!("libgtk-layer-shell has no {name} ({e})"))
    }

    /// Makes `win` a layer surface on the overlay layer that never takes the keyboard.
    /// Ok(false): the compositor has no layer-shell protocol (GNOME).
    pub fn make_overlay(win: &gtk::Window) -> Result<bool, String> {
        let lib = lib()?;
        let ptr: Win = win.to_glib_none().0;
        // SAFETY: the signatures are gtk-layer-shell 0.8's (gtk-layer-shell.h); `ptr` is a live
        // GtkWindow, not realized yet, and this runs on the GTK main thread.
        unsafe {
            let keyboard =
                get::<unsafe extern "C" fn(Win, c_int)>(lib, "gtk_layer_set_keyboard_mode")
                    .map_err(|e| format!("{e}: libgtk-layer-shell older than 0.6"))?;
            let supported = get::<unsafe extern "C" fn() -> c_int>(lib, "gtk_layer_is_supported")?;
            if supported() == 0 {
                return Ok(false);
            }
            let init = get::<unsafe extern "C" fn(Win)>(lib, "gtk_layer_init_for_window")?;
            let layer = get::<unsafe extern "C" fn(Win, c_int)>(lib, "gtk_layer_set_layer")?;
            let edge = get::<unsafe extern "C" fn(Win, c_int, c_int)>(lib, "gtk_layer_set_anchor")?;
            let margin =
                get::<unsafe extern "C" fn(Win, c_int, c_int)>(lib, "gtk_layer_set_margin")?;
            let namespace =
                get::<unsafe extern "C" fn(Win, *const c_char)>(lib, "gtk_layer_set_namespace")?;
            init(ptr);
            layer(ptr, LAYER_OVERLAY);
            keyboard(ptr, KEYBOARD_MODE_NONE);
            // Bottom centre (anchored to the bottom edge only), above a bottom panel.
            edge(ptr, EDGE_BOTTOM, 1);
            margin(ptr, EDGE_BOTTOM, 64);
            namespace(ptr, c"dictum-indicator".as_ptr());
        }
        Ok(true)
    }
}
