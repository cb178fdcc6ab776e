//! Start-up: everything the controller needs before it says ready, in order. The instance
//! lock (one dictation per history), history recovery (a damaged database moved aside,
//! journaled rows and spooled audio replayed, a crashed run's rows marked interrupted), the
//! microphone (opened now and kept), the transcription worker (`WorkerSeed`, reused when a
//! stuck worker is replaced), the injector thread, the wait for the model, and the hotkey
//! last (`start_hotkey`: X11 grab, GlobalShortcuts portal, or the compositor's shortcut).

use super::housekeeping::mtime;
use super::Controller;
use crate::audio::capture::Capture;
use crate::config::Config;
use crate::dictation::injector::{self, InjectorMsg};
use crate::dictation::microphone::{capture_options, Microphone};
use crate::dictation::state::State;
use crate::dictation::worker::{Job, Queue, Worker};
use crate::dictation::{Event, Input, ReadyInfo, Shared, StartOptions};
use crate::hotkey::Hotkeys;
use crate::inject::session::{hotkey_path, Abilities, HotkeyPath, Session, SessionKind};
use crate::pipeline::Engine;
use crate::profile::Profiles;
use crate::store::recovery::{self, InstanceLock};
use crate::store::spool;
use crate::store::History;
use crate::timing::ms_since;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// What it takes to start a transcription worker: at start-up, and again when one is stuck.
pub(super) struct WorkerSeed {
    model_dirs: Vec<PathBuf>,
    audio_dir: Option<PathBuf>,
    history_path: PathBuf,
    to_injector: mpsc::Sender<InjectorMsg>,
    to_controller: mpsc::Sender<Input>,
    shared: Arc<Shared>,
}

impl WorkerSeed {
    /// Starts a worker on `queue` with its own engine (the model is loaded by the queue's
    /// first job, `Prepare`). Returns the model file, or with a speech server and no local
    /// model installed (a thin client, [`crate::pipeline::no_local_fallback`]), the server's.
    pub(super) fn spawn(&self, config: &Config, queue: Arc<Queue>) -> Result<String, String> {
        let mut engine = Engine::new(config.clone(), self.model_dirs.clone());
        engine.audio_dir = self.audio_dir.clone();
        let model_name = match engine.model_path() {
            Ok(path) => path.display().to_string(),
            Err(_) if crate::pipeline::no_local_fallback(config, &self.model_dirs).is_some() => {
                format!("{} at {}", config.stt.remote_model, config.stt.url)
            }
            Err(e) => return Err(e.to_string()),
        };
        let history = History::open(&self.history_path).map_err(|e| e.to_string())?;
        let worker = Worker {
            engine,
            history,
            queue: queue.clone(),
            to_injector: self.to_injector.clone(),
            to_controller: self.to_controller.clone(),
            shared: self.shared.clone(),
            pending_load: None,
        };
        // Queued before the worker starts, so its first job is the load.
        queue.push(Job::Prepare);
        std::thread::Builder::new()
            .name("dictum-worker".into())
            .spawn(move || {
                let mut worker = worker;
                if let Ok(Some(warm)) = worker.engine.enable_llm() {
                    if !warm.ok {
                        let _ = worker.to_controller.send(Input::Notice(format!(
                            "LLM warm-up failed ({}); dictations are typed uncleaned until it answers",
                            warm.warnings.join("; ")
                        )));
                    }
                }
                worker.run_warm()
            })
            .map_err(|e| format!("cannot start the transcription thread: {e}"))?;
        Ok(model_name)
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn start(
    opts: StartOptions,
    inputs_tx: &mpsc::Sender<Input>,
    inputs: &mpsc::Receiver<Input>,
    shared: &Arc<Shared>,
    queue: &Arc<Queue>,
    to_injector: mpsc::Sender<InjectorMsg>,
    injector_rx: mpsc::Receiver<InjectorMsg>,
    events: &mpsc::Sender<Event>,
    started: Instant,
) -> Result<(Controller, ReadyInfo), String> {
    let config = opts.config.clone();
    let process_started_ms = crate::store::now_ms();
    // One dictation process per history: a second one is refused here, before it touches
    // the microphone or the hotkey.
    let lock = InstanceLock::acquire(&opts.history_path)?;
    let open_history = || History::open(&opts.history_path).map_err(|e| e.to_string());
    // A damaged database is moved aside and a fresh one started (the user is told); a locked
    // one is an error.
    let (history, recovered) =
        History::open_or_recover(&opts.history_path).map_err(|e| e.to_string())?;
    if let Some(r) = recovered {
        let _ = events.send(Event::Notice {
            message: r.to_string(),
        });
    }
    // Rows the database refused last time (journal), then spool audio: before the crashed
    // rows are marked, so a row whose final state was journaled is not called interrupted.
    for message in spool::at_start(&history) {
        let _ = events.send(Event::Notice { message });
    }
    // Rows a crashed Dictum left `pending`: theirs, not ours (we hold the lock now).
    match recovery::mark_interrupted(&history, process_started_ms, opts.audio_dir.as_deref()) {
        Ok(done) => {
            if let Some(message) = done.message() {
                let _ = events.send(Event::Notice { message });
            }
        }
        Err(e) => {
            let _ = events.send(Event::Notice {
                message: format!("could not check the history for unfinished dictations: {e}"),
            });
        }
    }

    // The microphone: opened now and kept, so a key press never waits for the stream.
    let capture =
        Capture::open_with(capture_options(&config.dictation)).map_err(|e| e.to_string())?;
    let first_frames = capture
        .wait_first_frames(Duration::from_secs(5))
        .map(|d| d.as_secs_f64() * 1000.0)
        .ok();
    if first_frames.is_none() {
        let _ = events.send(Event::Notice {
            message: format!(
                "the input {} has not delivered audio within 5 s; dictations may start late",
                capture.info().device
            ),
        });
    }

    // The worker: model loaded and warmed, LLM warmed, before we say ready.
    let seed = WorkerSeed {
        model_dirs: opts.model_dirs.clone(),
        audio_dir: opts.audio_dir.clone(),
        history_path: opts.history_path.clone(),
        to_injector: to_injector.clone(),
        to_controller: inputs_tx.clone(),
        shared: shared.clone(),
    };
    let model_name = seed.spawn(&config, queue.clone())?;
    // A thin client says once that nothing redoes what the server fails.
    let stt_note = crate::pipeline::no_local_fallback(&config, &opts.model_dirs).map(|note| {
        tracing::warn!("{note}");
        note.to_string()
    });
    let llm_on = config.llm.enabled;

    // The injector: its sink is built on its own thread (X11 and clipboard handles stay
    // there), and rebuilt there when the config changes.
    let injector_history = open_history()?;
    let injector_tx = inputs_tx.clone();
    let injector_shared = shared.clone();
    let (sink_ready_tx, sink_ready_rx) = mpsc::channel();
    let sink_factory = opts.sink;
    let sink_config = config.clone();
    std::thread::Builder::new()
        .name("dictum-injector".into())
        .spawn(move || {
            let sink = match catch_start(|| sink_factory(&sink_config)) {
                Ok(mut sink) => {
                    let _ = sink_ready_tx.send(Ok(sink.route()));
                    sink
                }
                Err(e) => {
                    let _ = sink_ready_tx.send(Err(e));
                    return;
                }
            };
            injector::run(
                sink,
                sink_factory,
                sink_config,
                injector_history,
                injector_rx,
                injector_tx,
                injector_shared,
            )
        })
        .map_err(|e| format!("cannot start the injector thread: {e}"))?;
    let sink_route = sink_ready_rx
        .recv()
        .map_err(|_| "the injector thread ended during start-up".to_string())??;
    if let Some(problem) = sink_route.as_deref().and_then(|r| r.strip_prefix("none: ")) {
        let _ = events.send(Event::Notice {
            message: format!("{problem} (dictations are kept in history and on the clipboard)"),
        });
    }

    // Wait for the model.
    let (load_ms, warmup_ms, device, plan) = loop {
        match inputs.recv_timeout(Duration::from_secs(120)) {
            Ok(Input::ModelLoaded {
                load_ms,
                warmup_ms,
                device,
                plan,
            }) => break (load_ms, warmup_ms, device, plan),
            Ok(Input::Problem(e)) => return Err(e),
            Ok(Input::Notice(message)) => {
                let _ = events.send(Event::Notice { message });
            }
            Ok(_) => {}
            Err(_) => return Err("the speech model did not load within 120 s".into()),
        }
    };

    // The hotkey last: once it is had, a press must work.
    let (hotkeys, hotkey_path) = if opts.hotkeys {
        start_hotkey(&config, inputs_tx, events)?
    } else {
        (HotkeySource::None, "none".to_string())
    };

    let info = ReadyInfo {
        model: model_name,
        stt_note,
        device,
        plan,
        model_load_ms: load_ms,
        warmup_ms,
        input: capture.info().device.clone(),
        input_backend: format!("{:?}", capture.info().backend),
        first_frames_ms: first_frames,
        hotkey: opts.hotkeys.then(|| config.dictation.hotkey.clone()),
        hotkey_path,
        session: Session::detect().describe(),
        inject_route: sink_route,
        mode: config.dictation.mode.as_str().into(),
        llm: llm_on,
        startup_ms: ms_since(started),
    };
    let config_mtime = opts.config_path.as_ref().and_then(|p| mtime(p));
    let profiles = compile_profiles(&config, events);
    let mic = Microphone::new(capture, &config.dictation);
    // Players a killed Dictum left paused are resumed now (after the instance lock: never
    // another running instance's).
    let media = crate::media::Pauser::new(
        crate::portal::Bus::Session,
        crate::media::state_file(&opts.history_path),
    );
    media.recover();
    Ok((
        Controller {
            config,
            config_path: opts.config_path.clone(),
            config_mtime,
            mic,
            hotkeys,
            history,
            queue: queue.clone(),
            shared: shared.clone(),
            to_injector,
            events: events.clone(),
            live: None,
            hands_free: None,
            flights: BTreeMap::new(),
            oldest_since: Instant::now(),
            next_seq: 1,
            shutdown_at: None,
            _lock: lock,
            state: State::Idle,
            window_probe: opts.window_probe,
            overrides: opts.overrides,
            last_housekeeping: Instant::now(),
            seed,
            profiles,
            unknown_app_told: false,
            media,
            cues: Default::default(),
            cue_recording: false,
            edit: super::edit::EditSide::new(inputs_tx.clone(), info.hotkey_path == "x11_grab"),
        },
        info,
    ))
}

/// The config's profiles (validated when the config was loaded; a config built in code that
/// slipped through gets no profiles, and the user is told).
pub(super) fn compile_profiles(config: &Config, events: &mpsc::Sender<Event>) -> Profiles {
    Profiles::compile(&config.profiles).unwrap_or_else(|(key, reason)| {
        let _ = events.send(Event::Notice {
            message: format!("per-app profiles not used: {key}: {reason}"),
        });
        Profiles::default()
    })
}

/// The sink factory may panic (a toolkit's assertion); start-up then fails with the reason.
fn catch_start<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    crate::dictation::catch(f)
        .unwrap_or_else(|msg| Err(format!("the text output could not start: {msg}")))
}

/// Where hotkey events come from.
pub(super) enum HotkeySource {
    /// X11 key grabs (X11 sessions).
    X11(Hotkeys),
    /// The GlobalShortcuts portal (Wayland: KDE, GNOME ≥ 48, Hyprland).
    Portal {
        shortcut: crate::portal::PortalShortcut,
        paused: bool,
    },
    /// None in-process: `dictum ctl` from a compositor shortcut, the tray menu, stdin.
    None,
}

/// Takes the hotkey by the session's path (see `inject::session::hotkey_path`). Returns the
/// source and the path's name for the ready event. A Wayland session always starts: without
/// the portal, the compositor's own shortcut drives `dictum ctl` (and the user is told how).
fn start_hotkey(
    config: &Config,
    inputs_tx: &mpsc::Sender<Input>,
    events: &mpsc::Sender<Event>,
) -> Result<(HotkeySource, String), String> {
    let session = Session::detect();
    let mut ab = Abilities {
        x11: session.kind == SessionKind::X11 && crate::hotkey::display_problem().is_none(),
        ..Abilities::default()
    };
    if session.kind == SessionKind::Wayland {
        ab.global_shortcuts = crate::portal::probe().global_shortcuts.is_some();
    }
    let notice = |message: String| {
        let _ = events.send(Event::Notice { message });
    };
    let compositor = |release: bool| {
        let how = if release {
            "push-to-talk"
        } else {
            "toggle: this desktop's shortcuts report no key release"
        };
        format!(
            "hotkey: {} has no GlobalShortcuts portal, so your compositor's shortcut drives \
             Dictum ({how}); `dictum shortcut install` sets it up for {}, `dictum shortcut \
             print` shows the lines",
            session.describe(),
            config.dictation.hotkey
        )
    };
    let path = hotkey_path(&session, &ab);
    // A mouse button is grabbed on X11 only; elsewhere the compositor must bind it.
    if let (
        Ok(crate::hotkey::Binding::Button(_)),
        HotkeyPath::Portal | HotkeyPath::Compositor { .. },
    ) = (
        crate::hotkey::parse_binding(&config.dictation.hotkey),
        &path,
    ) {
        notice(format!(
            "hotkey: {} cannot be grabbed in {}; {}",
            config.dictation.hotkey,
            session.describe(),
            crate::hotkey::MOUSE_ON_WAYLAND
        ));
        return Ok((HotkeySource::None, "compositor".into()));
    }
    match path {
        HotkeyPath::X11Grab => {
            let tx = inputs_tx.clone();
            let mut hk = Hotkeys::new(move |id, pressed| {
                let _ = tx.send(Input::Key {
                    id,
                    pressed,
                    at: Instant::now(),
                });
            })?;
            hk.set_main(&config.dictation.hotkey)?;
            hk.set_cancel(&config.dictation.cancel_key)?;
            Ok((HotkeySource::X11(hk), "x11_grab".into()))
        }
        HotkeyPath::Portal => {
            let tx = inputs_tx.clone();
            let started = crate::portal::PortalShortcut::start(
                &config.dictation.hotkey,
                move |id, pressed| {
                    let _ = tx.send(Input::PortalKey {
                        id: id.to_string(),
                        pressed,
                        at: Instant::now(),
                    });
                },
            );
            match started {
                Ok(shortcut) => {
                    let bound = shortcut
                        .trigger_description()
                        .unwrap_or_else(|| config.dictation.hotkey.clone());
                    notice(format!(
                        "hotkey: GlobalShortcuts portal ({bound}); change it in your desktop's                          shortcut settings or Dictum's settings"
                    ));
                    Ok((
                        HotkeySource::Portal {
                            shortcut,
                            paused: false,
                        },
                        "portal".into(),
                    ))
                }
                Err(e) => {
                    notice(format!("hotkey: the GlobalShortcuts portal failed ({e})"));
                    notice(compositor(true));
                    Ok((HotkeySource::None, "compositor".into()))
                }
            }
        }
        HotkeyPath::Compositor { release } => {
            notice(compositor(release));
            Ok((HotkeySource::None, "compositor".into()))
        }
        HotkeyPath::None { reason } => Err(format!(
            "no global hotkey: {reason}; run Dictum inside your desktop session, or start it \
             with --no-hotkey and drive it with `dictum ctl`"
        )),
    }
}
