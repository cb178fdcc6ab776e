//! The dictation state as the user sees it (tray icon, `dictum run` events), and what a key
//! event means in each mode. Pure functions: the controller owns the one copy of the state.

use crate::dictation::config::Mode;
use crate::hotkey::KeyEvent;
use serde::Serialize;

/// Idle → Recording → Processing → Injecting → Idle. Recording wins over the others: a new
/// press while earlier utterances are still processing starts recording at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Idle,
    Recording,
    Processing,
    Injecting,
}

impl State {
    /// Derived from the facts the controller tracks; never stored as a flag of its own, so it
    /// can never be left stale (the "busy flag never reset" failure).
    pub fn derive(recording: bool, injecting: bool, in_flight: usize) -> State {
        if recording {
            State::Recording
        } else if injecting {
            State::Injecting
        } else if in_flight > 0 {
            State::Processing
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
        }
    }
}

/// What to do about a key event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Start,
    Stop,
    Cancel,
    Ignore,
}

pub fn on_key(mode: Mode, recording: bool, ev: KeyEvent) -> Action {
    match (mode, ev, recording) {
        (_, KeyEvent::Cancel, _) => Action::Cancel,
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
            Mode::Toggle => &[
                KeyEvent::Pressed,
                KeyEvent::Released,
                KeyEvent::Pressed,
                KeyEvent::Released,
            ],
        };
        for _ in 0..n {
            for &k in keys {
                match on_key(mode, recording, k) {
                    Action::Start => recording = true,
                    Action::Stop => {
                        recording = false;
                        stops += 1;
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
    }

    #[test]
    fn stray_events_are_ignored() {
        assert_eq!(
            on_key(Mode::PushToTalk, false, KeyEvent::Released),
            Action::Ignore
        );
        assert_eq!(
            on_key(Mode::PushToTalk, true, KeyEvent::Pressed),
            Action::Ignore
        );
        assert_eq!(
            on_key(Mode::Toggle, true, KeyEvent::Released),
            Action::Ignore
        );
        assert_eq!(
            on_key(Mode::Toggle, false, KeyEvent::Cancel),
            Action::Cancel
        );
    }

    #[test]
    fn state_is_derived_with_recording_first() {
        assert_eq!(State::derive(false, false, 0), State::Idle);
        assert_eq!(State::derive(true, true, 3), State::Recording);
        assert_eq!(State::derive(false, true, 1), State::Injecting);
        assert_eq!(State::derive(false, false, 2), State::Processing);
    }
}
