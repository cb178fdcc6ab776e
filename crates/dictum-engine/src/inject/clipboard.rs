//! The clipboard on every path (X11 through arboard, Wayland data-control, `wl-copy`): the
//! paste mode's text and the restore of what was there (on Wayland: every type through
//! data-control, the text alone through `wl-copy`), the tray's "Copy last dictation", and
//! the failure fallback that leaves the text there.

use super::session::{ClipPath, Focus, SessionKind};
use super::wlclip::WlSaved;
use super::{wayland, Injector};

pub(super) const CHANGED_MEANWHILE: &str = "something else was copied meanwhile (kept)";

pub(super) fn not_restored(why: String) -> String {
    format!("the text was pasted; the previous clipboard was not restored: {why}")
}

/// What the clipboard held before a paste on Wayland, as its path can keep it.
pub(super) enum Previous {
    /// Data-control: every type, byte for byte; None: the clipboard was empty.
    Whole(Result<Option<WlSaved>, String>),
    /// `wl-copy`/`wl-paste` (GNOME without data-control): the text only.
    Text(Option<String>),
}

impl Previous {
    /// Whether there is something to put back after pasting `text` (the paste waits for
    /// the window to fetch it first).
    pub(super) fn to_restore(&self, text: &str) -> bool {
        match self {
            Previous::Whole(saved) => saved.as_ref().is_ok_and(Option::is_some),
            Previous::Text(previous) => previous.as_deref().is_some_and(|p| p != text),
        }
    }
}

impl Injector {
    pub(super) fn clipboard_text(&mut self, clip: ClipPath) -> Option<String> {
        match clip {
            ClipPath::X11 => self.x.board().ok().and_then(|b| b.text()),
            ClipPath::DataControl => self.wl.clipboard().ok().and_then(|c| c.text()),
            ClipPath::WlCopy => wayland::clipboard_text(),
        }
    }

    pub(super) fn set_clipboard(&mut self, clip: ClipPath, text: &str) -> Result<(), String> {
        let result = match clip {
            ClipPath::X11 => self.x.board().and_then(|b| b.set_text(text)),
            ClipPath::DataControl => self.wl.clipboard().and_then(|c| c.set_text(text)),
            ClipPath::WlCopy => wayland::set_clipboard(text),
        };
        if result.is_err() {
            match clip {
                ClipPath::X11 => self.x.board = None,
                ClipPath::DataControl => self.wl.clipboard = None,
                ClipPath::WlCopy => {}
            }
        }
        result
    }

    /// Saves what the Wayland clipboard `clip` holds before a paste.
    pub(super) fn save_wayland(&mut self, clip: ClipPath) -> Previous {
        match clip {
            ClipPath::DataControl => {
                Previous::Whole(self.wl.clipboard().and_then(|c| c.snapshot()))
            }
            _ => Previous::Text(self.clipboard_text(clip)),
        }
    }

    /// Puts back what [`Injector::save_wayland`] kept, unless something else was copied
    /// since the paste's `text` (that is left alone). Nothing was there: the text stays (as
    /// on X11, a copy the user can paste again). Ok with a note when types were left out.
    pub(super) fn restore_wayland(
        &mut self,
        clip: ClipPath,
        previous: Previous,
        text: &str,
    ) -> Result<Option<String>, String> {
        match previous {
            Previous::Whole(saved) => {
                let Some(saved) = saved? else {
                    return Ok(None);
                };
                let c = self.wl.clipboard()?;
                if !c.holds(text) {
                    return Err(CHANGED_MEANWHILE.into());
                }
                let note = saved.dropped_note();
                c.restore(saved).inspect_err(|_| self.wl.clipboard = None)?;
                Ok(note)
            }
            Previous::Text(Some(previous)) if previous != text => {
                if self.clipboard_text(clip).as_deref() != Some(text) {
                    return Err(CHANGED_MEANWHILE.into());
                }
                self.set_clipboard(clip, &previous).map(|()| None)
            }
            Previous::Text(_) => Ok(None),
        }
    }

    /// Puts `text` on this session's clipboard and leaves it there (the tray's "Copy last
    /// dictation"). Keep the injector alive: on X11 it serves what it copied.
    pub fn copy(&mut self, text: &str) -> Result<(), String> {
        self.leave_on_clipboard(text, Focus::Unknown)
    }

    /// The failure fallback: the text stays on the clipboard (not restored), on whichever
    /// clipboard this session has.
    pub(super) fn leave_on_clipboard(&mut self, text: &str, focus: Focus) -> Result<(), String> {
        let mut tried = Vec::new();
        let candidates: &[ClipPath] = match self.session.kind {
            SessionKind::X11 => &[ClipPath::X11],
            SessionKind::Wayland if focus == Focus::XWayland => {
                &[ClipPath::X11, ClipPath::DataControl, ClipPath::WlCopy]
            }
            SessionKind::Wayland => &[ClipPath::DataControl, ClipPath::WlCopy, ClipPath::X11],
            SessionKind::None => &[],
        };
        for &clip in candidates {
            let available = match clip {
                ClipPath::X11 => self.session.x_display,
                ClipPath::DataControl => self.abilities.data_control,
                ClipPath::WlCopy => self.abilities.wl_clipboard,
            };
            if !available {
                continue;
            }
            match self.set_clipboard(clip, text) {
                Ok(()) => return Ok(()),
                Err(e) => tried.push(e),
            }
        }
        Err(if tried.is_empty() {
            "no clipboard either".into()
        } else {
            tried.join("; ")
        })
    }
}
