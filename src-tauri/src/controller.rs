//! Where the dictation controller plugs in.
//!
//! TODO(issue 4 integration): the hotkey listener, the `dictum run` state machine and
//! live capture are being written on `main` (the daemon). When they land, construct that
//! controller in [`attach`] with the app's config, forward each of its state changes to
//! [`set_state`] (tray icon, tooltip, indicator window), route [`toggle`] and [`set_paused`]
//! to it, and rebuild it in [`config_changed`]. Do NOT write a second dictation loop here: the
//! tray app hosts the same engine as `dictum run`, nothing else.
//!
//! Until then the app is honest about it: the status says no controller is connected and the
//! tray's Start/Stop item reports that instead of doing something else.

use crate::state::AppState;
use dictum_engine::ipc::{DictationState, TrayStatus};
use tauri::{AppHandle, Emitter};

const NOT_CONNECTED: &str = "live dictation is not connected in this build yet (the hotkey daemon is issue 4); the tray shows history, stats and settings";

pub fn attach(app: &AppHandle, state: &AppState) {
    let status = update(state, |s| {
        s.controller = false;
        s.message = Some(NOT_CONNECTED.into());
    });
    publish(app, &status);
}

pub fn config_changed(_app: &AppHandle, _state: &AppState) {
    // The controller will re-read hotkey/mic/model settings here (see the module TODO).
}

pub fn toggle(app: &AppHandle, state: &AppState) -> Result<TrayStatus, String> {
    let status = update(state, |_| {});
    publish(app, &status);
    if !status.controller {
        return Err(NOT_CONNECTED.into());
    }
    Ok(status)
}

pub fn set_paused(app: &AppHandle, state: &AppState, paused: bool) -> Result<TrayStatus, String> {
    let status = update(state, |s| s.hotkey_paused = paused);
    publish(app, &status);
    Ok(status)
}

/// Called by the controller on every state change.
#[allow(dead_code)] // used once the controller is attached (module TODO)
pub fn set_state(app: &AppHandle, state: &AppState, new: DictationState, message: Option<String>) {
    let status = update(state, |s| {
        s.state = new;
        s.message = message;
    });
    publish(app, &status);
}

fn update(state: &AppState, f: impl FnOnce(&mut TrayStatus)) -> TrayStatus {
    let mut guard = match state.status.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    f(&mut guard);
    guard.clone()
}

/// Tray icon + tooltip + the indicator window + a `tray-status` event for open windows.
pub fn publish(app: &AppHandle, status: &TrayStatus) {
    crate::tray::show_status(app, status);
    crate::windows::indicator(app, status.state == DictationState::Recording);
    let _ = app.emit("tray-status", status);
}
