//! The dictation state as the user sees it (tray icon, `dictum run` events), and what a key
//! event means in each mode. Pure functions: the controller owns the one copy of the state.

use crate::dictation::config::Mode;
use crate::hotkey::KeyEvent;
use serde::Serialize;

/// Idle → Recording → Processing → Injecting → Idle. Recording wins over the others: a new
/// press while earlier utterances are still processing starts recording at once. Hands-free
/// listening with nothing else under way is `Listening` (waiting for speech); its utterances
/// go through Recording, Processing and Injecting like any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Idle,
    Recording,
    Processing,
    Injecting,
    Listening,
    /// A press is waiting for a closed microphone that is slow to deliver its first samples
    /// (a Bluetooth headset switching profile): published by the controller during that wait
    /// only (`dictation/microphone.rs` `SLOW_OPEN_AFTER`), never derived; recording (or the
    /// derived state, when the open fails) follows it.
    Opening,
}

impl State {
    /// A dictation is under way: from the press (or a slow microphone's opening) until its
    /// words are typed. Hands-free listening alone is not one.
    pub fn is_dictating(self) -> bool {
        matches!(
            self,
            State::Recording | State::Processing | State::Injecting | State::Opening
        )
    }

    /// Derived from the facts the controller tracks; never stored as a flag of its own, so it
    /// can never be left stale (the "busy flag never reset" failure).
    pub fn derive(recording: bool, injecting: bool, in_flight: usize, listening: bool) -> State {
        if recording {
            State::Recording
        } else if injecting {
            State::Injecting
        } else if in_flight > 0 {
            State::Processing
        } else if listening {
            State::Listening
        } else {
            State::Idle
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Recording => "recording",
            State::Processing => "processing",
            State::Injecting => "injecting",
            State::Listening => "listening",
            State::Opening => "opening",
        }
    }
}

/// What to do about a key event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Start,
    Stop,
    Cancel,
    /// Hands-free listening on if off, off if on.
    ToggleHandsFree,
    Ignore,
}

/// `listening`: hands-free is on (whatever the mode: the tray can start it in any): then a
/// press stops it and the release means nothing.
pub fn on_key(mode: Mode, recording: bool, listening: bool, ev: KeyEvent) -> Action {
    match (mode, ev, recording) {
        (_, KeyEvent::Cancel, _) => Action::Cancel,
        (_, KeyEvent::Pressed, _) if listening => Action::ToggleHandsFree,
        (_, KeyEvent::Released, _) if listening => Action::Ignore,
        (Mode::HandsFree, KeyEvent::Pressed, _) => Action::ToggleHandsFree,
        (Mode::PushToTalk, KeyEvent::Pressed, false) => Action::Start,
        (Mode::PushToTalk, KeyEvent::Released, true) => Action::Stop,
        (Mode::Toggle, KeyEvent::Pressed, false) => Action::Start,
        (Mode::Toggle, KeyEvent::Pressed, true) => Action::Stop,
        _ => Action::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives the pure state over many cycles the way the controller does.
    fn cycle(mode: Mode, n: usize) -> usize {
        let mut recording = false;
        let mut stops = 0;
        let keys: &[KeyEvent] = match mode {
            Mode::PushToTalk => &[KeyEvent::Pressed, KeyEvent::Released],
            Mode::Toggle | Mode::HandsFree => &[
                KeyEvent::Pressed,
                KeyEvent::Released,
                KeyEvent::Pressed,
                KeyEvent::Released,
            ],
        };
        let mut listening = false;
        for _ in 0..n {
            for &k in keys {
                match on_key(mode, recording, listening, k) {
                    Action::Start => recording = true,
                    Action::Stop => {
                        recording = false;
                        stops += 1;
                    }
                    Action::ToggleHandsFree => {
                        if listening {
                            stops += 1;
                        }
                        listening = !listening;
                    }
                    Action::Cancel | Action::Ignore => {}
                }
            }
        }
        stops
    }

    #[test]
    fn every_cycle_of_two_hundred_ends_an_utterance() {
        assert_eq!(cycle(Mode::PushToTalk, 200), 200);
        assert_eq!(cycle(Mode::Toggle, 200), 200);
        assert_eq!(cycle(Mode::HandsFree, 200), 200);
    }

    #[test]
    fn while_hands_free_listens_a_press_stops_it_in_every_mode_and_releases_mean_nothing() {
        for mode in [Mode::PushToTalk, Mode::Toggle, Mode::HandsFree] {
            assert_eq!(
                on_key(mode, false, true, KeyEvent::Pressed),
                Action::ToggleHandsFree
            );
            assert_eq!(
                on_key(mode, true, true, KeyEvent::Pressed),
                Action::ToggleHandsFree
            );
            assert_eq!(on_key(mode, true, true, KeyEvent::Released), Action::Ignore);
            assert_eq!(on_key(mode, true, true, KeyEvent::Cancel), Action::Cancel);
        }
        assert_eq!(
            on_key(Mode::HandsFree, false, false, KeyEvent::Released),
            Action::Ignore
        );
    }

    #[test]
    fn stray_events_are_ignored() {
        assert_eq!(
            on_key(Mode::PushToTalk, false, false, KeyEvent::Released),
            Action::Ignore
        );
        assert_eq!(
            on_key(Mode::PushToTalk, true, false, KeyEvent::Pressed),
            Action::Ignore
        );
        assert_eq!(
            on_key(Mode::Toggle, true, false, KeyEvent::Released),
            Action::Ignore
        );
        assert_eq!(
            on_key(Mode::Toggle, false, false, KeyEvent::Cancel),
            Action::Cancel
        );
    }

    #[test]
    fn state_is_derived_with_recording_first() {
        assert_eq!(State::derive(false, false, 0, false), State::Idle);
        assert_eq!(State::derive(true, true, 3, true), State::Recording);
        assert_eq!(State::derive(false, true, 1, true), State::Injecting);
        assert_eq!(State::derive(false, false, 2, true), State::Processing);
        assert_eq!(State::derive(false, false, 0, true), State::Listening);
    }
}
