//! Pasting on X11 with the clipboard kept whole: every format CLIPBOARD holds is saved
//! (`clip_x11/`), the dictated text is owned, the paste chord sent, and the focused
//! window's fetch watched. Once it has the text, what was there is served again, byte for
//! byte. A window that never asks (no such chord there: xterm's default bindings) gets the
//! text typed instead, and the report says so: a paste is delivered or says it was not.

use super::clip_x11::{Fetch, Saved, SnapError};
use super::clipboard::{not_restored, CHANGED_MEANWHILE};
use super::report::{ms_since, Delivery, InjectReport};
use super::session::TypePath;
use super::Injector;
use std::time::{Duration, Instant};

/// How long after the paste chord the focused window has to ask for the clipboard. A window
/// that pastes asks at once (xterm, GTK: a few ms on Xvfb); one with no such chord never
/// asks, and then the text is typed after this wait, so it is what such a window costs.
/// 400 ms leaves room for a busy machine; a later fetch gets nothing (the text is typed).
pub(super) const PASTE_FETCH_WAIT: Duration = Duration::from_millis(400);

/// Once the window has asked: how long it may take to fetch the text (TARGETS first, then
/// the text; a long one by INCR) before the old clipboard comes back regardless.
const PASTE_FETCH_DONE: Duration = Duration::from_secs(2);

/// What the report says when the window did not fetch the paste and the text was typed.
pub const PASTE_NOT_FETCHED: &str = "typed: paste not fetched";

impl Injector {
    pub(super) fn paste_x11(
        &mut self,
        text: &str,
        terminal: bool,
        window: Option<u32>,
        start: Instant,
        report: &mut InjectReport,
    ) -> Result<Delivery, String> {
        let saved: Result<Saved, String> = match self.x.clip()?.snapshot() {
            Ok(saved) => Ok(saved),
            Err(SnapError::TooLarge(too_large)) => {
                // Left alone: pasting would lose it.
                let typed = self.type_x11(text, start, report)?;
                report.add_warning(too_large.to_string());
                return Ok(typed);
            }
            Err(SnapError::Failed(e)) => {
                self.x.clip = None;
                Err(e)
            }
        };
        self.x
            .clip()
            .and_then(|c| c.own_text(text))
            .inspect_err(|_| self.x.clip = None)?;
        self.x
            .keys_and_x11()
            .and_then(|(keys, _)| keys.paste_chord(terminal))
            .inspect_err(|_| self.reset_x11())?;
        report.inject_ms = ms_since(start);
        let chord = Instant::now();
        let fetch = self
            .x
            .clip()?
            .wait_fetch(window, PASTE_FETCH_WAIT, PASTE_FETCH_DONE);
        tracing::debug!(
            ?fetch,
            wait_ms = ms_since(chord),
            "paste: the window's fetch"
        );
        if fetch == Fetch::NotFetched {
            // Nothing reached the window: the text is typed, and a fetch that comes late
            // meanwhile gets nothing (it would paste the text twice, or the old clipboard
            // once restored); then the clipboard goes back as it was.
            self.x.clip()?.refuse();
            let typed = self.type_x11(text, start, report);
            let restored = self.restore_x11(saved, true);
            let typed = typed?;
            report.add_warning(format!(
                "{PASTE_NOT_FETCHED} (the window did not ask for the clipboard within {} ms \
                     of the paste chord; set [inject] method = \"type\" for it)",
                PASTE_FETCH_WAIT.as_millis()
            ));
            if let Err(why) = restored {
                report.add_warning(format!("the previous clipboard was not restored: {why}"));
            }
            return Ok(typed);
        }
        if let Err(why) = self.restore_x11(saved, false) {
            report.add_warning(not_restored(why));
        }
        Ok(Delivery::Pasted(TypePath::X11))
    }

    /// Puts back what CLIPBOARD held, unless something else was copied since. Nothing was
    /// there: `empty_again` gives the clipboard up, else the text stays on it (as a copy).
    fn restore_x11(
        &mut self,
        saved: Result<Saved, String>,
        empty_again: bool,
    ) -> Result<(), String> {
        let clip = self.x.clip()?;
        if clip.lost() {
            return Err(CHANGED_MEANWHILE.into());
        }
        match saved {
            Ok(Some(items)) => clip.own(items),
            Ok(None) if empty_again => clip.give_up(),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
