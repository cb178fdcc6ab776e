//! The controller's decisions as a pure state machine: given the facts the controller holds
//! (the mode, an utterance being recorded, hands-free listening, utterances in flight, quit
//! asked) and one trigger (a key, a command, "stop dictation", a result landing, the end of a
//! round), [`decide`] returns what to do as data, [`Effect`]s, which the controller then
//! carries out in order. Nothing here touches a device, a thread or the clock, so every
//! sequence (press, release, toggle, cancel, hands-free, quit) is tested as a table below.
//!
//! What a key means in each mode is `state::on_key`'s rule, reused here, not copied. The
//! state is not stored by the machine: like `state::State::derive`, it is read from the
//! controller's own facts before each decision, so it cannot go stale when an effect does
//! not happen (a press with no microphone records nothing, and the next decision knows).

use crate::dictation::config::Mode;
use crate::dictation::state::{on_key, Action};
use crate::hotkey::KeyEvent;

/// What the controller knows when a trigger comes, read fresh each time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Facts {
    /// `[dictation] mode`.
    pub mode: Mode,
    /// An utterance is being recorded (a key held, a toggle on, or hands-free speech).
    pub recording: bool,
    /// Hands-free listening is on.
    pub listening: bool,
    /// Utterances handed to the worker and not finished.
    pub in_flight: usize,
    /// Quit was asked for.
    pub quitting: bool,
}

/// One thing that happened, as the controller's loop receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trigger {
    /// The hotkey (an X11 grab or the portal's "dictate"), or `Command::Press`/`Release`.
    Key(KeyEvent),
    /// The portal's "cancel" shortcut went down.
    PortalCancel,
    /// `Command::Toggle`: start or stop whatever the mode (hands-free on/off in hands-free).
    Toggle,
    /// `Command::HandsFree`: on (`Some(true)`), off (`Some(false)`) or toggled (`None`).
    HandsFree(Option<bool>),
    /// `Command::Cancel`.
    Cancel,
    /// "stop dictation" was said.
    VoiceStop,
    /// `Command::Shutdown`.
    Quit,
    /// The worker and injector are done with utterance `seq`.
    Landed { seq: u64 },
    /// The utterance under way ends without a key: see [`Ended`].
    Ended(Ended),
    /// A round of the loop is over (pumped, supervised, housekept): may the loop end?
    /// `grace_over`: quit was asked for at least `SHUTDOWN_GRACE` ago.
    RoundOver { grace_over: bool },
}

/// Why an utterance ends without the dictation key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// It reached `[dictation] max_utterance_s`.
    LengthLimit,
    /// The edit key went up (the instruction is recorded).
    EditKeyUp,
    /// Hands-free: the pause after speech, new speech while one was open, listening turned
    /// off, or the microphone gone.
    HandsFree,
}

/// What the controller does, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Effect {
    /// Open an utterance on the microphone (`Controller::start`).
    StartCapture,
    /// End the utterance under way and hand it to the worker (`Controller::stop`: the
    /// post-roll, or hands-free's end at what is recorded).
    StopAndDispatch,
    /// Drop the utterance under way, or keep the pending ones from being typed.
    Cancel,
    /// Start hands-free listening.
    HandsFreeOn,
    /// Stop hands-free listening, the utterance under way finished and typed first;
    /// `message` tells the user (none at quit).
    HandsFreeOff { message: Option<String> },
    /// Tell the user something that went wrong or did not apply.
    Notice(String),
    /// Note when quit was asked for (the first time only); the loop ends once nothing is
    /// in flight, or at the grace's end.
    BeginQuit,
    /// Utterance `seq` no longer counts against the deadlines.
    Land { seq: u64 },
    /// Quit's grace is over: what is still in flight is marked interrupted, audio kept.
    InterruptFlights,
    /// End the loop.
    Exit,
}

/// What the controller does about `trigger`, given `facts`.
pub(super) fn decide(facts: &Facts, trigger: Trigger) -> Vec<Effect> {
    match trigger {
        Trigger::Key(ev) => match on_key(facts.mode, facts.recording, facts.listening, ev) {
            Action::Start => vec![Effect::StartCapture],
            Action::Stop => vec![Effect::StopAndDispatch],
            Action::Cancel => vec![Effect::Cancel],
            Action::ToggleHandsFree => hands_free(facts, None),
            Action::Ignore => vec![],
        },
        // Armed only while there is something to cancel.
        Trigger::PortalCancel if facts.recording || facts.in_flight > 0 => vec![Effect::Cancel],
        Trigger::PortalCancel => vec![],
        Trigger::Toggle if facts.listening || facts.mode == Mode::HandsFree => {
            hands_free(facts, None)
        }
        Trigger::Toggle if facts.recording => vec![Effect::StopAndDispatch],
        Trigger::Toggle => vec![Effect::StartCapture],
        Trigger::HandsFree(on) => hands_free(facts, on),
        Trigger::Cancel => vec![Effect::Cancel],
        Trigger::VoiceStop if facts.listening => vec![Effect::HandsFreeOff {
            message: Some("hands-free off (\"stop dictation\")".into()),
        }],
        Trigger::VoiceStop => vec![Effect::Notice(
            "\"stop dictation\": nothing to stop (hands-free is not on)".into(),
        )],
        // Hands-free off finishes the utterance under way, so no stop follows it.
        Trigger::Quit if facts.listening => {
            vec![Effect::HandsFreeOff { message: None }, Effect::BeginQuit]
        }
        Trigger::Quit if facts.recording => vec![Effect::StopAndDispatch, Effect::BeginQuit],
        Trigger::Quit => vec![Effect::BeginQuit],
        Trigger::Landed { seq } => vec![Effect::Land { seq }],
        // Every stop goes through here: the key's, and these.
        Trigger::Ended(_) if facts.recording => vec![Effect::StopAndDispatch],
        Trigger::Ended(_) => vec![],
        Trigger::RoundOver { .. } if !facts.quitting => vec![],
        Trigger::RoundOver { .. } if facts.in_flight == 0 && !facts.recording => {
            vec![Effect::Exit]
        }
        Trigger::RoundOver { grace_over: true } => vec![Effect::InterruptFlights, Effect::Exit],
        Trigger::RoundOver { grace_over: false } => vec![],
    }
}

/// Hands-free on (`Some(true)`), off (`Some(false)`) or the other way (`None`); nothing when
/// it already is so.
fn hands_free(facts: &Facts, on: Option<bool>) -> Vec<Effect> {
    match (on.unwrap_or(!facts.listening), facts.listening) {
        // A push-to-talk or toggle dictation under way is finished first.
        (true, false) if facts.recording => vec![Effect::StopAndDispatch, Effect::HandsFreeOn],
        (true, false) => vec![Effect::HandsFreeOn],
        (false, true) => vec![Effect::HandsFreeOff {
            message: Some("hands-free off".into()),
        }],
        _ => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Effect::*;
    use KeyEvent::{Cancel as CancelKey, Pressed, Released};
    use Trigger::{HandsFree, Key, Landed, PortalCancel, Quit, RoundOver, Toggle, VoiceStop};

    fn facts(mode: Mode) -> Facts {
        Facts {
            mode,
            recording: false,
            listening: false,
            in_flight: 0,
            quitting: false,
        }
    }

    /// The controller's facts after `effects`, each assumed to work (a microphone there, a
    /// worker that takes the utterance): what the real controller's methods change.
    fn apply(mut f: Facts, effects: &[Effect]) -> Facts {
        for e in effects {
            match e {
                StartCapture => f.recording = true,
                StopAndDispatch => {
                    if f.recording {
                        f.in_flight += 1;
                    }
                    f.recording = false;
                }
                Cancel => f.recording = false,
                HandsFreeOn => {
                    if f.recording {
                        f.in_flight += 1;
                    }
                    f.recording = false;
                    f.listening = true;
                }
                HandsFreeOff { .. } => {
                    if f.recording {
                        f.in_flight += 1;
                    }
                    f.recording = false;
                    f.listening = false;
                }
                BeginQuit => f.quitting = true,
                Land { .. } => f.in_flight = f.in_flight.saturating_sub(1),
                InterruptFlights => f.in_flight = 0,
                Notice(_) | Exit => {}
            }
        }
        f
    }

    /// Runs `steps` (trigger, the effects expected) from `start`, each decided on the facts
    /// the previous ones left; returns the facts at the end.
    fn run(start: Facts, steps: &[(Trigger, Vec<Effect>)]) -> Facts {
        let mut f = start;
        for (i, (trigger, expected)) in steps.iter().enumerate() {
            let got = decide(&f, *trigger);
            assert_eq!(&got, expected, "step {i}: {trigger:?} with {f:?}");
            f = apply(f, &got);
        }
        f
    }

    fn off(message: &str) -> Effect {
        HandsFreeOff {
            message: Some(message.into()),
        }
    }

    #[test]
    fn push_to_talk_press_records_release_dispatches_strays_do_nothing() {
        let end = run(
            facts(Mode::PushToTalk),
            &[
                (Key(Released), vec![]),
                (Key(Pressed), vec![StartCapture]),
                (Key(Pressed), vec![]),
                (Key(Released), vec![StopAndDispatch]),
                (Key(Released), vec![]),
                (Key(Pressed), vec![StartCapture]),
                (Key(Released), vec![StopAndDispatch]),
                (Landed { seq: 1 }, vec![Land { seq: 1 }]),
            ],
        );
        assert_eq!((end.recording, end.in_flight), (false, 1));
    }

    #[test]
    fn toggle_mode_and_the_toggle_command_start_and_stop() {
        run(
            facts(Mode::Toggle),
            &[
                (Key(Pressed), vec![StartCapture]),
                (Key(Released), vec![]),
                (Key(Pressed), vec![StopAndDispatch]),
                (Key(Released), vec![]),
            ],
        );
        // The command works the same in push-to-talk (the tray's "Dictate").
        run(
            facts(Mode::PushToTalk),
            &[
                (Toggle, vec![StartCapture]),
                (Toggle, vec![StopAndDispatch]),
            ],
        );
    }

    #[test]
    fn cancel_is_always_passed_on_but_the_portal_cancel_only_when_armed() {
        let idle = facts(Mode::PushToTalk);
        assert_eq!(decide(&idle, Trigger::Cancel), vec![Effect::Cancel]);
        assert_eq!(decide(&idle, Key(CancelKey)), vec![Effect::Cancel]);
        assert_eq!(decide(&idle, PortalCancel), vec![]);
        run(
            idle,
            &[
                (Key(Pressed), vec![StartCapture]),
                (PortalCancel, vec![Effect::Cancel]),
                // Cancelled: the release finds nothing to stop.
                (Key(Released), vec![]),
            ],
        );
        let waiting = Facts {
            in_flight: 2,
            ..idle
        };
        assert_eq!(decide(&waiting, PortalCancel), vec![Effect::Cancel]);
    }

    #[test]
    fn hands_free_on_off_by_command_key_toggle_and_voice() {
        run(
            facts(Mode::PushToTalk),
            &[
                (HandsFree(Some(false)), vec![]),
                (HandsFree(Some(true)), vec![HandsFreeOn]),
                (HandsFree(Some(true)), vec![]),
                // While listening a release means nothing and a press stops it, in any mode.
                (Key(Released), vec![]),
                (Key(Pressed), vec![off("hands-free off")]),
                (HandsFree(None), vec![HandsFreeOn]),
                (Toggle, vec![off("hands-free off")]),
                (
                    VoiceStop,
                    vec![Notice(
                        "\"stop dictation\": nothing to stop (hands-free is not on)".into(),
                    )],
                ),
                (HandsFree(None), vec![HandsFreeOn]),
                (VoiceStop, vec![off("hands-free off (\"stop dictation\")")]),
            ],
        );
        // In hands-free mode the key and the toggle command switch listening.
        run(
            facts(Mode::HandsFree),
            &[
                (Key(Pressed), vec![HandsFreeOn]),
                (Key(Released), vec![]),
                (Key(Pressed), vec![off("hands-free off")]),
                (Key(Released), vec![]),
                (Toggle, vec![HandsFreeOn]),
                (Toggle, vec![off("hands-free off")]),
            ],
        );
    }

    #[test]
    fn hands_free_on_while_a_key_is_held_finishes_that_utterance() {
        let end = run(
            facts(Mode::PushToTalk),
            &[
                (Key(Pressed), vec![StartCapture]),
                (HandsFree(Some(true)), vec![StopAndDispatch, HandsFreeOn]),
                (Key(Released), vec![]),
            ],
        );
        assert_eq!(
            (end.listening, end.recording, end.in_flight),
            (true, false, 1)
        );
    }

    #[test]
    fn quit_finishes_what_is_recorded_waits_for_flights_then_exits() {
        // Recording: stopped and dispatched, then the loop waits for it to land.
        run(
            facts(Mode::PushToTalk),
            &[
                (RoundOver { grace_over: false }, vec![]),
                (Key(Pressed), vec![StartCapture]),
                (Quit, vec![StopAndDispatch, BeginQuit]),
                (RoundOver { grace_over: false }, vec![]),
                (Landed { seq: 1 }, vec![Land { seq: 1 }]),
                (RoundOver { grace_over: false }, vec![Exit]),
            ],
        );
        // Listening: hands-free off (silently), no second stop.
        run(
            facts(Mode::HandsFree),
            &[
                (Key(Pressed), vec![HandsFreeOn]),
                (Quit, vec![HandsFreeOff { message: None }, BeginQuit]),
                (RoundOver { grace_over: false }, vec![Exit]),
            ],
        );
        // Idle: out at the end of the round.
        run(
            facts(Mode::Toggle),
            &[
                (Quit, vec![BeginQuit]),
                (RoundOver { grace_over: true }, vec![Exit]),
            ],
        );
    }

    #[test]
    fn quit_with_a_stuck_flight_interrupts_it_when_the_grace_is_over() {
        let stuck = Facts {
            in_flight: 1,
            ..facts(Mode::PushToTalk)
        };
        run(
            stuck,
            &[
                (Quit, vec![BeginQuit]),
                (RoundOver { grace_over: false }, vec![]),
                (RoundOver { grace_over: true }, vec![InterruptFlights, Exit]),
            ],
        );
    }

    #[test]
    fn a_press_after_quit_still_records_and_quit_waits_for_it() {
        // As before the machine: quit does not refuse a press; the loop waits for it.
        let quitting = Facts {
            quitting: true,
            ..facts(Mode::PushToTalk)
        };
        run(
            quitting,
            &[
                (Key(Pressed), vec![StartCapture]),
                (RoundOver { grace_over: false }, vec![]),
                (Key(Released), vec![StopAndDispatch]),
                (RoundOver { grace_over: false }, vec![]),
                (Landed { seq: 1 }, vec![Land { seq: 1 }]),
                (RoundOver { grace_over: false }, vec![Exit]),
            ],
        );
    }

    #[test]
    fn two_hundred_cycles_in_every_mode_each_end_one_utterance() {
        for mode in [Mode::PushToTalk, Mode::Toggle] {
            let mut f = facts(mode);
            let keys: &[KeyEvent] = match mode {
                Mode::PushToTalk => &[Pressed, Released],
                _ => &[Pressed, Released, Pressed, Released],
            };
            for _ in 0..200 {
                for &k in keys {
                    let effects = decide(&f, Key(k));
                    f = apply(f, &effects);
                }
            }
            assert_eq!((f.recording, f.in_flight), (false, 200), "{mode:?}");
        }
    }

    #[test]
    fn every_stop_without_the_key_is_a_trigger_and_ends_only_what_is_recorded() {
        for why in [Ended::LengthLimit, Ended::EditKeyUp, Ended::HandsFree] {
            let idle = facts(Mode::PushToTalk);
            assert_eq!(decide(&idle, Trigger::Ended(why)), vec![], "{why:?} idle");
            let recording = Facts {
                recording: true,
                ..idle
            };
            assert_eq!(
                decide(&recording, Trigger::Ended(why)),
                vec![StopAndDispatch],
                "{why:?} recording"
            );
        }
    }
}
