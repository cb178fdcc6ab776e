//! The controller thread: the one owner of the dictation state. It turns key events into
//! recordings, feeds the streaming segmenter while the key is held, hands finished
//! utterances to the worker, and publishes state and results. It also supervises: every
//! utterance in flight has a deadline, quit has one, and the microphone is re-opened in the
//! background (see `dictation/mod.rs`, Supervision).

use crate::audio::capture::{drop_in_background, Capture, CaptureOptions, Reopener};
use crate::config::Config;
use crate::dictation::config::Mode;
use crate::dictation::hands_free::{idle_expired, Cut, Cutter};
use crate::dictation::injector::{self, InjectorMsg};
use crate::dictation::segmenter::{Decision, Segmenter};
use crate::dictation::state::{on_key, Action, State};
use crate::dictation::worker::{Finish, Job, Queue, Worker};
use crate::dictation::{
    fault, Command, Event, Input, ReadyInfo, Shared, StartOptions, SHUTDOWN_GRACE,
};
use crate::hotkey::{Hotkeys, KeyEvent};
use crate::inject::session::{hotkey_path, Abilities, HotkeyPath, Session, SessionKind};
use crate::pipeline::Engine;
use crate::profile::{Profile, Profiles};
use crate::store::journal;
use crate::store::recovery::{self, InstanceLock};
use crate::store::spool::{self, retry_hint, LiveWriter, Spool};
use crate::store::{Entry, History, Outcome, Source};
use crate::timing::{ms_since, StageTimings};
use crate::SAMPLE_RATE;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};

/// Hands-free listening: the microphone records all along, the cutter opens a [`Live`]
/// utterance at speech and ends it at the pause (see `hands_free.rs`).
struct Listening {
    cutter: Cutter,
    /// Last speech (or the start, or the microphone coming back): idle stop counts from here.
    last_activity: Instant,
    /// The microphone is gone: said once; listening resumes when it is back.
    mic_lost: bool,
    /// Samples read from the stream (reused).
    scratch: Vec<f32>,
    /// When the audio server was last asked whether the source is still there.
    source_checked: Instant,
}

/// How often hands-free asks the audio server whether its source is still there.
const SOURCE_CHECK_EVERY: Duration = Duration::from_secs(3);

/// The utterance being recorded.
struct Live {
    /// Sequence number in this process (the row id may be missing: database locked).
    seq: u64,
    entry: Entry,
    /// Samples copied from the capture so far (index 0 = first pre-roll sample).
    buf: Vec<f32>,
    seg: Segmenter,
    limit_told: bool,
    /// The worker that had this utterance's streamed chunks was replaced (stuck): no more
    /// chunks, and the release transcribes it whole.
    progress_lost: bool,
    /// Streams the samples to the spool as they are captured (`store::spool`): a kill
    /// mid-utterance leaves its audio behind.
    spool: Option<LiveWriter>,
    /// The per-app profile the focused window picked at the press; it goes with every job
    /// of this utterance.
    profile: Arc<Profile>,
    /// Opened by hands-free listening (no key held): its key commands need more care
    /// (`commands::trust`).
    hands_free: bool,
}

struct Controller {
    config: Config,
    config_path: Option<PathBuf>,
    config_mtime: Option<SystemTime>,
    capture: Option<Capture>,
    hotkeys: HotkeySource,
    history: History,
    queue: Arc<Queue>,
    shared: Arc<Shared>,
    to_injector: mpsc::Sender<InjectorMsg>,
    events: mpsc::Sender<Event>,
    live: Option<Live>,
    /// Hands-free listening, when on.
    hands_free: Option<Listening>,
    /// Utterances handed to the worker and not done yet, oldest first.
    flights: BTreeMap<u64, Flight>,
    /// Since when the oldest flight has been the oldest (its deadline counts from there).
    oldest_since: Instant,
    next_seq: u64,
    reopener: Reopener,
    /// When quit was asked for.
    shutdown_at: Option<Instant>,
    /// One dictation process per history database.
    _lock: InstanceLock,
    state: State,
    window_probe: Option<crate::dictation::WindowProbe>,
    /// The last re-open failure (told once, not every retry).
    last_open_error: Option<String>,
    /// A stream with the current settings is wanted though one works (settings changed).
    capture_wanted: bool,
    /// The re-open under way uses settings from before the last change.
    reopen_stale: bool,
    overrides: Option<crate::dictation::ConfigOverrides>,
    last_housekeeping: Instant,
    /// Starts a fresh worker when the current one is stuck.
    seed: WorkerSeed,
    /// The config's `[[profile]]` tables, compiled.
    profiles: Profiles,
    /// "unknown app → default profile" has been logged (once per run).
    unknown_app_told: bool,
}

/// An utterance the worker and injector have not finished.
struct Flight {
    id: Option<i64>,
    samples: Arc<Vec<f32>>,
    /// How long it may take once it is the oldest.
    budget: Duration,
}

/// What it takes to start a transcription worker: at start-up, and again when one is stuck.
struct WorkerSeed {
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
    fn spawn(&self, config: &Config, queue: Arc<Queue>) -> Result<String, String> {
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

/// How long an utterance may take, from the moment it is the oldest in flight: whisper at
/// worst a few times real time on a slow CPU, the LLM's own timeout, and typing.
fn budget(audio_samples: usize, config: &Config, profile: &Profile) -> Duration {
    let audio = Duration::from_secs_f64(audio_samples as f64 / SAMPLE_RATE as f64);
    let min = fault::min_deadline().unwrap_or(Duration::from_secs(60));
    let llm = if profile.llm_enabled(config) {
        Duration::from_millis(config.llm.timeout_ms) * 2
    } else {
        Duration::ZERO
    };
    min.max(audio * 4) + llm
}

fn capture_options(config: &Config) -> CaptureOptions {
    let d = &config.dictation;
    CaptureOptions {
        device: (!d.input_device.trim().is_empty()).then(|| d.input_device.clone()),
        preroll_ms: d.preroll_ms,
        max_utterance: Duration::from_secs(d.max_utterance_s as u64),
        ..CaptureOptions::default()
    }
}

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
        Ok((c, info)) => {
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
fn start(
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
    let capture = Capture::open_with(capture_options(&config)).map_err(|e| e.to_string())?;
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
    Ok((
        Controller {
            config,
            config_path: opts.config_path.clone(),
            config_mtime,
            capture: Some(capture),
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
            reopener: Reopener::default(),
            shutdown_at: None,
            _lock: lock,
            state: State::Idle,
            window_probe: opts.window_probe,
            last_open_error: None,
            capture_wanted: false,
            reopen_stale: false,
            overrides: opts.overrides,
            last_housekeeping: Instant::now(),
            seed,
            profiles,
            unknown_app_told: false,
        },
        info,
    ))
}

/// The config's profiles (validated when the config was loaded; a config built in code that
/// slipped through gets no profiles, and the user is told).
fn compile_profiles(config: &Config, events: &mpsc::Sender<Event>) -> Profiles {
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
enum HotkeySource {
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
    match hotkey_path(&session, &ab) {
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

/// Sends the segmenter's decisions to the worker; `samples` is the utterance so far.
fn queue_chunks(
    queue: &Queue,
    utt: u64,
    profile: &Arc<Profile>,
    decisions: Vec<Decision>,
    samples: &[f32],
) {
    for d in decisions {
        let (start, end, commit) = match d {
            Decision::Commit { start, end } => (start, end, true),
            Decision::Speculate { start, end } => (start, end, false),
            Decision::Stale => {
                queue.push(Job::Stale(utt));
                continue;
            }
        };
        queue.push(Job::Chunk {
            utt,
            start,
            end,
            samples: samples[start..end].to_vec(),
            commit,
            profile: profile.clone(),
        });
    }
}

fn new_cutter(config: &Config) -> Cutter {
    Cutter::new(
        config.dictation.hands_free_pause_ms,
        config.dictation.preroll_ms,
        config.vad.threshold,
    )
}

fn mtime(path: &std::path::Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Controller {
    fn run(&mut self, inputs: mpsc::Receiver<Input>) {
        loop {
            let timeout =
                if self.live.is_some() || self.hands_free.is_some() || self.shutdown_at.is_some() {
                    // How soon a pause is seen (and a speculation started) while recording.
                    Duration::from_millis(20)
                } else {
                    Duration::from_millis(250)
                };
            match inputs.recv_timeout(timeout) {
                Ok(Input::Key { id, pressed, at }) => {
                    let ev = match &self.hotkeys {
                        HotkeySource::X11(h) => h.classify(id, pressed),
                        _ => None,
                    };
                    if let Some(ev) = ev {
                        self.on_key(ev, at);
                    }
                }
                Ok(Input::PortalKey { id, pressed, at }) => {
                    if let HotkeySource::Portal { paused: false, .. } = &self.hotkeys {
                        match (id.as_str(), pressed) {
                            ("dictate", _) => self.on_key(
                                if pressed {
                                    KeyEvent::Pressed
                                } else {
                                    KeyEvent::Released
                                },
                                at,
                            ),
                            ("cancel", true) if self.live.is_some() || !self.flights.is_empty() => {
                                self.cancel()
                            }
                            _ => {}
                        }
                    }
                }
                Ok(Input::Command(cmd, at)) => match cmd {
                    Command::Press => self.on_key(KeyEvent::Pressed, at),
                    Command::Release => self.on_key(KeyEvent::Released, at),
                    Command::Toggle
                        if self.hands_free.is_some()
                            || self.config.dictation.mode == Mode::HandsFree =>
                    {
                        self.toggle_hands_free(None, at)
                    }
                    Command::HandsFree(on) => self.toggle_hands_free(on, at),
                    Command::Toggle => {
                        if self.live.is_some() {
                            self.stop(at);
                        } else {
                            self.start(at);
                        }
                    }
                    Command::Cancel => self.cancel(),
                    Command::PauseHotkey(p) => match &mut self.hotkeys {
                        HotkeySource::X11(h) => {
                            if let Err(e) = h.set_paused(p) {
                                self.notice(e);
                            }
                        }
                        HotkeySource::Portal { paused, .. } => *paused = p,
                        HotkeySource::None => {}
                    },
                    Command::Reconfigure(config) => self.reconfigure(*config),
                    Command::Shutdown => {
                        if self.hands_free.is_some() {
                            self.hands_free_off(at, None);
                        }
                        if self.live.is_some() {
                            self.stop(at);
                        }
                        self.shutdown_at.get_or_insert(at);
                    }
                },
                Ok(Input::ModelLoaded { .. }) => {}
                Ok(Input::Problem(message)) | Ok(Input::Notice(message)) => self.notice(message),
                Ok(Input::StateChanged) => {}
                Ok(Input::VoiceStop) => self.voice_stop(),
                Ok(Input::Done { seq, report }) => {
                    self.land(seq);
                    let _ = self.events.send(Event::Dictation(*report));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            self.pump();
            self.supervise();
            self.housekeeping();
            self.publish_state();
            if let Some(at) = self.shutdown_at {
                if self.flights.is_empty() && self.live.is_none() {
                    break;
                }
                if at.elapsed() >= SHUTDOWN_GRACE {
                    self.interrupt_flights();
                    break;
                }
            }
        }
        self.shared.shutdown.store(true, Ordering::SeqCst);
        let _ = self.to_injector.send(InjectorMsg::Stop);
        if let Some(c) = self.capture.take() {
            drop_in_background(c);
        }
    }

    /// Utterance `seq` is finished with.
    fn land(&mut self, seq: u64) {
        if self
            .flights
            .first_key_value()
            .is_some_and(|(&s, _)| s == seq)
        {
            self.oldest_since = Instant::now();
        }
        self.flights.remove(&seq);
    }

    /// Gives up on the oldest utterance once it is past its deadline: its audio is kept, its
    /// row failed (unless a result got there first), and it no longer counts, so a stuck
    /// stage cannot fill the queue. A result that still comes is stored, never typed.
    fn supervise(&mut self) {
        let Some((&seq, flight)) = self.flights.first_key_value() else {
            return;
        };
        let waited = self.oldest_since.elapsed();
        if waited < flight.budget {
            return;
        }
        let Some(flight) = self.flights.remove(&seq) else {
            return;
        };
        self.oldest_since = Instant::now();
        self.shared.abandon(seq);
        let what = format!(
            "dictation {} got no result within {} s (a stage is stuck; see the log)",
            flight
                .id
                .map_or("(unsaved)".to_string(), |id| format!("#{id}")),
            waited.as_secs()
        );
        let kept = self.give_up(seq, &flight, Outcome::Error, "timeout", &what);
        // A worker that has been on one job for this whole budget is stuck (a whisper or LLM
        // call that never returns cannot be interrupted): without a fresh one, every later
        // dictation would wait behind it and time out too.
        let stuck = self
            .queue
            .busy_for()
            .is_some_and(|busy| busy >= flight.budget);
        let fresh = if stuck {
            match self.restart_worker(seq) {
                Ok(()) => "; a fresh transcription stage was started",
                Err(e) => {
                    self.notice(format!("could not start a fresh transcription stage: {e}"));
                    ""
                }
            }
        } else {
            ""
        };
        self.notice(format!("{what}; {kept}{fresh}; new dictations go on"));
    }

    /// Replaces a stuck worker: a new queue and worker (its own engine, model loaded again)
    /// take the waiting utterances; the stuck thread is left to end by itself and cannot
    /// type (its utterance, `abandoned`, was given up on). The worker's progress on the
    /// utterances it had not finished is lost with it, so they are redone whole.
    fn restart_worker(&mut self, abandoned: u64) -> Result<(), String> {
        let fresh = Arc::new(Queue::default());
        // Started first: if no worker can start, the old queue keeps its jobs.
        self.seed.spawn(&self.config, fresh.clone())?;
        let old = std::mem::replace(&mut self.queue, fresh.clone());
        let waiting = old.retire();
        for job in waiting {
            match job {
                Job::Finish(mut f) if f.seq != abandoned => {
                    f.committed = 0;
                    f.speculation_end = None;
                    fresh.push(Job::Finish(f));
                }
                // Chunks fed the old worker's progress, which is gone; the new worker was
                // started with the current config.
                _ => {}
            }
        }
        if let Some(live) = &mut self.live {
            live.progress_lost = true;
        }
        Ok(())
    }

    /// Quit's grace is over: what is still in flight is marked `interrupted`, audio kept.
    fn interrupt_flights(&mut self) {
        for (seq, flight) in std::mem::take(&mut self.flights) {
            self.shared.abandon(seq);
            let what = "Dictum quit before this dictation was finished";
            let kept = self.give_up(seq, &flight, Outcome::Interrupted, "interrupted", what);
            self.notice(format!(
                "{what} ({}); {kept}",
                flight
                    .id
                    .map_or("unsaved".to_string(), |id| format!("#{id}"))
            ));
        }
    }

    /// Keeps a flight's audio and fails its row if it is still `pending`. Returns what to
    /// tell the user about the audio.
    fn give_up(
        &mut self,
        seq: u64,
        flight: &Flight,
        outcome: Outcome,
        kind: &str,
        what: &str,
    ) -> String {
        let pending = match flight.id {
            Some(id) => self
                .history
                .get(id)
                .ok()
                .flatten()
                .is_none_or(|e| e.outcome == Outcome::Pending),
            None => true,
        };
        if !pending {
            return "its text is in history (`dictum history`)".into();
        }
        let (kept, path) =
            match Spool::for_history(self.history.path()).keep(flight.id, seq, &flight.samples) {
                Ok(file) => (
                    match flight.id {
                        Some(id) => retry_hint(id),
                        None => format!("its audio is kept at {}", file.display()),
                    },
                    Some(file.display().to_string()),
                ),
                Err(e) => (format!("its audio could not be kept: {e}"), None),
            };
        if let Some(id) = flight.id {
            let message = format!("{what}; {kept}");
            if let Err(e) = recovery::fail_if_pending(
                &self.history,
                id,
                outcome,
                kind,
                &message,
                path.as_deref(),
            ) {
                tracing::warn!("could not mark dictation #{id}: {e}");
            }
        }
        kept
    }

    /// "stop dictation" was said: ends hands-free listening; in push-to-talk there is
    /// nothing to stop.
    fn voice_stop(&mut self) {
        if self.hands_free.is_some() {
            self.hands_free_off(
                Instant::now(),
                Some("hands-free off (\"stop dictation\")".into()),
            );
        } else {
            self.notice("\"stop dictation\": nothing to stop (hands-free is not on)".into());
        }
    }

    fn notice(&self, message: String) {
        tracing::warn!("{message}");
        let _ = self.events.send(Event::Notice { message });
    }

    /// A notice that is news, not a problem.
    fn notice_info(&self, message: String) {
        tracing::info!("{message}");
        let _ = self.events.send(Event::Notice { message });
    }

    fn publish_state(&mut self) {
        let state = State::derive(
            self.live.is_some(),
            self.shared.injecting(),
            self.flights.len(),
            self.hands_free.is_some(),
        );
        if state != self.state {
            self.state = state;
            let _ = self.events.send(Event::State { state });
        }
        if let HotkeySource::X11(h) = &mut self.hotkeys {
            h.arm_cancel(self.live.is_some() || !self.flights.is_empty());
        }
    }

    fn on_key(&mut self, ev: KeyEvent, at: Instant) {
        let listening = self.hands_free.is_some();
        match on_key(
            self.config.dictation.mode,
            self.live.is_some(),
            listening,
            ev,
        ) {
            Action::Start => self.start(at),
            Action::Stop => self.stop(at),
            Action::Cancel => self.cancel(),
            Action::ToggleHandsFree => self.toggle_hands_free(None, at),
            Action::Ignore => {}
        }
    }

    /// True when a working microphone stream is there. Never waits: without one, a re-open
    /// is started in the background (one at a time) and this press is not recorded.
    fn ensure_capture(&mut self) -> bool {
        self.poll_reopen();
        if self.capture.as_ref().is_some_and(|c| !c.has_failed()) {
            return true;
        }
        if let Some(c) = self.capture.take() {
            drop_in_background(c);
        }
        self.reopener.request(capture_options(&self.config));
        let why = match self.reopener.waiting_for() {
            Some(waited) if waited >= Duration::from_secs(2) => format!(
                "the audio server has not answered for {} s (is PulseAudio/PipeWire frozen? \
                 `pactl info` tells)",
                waited.as_secs()
            ),
            Some(_) => "it is being re-opened".to_string(),
            None => self
                .last_open_error
                .clone()
                .unwrap_or_else(|| "it is being re-opened".into()),
        };
        self.notice(format!(
            "no microphone: {why}; this press was not recorded, try again once it is back"
        ));
        false
    }

    /// Takes the background re-open's result, if it has one.
    /// Takes the background re-open's result, if it has one. Called only while nothing is
    /// being recorded (the stream is never swapped under an utterance).
    fn poll_reopen(&mut self) {
        let working = self.capture.as_ref().is_some_and(|c| !c.has_failed());
        match self.reopener.poll() {
            Some(Ok(c)) => {
                self.last_open_error = None;
                if std::mem::take(&mut self.reopen_stale) {
                    // Opened with the settings from before the last change: again.
                    drop_in_background(c);
                    self.reopener.request(capture_options(&self.config));
                    return;
                }
                if working && !self.capture_wanted {
                    drop_in_background(c);
                    return;
                }
                let message = if working {
                    format!(
                        "microphone {} opened with the new settings",
                        c.info().device
                    )
                } else {
                    format!("microphone {} is back", c.info().device)
                };
                self.capture_wanted = false;
                if let Some(old) = self.capture.take() {
                    drop_in_background(old);
                }
                self.notice(message);
                self.capture = Some(c);
            }
            Some(Err(e)) => {
                if std::mem::take(&mut self.reopen_stale) {
                    self.reopener.request(capture_options(&self.config));
                    return;
                }
                let message = e.to_string();
                if working && std::mem::take(&mut self.capture_wanted) {
                    // The old stream goes on; the new settings could not be had.
                    self.notice(format!(
                        "the new microphone settings could not be applied ({message}); \
                         recording goes on with {}",
                        self.capture
                            .as_ref()
                            .map_or(String::new(), |c| c.info().device.clone())
                    ));
                    return;
                }
                if self.last_open_error.as_deref() != Some(message.as_str()) {
                    self.notice(format!("no microphone: {message}"));
                }
                self.last_open_error = Some(message);
            }
            None => {}
        }
    }

    fn start(&mut self, at: Instant) {
        if self.live.is_some() || !self.ensure_capture() {
            return;
        }
        let Some(capture) = self.capture.as_mut() else {
            return;
        };
        if let Err(e) = capture.start() {
            self.notice(format!("cannot start recording: {e}"));
            return;
        }
        let press_to_capture = ms_since(at);
        // Wake the model if it was unloaded; the pre-roll keeps the first words meanwhile.
        self.queue.push(Job::Prepare);
        let mut entry = Entry::new(Source::Mic);
        entry.press_to_capture_ms = Some(press_to_capture);
        entry.preroll_ms = Some(capture.preroll_ms() as i64);
        self.shared
            .set_key_held(self.config.dictation.mode == Mode::PushToTalk);
        self.open_live(entry);
    }

    /// The profile for the window focused at the press (the row's class and title). An app
    /// that cannot be known (no X11, a Wayland compositor that does not tell) gets the
    /// default profile, said once in the log.
    fn pick_profile(&mut self, entry: &Entry) -> Arc<Profile> {
        let (class, title) = (entry.app_class.as_deref(), entry.window_title.as_deref());
        if class.is_none() && title.is_none() {
            if !std::mem::replace(&mut self.unknown_app_told, true) {
                tracing::info!("unknown app → default profile");
            }
            return self.profiles.default_profile();
        }
        let profile = self.profiles.pick(class, title);
        // A title can name a document: only at debug level (`dictum --verbose`).
        tracing::info!(profile = %profile.name, class = class.unwrap_or(""), "profile picked");
        tracing::debug!(
            title = title.unwrap_or(""),
            "profile picked for this window"
        );
        profile
    }

    /// Copies new audio from the stream and lets the segmenter pick chunks to transcribe.
    fn pump(&mut self) {
        if self.hands_free.is_some() {
            self.pump_hands_free();
            return;
        }
        let (Some(live), Some(capture)) = (self.live.as_mut(), self.capture.as_ref()) else {
            return;
        };
        let from = live.buf.len();
        capture.recorded_since(from, &mut live.buf);
        let fresh = from..live.buf.len();
        if fresh.is_empty() {
            return;
        }
        if let Some(w) = live.spool.as_mut() {
            w.sync(&live.buf);
        }
        let decisions = live.seg.push(&live.buf[fresh]);
        if self.config.dictation.streaming && !live.progress_lost {
            queue_chunks(&self.queue, live.seq, &live.profile, decisions, &live.buf);
        }
        let max = self.config.dictation.max_utterance_s as usize * SAMPLE_RATE as usize;
        if live.buf.len() >= max && !live.limit_told {
            live.limit_told = true;
            let secs = self.config.dictation.max_utterance_s;
            self.notice(format!(
                "this dictation reached the {secs} s limit ([dictation] max_utterance_s); it ends here"
            ));
            self.stop(Instant::now());
        }
    }

    fn stop(&mut self, at: Instant) {
        if self.hands_free.is_some() {
            self.finish_recorded(at);
            return;
        }
        self.pump();
        self.shared.set_key_held(false);
        let Some(mut live) = self.live.take() else {
            return;
        };
        let Some(capture) = self.capture.as_mut() else {
            return;
        };
        // Post-roll keeps the last word: `post_roll_ms` of audio after the last speech. The
        // silence already recorded before the release counts, so only the rest is recorded.
        let post_roll = self.config.dictation.post_roll_ms;
        let post = if !live.seg.heard_speech() {
            0
        } else {
            post_roll.saturating_sub(live.seg.trailing_silence_ms().min(u32::MAX as u64) as u32)
        };
        // Whisper starts on what was said while the post-roll is recorded; speech in the
        // post-roll makes this pass stale and it is stopped (worker: abort).
        if self.config.dictation.streaming && post > 0 {
            if let Some(d) = live.seg.at_release() {
                queue_chunks(&self.queue, live.seq, &live.profile, vec![d], &live.buf);
            }
        }
        let silent_ms = live.seg.trailing_silence_ms();
        let early = self.config.dictation.type_before_post_roll_ms;
        if self.config.dictation.streaming
            && !live.progress_lost
            && post > 0
            && live.seg.heard_speech()
            && early > 0
            && silent_ms >= u64::from(early)
        {
            self.type_before_post_roll(live, post, silent_ms, at);
            return;
        }
        let captured = match capture.stop(post) {
            Ok(c) => c,
            Err(e) => {
                self.notice(format!("recording failed: {e}"));
                live.entry.outcome = Outcome::Error;
                live.entry.error_kind = Some("capture".into());
                live.entry.error = Some(e.to_string());
                let _ = self.history.update(&live.entry);
                return;
            }
        };
        live.entry.post_roll_ms = Some(post as i64);
        if let Some(err) = &captured.device_error {
            self.notice(format!(
                "the microphone failed during this dictation ({err}); what was captured is transcribed and the device will be re-opened when it is back"
            ));
            live.entry.error_kind = Some("device_lost".into());
            live.entry.error = Some(err.clone());
            // PulseAudio may have moved the stream to another source: drop it, so that
            // housekeeping re-opens the configured device once it is there again.
            if let Some(c) = self.capture.take() {
                drop_in_background(c);
            }
        }
        let samples = captured.pcm.samples;
        // The last bit of audio (post-roll) through the segmenter too.
        if samples.len() > live.buf.len() {
            let decisions = live.seg.push(&samples[live.buf.len()..]);
            if self.config.dictation.streaming && !live.progress_lost {
                queue_chunks(&self.queue, live.seq, &live.profile, decisions, &samples);
            }
        }
        self.dispatch(live, samples, at);
    }

    /// The voice had been silent `silent_ms` at the release: the last word is over, so the
    /// text goes out as soon as it is transcribed (the release speculation, started above,
    /// usually is the tail) instead of after the post-roll. The post-roll is still recorded,
    /// and speech in it (the user went on after letting go) becomes a dictation of its own,
    /// stored and typed after this one: nothing said is dropped.
    fn type_before_post_roll(&mut self, mut live: Live, post: u32, silent_ms: u64, at: Instant) {
        let released_at = live.buf.len();
        // This dictation's audio ends at the release: no post-roll in it.
        live.entry.post_roll_ms = Some(0);
        if let Some(w) = live.spool.take() {
            w.finish(&live.buf);
        }
        self.send_finish(Finish {
            seq: live.seq,
            committed: live.seg.committed(),
            speculation_end: live.seg.valid_speculation(),
            entry: live.entry,
            samples: Arc::new(live.buf),
            release_at: at,
            timings: StageTimings::default(),
            profile: live.profile,
            before_post_roll: true,
            hands_free: live.hands_free,
        });
        let Some(capture) = self.capture.as_mut() else {
            return;
        };
        let captured = match capture.stop(post) {
            Ok(c) => c,
            Err(e) => {
                self.notice(format!("recording the post-roll failed: {e}"));
                return;
            }
        };
        if let Some(err) = &captured.device_error {
            self.notice(format!(
                "the microphone failed after this dictation ({err}); it will be re-opened when it is back"
            ));
            if let Some(c) = self.capture.take() {
                drop_in_background(c);
            }
        }
        let samples = captured.pcm.samples;
        // The post-roll, led in by the silence before the release (no word of the first
        // dictation is in it).
        let lead = (silent_ms as usize * SAMPLE_RATE as usize / 1000).min(released_at);
        let Some(after) = samples.get(released_at - lead..) else {
            return;
        };
        let mut probe = Segmenter::new(&self.config.dictation, self.config.vad.threshold);
        probe.push(after);
        if !probe.heard_speech() {
            return;
        }
        tracing::info!("speech in the post-roll: transcribed as a dictation of its own");
        self.open_live(Entry::new(Source::Mic));
        if let Some(next) = self.live.as_mut() {
            next.entry.preroll_ms = Some((lead * 1000 / SAMPLE_RATE as usize) as i64);
            next.buf.extend_from_slice(after);
            let decisions = next.seg.push(after);
            if self.config.dictation.streaming {
                queue_chunks(&self.queue, next.seq, &next.profile, decisions, &next.buf);
            }
        }
        self.finish_recorded(Instant::now());
    }

    /// Hands the finished utterance (`samples`, everything recorded) to the worker: its
    /// streamed progress, its deadline, its `Finish` job.
    fn dispatch(&mut self, mut live: Live, samples: Vec<f32>, at: Instant) {
        if let Some(w) = live.spool.take() {
            w.finish(&samples);
        }
        let (committed, speculation_end) = if self.config.dictation.streaming && !live.progress_lost
        {
            (live.seg.committed(), live.seg.valid_speculation())
        } else {
            (0, None)
        };
        self.send_finish(Finish {
            seq: live.seq,
            entry: live.entry,
            samples: Arc::new(samples),
            committed,
            speculation_end,
            release_at: at,
            timings: StageTimings::default(),
            profile: live.profile,
            before_post_roll: false,
            hands_free: live.hands_free,
        });
    }

    /// Queues `f` for the worker with its deadline (or stores it when too many wait).
    fn send_finish(&mut self, mut f: Finish) {
        f.entry.audio_ms = Some((f.samples.len() as u64 * 1000 / SAMPLE_RATE as u64) as i64);
        if self.flights.len() >= self.config.dictation.queue_max as usize {
            let samples = Arc::try_unwrap(f.samples).unwrap_or_else(|shared| (*shared).clone());
            self.overflow(f.seq, f.entry, samples);
            return;
        }
        if self.flights.is_empty() {
            self.oldest_since = Instant::now();
        }
        self.flights.insert(
            f.seq,
            Flight {
                id: f.entry.id,
                samples: f.samples.clone(),
                budget: budget(f.samples.len(), &self.config, &f.profile),
            },
        );
        self.queue.push(Job::Finish(Box::new(f)));
    }

    /// Makes `entry` the utterance being recorded: its row gets the model, the focused window
    /// and the profile that window picks, and is stored before anything else can fail.
    fn open_live(&mut self, mut entry: Entry) {
        let profile = self.describe_and_store(&mut entry);
        let seg = Segmenter::new(&self.config.dictation, self.config.vad.threshold);
        let seq = self.next_seq;
        self.next_seq += 1;
        let spool = Spool::for_history(self.history.path())
            .live(entry.id, seq)
            .map_err(|e| tracing::warn!("spool: cannot stream this dictation's audio: {e}"))
            .ok();
        self.live = Some(Live {
            seq,
            spool,
            entry,
            buf: Vec::with_capacity(SAMPLE_RATE as usize * 30),
            seg,
            limit_told: false,
            progress_lost: false,
            profile,
            hands_free: self.hands_free.is_some(),
        });
    }

    /// Fills a new utterance's row with the model, the focused window and the profile that
    /// window picks (its language), and stores it.
    fn describe_and_store(&mut self, entry: &mut Entry) -> Arc<Profile> {
        entry.model = Some(self.config.stt.model.clone());
        if let Some(probe) = &self.window_probe {
            let (class, title) = probe();
            entry.app_class = class;
            entry.window_title = title;
        }
        let profile = self.pick_profile(entry);
        entry.language = Some(profile.language(&self.config).to_string());
        entry.profile = Some(profile.name.clone());
        if let Err(e) = self.history.insert(entry) {
            self.notice(format!("could not store the dictation: {e}"));
        }
        profile
    }

    /// Hands-free on (`Some(true)`), off (`Some(false)`) or the other way (`None`).
    fn toggle_hands_free(&mut self, on: Option<bool>, at: Instant) {
        match (
            on.unwrap_or(self.hands_free.is_none()),
            self.hands_free.is_some(),
        ) {
            (true, false) => self.hands_free_on(at),
            (false, true) => self.hands_free_off(at, Some("hands-free off".into())),
            _ => {}
        }
    }

    /// Starts listening: the microphone records from now on (its pre-roll first) and each
    /// stretch of speech becomes a dictation. A push-to-talk utterance under way is finished
    /// first. Without a microphone, listening starts once one is back.
    fn hands_free_on(&mut self, at: Instant) {
        if self.live.is_some() {
            self.stop(at);
        }
        self.shared.set_key_held(false);
        self.poll_reopen();
        let d = &self.config.dictation;
        let idle = match d.hands_free_idle_s {
            0 => String::new(),
            s => format!("; it stops after {s} s without speech"),
        };
        let message = format!(
            "hands-free on: listening; a pause of {} ms ends each dictation{idle}",
            d.hands_free_pause_ms
        );
        self.hands_free = Some(Listening {
            cutter: new_cutter(&self.config),
            last_activity: Instant::now(),
            mic_lost: false,
            scratch: Vec::with_capacity(SAMPLE_RATE as usize),
            source_checked: Instant::now(),
        });
        self.notice_info(message);
        let _ = self.events.send(Event::HandsFree { on: true });
        // Starts the stream's recording now (or says the microphone is missing).
        self.pump_hands_free();
    }

    /// Stops listening; the dictation under way is finished (transcribed and typed).
    /// `message`: what to tell the user (none at quit).
    fn hands_free_off(&mut self, at: Instant, message: Option<String>) {
        if self.hands_free.is_none() {
            return;
        }
        self.pump_hands_free();
        self.finish_recorded(at);
        self.hands_free = None;
        if let Some(c) = self.capture.as_mut() {
            if c.is_recording() {
                let _ = c.stop(0);
            }
        }
        if let Some(m) = message {
            self.notice_info(m);
        }
        let _ = self.events.send(Event::HandsFree { on: false });
    }

    /// Hands-free: reads what the microphone recorded and lets the cutter open, feed and
    /// close utterances. Watches the microphone: gone, the utterance under way is finished
    /// and listening waits (housekeeping re-opens the device in the background); back, it
    /// listens again.
    fn pump_hands_free(&mut self) {
        let Some(mic_lost) = self.hands_free.as_ref().map(|hf| hf.mic_lost) else {
            return;
        };
        if self.capture.as_ref().is_none_or(|c| c.has_failed()) {
            let why = self
                .capture
                .as_ref()
                .and_then(|c| c.device_error())
                .or_else(|| self.last_open_error.clone())
                .unwrap_or_else(|| "it is being re-opened".into());
            if let Some(live) = self.live.as_mut() {
                live.entry.error_kind = Some("device_lost".into());
                live.entry.error = Some(format!(
                    "the microphone failed during this dictation ({why}); what was captured \
                     was transcribed"
                ));
                self.finish_recorded(Instant::now());
            }
            if !mic_lost {
                self.notice(format!(
                    "hands-free: the microphone is gone ({why}); listening resumes when it is back"
                ));
            }
            if let Some(hf) = self.hands_free.as_mut() {
                hf.mic_lost = true;
            }
            return;
        }
        let (Some(hf), Some(capture)) = (self.hands_free.as_mut(), self.capture.as_mut()) else {
            return;
        };
        if !capture.is_recording() {
            // A fresh stream (first start, or the microphone came back).
            if let Err(e) = capture.start() {
                let message = format!("hands-free: cannot start recording: {e}");
                self.notice(message);
                return;
            }
            hf.cutter.reset();
            if std::mem::take(&mut hf.mic_lost) {
                hf.last_activity = Instant::now();
                let _ = self.events.send(Event::Notice {
                    message: "hands-free: listening again".into(),
                });
            }
        }
        hf.scratch.clear();
        capture.take_recorded(&mut hf.scratch);
        if hf.scratch.is_empty() {
            return;
        }
        let rejected = hf.cutter.rejected();
        let cuts = hf.cutter.push(&hf.scratch);
        if hf.cutter.rejected() > rejected {
            tracing::debug!("hands-free: a burst too short to be speech was dropped");
        }
        for cut in cuts {
            match cut {
                Cut::Open(samples) => self.open_hands_free(samples),
                Cut::More(samples) => self.feed_hands_free(&samples),
                Cut::Close => {
                    if let Some(hf) = self.hands_free.as_mut() {
                        hf.last_activity = Instant::now();
                    }
                    self.finish_recorded(Instant::now());
                }
            }
        }
    }

    /// Speech: a new utterance starts with `samples` (its pre-roll and first speech); its
    /// history row is stored now.
    fn open_hands_free(&mut self, samples: Vec<f32>) {
        if self.live.is_some() {
            self.finish_recorded(Instant::now());
        }
        if let Some(hf) = self.hands_free.as_mut() {
            hf.last_activity = Instant::now();
        }
        // Wake the model if it was unloaded.
        self.queue.push(Job::Prepare);
        let mut entry = Entry::new(Source::Mic);
        // No key press: the row's pre-roll is the cutter's (before the VAD's onset).
        entry.preroll_ms = self
            .hands_free
            .as_ref()
            .map(|hf| hf.cutter.preroll_ms() as i64);
        // The window focused when the speech began picks the profile.
        self.open_live(entry);
        self.feed_hands_free(&samples);
    }

    /// The next samples of the hands-free utterance under way, through its segmenter (the
    /// streamed chunks); at `max_utterance_s` it is ended and the next one goes on.
    fn feed_hands_free(&mut self, samples: &[f32]) {
        let Some(live) = self.live.as_mut() else {
            return;
        };
        let from = live.buf.len();
        live.buf.extend_from_slice(samples);
        if let Some(w) = live.spool.as_mut() {
            w.sync(&live.buf);
        }
        let decisions = live.seg.push(&live.buf[from..]);
        if self.config.dictation.streaming && !live.progress_lost {
            queue_chunks(&self.queue, live.seq, &live.profile, decisions, &live.buf);
        }
        let max = self.config.dictation.max_utterance_s as usize * SAMPLE_RATE as usize;
        if live.buf.len() >= max {
            let secs = self.config.dictation.max_utterance_s;
            self.notice(format!(
                "this dictation reached the {secs} s limit ([dictation] max_utterance_s); \
                 it ends here and the next one starts"
            ));
            self.finish_recorded(Instant::now());
            self.open_hands_free(Vec::new());
        }
    }

    /// The utterance under way is finished with what is recorded, like a released
    /// push-to-talk one, its trailing silence as its post-roll: hands-free at the pause after
    /// speech (or hands-free off, or the microphone gone), and the dictation made of speech
    /// in a post-roll (`type_before_post_roll`).
    fn finish_recorded(&mut self, at: Instant) {
        let Some(mut live) = self.live.take() else {
            return;
        };
        if self.config.dictation.streaming && !live.progress_lost {
            if let Some(d) = live.seg.at_release() {
                queue_chunks(&self.queue, live.seq, &live.profile, vec![d], &live.buf);
            }
        }
        live.entry.post_roll_ms = Some(live.seg.trailing_silence_ms().min(i64::MAX as u64) as i64);
        let samples = std::mem::take(&mut live.buf);
        self.dispatch(live, samples, at);
    }

    /// Too many utterances waiting: store this one's audio and row instead of queueing it.
    fn overflow(&mut self, seq: u64, mut entry: Entry, samples: Vec<f32>) {
        let id = entry.id.unwrap_or(0);
        self.queue.push(Job::Forget(seq));
        // The audio goes to the spool whatever history.keep_audio says: it is the only copy.
        let where_ = match Spool::for_history(self.history.path()).keep(entry.id, seq, &samples) {
            Ok(file) => {
                entry.audio_path = Some(file.display().to_string());
                match entry.id {
                    Some(id) => retry_hint(id),
                    None => format!("its audio is kept at {}", file.display()),
                }
            }
            Err(e) => format!("its audio could not be kept: {e}"),
        };
        entry.outcome = Outcome::Error;
        entry.error_kind = Some("queue_full".into());
        let message = format!(
            "{} dictations are already waiting ([dictation] queue_max); this one was not transcribed: {where_}",
            self.flights.len()
        );
        entry.error = Some(message.clone());
        if let Err(e) = journal::write_or_journal(&self.history, &mut entry) {
            tracing::warn!("could not store dictation {id}: {e}");
        }
        self.notice(message);
    }

    fn cancel(&mut self) {
        self.shared.set_key_held(false);
        if let Some(mut live) = self.live.take() {
            let audio = match self.hands_free.as_ref() {
                // Listening goes on; the rest of this utterance is dropped until its pause.
                Some(_) => live.buf.len(),
                None => self
                    .capture
                    .as_mut()
                    .and_then(|c| c.stop(0).ok())
                    .map_or(0, |c| c.pcm.samples.len()),
            };
            self.queue.push(Job::Forget(live.seq));
            if let Some(w) = live.spool.take() {
                w.discard();
            }
            live.entry.outcome = Outcome::Error;
            live.entry.error_kind = Some("cancelled".into());
            live.entry.error = Some("cancelled with the cancel key; nothing was typed".into());
            live.entry.audio_ms = Some((audio as u64 * 1000 / SAMPLE_RATE as u64) as i64);
            let _ = self.history.update(&live.entry);
            self.notice("dictation cancelled".into());
        } else if !self.flights.is_empty() {
            // Everything recorded so far is still transcribed and stored, just not typed.
            if let Ok(Some(last)) = self.history.last_id() {
                self.shared.cancel_upto.store(last, Ordering::SeqCst);
            }
            self.notice(format!(
                "{} pending dictation(s) will not be typed (they stay in history)",
                self.flights.len()
            ));
        }
    }

    fn housekeeping(&mut self) {
        if self.last_housekeeping.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.last_housekeeping = Instant::now();
        if let Some(hf) = &self.hands_free {
            let idle_s = self.config.dictation.hands_free_idle_s;
            // Time without a microphone is not idle time: listening resumes when it is back.
            if self.live.is_none()
                && !hf.mic_lost
                && idle_expired(idle_s, hf.last_activity.elapsed())
            {
                self.hands_free_off(
                    Instant::now(),
                    Some(format!(
                        "hands-free stopped: no speech for {idle_s} s ([dictation] hands_free_idle_s)"
                    )),
                );
            }
        }
        // Hands-free records all along, so no release asks whether the source went away:
        // ask between two utterances (PulseAudio silently moves such a stream elsewhere).
        if let Some(hf) = self.hands_free.as_mut() {
            if self.live.is_none() && hf.source_checked.elapsed() >= SOURCE_CHECK_EVERY {
                hf.source_checked = Instant::now();
                let gone = self
                    .capture
                    .as_ref()
                    .filter(|c| !c.has_failed())
                    .and_then(|c| c.source_missing().map(|why| (c.info().device.clone(), why)));
                if let Some((device, why)) = gone {
                    tracing::warn!("hands-free: {why}");
                    if let Some(c) = self.capture.take() {
                        drop_in_background(c);
                    }
                    self.last_open_error = Some(format!("input device {device} is gone"));
                }
            }
        }
        // A device that failed comes back by itself when it returns: re-opened in the
        // background, one attempt at a time (a frozen sound server costs one waiting
        // thread, and the hotkey is still answered meanwhile).
        if self.live.is_none() {
            self.poll_reopen();
        }
        if self.live.is_none() && self.capture.as_ref().is_none_or(|c| c.has_failed()) {
            if let Some(c) = self.capture.take() {
                drop_in_background(c);
            }
            self.reopener.request(capture_options(&self.config));
        }
        // Config changes apply without a restart.
        let Some(path) = self.config_path.clone() else {
            return;
        };
        let now = mtime(&path);
        if now == self.config_mtime {
            return;
        }
        self.config_mtime = now;
        match Config::load_from(&path) {
            Ok(loaded) => {
                for w in loaded.warnings {
                    self.notice(w);
                }
                let mut config = loaded.config;
                if let Some(apply) = &self.overrides {
                    apply(&mut config);
                }
                self.reconfigure(config);
            }
            Err(e) => self.notice(format!("config not applied: {e}")),
        }
    }

    fn reconfigure(&mut self, config: Config) {
        if config == self.config {
            return;
        }
        let mut problems = Vec::new();
        match &mut self.hotkeys {
            HotkeySource::X11(h) => {
                if let Err(e) = h.set_main(&config.dictation.hotkey) {
                    problems.push(format!("hotkey not changed: {e}"));
                }
                if let Err(e) = h.set_cancel(&config.dictation.cancel_key) {
                    problems.push(format!("cancel key not changed: {e}"));
                }
            }
            HotkeySource::Portal { shortcut, .. }
                if config.dictation.hotkey != self.config.dictation.hotkey =>
            {
                if let Err(e) = shortcut.rebind(&config.dictation.hotkey) {
                    problems.push(format!("hotkey not changed: {e}"));
                }
            }
            _ => {}
        }
        for p in problems {
            self.notice(p);
        }
        let d_old = &self.config.dictation;
        let d_new = &config.dictation;
        let reopen = d_old.input_device != d_new.input_device
            || d_old.preroll_ms != d_new.preroll_ms
            || d_old.max_utterance_s != d_new.max_utterance_s;
        self.profiles = compile_profiles(&config, &self.events);
        self.queue.push(Job::Reconfigure(Box::new(config.clone())));
        let _ = self
            .to_injector
            .send(InjectorMsg::Reconfigure(Box::new(config.clone())));
        self.config = config;
        if reopen {
            // The stream in use stays until the new one delivers: a press meanwhile is
            // recorded (with the old settings), never refused.
            self.reopen_stale = self.reopener.waiting_for().is_some();
            self.capture_wanted = true;
            self.reopener.request(capture_options(&self.config));
        }
        // Hands-free picks up a new pause or pre-roll between two utterances.
        if let Some(hf) = self.hands_free.as_mut() {
            if !hf.cutter.is_open() {
                hf.cutter = new_cutter(&self.config);
            }
        }
        let message = format!(
            "config applied (hotkey {}, {})",
            self.config.dictation.hotkey,
            self.config.dictation.mode.describe()
        );
        let _ = self.events.send(Event::Notice { message });
    }
}
