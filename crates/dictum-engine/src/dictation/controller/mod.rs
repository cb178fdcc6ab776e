//! The controller thread: the one owner of the dictation state. It turns key events into
//! recordings, feeds the streaming segmenter while the key is held, hands finished
//! utterances to the worker, and publishes state and results. It also supervises: every
//! utterance in flight has a deadline, quit has one, and the microphone is re-opened in the
//! background (see `dictation/mod.rs`, Supervision).
//!
//! This file holds the controller (`Controller`: a dozen parts, each owning its state) and
//! its loop: one input at a time, then the same round of pumping, supervision, housekeeping
//! and state publishing. What an input means (a key, a command, "stop dictation", quit, an
//! utterance ending by itself) is decided by `machine` as data, effects that `step` carries
//! out; `step` is the only caller of `start` and `stop`. The parts, each a type of its own
//! that names nothing of the controller: the utterance being recorded
//! (`dictation::utterance`), hands-free listening (`dictation::hands_free::Listening`), the
//! utterances in flight (`flights`), the keys (`keys`), the watched config file and the
//! per-app profiles (`settings`), the indicator, cues and media (`feedback`), the microphone
//! (`dictation::microphone`). The jobs that use several parts live beside it, each an
//! `impl Controller` of its own, named by nothing here (so the folder has no circle):
//! `startup` (instance lock, history recovery, microphone, worker, injector, model wait,
//! hotkey), `capture` (the microphone stream and its background re-open), `recording`
//! (press → utterance, pumping audio into the segmenter, cancel), `finish` (release →
//! post-roll → the worker's `Finish` job, queue overflow), `hands_free` (listening and its
//! cutter), `supervise` (deadlines, a stuck worker replaced, quit's grace) and
//! `housekeeping` (idle stop, source check, re-open, config watching and `reconfigure`).
//! Each round also lets the microphone close its stream once nothing needs it
//! (`capture::settle_mic`, the rule in `audio::mic_policy`).

mod capture;
mod edit;
mod feedback;
mod finish;
mod flights;
mod hands_free;
mod housekeeping;
mod keys;
mod machine;
mod recording;
mod settings;
pub(super) mod startup;
mod supervise;

use crate::config::Config;
use crate::dictation::hands_free::Listening;
use crate::dictation::messages::{Command, Event, InjectorMsg, Input, TypeStored};
use crate::dictation::microphone::Microphone;
use crate::dictation::options::SHUTDOWN_GRACE;
use crate::dictation::queue::Queue;
use crate::dictation::shared::Shared;
use crate::dictation::state::State;
use crate::dictation::utterance::Utterance;
use crate::dictation::worker::Seed;
use crate::hotkey::KeyEvent;
use crate::store::recovery::InstanceLock;
use crate::store::row_owner::Rows;
use crate::store::History;
use feedback::Feedback;
use flights::Flights;
use keys::Keys;
use machine::{decide, Effect, Facts, Trigger};
use settings::{Apps, Watch};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The channels to the other threads and to the face.
struct Links {
    /// The worker's queue (replaced with the worker when it is stuck).
    queue: Arc<Queue>,
    /// What a fresh worker is started from.
    seed: Seed,
    to_injector: mpsc::Sender<InjectorMsg>,
    /// The row owner: every write of a dictation's row goes through it.
    rows: Rows,
    shared: Arc<Shared>,
    events: mpsc::Sender<Event>,
}

struct Controller {
    /// The config in force.
    config: Config,
    /// The config file, watched.
    watch: Watch,
    /// The per-app profiles and the window probe.
    apps: Apps,
    /// The microphone stream, its background re-open and what was told about it.
    mic: Microphone,
    keys: Keys,
    history: History,
    /// One dictation process per history database.
    _lock: InstanceLock,
    links: Links,
    /// The utterance being recorded.
    live: Option<Utterance>,
    /// Hands-free listening, when on.
    hands_free: Option<Listening>,
    /// Utterances handed to the worker and not done yet, their numbers, quit's grace.
    flights: Flights,
    feedback: Feedback,
}

impl Controller {
    fn run(&mut self, inputs: mpsc::Receiver<Input>) {
        loop {
            let timeout = if self.live.is_some()
                || self.hands_free.is_some()
                || self.flights.quit_asked.is_some()
            {
                // How soon a pause is seen (and a speculation started) while recording.
                Duration::from_millis(20)
            } else {
                Duration::from_millis(250)
            };
            match inputs.recv_timeout(timeout) {
                Ok(Input::Key { id, pressed, at }) => {
                    if let Some(ev) = self.keys.classify(id, pressed) {
                        self.step(Trigger::Key(ev), at);
                    }
                }
                Ok(Input::PortalKey { id, pressed, at }) => {
                    // A stored text being typed is something to cancel too.
                    let typing_stored = self.links.shared.typing_stored();
                    if let Some(trigger) = self.keys.portal_trigger(&id, pressed, typing_stored) {
                        self.step(trigger, at);
                    }
                }
                Ok(Input::Command(Command::PressStyle(style), at)) => {
                    // The press opens its utterance at once (or is refused): the style is
                    // taken by it or dropped, never left for a later press.
                    self.apps.ask_style(Some(style));
                    self.step(Trigger::Key(KeyEvent::Pressed), at);
                    self.apps.ask_style(None);
                }
                Ok(Input::Command(cmd, at)) => {
                    let trigger = match cmd {
                        Command::Press => Some(Trigger::Key(KeyEvent::Pressed)),
                        Command::PressStyle(_) => None, // above
                        Command::Release => Some(Trigger::Key(KeyEvent::Released)),
                        Command::Toggle => Some(Trigger::Toggle),
                        Command::HandsFree(on) => Some(Trigger::HandsFree(on)),
                        Command::Cancel => Some(Trigger::Cancel),
                        Command::Shutdown => Some(Trigger::Quit),
                        Command::PauseHotkey(p) => {
                            for message in self.keys.pause(p, &self.config) {
                                self.notice(message);
                            }
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
                        Command::TranscribeFile(path) => {
                            let _ = self.links.events.send(Event::TranscribeFile { path });
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
                }) => {
                    let live = self.live.as_mut();
                    if let Some(p) = live.and_then(|l| l.partial(seq, committed, speculative)) {
                        let _ = self.links.events.send(Event::Partial(p));
                    }
                }
                Ok(Input::Done { seq, report }) => {
                    self.step(Trigger::Landed { seq }, Instant::now());
                    let failed = report.outcome == crate::store::Outcome::Error
                        || crate::inject::inject_failed(report.inject_error.as_deref());
                    if failed {
                        self.cue(crate::audio::cues::Cue::Error);
                    }
                    let _ = self.links.events.send(Event::Dictation(*report));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let recording = self.live.is_some() || self.hands_free.is_some();
            let capturing = self.mic.stream().is_some_and(|c| c.is_recording());
            self.feedback.sound_cues(recording, capturing, &self.config);
            self.pump();
            self.supervise();
            self.settle_mic();
            self.housekeeping();
            self.publish_state();
            // Media stay paused from the press until the last dictation is typed, cancelled
            // or found empty (its flight lands), or listening stops; passes run off this thread.
            let busy = self.live.is_some() || self.hands_free.is_some() || !self.flights.is_empty();
            self.feedback.media(busy, &self.config);
            let grace_over = self
                .flights
                .quit_asked
                .is_some_and(|at| at.elapsed() >= SHUTDOWN_GRACE);
            if self.step(Trigger::RoundOver { grace_over }, Instant::now()) {
                break;
            }
        }
        // Quitting: the players are playing again before `Stopped` is told.
        self.feedback.release_media();
        self.links.shared.shutdown.store(true, Ordering::SeqCst);
        let _ = self.links.to_injector.send(InjectorMsg::Stop);
        self.mic.discard();
    }

    /// Hands a stored row's text to the injector, which types it through the gate; the
    /// cancel key is armed before the first key goes out.
    fn type_stored(&mut self, job: TypeStored) {
        if self.flights.quit_asked.is_some() {
            if let Some(reply) = &job.reply {
                let _ = reply.send(Err("Dictum is quitting; nothing was typed".into()));
            }
            return;
        }
        self.links.shared.stored.fetch_add(1, Ordering::SeqCst);
        self.publish_state();
        if let Err(mpsc::SendError(InjectorMsg::Stored(job))) =
            self.links.to_injector.send(InjectorMsg::Stored(job))
        {
            self.links.shared.stored.fetch_sub(1, Ordering::SeqCst);
            if let Some(reply) = &job.reply {
                let _ = reply.send(Err("typing has stopped; nothing was typed".into()));
            }
        }
    }

    fn notice(&self, message: String) {
        tracing::warn!("{message}");
        let _ = self.links.events.send(Event::Notice { message });
    }

    /// A notice that is news, not a problem.
    fn notice_info(&self, message: String) {
        tracing::info!("{message}");
        let _ = self.links.events.send(Event::Notice { message });
    }

    fn publish_state(&mut self) {
        let state = State::derive(
            self.live.is_some(),
            self.links.shared.injecting(),
            self.flights.len(),
            self.hands_free.is_some(),
        );
        self.feedback.publish(state, &self.links.events);
        let now = Instant::now();
        self.feedback.publish_mic(
            self.mic.is_open(),
            || self.mic.describe(now),
            &self.links.events,
        );
        self.keys.arm_cancel(
            self.live.is_some() || !self.flights.is_empty() || self.links.shared.typing_stored(),
        );
    }

    /// The facts the state machine decides on, read now.
    fn facts(&self) -> Facts {
        Facts {
            mode: self.config.dictation.mode,
            recording: self.live.is_some(),
            listening: self.hands_free.is_some(),
            in_flight: self.flights.len(),
            quitting: self.flights.quit_asked.is_some(),
        }
    }

    /// Plays `cue` if cues are on.
    fn cue(&mut self, cue: crate::audio::cues::Cue) {
        self.feedback.cue(cue, &self.config);
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
                Effect::HandsFreeOn => self.hands_free_on(),
                Effect::HandsFreeOff { message } => self.hands_free_off(at, message),
                Effect::Notice(message) => self.notice(message),
                Effect::BeginQuit => {
                    self.flights.quit_asked.get_or_insert(at);
                }
                Effect::Land { seq } => self.flights.land(seq),
                Effect::InterruptFlights => self.interrupt_flights(),
                Effect::Exit => exit = true,
            }
        }
        exit
    }
}
