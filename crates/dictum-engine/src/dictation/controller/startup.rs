//! Start-up: everything the controller needs before it says ready, in order. The instance
//! lock (one dictation per history), history recovery (a damaged database moved aside,
//! journaled rows and spooled audio replayed, a crashed run's rows marked interrupted), the
//! microphone (opened now and kept), the transcription worker (`worker::Seed`, reused when a
//! stuck worker is replaced), the injector thread, the wait for the model, and the hotkey
//! last (`keys::start_hotkey`: X11 grab, GlobalShortcuts portal, or the compositor's
//! shortcut). [`run`] is the controller thread: start-up, then the controller's loop.

use super::feedback::Feedback;
use super::flights::Flights;
use super::keys::{start_hotkey, EditSide, HotkeySource, Keys, RetypeKey, StyleKeys};
use super::settings::{Apps, Watch};
use super::{Controller, Links};
use crate::audio::capture::Capture;
use crate::dictation::injector;
use crate::dictation::messages::{Event, InjectorMsg, Input, ReadyInfo};
use crate::dictation::microphone::{capture_options, Microphone};
use crate::dictation::options::StartOptions;
use crate::dictation::queue::Queue;
use crate::dictation::shared::Shared;
use crate::dictation::worker::Seed;
use crate::inject::session::Session;
use crate::store::recovery::{self, InstanceLock};
use crate::store::row_owner::Rows;
use crate::store::spool;
use crate::store::History;
use crate::timing::ms_since;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The controller thread: starts everything, says ready (or why not), runs the loop.
pub(crate) fn run(
    opts: StartOptions,
    inputs_tx: mpsc::Sender<Input>,
    inputs: mpsc::Receiver<Input>,
    events: mpsc::Sender<Event>,
    ready: mpsc::Sender<Result<(), String>>,
) {
    let started = Instant::now();
    let shared = Arc::new(Shared::default());
    let queue = Arc::new(Queue::default());
    let (to_injector, injector_rx) = mpsc::channel();
    // Retention (history.retention_days) at start and daily while the dictation runs.
    let retention = (
        opts.history_path.clone(),
        opts.config.history.retention_days,
    );
    let mut controller = match start(
        opts,
        &inputs_tx,
        &inputs,
        &shared,
        &queue,
        to_injector,
        injector_rx,
        &events,
        started,
    ) {
        Ok((mut c, info)) => {
            if let Some(message) = c.keys.edit.sync(&c.config) {
                c.notice(message);
            }
            if let Some(message) = c.keys.retype.sync(&c.config) {
                c.notice(message);
            }
            for message in c.keys.styles.sync(&c.config) {
                c.notice(message);
            }
            let _ = events.send(Event::Ready(info));
            let _ = ready.send(Ok(()));
            c
        }
        Err(e) => {
            shared.shutdown.store(true, Ordering::SeqCst);
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _retention = crate::store::retention::spawn_daily(retention.0, retention.1);
    controller.run(inputs);
    let _ = events.send(Event::Stopped);
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

    // The one writer of dictation rows from here on: the controller, the worker and the
    // injector send it their updates (recovery above was the last write of its own).
    let rows = Rows::start(open_history()?).map_err(|e| e.to_string())?;

    // The microphone: opened now, so a missing device or server is told at start and the
    // device and format are settled; kept open when `[dictation] microphone` says so
    // ("always"), else closed once start-up is over and opened again by a press.
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
    let seed = Seed {
        model_dirs: opts.model_dirs.clone(),
        audio_dir: opts.audio_dir.clone(),
        rows: rows.clone(),
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
    let injector_rows = rows.clone();
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
                injector_rows,
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

    let input = capture.info().device.clone();
    let input_backend = format!("{:?}", capture.info().backend);
    let mut mic = Microphone::new(capture, &config.dictation);
    let now = Instant::now();
    mic.settle(false, false, now);
    let microphone_state = mic.describe(now);
    let info = ReadyInfo {
        model: model_name,
        stt_note,
        device,
        plan,
        model_load_ms: load_ms,
        warmup_ms,
        input,
        input_backend,
        first_frames_ms: first_frames,
        microphone: config.dictation.microphone.as_str().into(),
        microphone_state,
        hotkey: opts.hotkeys.then(|| config.dictation.hotkey.clone()),
        hotkey_path,
        session: Session::detect().describe(),
        inject_route: sink_route,
        mode: config.dictation.mode.as_str().into(),
        llm: llm_on,
        startup_ms: ms_since(started),
    };
    // Players a killed Dictum left paused are resumed now (after the instance lock: never
    // another running instance's).
    let media = crate::media::Pauser::new(
        crate::portal::Bus::Session,
        crate::media::state_file(&opts.history_path),
    );
    media.recover();
    let keys = Keys {
        source: hotkeys,
        edit: EditSide::new(inputs_tx.clone(), info.hotkey_path == "x11_grab"),
        retype: RetypeKey::new(inputs_tx.clone(), info.hotkey_path == "x11_grab"),
        styles: StyleKeys::new(inputs_tx.clone(), info.hotkey_path == "x11_grab"),
    };
    Ok((
        Controller {
            watch: Watch::new(opts.config_path.clone(), opts.overrides),
            apps: Apps::new(&config, opts.window_probe, events),
            config,
            mic,
            keys,
            history,
            _lock: lock,
            links: Links {
                queue: queue.clone(),
                seed,
                to_injector,
                rows,
                shared: shared.clone(),
                events: events.clone(),
            },
            live: None,
            hands_free: None,
            flights: Flights::new(),
            feedback: Feedback::new(media),
        },
        info,
    ))
}

/// The sink factory may panic (a toolkit's assertion); start-up then fails with the reason.
fn catch_start<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    crate::dictation::shared::catch(f)
        .unwrap_or_else(|msg| Err(format!("the text output could not start: {msg}")))
}
