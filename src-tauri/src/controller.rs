//! The dictation the tray hosts: the engine's [`Dictation`], exactly what `dictum run` runs
//! (hotkey, microphone kept open, streaming transcription, LLM cleanup, injection, history).
//! The tray only starts it, forwards menu actions and config changes to it, and shows its
//! state (icon, tooltip, recording indicator, `tray-status` event for open windows).

use crate::state::AppState;
use dictum_engine::dictation::{
    self, control, Command, Dictation, Event, StartOptions, State as LiveState,
};
use dictum_engine::ipc::{DictationState, TrayStatus};
use std::sync::{mpsc, Mutex};
use tauri::{AppHandle, Emitter, Manager};

/// The running dictation (None while it starts or when it could not start).
static LIVE: Mutex<Option<Dictation>> = Mutex::new(None);
/// The control socket (`dictum ctl toggle` from a compositor shortcut) while dictation runs.
static CONTROL: Mutex<Option<control::ControlServer>> = Mutex::new(None);

fn with_live<T>(f: impl FnOnce(&Dictation) -> T) -> Option<T> {
    let guard = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    guard.as_ref().map(f)
}

/// Starts the dictation engine in the background: loading and warming the models takes a
/// moment, and the tray must not wait for it.
pub fn attach(app: &AppHandle, state: &AppState) {
    let status = update(state, |s| {
        s.controller = false;
        s.message = Some("starting: loading and warming up the speech model".into());
    });
    publish(app, &status);
    let config = state.config();
    let history_path = state.history_path.clone();
    let app = app.clone();
    std::thread::spawn(move || {
        let opts = StartOptions {
            window_probe: dictation::window_probe(&config),
            config,
            // The app applies saved settings itself (config_changed), so the file is not
            // watched twice.
            config_path: None,
            history_path,
            model_dirs: dictum_engine::paths::model_dirs().unwrap_or_default(),
            audio_dir: dictum_engine::paths::audio_dir().ok(),
            hotkeys: true,
            sink: dictation::injector_sink(None),
            overrides: None,
        };
        let (tx, events) = mpsc::channel();
        let state = app.state::<AppState>();
        match Dictation::start(opts, tx) {
            Ok(d) => {
                match control::serve(d.command_sender()) {
                    Ok(server) => {
                        *CONTROL.lock().unwrap_or_else(|p| p.into_inner()) = Some(server);
                    }
                    Err(e) => eprintln!("dictum-tray: {e}"),
                }
                *LIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(d);
            }
            Err(e) => {
                eprintln!("dictum-tray: dictation could not start: {e}");
                let status = update(&state, |s| {
                    s.controller = false;
                    s.state = DictationState::Error;
                    s.message = Some(format!("dictation could not start: {e}"));
                });
                publish(&app, &status);
                return;
            }
        }
        for ev in events {
            match ev {
                Event::Ready(info) => {
                    let typing = info.inject_route.clone().unwrap_or_default();
                    eprintln!(
                        "dictum-tray: dictation ready: hotkey {} ({}), typing {}, session {}, model {} on {} ({:.0} ms)",
                        info.hotkey.as_deref().unwrap_or("none"),
                        info.hotkey_path,
                        typing,
                        info.session,
                        info.model,
                        info.device,
                        info.startup_ms
                    );
                    let status = update(&state, |s| {
                        s.controller = true;
                        s.state = DictationState::Idle;
                        s.message = Some(format!(
                            "ready: {} ({}, {}) on {}; typing: {}",
                            info.hotkey.unwrap_or_default(),
                            info.mode.replace('_', "-"),
                            info.hotkey_path.replace('_', " "),
                            info.device,
                            typing
                        ));
                    });
                    publish(&app, &status);
                }
                Event::State { state: live } => {
                    let new = match live {
                        LiveState::Idle => DictationState::Idle,
                        LiveState::Recording => DictationState::Recording,
                        LiveState::Processing | LiveState::Injecting => DictationState::Processing,
                    };
                    set_state(&app, &state, new, None);
                }
                Event::Notice { message } => {
                    let _ = app.emit("dictation-notice", &message);
                    let status = update(&state, |s| s.message = Some(message));
                    publish(&app, &status);
                }
                Event::Dictation(report) => {
                    eprintln!(
                        "dictum-tray: dictation #{} {:?}, text ready {:.0} ms after the release",
                        report.id,
                        report.outcome,
                        report.release_to_text_ms.unwrap_or(0.0)
                    );
                    crate::tray::set_last(&app, &report.text);
                    let _ = app.emit("dictation", &report);
                }
                Event::Stopped => break,
            }
        }
    });
}

/// Saved settings apply at once: hotkey and mode re-registered, microphone re-opened, model
/// and LLM reloaded as needed, by the engine itself.
pub fn config_changed(_app: &AppHandle, state: &AppState) {
    let config = state.config();
    with_live(|d| d.send(Command::Reconfigure(Box::new(config))));
}

pub fn toggle(app: &AppHandle, state: &AppState) -> Result<TrayStatus, String> {
    if with_live(|d| d.send(Command::Toggle)).is_none() {
        let status = update(state, |_| {});
        publish(app, &status);
        return Err(status
            .message
            .unwrap_or_else(|| "dictation is still starting".into()));
    }
    Ok(update(state, |_| {}))
}

pub fn set_paused(app: &AppHandle, state: &AppState, paused: bool) -> Result<TrayStatus, String> {
    with_live(|d| d.send(Command::PauseHotkey(paused)));
    let status = update(state, |s| s.hotkey_paused = paused);
    publish(app, &status);
    Ok(status)
}

/// Ends the dictation (the utterance under way is still typed); called on quit.
pub fn detach() {
    CONTROL.lock().unwrap_or_else(|p| p.into_inner()).take();
    let live = LIVE.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(d) = live {
        d.shutdown();
    }
}

/// Called on every state change of the dictation.
pub fn set_state(app: &AppHandle, state: &AppState, new: DictationState, message: Option<String>) {
    let status = update(state, |s| {
        s.state = new;
        if message.is_some() {
            s.message = message;
        }
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
