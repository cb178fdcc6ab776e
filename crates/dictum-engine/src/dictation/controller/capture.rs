//! The microphone as the controller uses it: the rules (re-open in the background, what is
//! told and when, a settings change) are `dictation/microphone.rs`; these pass the time and
//! tell the user what the microphone has to say.

use super::Controller;
use crate::dictation::state::State;
use std::time::Instant;

impl Controller {
    /// True when a working microphone stream is there. A stream closed because nothing
    /// needed it is opened now (waiting for its first samples, up to `COLD_OPEN_WAIT`; past
    /// `SLOW_OPEN_AFTER` the state says `opening` while it waits). Otherwise never waits:
    /// without a stream, a re-open is started in the background (one at a time) and this
    /// press is not recorded.
    pub(super) fn ensure_capture(&mut self) -> bool {
        let (feedback, events) = (&mut self.feedback, &self.links.events);
        let mut slow = || {
            tracing::info!("the microphone is slow to start; the press waits for it");
            feedback.publish(State::Opening, events);
        };
        let working = self.mic.ensure_telling(Instant::now(), &mut slow);
        self.tell_mic();
        if !working {
            self.publish_state();
        }
        working
    }

    /// Between utterances: a device that failed is re-opened in the background when it
    /// returns (a frozen sound server costs one waiting thread; the hotkey is still answered).
    pub(super) fn keep_mic_open(&mut self) {
        self.mic.keep_open(Instant::now());
        self.tell_mic();
    }

    /// Every round: the microphone rule learns whether a dictation is under way and whether
    /// hands-free listens, and the stream is closed once nothing needs it
    /// (`[dictation] microphone`; never under an utterance).
    pub(super) fn settle_mic(&mut self) {
        let busy = self.live.is_some() || self.mic.stream().is_some_and(|c| c.is_recording());
        let listening = self.hands_free.is_some();
        self.mic.settle(busy, listening, Instant::now());
    }

    /// Hands-free starts listening: the stream is needed from now on (opened now if closed).
    pub(super) fn open_for_listening(&mut self) {
        self.mic.listen(Instant::now());
        self.tell_mic();
    }

    fn tell_mic(&mut self) {
        for message in self.mic.take_notices() {
            self.notice(message);
        }
    }
}
