//! Sound cues (`[dictation] sound_cues`): the controller only sends a message to the cue
//! thread (`audio::cues::Player`); capture and typing never wait for the output device.
//!
//! - start: once the press has started recording (capture is already running: the cue
//!   never delays it, and the pre-roll before the press cannot hold it);
//! - stop: once recording is over and the microphone is closed (after the post-roll), so
//!   the cue is not recorded into this dictation's end;
//! - error: a dictation that failed (capture, transcription, typing); no speech is not one.

use super::Controller;
use crate::audio::cues::Cue;

impl Controller {
    /// Plays the start or stop cue when recording (or hands-free listening) began or ended
    /// since the last round.
    pub(super) fn sound_cues(&mut self) {
        let recording = self.live.is_some() || self.hands_free.is_some();
        let capturing = self.mic.stream().is_some_and(|c| c.is_recording());
        let cue = match (self.cue_recording, recording) {
            (false, true) => Cue::Start,
            (true, false) if !capturing => Cue::Stop,
            _ => return,
        };
        self.cue_recording = recording;
        self.cue(cue);
    }

    /// Plays `cue` if cues are on.
    pub(super) fn cue(&mut self, cue: Cue) {
        let d = &self.config.dictation;
        if d.sound_cues {
            tracing::debug!(?cue, "sound cue");
            self.cues.play(cue, d.sound_volume);
        }
    }
}
