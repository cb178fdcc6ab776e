//! The original selection kept on the clipboard before it is replaced (`[edit]
//! keep_on_clipboard`): a clipboard manager records it in its history, and Ctrl+V pastes it
//! back. On X11 the text is served by arboard's thread for as long as its handle lives, so
//! the handle is kept here for the life of the process; on Wayland through data-control.

#[cfg(target_os = "linux")]
static X11_BOARD: std::sync::Mutex<Option<arboard::Clipboard>> = std::sync::Mutex::new(None);

/// Puts `text` on the clipboard; the error says why it could not.
pub fn keep(text: &str) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty());
        if wayland {
            if let Ok(mut wl) = crate::inject::wlclip::WlClipboard::connect() {
                return wl.set_text(text);
            }
        }
        let mut board = X11_BOARD.lock().unwrap_or_else(|e| e.into_inner());
        if board.is_none() {
            *board = Some(
                arboard::Clipboard::new().map_err(|e| format!("cannot open the clipboard: {e}"))?,
            );
        }
        match board.as_mut() {
            Some(b) => b
                .set_text(text)
                .map_err(|e| format!("cannot set the clipboard: {e}")),
            None => Err("cannot open the clipboard".into()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = text;
        Err("the clipboard is kept on Linux only".into())
    }
}
