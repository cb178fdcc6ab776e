//! The dictation the tray hosts: the engine's [`Dictation`], exactly what `dictum run` runs
//! (hotkey, microphone open while `[dictation] microphone` says, streaming transcription, LLM cleanup, injection, history).
//! The tray starts it, keeps it running, forwards menu actions and config changes to it, and
//! shows its state (icon, tooltip, menu status line, recording indicator, `tray-status` event
//! for open windows).
//!
//! Kept running (`supervisor.rs`): a start that fails (sound server, hotkey, display or
//! database not ready at login) is retried after 1, 2, 4 … 60 s; a dictation that stops without
//! being asked to (an engine error) is restarted the same way. Meanwhile the icon shows the
//! error and the tooltip and menu say why and when the next try is; "Start dictation now" in
//! the menu, or saving the settings, tries at once. While it runs, saved settings are applied
//! live by the engine (hotkey, microphone, model, LLM).
//!
//! Quit — the menu's or `dictum ctl quit` (the control socket belongs to the tray while its
//! dictation runs, and "quit" addressed to it means the same as in `dictum run`: Dictum goes
//! away, it does not linger in the tray with dictation off) — ends the dictation off the GUI
//! thread (the utterance under way is still typed), hides the icon at once, and exits within
//! [`QUIT_DEADLINE`], even when a stage hangs. SIGTERM and SIGINT quit the same way.

use crate::state::AppState;
use crate::supervisor::{self, Backoff, Phase, Starter};
use dictum_engine::dictation::{
    self, control, Command, Dictation, Event, StartOptions, State as LiveState,
};
use dictum_engine::ipc::{DictationState, TrayStatus};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;
use tauri::{AppHandle, Emitter, Manager};

/// The running dictation (None while it starts, waits for a retry, or after quit).
static LIVE: Mutex<Option<Dictation>> = Mutex::new(None);
/// The control socket (`dictum ctl toggle` from a compositor shortcut) while dictation runs.
static CONTROL: Mutex<Option<control::ControlServer>> = Mutex::new(None);
/// Wakes the supervisor (retry now) or ends it (quit).
static SUPERVISION: supervisor::Control = supervisor::Control::new();
/// Bumped on each settings save: a dictation that started on older settings gets the new ones.
static CONFIG_GENERATION: AtomicU64 = AtomicU64::new(0);

/// How long quit waits for the dictation to end. The engine bounds its own shutdown (5 s: the
/// utterance under way is finished within a 4 s grace, then what is left is marked
/// `interrupted` with its audio kept); this is the tray's safety net on top of it.
const DRAIN_DEADLINE: Duration = Duration::from_millis(5200);
/// The process is gone this long after quit at the latest, whatever a stage is doing. (The
/// icon and windows go at once: quit never waits on the GUI thread.)
pub const QUIT_DEADLINE: Duration = Duration::from_millis(5500);

fn with_live<T>(f: impl FnOnce(&Dictation) -> T) -> Option<T> {
    let guard = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    guard.as_ref().map(f)
}

/// Starts the dictation engine and keeps it running, in the background: loading and warming
/// the models takes a moment, and the tray must not wait for it.
pub fn attach(app: &AppHandle, _state: &AppState) {
    let app = app.clone();
    let spawned = std::thread::Builder::new()
        .name("dictum-tray-supervisor".into())
        .spawn(move || {
            let mut starter = TrayStarter {
                app: app.clone(),
                generation: 0,
            };
            supervisor::supervise(
                &mut starter,
                &SUPERVISION,
                Backoff::new(supervisor::BACKOFF_BASE, supervisor::BACKOFF_CAP),
                supervisor::HEALTHY_RUN,
                |phase| report(&app, phase),
            );
        });
    if let Err(e) = spawned {
        eprintln!("dictum-tray: cannot start the dictation thread: {e}; restart Dictum");
    }
}

/// Shows what the supervisor says.
fn report(app: &AppHandle, phase: Phase) {
    let state = app.state::<AppState>();
    let status = match phase {
        Phase::Starting { attempt: 1 } => update(&state, |s| {
            s.controller = false;
            s.hands_free = false;
            if s.state != DictationState::Error {
                s.state = DictationState::Idle;
                s.message = Some(STARTING.into());
            }
        }),
        // A retry keeps the last error on show until it works or fails again.
        Phase::Starting { .. } | Phase::Running | Phase::Ended => return,
        Phase::Failed {
            why,
            attempt,
            retry_in,
        } => show_down(
            &state,
            &format!("could not start (attempt {attempt})"),
            "could not start",
            "retrying",
            &why,
            retry_in,
        ),
        Phase::Stopped { why, retry_in } => {
            show_down(&state, "stopped", "stopped", "restarting", &why, retry_in)
        }
    };
    publish(app, &status);
}

const STARTING: &str = "starting: loading and warming up the speech model";

/// Starts the engine's dictation with the settings as last saved, and runs it until it stops.
struct TrayStarter {
    app: AppHandle,
    /// The settings generation the running dictation started with.
    generation: u64,
}

impl Starter for TrayStarter {
    type Running = (Dictation, mpsc::Receiver<Event>);

    fn start(&mut self) -> Result<Self::Running, String> {
        let state = self.app.state::<AppState>();
        self.generation = CONFIG_GENERATION.load(Ordering::SeqCst);
        let config = state.config();
        let opts = StartOptions {
            window_probe: dictation::window_probe(&config),
            config,
            // The app applies saved settings itself (config_changed), so the file is not
            // watched twice.
            config_path: None,
            history_path: state.history_path.clone(),
            model_dirs: dictum_engine::paths::model_dirs().unwrap_or_default(),
            audio_dir: dictum_engine::paths::audio_dir().ok(),
            hotkeys: true,
            sink: dictation::injector_sink(None),
            overrides: None,
        };
        let (tx, events) = mpsc::channel();
        Dictation::start(opts, tx).map(|d| (d, events))
    }

    fn run(&mut self, (d, events): Self::Running) -> String {
        let app = &self.app;
        let state = app.state::<AppState>();
        *LIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(d);
        if SUPERVISION.quitting() {
            // Quit came while it started: it found nothing to stop.
            stop_live();
            return "quit".into();
        }
        // The control socket once there is a dictation to forward its commands to.
        let (to_forwarder, commands) = mpsc::channel();
        match control::serve(to_forwarder) {
            Ok(server) => {
                *CONTROL.lock().unwrap_or_else(|p| p.into_inner()) = Some(server);
                let app = app.clone();
                let _ = std::thread::Builder::new()
                    .name("dictum-tray-control".into())
                    .spawn(move || forward_control(&app, commands));
            }
            Err(e) => eprintln!("dictum-tray: {e}"),
        }
        if CONFIG_GENERATION.load(Ordering::SeqCst) != self.generation {
            // Settings saved while it started.
            let config = state.config();
            with_live(|d| d.send(Command::Reconfigure(Box::new(config))));
        }
        if update(&state, |_| {}).hotkey_paused {
            // "Pause hotkey" was ticked while dictation was off (or before it restarted).
            with_live(|d| d.send(Command::PauseHotkey(true)));
        }
        let mut last_notice = None;
        for ev in events {
            match ev {
                Event::Ready(info) => {
                    let typing = info.inject_route.clone().unwrap_or_default();
                    eprintln!(
                        "dictum-tray: dictation ready: hotkey {} ({}), typing {}, session {}, model {} on {} ({:.0} ms); microphone {} ({}: {})",
                        info.hotkey.as_deref().unwrap_or("none"),
                        info.hotkey_path,
                        typing,
                        info.session,
                        info.model,
                        info.device,
                        info.startup_ms,
                        info.input,
                        info.microphone,
                        info.microphone_state
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
                    publish(app, &status);
                }
                Event::State { state: live } => {
                    let new = match live {
                        LiveState::Idle => DictationState::Idle,
                        LiveState::Recording => DictationState::Recording,
                        LiveState::Processing | LiveState::Injecting => DictationState::Processing,
                        LiveState::Listening => DictationState::Listening,
                        LiveState::Opening => DictationState::Opening,
                    };
                    set_state(app, &state, new, None);
                }
                Event::Notice { message } => {
                    let _ = app.emit("dictation-notice", &message);
                    last_notice = Some(message.clone());
                    let status = update(&state, |s| s.message = Some(message));
                    publish(app, &status);
                }
                Event::Dictation(report) => {
                    eprintln!(
                        "dictum-tray: dictation #{} {:?}, text ready {:.0} ms after the release",
                        report.id,
                        report.outcome,
                        report.release_to_text_ms.unwrap_or(0.0)
                    );
                    crate::tray::set_last(app, &report.text);
                    let _ = app.emit("dictation", &report);
                }
                // The words so far, for the indicator (`dictation-partial`).
                Event::Partial(partial) => {
                    let _ = app.emit("dictation-partial", &partial);
                }
                Event::HandsFree { on } => {
                    let status = update(&state, |s| s.hands_free = on);
                    publish(app, &status);
                }
                Event::Microphone { state: mic, .. } => {
                    eprintln!("dictum-tray: microphone {mic}");
                    let status = update(&state, |s| s.microphone = Some(mic));
                    publish(app, &status);
                }
                // `dictum ctl transcribe FILE`: into the Transcribe window's queue.
                Event::TranscribeFile { path } => crate::file_jobs::queue_and_show(app, vec![path]),
                Event::Stopped => break,
            }
        }
        // Stopped: asked to (quit), or by itself (the events end without `Stopped` when its
        // thread panicked).
        CONTROL.lock().unwrap_or_else(|p| p.into_inner()).take();
        stop_live();
        let status = update(&state, |s| {
            s.controller = false;
            s.hands_free = false;
            s.microphone = None;
            if s.state != DictationState::Error {
                s.state = DictationState::Idle;
            }
        });
        publish(app, &status);
        match last_notice {
            Some(n) => format!("the dictation engine ended unexpectedly (its last message: {n})"),
            None => "the dictation engine ended unexpectedly (details in the log)".into(),
        }
    }
}

/// Commands from the control socket: `quit` quits the tray app; the rest go to the dictation.
fn forward_control(app: &AppHandle, commands: mpsc::Receiver<Command>) {
    for cmd in commands {
        match cmd {
            Command::Shutdown => quit(app, "dictum ctl quit"),
            cmd => {
                if with_live(|d| d.send(cmd)).is_none() {
                    break; // ended: the socket answers "dictation has stopped"
                }
            }
        }
    }
}

/// Saved settings apply at once: while dictation runs the engine applies them live (hotkey and
/// mode re-registered, microphone re-opened, model and LLM reloaded as needed); while it is
/// not running (a failed start waiting for its retry) it is started again now with them.
pub fn config_changed(app: &AppHandle, state: &AppState) {
    CONFIG_GENERATION.fetch_add(1, Ordering::SeqCst);
    let config = state.config();
    crate::tray::fill_styles(app, &config);
    let style = Some(config.dictation.style.trim().to_string()).filter(|s| !s.is_empty());
    let status = update(state, |s| s.style = style);
    publish(app, &status);
    if with_live(|d| d.send(Command::Reconfigure(Box::new(config)))).is_none() {
        SUPERVISION.wake();
    }
}

/// Start/stop a dictation; while dictation is not running, tries to start it now.
pub fn toggle(app: &AppHandle, state: &AppState) -> Result<TrayStatus, String> {
    if with_live(|d| d.send(Command::Toggle)).is_none() {
        SUPERVISION.wake();
        let status = update(state, |_| {});
        publish(app, &status);
        return Err(match status.message {
            Some(m) if status.state == DictationState::Error => {
                format!("dictation is not running ({m}); trying to start it now")
            }
            _ => "dictation is still starting".into(),
        });
    }
    Ok(update(state, |_| {}))
}

/// The tray's "Start/Stop hands-free": hands-free listening on or off, whatever the mode.
pub fn hands_free(app: &AppHandle, state: &AppState) -> Result<TrayStatus, String> {
    if with_live(|d| d.send(Command::HandsFree(None))).is_none() {
        let status = update(state, |_| {});
        publish(app, &status);
        return Err("dictation is not running; hands-free cannot start yet".into());
    }
    Ok(update(state, |_| {}))
}

pub fn set_paused(app: &AppHandle, state: &AppState, paused: bool) -> Result<TrayStatus, String> {
    with_live(|d| d.send(Command::PauseHotkey(paused)));
    let status = update(state, |s| s.hotkey_paused = paused);
    publish(app, &status);
    Ok(status)
}

/// Types history row `id`'s text through the running dictation's gate (character budget,
/// cancel key, focus check; the row records how it went), waiting until it is done. Blocks:
/// never on the GUI thread. None when no dictation runs (nothing is typed then).
pub fn type_stored(id: i64) -> Option<Result<String, String>> {
    let (tx, rx) = mpsc::channel();
    let job = dictum_engine::dictation::TypeStored {
        row: dictum_engine::dictation::StoredRow::Id(id),
        reply: Some(tx),
    };
    with_live(|d| d.send(Command::TypeStored(job)))?;
    Some(
        match rx.recv_timeout(dictum_engine::dictation::control::TYPE_WAIT) {
            Ok(done) => done,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                Err("still typing; the history row says how it went".into())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err("dictation stopped; the text is in history".into())
            }
        },
    )
}

/// Ends the dictation (the utterance under way is still typed). Blocks until it has ended:
/// never call it on the GUI thread (see [`quit`]).
fn stop_live() {
    let live = LIVE.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(d) = live {
        d.shutdown();
    }
}

/// Quits the app (menu Quit, `dictum ctl quit`, SIGTERM): no more restarts, the icon and
/// windows hidden at once, the dictation ended off the calling thread, and the app exits once
/// it has, or after [`DRAIN_DEADLINE`] if a stage hangs; the process is gone within
/// [`QUIT_DEADLINE`] whatever happens. Returns at once.
pub fn quit(app: &AppHandle, why: &str) {
    if SUPERVISION.quitting() {
        return;
    }
    SUPERVISION.quit();
    eprintln!("dictum-tray: quitting ({why})");
    let state = app.state::<AppState>();
    let status = update(&state, |s| {
        s.controller = false;
        s.hands_free = false;
        s.state = DictationState::Idle;
        s.message = Some("quitting".into());
    });
    publish(app, &status);
    // Dictum is gone for the user at once; the process stays only to finish the utterance.
    crate::tray::hide(app);
    for window in app.webview_windows().values() {
        let _ = window.hide();
    }
    let app = app.clone();
    let spawned = std::thread::Builder::new()
        .name("dictum-tray-quit".into())
        .spawn(move || {
            let begun = std::time::Instant::now();
            let (done_tx, done) = mpsc::channel();
            let _ = std::thread::Builder::new()
                .name("dictum-tray-stop".into())
                .spawn(move || {
                    CONTROL.lock().unwrap_or_else(|p| p.into_inner()).take();
                    stop_live();
                    let _ = done_tx.send(());
                });
            match done.recv_timeout(DRAIN_DEADLINE) {
                Ok(()) => eprintln!(
                    "dictum-tray: dictation ended in {:.0} ms; exiting",
                    begun.elapsed().as_secs_f64() * 1000.0
                ),
                Err(_) => eprintln!(
                    "dictum-tray: dictation did not end within {} s; exiting anyway",
                    DRAIN_DEADLINE.as_secs_f64()
                ),
            }
            app.exit(0);
            // The event loop did not end the process in time.
            std::thread::sleep(QUIT_DEADLINE.saturating_sub(begun.elapsed()));
            eprintln!("dictum-tray: the app did not exit in time; ending the process");
            std::process::exit(0);
        });
    if spawned.is_err() {
        std::process::exit(0);
    }
}

/// SIGTERM (logout, `systemctl --user stop`, `kill`) and SIGINT quit like the menu's Quit: the
/// utterance under way is still typed, within [`QUIT_DEADLINE`]. A second signal ends the
/// process at once.
#[cfg(unix)]
pub fn quit_on_signals(app: &AppHandle) {
    let app = app.clone();
    let spawned = std::thread::Builder::new()
        .name("dictum-tray-signals".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("dictum-tray: cannot watch for SIGTERM ({e}); quit from the menu");
                    return;
                }
            };
            runtime.block_on(async {
                use tokio::signal::unix::{signal, SignalKind};
                let (Ok(mut term), Ok(mut int)) = (
                    signal(SignalKind::terminate()),
                    signal(SignalKind::interrupt()),
                ) else {
                    eprintln!("dictum-tray: cannot watch for SIGTERM; quit from the menu");
                    return;
                };
                let name = tokio::select! {
                    _ = term.recv() => "SIGTERM",
                    _ = int.recv() => "SIGINT",
                };
                quit(&app, name);
                tokio::select! {
                    _ = term.recv() => {},
                    _ = int.recv() => {},
                }
                eprintln!("dictum-tray: second signal; ending now");
                std::process::exit(1);
            });
        });
    if let Err(e) = spawned {
        eprintln!("dictum-tray: cannot watch for SIGTERM ({e}); quit from the menu");
    }
}

#[cfg(not(unix))]
pub fn quit_on_signals(_app: &AppHandle) {}

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

/// Shows that dictation is not running: `what` happened (`logged` in the log) because of
/// `why`, and it tries `again` in `retry_in`.
fn show_down(
    state: &AppState,
    logged: &str,
    what: &str,
    again: &str,
    why: &str,
    retry_in: Duration,
) -> TrayStatus {
    let secs = retry_in.as_secs();
    eprintln!("dictum-tray: dictation {logged}: {why}; {again} in {secs} s");
    update(state, |s| {
        s.controller = false;
        s.hands_free = false;
        s.state = DictationState::Error;
        s.message = Some(format!(
            "dictation {what}: {} ({again} in {secs} s; or choose Start dictation now)",
            why.trim_end_matches(['.', ' ']),
        ));
    })
}

fn update(state: &AppState, f: impl FnOnce(&mut TrayStatus)) -> TrayStatus {
    let mut guard = match state.status.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    f(&mut guard);
    guard.clone()
}

/// Tray icon + tooltip + menu + the indicator window + a `tray-status` event for open windows.
pub fn publish(app: &AppHandle, status: &TrayStatus) {
    crate::tray::show_status(app, status);
    crate::windows::indicator_follows(app, status.state == DictationState::Recording);
    let _ = app.emit("tray-status", status);
}
