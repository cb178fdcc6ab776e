//! Edit mode's part of the controller (`crate::edit` has the rest): the edit hotkey (an X11
//! grab of its own, beside the dictation hotkey; on Wayland a compositor shortcut runs `dictum
//! ctl edit-press` / `edit-release`), and the press and release of an edit. The press checks
//! what an edit needs (`edit::check_press`) and records the instruction as a push-to-talk
//! dictation (`start`), with the edit profile and the row marked; the release ends it
//! (`stop`). The worker transcribes it as any dictation; the injector completes it.

use super::Controller;
use crate::dictation::{Command, Input};
use crate::edit::{self, AtPress};
use crate::hotkey::Hotkeys;
use crate::store::row::{RowUpdate, RowWriter};
use std::sync::{mpsc, Arc};
use std::time::Instant;

/// The edit hotkey and the edit being recorded.
pub(super) struct EditSide {
    inputs: mpsc::Sender<Input>,
    /// The dictation hotkey is an X11 grab, so the edit key is one too.
    grab: bool,
    /// The grabbed edit key and its spec.
    hotkey: Option<(Hotkeys, String)>,
    /// The utterance (sequence number) recording an instruction.
    recording: Option<u64>,
    /// The hotkeys are paused (tray: "pause hotkey"): the edit key is let go too.
    paused: bool,
    probe: edit::focus::Probe,
}

impl EditSide {
    pub(super) fn new(inputs: mpsc::Sender<Input>, grab: bool) -> EditSide {
        EditSide {
            inputs,
            grab,
            hotkey: None,
            recording: None,
            paused: false,
            probe: edit::focus::Probe::new(),
        }
    }
}

impl Controller {
    /// Grabs the edit hotkey when `[edit] enabled` (and the dictation hotkey is an X11 grab),
    /// lets go of it otherwise; at start and after each config change.
    pub(super) fn edit_sync(&mut self) {
        let want = (self.edit.grab && self.config.edit.enabled && !self.edit.paused)
            .then(|| self.config.edit.hotkey.trim().to_string());
        if self.edit.hotkey.as_ref().map(|(_, spec)| spec) == want.as_ref() {
            return;
        }
        self.edit.hotkey = None;
        let Some(spec) = want else {
            return;
        };
        let tx = self.edit.inputs.clone();
        let grabbed = Hotkeys::new(move |_, pressed| {
            let cmd = if pressed {
                Command::EditPress
            } else {
                Command::EditRelease
            };
            let _ = tx.send(Input::Command(cmd, Instant::now()));
        })
        .and_then(|mut h| h.set_main(&spec).map(|()| h));
        match grabbed {
            Ok(h) => {
                tracing::info!(hotkey = %spec, "edit hotkey grabbed");
                self.edit.hotkey = Some((h, spec));
            }
            Err(e) => self.notice(format!(
                "edit hotkey not available: {}",
                e.replace("[dictation] hotkey", "[edit] hotkey")
            )),
        }
    }

    /// Lets go of the edit key while the hotkeys are paused, and takes it again after.
    pub(super) fn edit_pause(&mut self, paused: bool) {
        self.edit.paused = paused;
        self.edit_sync();
    }

    /// The edit key went down: an edit starts when it can, else the user is told why.
    pub(super) fn edit_press(&mut self, at: Instant) {
        // An edit cancelled with the cancel key while recorded: what its press took goes.
        if let Some(old) = self.edit.recording {
            if self.live.as_ref().is_none_or(|l| l.seq != old) {
                self.edit.recording = None;
                self.shared.take_edit(old);
            }
        }
        if self.live.is_some() || self.hands_free.is_some() {
            // The key's auto-repeat while an edit records, or a dictation under way.
            if self.edit.recording.is_none() {
                self.notice(
                    "edit: a dictation is being recorded; finish it, then hold the edit key".into(),
                );
            }
            return;
        }
        let (window, terminal) = self.edit.probe.focused(&self.config);
        let found = AtPress {
            selection: edit::selection::read(),
            focus: edit::focus::key(&window),
            terminal,
        };
        let request = match edit::check_press(&self.config, found, at) {
            Ok(r) => r,
            Err(message) => {
                self.notice(message);
                self.cue(crate::audio::cues::Cue::Error);
                return;
            }
        };
        self.start(at);
        let Some(live) = self.live.as_mut() else {
            return;
        };
        // The instruction is neither cleaned nor a voice command.
        live.profile = Arc::new(edit::profile_for(&live.profile));
        if let Some(id) = live.entry.id {
            let edit = RowUpdate::Edit {
                selection: &request.selection,
            };
            if let Err(e) = RowWriter::new(&self.history).update(id, edit) {
                tracing::warn!("edit: the row could not be marked as an edit: {e}");
            }
        }
        tracing::info!(
            selection_chars = request.selection.chars().count(),
            "edit: recording the instruction"
        );
        self.shared.put_edit(live.seq, request);
        self.edit.recording = Some(live.seq);
    }

    /// The edit key came up: the instruction is transcribed and the edit completed.
    pub(super) fn edit_release(&mut self, at: Instant) {
        let Some(seq) = self.edit.recording.take() else {
            return;
        };
        if self.live.as_ref().is_some_and(|l| l.seq == seq) {
            self.stop(at);
        }
    }
}
