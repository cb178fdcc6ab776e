//! The clipboard (arboard) and paste: save the current text, set the dictated text, send
//! the paste chord, restore the old text once the target has fetched the new one.
//!
//! On X11 the clipboard's content is served by arboard's background thread for as long as
//! a `Clipboard` lives, so the handle is kept in the `Injector`: text left on the clipboard
//! (no previous content, or the failure fallback) stays pasteable while Dictum runs.

use arboard::Clipboard;

pub(crate) struct Board {
    clipboard: Clipboard,
}

impl Board {
    pub(crate) fn connect() -> Result<Board, String> {
        let clipboard = Clipboard::new().map_err(|e| format!("cannot open the clipboard: {e}"))?;
        Ok(Board { clipboard })
    }

    /// The clipboard's current text; None when it is empty or holds no text (an image).
    pub(crate) fn text(&mut self) -> Option<String> {
        self.clipboard.get_text().ok()
    }

    pub(crate) fn set_text(&mut self, text: &str) -> Result<(), String> {
        self.clipboard
            .set_text(text)
            .map_err(|e| format!("cannot set the clipboard: {e}"))
    }
}
