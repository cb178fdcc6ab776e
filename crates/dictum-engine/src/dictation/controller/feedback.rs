//! What the user sees and hears of the controller: the state published to the face (the
//! tray's indicator), the sound cues (`[dictation] sound_cues`), and media players paused
//! (output muted) while dictating (`pause_media`, `mute_output`).
//!
//! Cues go to the cue thread (`audio::cues::Player`); capture and typing never wait for the
//! output device:
//! - start: once the press has started recording (capture is already running: the cue
//!   never delays it, and the pre-roll before the press cannot hold it);
//! - stop: once recording is over and the microphone is closed (after the post-roll), so
//!   the cue is not recorded into this dictation's end;
//! - error: a dictation that failed (capture, transcription, typing); no speech is not one.

use crate::audio::cues::{Cue, Player};
use crate::config::Config;
use crate::dictation::messages::Event;
use crate::dictation::state::State;
use crate::stt::priority::Claim;
use std::sync::mpsc;

pub(super) struct Feedback {
    /// The state last published.
    state: State,
    media: crate::media::Pauser,
    cues: Player,
    /// Recording (or listening) when the start cue was last played.
    cue_recording: bool,
    /// Whether the microphone's stream was open when last published.
    mic_open: Option<bool>,
    /// Raised while a dictation is under way, so a file transcribed in this process waits
    /// (`stt::priority`: dictation goes first); lowered with the state, or when dropped.
    claim: Claim,
}

impl Feedback {
    pub(super) fn new(media: crate::media::Pauser) -> Feedback {
        Feedback {
            state: State::Idle,
            media,
            cues: Player::default(),
            cue_recording: false,
            mic_open: None,
            claim: Claim::new(),
        }
    }

    /// Publishes `state` when it changed.
    pub(super) fn publish(&mut self, state: State, events: &mpsc::Sender<Event>) {
        self.claim.set(state.is_dictating());
        if state != self.state {
            self.state = state;
            let _ = events.send(Event::State { state });
        }
    }

    /// Publishes the microphone's state when its stream opened or closed (`describe`: why).
    pub(super) fn publish_mic(
        &mut self,
        open: bool,
        describe: impl FnOnce() -> String,
        events: &mpsc::Sender<Event>,
    ) {
        if self.mic_open != Some(open) {
            self.mic_open = Some(open);
            let state = describe();
            tracing::info!("microphone {state}");
            let _ = events.send(Event::Microphone { open, state });
        }
    }

    /// Plays the start or stop cue when recording (or hands-free listening) began or ended
    /// since the last round; `capturing`: the microphone still records (the post-roll).
    pub(super) fn sound_cues(&mut self, recording: bool, capturing: bool, config: &Config) {
        let cue = match (self.cue_recording, recording) {
            (false, true) => Cue::Start,
            (true, false) if !capturing => Cue::Stop,
            _ => return,
        };
        self.cue_recording = recording;
        self.cue(cue, config);
    }

    /// Plays `cue` if cues are on.
    pub(super) fn cue(&mut self, cue: Cue, config: &Config) {
        let d = &config.dictation;
        if d.sound_cues {
            tracing::debug!(?cue, "sound cue");
            self.cues.play(cue, d.sound_volume);
        }
    }

    /// Media stay paused (output muted) from the press until the last dictation is typed,
    /// cancelled or found empty, or listening stops: `busy`.
    pub(super) fn media(&mut self, busy: bool, config: &Config) {
        self.media.set(config.dictation.pause_media && busy);
        self.media.set_mute(config.dictation.mute_output && busy);
    }

    /// Quitting: the players are playing again before `Stopped` is told.
    pub(super) fn release_media(&mut self) {
        self.media.set(false);
        self.media.set_mute(false);
        self.media.wait_idle(crate::media::PASS_LIMIT * 2);
    }
}
