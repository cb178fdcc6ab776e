//! Edit mode's part of the controller (`crate::edit` has the rest): the edit hotkey (an X11
//! grab of its own, beside the dictation hotkey; on Wayland a compositor shortcut runs `dictum
//! ctl edit-press` / `edit-release`), and the press and release of an edit. The press checks
//! what an edit needs (`edit::check_press`) and records the instruction as a push-to-talk
//! dictation (`start`), with the edit profile and the row marked; the release ends it
//! (`stop`). The worker transcribes it as any dictation; the injector completes it.

use super::machine::{Ended, Trigger};
use super::Controller;
use crate::edit::{self, AtPress};
use crate::store::row::RowUpdate;
use std::sync::Arc;
use std::time::Instant;

impl Controller {
    /// The edit key went down: an edit starts when it can, else the user is told why.
    pub(super) fn edit_press(&mut self, at: Instant) {
        // An edit cancelled with the cancel key while recorded: what its press took goes.
        if let Some(old) = self.keys.edit.recording {
            if self.live.as_ref().is_none_or(|l| l.seq != old) {
                self.keys.edit.recording = None;
            }
        }
        if self.live.is_some() || self.hands_free.is_some() {
            // The key's auto-repeat while an edit records, or a dictation under way.
            if self.keys.edit.recording.is_none() {
                self.notice(
                    "edit: a dictation is being recorded; finish it, then hold the edit key".into(),
                );
            }
            return;
        }
        let (window, terminal) = self.keys.edit.probe.focused(&self.config);
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
            if let Err(e) = self.links.rows.update(id, edit) {
                tracing::warn!("edit: the row could not be marked as an edit: {e}");
            }
        }
        tracing::info!(
            selection_chars = request.selection.chars().count(),
            "edit: recording the instruction"
        );
        self.keys.edit.recording = Some(live.seq);
        live.edit = Some(request);
    }

    /// The edit key came up: the instruction is transcribed and the edit completed.
    pub(super) fn edit_release(&mut self, at: Instant) {
        let Some(seq) = self.keys.edit.recording.take() else {
            return;
        };
        if self.live.as_ref().is_some_and(|l| l.seq == seq) {
            self.step(Trigger::Ended(Ended::EditKeyUp), at);
        }
    }
}
