//! On GNOME's Wayland session the tray app's windows are XWayland clients, so the recording
//! indicator is the X11 window that never takes the focus (`no_focus.rs`) and can be shown.
//!
//! mutter has no layer shell, and it gives an ordinary Wayland toplevel the keyboard when it
//! appears whatever GTK 3 asks (`crates/dictum-cli/tests/tray_indicator_wayland.rs` saw keys stop
//! reaching the focused window on mutter 43), so a native Wayland indicator is never shown
//! there (`windows::indicator`). Under XWayland mutter is the X11 window manager and keeps the
//! X11 rules: a notification window with the input hint off is not focused. So, when the tray
//! app starts on GNOME (`XDG_CURRENT_DESKTOP`, read as the engine reads it for shortcuts) with
//! `WAYLAND_DISPLAY` and `DISPLAY` (XWayland) set and the user has not set `GDK_BACKEND`, it
//! sets `GDK_BACKEND=x11` for itself before GTK starts, and logs so.
//!
//! Only GTK (and WebKitGTK, whose web processes inherit it and must match the UI process)
//! reads `GDK_BACKEND`: the engine's session detection (typing, hotkeys, shortcuts) reads
//! `WAYLAND_DISPLAY`, `DISPLAY` and `XDG_CURRENT_DESKTOP`, which stay as they were, so dictation
//! still sees a Wayland GNOME session. The processes the engine spawns (the speech worker, which
//! is this binary and exits before GTK; notify-send, wl-copy, gsettings, localectl, dbus-daemon)
//! are not GTK programs, so the inherited value changes nothing for them.
//!
//! Opt out: `GDK_BACKEND=wayland dictum-tray` (a native Wayland app, no indicator).

/// What [`decide`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Choice {
    /// GNOME on Wayland with XWayland, `GDK_BACKEND` unset: the app runs as an X11 client.
    UseXWayland,
    /// GNOME on Wayland without XWayland (`DISPLAY` unset): native Wayland, no indicator.
    NoXWayland,
    /// Anything else (another desktop, X11, or `GDK_BACKEND` set by the user): left alone.
    LeaveAlone,
}

/// The line logged for [`Choice::UseXWayland`].
pub const USING: &str = "GNOME on Wayland: the tray app's windows run under XWayland (GDK_BACKEND=x11) so the recording indicator never takes the keyboard; start it with GDK_BACKEND=wayland to keep them native Wayland (the indicator is then not shown)";
/// The line logged for [`Choice::NoXWayland`].
pub const NO_XWAYLAND: &str = "GNOME on Wayland without XWayland (DISPLAY is not set): the recording indicator will not be shown (mutter would give it the keyboard); enable XWayland to have it";

/// Decides from the environment `env` (a variable's value, `None` when unset).
pub fn decide(env: impl Fn(&str) -> Option<String>) -> Choice {
    let set = |k: &str| env(k).is_some_and(|v| !v.is_empty());
    let gnome = dictum_engine::shortcut::detect(&env) == dictum_engine::shortcut::Desktop::Gnome;
    if env("GDK_BACKEND").is_some() || !gnome || !set("WAYLAND_DISPLAY") {
        return Choice::LeaveAlone;
    }
    if set("DISPLAY") {
        Choice::UseXWayland
    } else {
        Choice::NoXWayland
    }
}

/// Applies [`decide`] to this process's environment and logs what it chose. Must run first
/// in `main`, before any thread is started (see the SAFETY note).
pub fn apply() {
    match decide(|k| std::env::var(k).ok()) {
        Choice::UseXWayland => {
            // SAFETY (edition 2021, where `set_var` is not yet `unsafe`, but the rule of the
            // 2024 `unsafe fn` holds): setting a variable races with any other thread reading
            // or writing the environment (Rust's `env::var` or C's `getenv`, e.g. inside GTK,
            // glib or D-Bus). This runs on the main thread at the top of `main`, after only
            // `exit_if_worker` (reads one variable) and `set_private_umask` (a umask call),
            // before tracing, the engine, Tauri, GTK or any runtime start a thread: the process
            // has a single thread here, so nothing can read the environment concurrently.
            std::env::set_var("GDK_BACKEND", "x11");
            println!("dictum-tray: {USING}");
        }
        Choice::NoXWayland => println!("dictum-tray: {NO_XWAYLAND}"),
        Choice::LeaveAlone => {}
    }
}

#[cfg(test)]
mod tests {
    use super::{decide, Choice};

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    const GNOME_WAYLAND: &[(&str, &str)] = &[
        ("XDG_CURRENT_DESKTOP", "ubuntu:GNOME"),
        ("WAYLAND_DISPLAY", "wayland-0"),
        ("DISPLAY", ":0"),
    ];

    #[test]
    fn gnome_wayland_with_xwayland_uses_it() {
        assert_eq!(decide(env(GNOME_WAYLAND)), Choice::UseXWayland);
    }

    #[test]
    fn a_gdk_backend_the_user_set_wins() {
        let mut v = GNOME_WAYLAND.to_vec();
        v.push(("GDK_BACKEND", "wayland"));
        assert_eq!(decide(env(&v)), Choice::LeaveAlone);
    }

    #[test]
    fn without_display_there_is_no_xwayland() {
        let v: Vec<_> = GNOME_WAYLAND
            .iter()
            .copied()
            .filter(|(k, _)| *k != "DISPLAY")
            .collect();
        assert_eq!(decide(env(&v)), Choice::NoXWayland);
    }

    #[test]
    fn other_desktops_and_x11_sessions_are_left_alone() {
        let kde = [
            ("XDG_CURRENT_DESKTOP", "KDE"),
            ("WAYLAND_DISPLAY", "wayland-0"),
            ("DISPLAY", ":0"),
        ];
        assert_eq!(decide(env(&kde)), Choice::LeaveAlone);
        let gnome_x11 = [("XDG_CURRENT_DESKTOP", "GNOME"), ("DISPLAY", ":0")];
        assert_eq!(decide(env(&gnome_x11)), Choice::LeaveAlone);
    }
}
