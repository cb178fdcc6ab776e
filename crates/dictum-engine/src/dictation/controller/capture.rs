//! The microphone as the controller uses it: the rules (re-open in the background, what is
//! told and when, a settings change) are `dictation/microphone.rs`; these pass the time and
//! tell the user what the microphone has to say.

use super::Controller;
use std::time::Instant;

impl Controller {
    /// True when a working microphone stream is there. Never waits: without one, a re-open
    /// is started in the background (one at a time) and this press is not recorded.
    pub(super) fn ensure_capture(&mut self) -> bool {
        let working = self.mic.ensure(Instant::now());
        self.tell_mic();
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
