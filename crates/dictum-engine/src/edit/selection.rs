//! The selected text at the edit key's press: the PRIMARY selection, which every X11 toolkit
//! sets when text is selected (no copy chord pressed, the clipboard left alone). On Wayland
//! the compositor's primary selection through the data-control protocol (wlroots compositors,
//! KWin); where it offers none (GNOME), the X11 PRIMARY of XWayland windows, or a clear
//! refusal.

use std::time::Duration;

/// How long the selection's owner may take to send it.
pub const READ_TIMEOUT: Duration = Duration::from_secs(1);

/// The selected text; `Ok("")` when nothing is selected, `Err` (what to do) when the
/// selection cannot be read in this session.
pub fn read() -> Result<String, String> {
    #[cfg(target_os = "linux")]
    {
        let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty());
        let x11 = std::env::var_os("DISPLAY").is_some_and(|v| !v.is_empty());
        if wayland {
            match wayland_primary() {
                Ok(text) => return Ok(text),
                Err(e) if !x11 => {
                    return Err(format!(
                        "cannot read the selected text on this Wayland desktop ({e}); edit mode \
                         needs a compositor with the data-control protocol's primary selection \
                         (sway, Hyprland, KDE) or an XWayland window"
                    ))
                }
                Err(e) => tracing::debug!("Wayland primary selection: {e}; trying X11 PRIMARY"),
            }
        }
        if x11 {
            return x11_primary();
        }
        Err("cannot read the selected text: no display (DISPLAY and WAYLAND_DISPLAY unset); run Dictum inside your desktop session".into())
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err("edit mode reads the selected text on Linux only".into())
    }
}

#[cfg(target_os = "linux")]
fn x11_primary() -> Result<String, String> {
    use arboard::{GetExtLinux, LinuxClipboardKind};
    let mut board = arboard::Clipboard::new()
        .map_err(|e| format!("cannot read the selected text (X11 PRIMARY): {e}"))?;
    match board.get().clipboard(LinuxClipboardKind::Primary).text() {
        Ok(text) => Ok(text),
        // Nothing selected, or a selection that is not text (an image).
        Err(arboard::Error::ContentNotAvailable) => Ok(String::new()),
        Err(e) => Err(format!("cannot read the selected text (X11 PRIMARY): {e}")),
    }
}

#[cfg(target_os = "linux")]
fn wayland_primary() -> Result<String, String> {
    use std::io::Read;
    use wl_clipboard_rs::paste::{get_contents, ClipboardType, Error, MimeType, Seat};
    let pipe = match get_contents(ClipboardType::Primary, Seat::Unspecified, MimeType::Text) {
        Ok((pipe, _mime)) => pipe,
        Err(Error::NoSeats | Error::ClipboardEmpty | Error::NoMimeType) => return Ok(String::new()),
        Err(e) => return Err(e.to_string()),
    };
    // The owner writes into the pipe; one that never does must not hold the press.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut data = Vec::new();
        let r = pipe
            .take(4 << 20)
            .read_to_end(&mut data)
            .map(|_| String::from_utf8_lossy(&data).into_owned());
        let _ = tx.send(r);
    });
    match rx.recv_timeout(READ_TIMEOUT) {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(format!("reading the primary selection failed: {e}")),
        Err(_) => Err(format!(
            "the application holding the selection did not send it within {} s",
            READ_TIMEOUT.as_secs()
        )),
    }
}
