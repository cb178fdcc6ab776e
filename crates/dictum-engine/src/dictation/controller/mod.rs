//! The controller thread: the one owner of the dictation state. It turns key events into
//! recordings, feeds the streaming segmenter while the key is held, hands finished
//! utterances to the worker, and publishes state and results. It also supervises: every
//! utterance in flight has a deadline, quit has one, and the microphone is re-opened in the
//! background (see `dictation/mod.rs`, Supervision).
//!
//! This file holds the controller's state (`Controller`, the utterance being recorded
//! `Live`, hands-free `Listening`, the utterances in flight `Flight`) and its loop: one
//! input at a time, then the same round of pumping, supervision, housekeeping and state
//! publishing. What an input means (a key, a command, "stop dictation", quit) is decided by
//! `machine` as data, effects that `step` carries out. The jobs live beside it, each an
//! `impl Controller` of its own:
//! `startup` (instance lock, history recovery, microphone, worker, injector, model wait,
//! hotkey), `capture` (the microphone stream and its background re-open), `recording`
//! (press → utterance, pumping audio into the segmenter, cancel), `finish` (release →
//! post-roll → the worker's `Finish` job, queue overflow), `hands_free` (listening and its
//! cutter), `supervise` (deadlines, a stuck worker replaced, quit's grace) and
//! `housekeeping` (idle stop, source check, re-open, config watching and `reconfigure`).

mod capture;
mod cues;
mod edit;
mod finish;
mod hands_free;
mod housekeeping;
mod machine;
mod partial;
mod recording;
mod startup;
mod supervise;

use crate::config::Config;
use crate::dictation::hands_free::Cutter;
use crate::dictation::injector::InjectorMsg;
use crate::dictation::microphone::Microphone;
use crate::dictation::segmenter::Segmenter;
use crate::dictation::state::State;
use crate::dictation::worker::Queue;
use crate::dictation::{Command, Event, Input, Shared, StartOptions, SHUTDOWN_GRACE};
use crate::hotkey::KeyEvent;
use crate::profile::{Profile, Profiles};
use crate::store::recovery::InstanceLock;
use crate::store::spool::LiveWriter;
use crate::store::{Entry, History};
use machine::{decide, Effect, Facts, Trigger};
use startup::{start, HotkeySource, WorkerSeed};
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
    /// The `partial` events published for it (`partial.rs`).
    partial: partial::Published,
}

impl Live {
    /// This utterance is transcribed while it is recorded: `[dictation] streaming` is on and
    /// the worker that had its chunks was not replaced (`progress_lost`).
    fn streamed(&self, config: &Config) -> bool {
        config.dictation.streaming && !self.progress_lost
    }
}

struct Controller {
    config: Config,
    config_path: Option<PathBuf>,
    config_mtime: Option<SystemTime>,
    /// The microphone stream, its background re-open and what was told about it.
    mic: Microphone,
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
    /// When quit was asked for.
    shutdown_at: Option<Instant>,
    /// One dictation process per history database.
    _lock: InstanceLock,
    state: State,
    window_probe: Option<crate::dictation::WindowProbe>,
    overrides: Option<crate::dictation::ConfigOverrides>,
    last_housekeeping: Instant,
    /// Starts a fresh worker when the current one is stuck.
    seed: WorkerSeed,
    /// The config's `[[profile]]` tables, compiled.
    profiles: Profiles,
    /// "unknown app → default profile" has been logged (once per run).
    unknown_app_told: bool,
    /// `[dictation] pause_media` / `mute_output`: players paused (the output muted) from the
    /// press until the text is typed.
    media: crate::media::Pauser,
    /// `[dictation] sound_cues`: the thread that plays them (`cues.rs`).
    cues: crate::audio::cues::Player,
    /// Recording (or listening) when the start cue was last played (`cues.rs`).
    cue_recording: bool,
    /// Edit mode: its hotkey and the edit being recorded (`edit.rs`).
    edit: edit::EditSide,
}

/// An utterance the worker and injector have not finished.
struct Flight {
    id: Option<i64>,
    samples: Arc<Vec<f32>>,
    /// How long it may take once it is the oldest.
    budget: Duration,
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
        Ok((mut c, info)) => {
            c.edit_sync();
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
                        self.step(Trigger::Key(ev), at);
                    }
                }
                Ok(Input::PortalKey { id, pressed, at }) => {
                    if let HotkeySource::Portal { paused: false, .. } = &self.hotkeys {
                        let trigger = match (id.as_str(), pressed) {
                            ("dictate", true) => Some(Trigger::Key(KeyEvent::Pressed)),
                            ("dictate", false) => Some(Trigger::Key(KeyEvent::Released)),
                            // A stored text being typed is something to cancel too.
                            ("cancel", true) if self.shared.typing_stored() => {
                                Some(Trigger::Cancel)
                            }
                            ("cancel", true) => Some(Trigger::PortalCancel),
                            _ => None,
                        };
                        if let Some(trigger) = trigger {
                            self.step(trigger, at);
                        }
                    }
                }
                Ok(Input::Command(cmd, at)) => {
                    let trigger = match cmd {
                        Command::Press => Some(Trigger::Key(KeyEvent::Pressed)),
                        Command::Release => Some(Trigger::Key(KeyEvent::Released)),
                        Command::Toggle => Some(Trigger::Toggle),
                        Command::HandsFree(on) => Some(Trigger::HandsFree(on)),
                        Command::Cancel => Some(Trigger::Cancel),
                        Command::Shutdown => Some(Trigger::Quit),
                        Command::PauseHotkey(p) => {
                            match &mut self.hotkeys {
                                HotkeySource::X11(h) => {
                                    if let Err(e) = h.set_paused(p) {
                                        self.notice(e);
                                    }
                                }
                                HotkeySource::Portal { paused, .. } => *paused = p,
                                HotkeySource::None => {}
                            }
                            self.edit_pause(p);
                            None
                        }
                        Command::Reconfigure(config) => {
                            self.reconfigure(*config);
                            None
                        }
                        Command::EditPress => {
                            self.edit_press(at);
                            None
                        }
                        Command::EditRelease => {
                            self.edit_release(at);
                            None
                        }
                        Command::TypeStored(job) => {
                            self.type_stored(job);
                            None
                        }
                    };
                    if let Some(trigger) = trigger {
                        self.step(trigger, at);
                    }
                }
                Ok(Input::ModelLoaded { .. }) => {}
                Ok(Input::Problem(message)) | Ok(Input::Notice(message)) => self.notice(message),
                Ok(Input::StateChanged) => {}
                Ok(Input::VoiceStop) => {
                    self.step(Trigger::VoiceStop, Instant::now());
                }
                Ok(Input::Partial {
                    seq,
                    committed,
                    speculative,
                }) => self.partial(seq, committed, speculative),
                Ok(Input::Done { seq, report }) => {
                    self.step(Trigger::Landed { seq }, Instant::now());
                    let failed = report.outcome == crate::store::Outcome::Error
                        || report.inject_error.is_some();
                    if failed {
                        self.cue(crate::audio::cues::Cue::Error);
                    }
                    let _ = self.events.send(Event::Dictation(*report));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            self.sound_cues();
            self.pump();
            self.supervise();
            self.housekeeping();
            self.publish_state();
            // Media stay paused from the press until the last dictation is typed, cancelled
            // or found empty (its flight lands), or listening stops; passes run off this thread.
            let busy = self.live.is_some() || self.hands_free.is_some() || !self.flights.is_empty();
            self.media.set(self.config.dictation.pause_media && busy);
            self.media
                .set_mute(self.config.dictation.mute_output && busy);
            let grace_over = self
                .shutdown_at
                .is_some_and(|at| at.elapsed() >= SHUTDOWN_GRACE);
            if self.step(Trigger::RoundOver { grace_over }, Instant::now()) {
                break;
            }
        }
        // Quitting: the players are playing again before `Stopped` is told.
        self.media.set(false);
        self.media.set_mute(false);
        self.media.wait_idle(crate::media::PASS_LIMIT * 2);
        self.shared.shutdown.store(true, Ordering::SeqCst);
        let _ = self.to_injector.send(InjectorMsg::Stop);
        self.mic.discard();
    }

    /// Hands a stored row's text to the injector, which types it through the gate; the
    /// cancel key is armed before the first key goes out.
    fn type_stored(&mut self, job: crate::dictation::TypeStored) {
        if self.shutdown_at.is_some() {
            if let Some(reply) = &job.reply {
                let _ = reply.send(Err("Dictum is quitting; nothing was typed".into()));
            }
            return;
        }
        self.shared.stored.fetch_add(1, Ordering::SeqCst);
        self.publish_state();
        if let Err(mpsc::SendError(InjectorMsg::Stored(job))) =
            self.to_injector.send(InjectorMsg::Stored(job))
        {
            self.shared.stored.fetch_sub(1, Ordering::SeqCst);
            if let Some(reply) = &job.reply {
                let _ = reply.send(Err("typing has stopped; nothing was typed".into()));
            }
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
            h.arm_cancel(
                self.live.is_some() || !self.flights.is_empty() || self.shared.typing_stored(),
            );
        }
    }

    /// The facts the state machine decides on, read now.
    fn facts(&self) -> Facts {
        Facts {
            mode: self.config.dictation.mode,
            recording: self.live.is_some(),
            listening: self.hands_free.is_some(),
            in_flight: self.flights.len(),
            quitting: self.shutdown_at.is_some(),
        }
    }

    /// Decides what `trigger` means now (`machine::decide`) and carries out its effects, in
    /// order, as of `at`. Returns true when the loop is to end.
    fn step(&mut self, trigger: Trigger, at: Instant) -> bool {
        let mut exit = false;
        for effect in decide(&self.facts(), trigger) {
            match effect {
                Effect::StartCapture => self.start(at),
                Effect::StopAndDispatch => self.stop(at),
                Effect::Cancel => self.cancel(),
                Effect::HandsFreeOn => self.hands_free_on(at),
                Effect::HandsFreeOff { message } => self.hands_free_off(at, message),
                Effect::Notice(message) => self.notice(message),
                Effect::BeginQuit => {
                    self.shutdown_at.get_or_insert(at);
                }
                Effect::Land { seq } => self.land(seq),
                Effect::InterruptFlights => self.interrupt_flights(),
                Effect::Exit => exit = true,
            }
        }
        exit
    }
}
