//! The Wayland clipboard without a window, through the data-control protocol
//! (`zwlr_data_control_manager_v1` or `ext_data_control_manager_v1`: wlroots compositors,
//! KWin), with the `wl-clipboard-rs` crate (pure Rust, no `wl-copy` process).
//!
//! [`WlClipboard::set_text`] offers the text from a background thread of this process, like
//! `wl-copy` does from its own process: it stays pasteable after the call returns, until
//! something else is copied (the thread then ends). [`WlClipboard::text`] reads what is on
//! the clipboard now, whoever offers it, giving up after [`READ_TIMEOUT`] when the owner does
//! not send it.

use std::time::{Duration, Instant};
use wl_clipboard_rs::{copy, paste};

/// How long reading the clipboard may wait for its owner to send the data.
pub const READ_TIMEOUT: Duration = Duration::from_secs(1);

/// The Wayland clipboard. `Send`.
#[derive(Debug)]
pub struct WlClipboard {
    _private: (),
}

const _: () = {
    const fn send<T: Send>() {}
    send::<WlClipboard>();
};

impl WlClipboard {
    /// Checks that the compositor at `$WAYLAND_DISPLAY` offers data-control (bounded: about
    /// a second).
    pub fn connect() -> Result<WlClipboard, String> {
        let globals = super::vkbd::probe_globals()?;
        if !globals.data_control {
            return Err(
                if globals.names.iter().any(|n| n.starts_with("gtk_shell")) {
                    "this compositor does not offer the data-control clipboard protocol (GNOME): the clipboard can only be set by a focused window there".to_string()
                } else {
                    "this compositor does not offer the data-control clipboard protocol (zwlr_data_control_manager_v1 / ext_data_control_manager_v1)".to_string()
                },
            );
        }
        Ok(WlClipboard { _private: () })
    }

    /// The clipboard's text, or None when it is empty, holds no text, or cannot be read.
    pub fn text(&mut self) -> Option<String> {
        let (pipe, _mime) = paste::get_contents(
            paste::ClipboardType::Regular,
            paste::Seat::Unspecified,
            paste::MimeType::Text,
        )
        .ok()?;
        read_bounded(pipe, Instant::now() + READ_TIMEOUT)
    }

    /// Puts `text` on the clipboard (as text/plain;charset=utf-8 and the other text types),
    /// served in the background until something else is copied.
    ///
    /// Returns once the compositor has taken the new selection (read back through it): a
    /// paste chord sent on another connection right after could otherwise reach a window
    /// that still holds the previous owner's offer (seen: foot pasted nothing).
    pub fn set_text(&mut self, text: &str) -> Result<(), String> {
        let mut opts = copy::Options::new();
        opts.foreground(false);
        opts.copy(
            copy::Source::Bytes(text.as_bytes().to_vec().into_boxed_slice()),
            copy::MimeType::Text,
        )
        .map_err(|e| format!("cannot set the Wayland clipboard: {e}"))?;
        let deadline = Instant::now() + std::time::Duration::from_millis(300);
        while self.text().as_deref() != Some(text) {
            if Instant::now() > deadline {
                return Err("the Wayland clipboard did not take the new text within 300 ms".into());
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        Ok(())
    }
}

/// Reads the pipe to its end as UTF-8 (lossy), giving up at `deadline`.
fn read_bounded(pipe: impl std::io::Read + std::os::fd::AsFd, deadline: Instant) -> Option<String> {
    let mut pipe = pipe;
    rustix::io::ioctl_fionbio(pipe.as_fd(), true).ok()?;
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => data.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return None;
                }
                let timeout = rustix::event::Timespec {
                    tv_sec: left.as_secs() as _,
                    tv_nsec: left.subsec_nanos() as _,
                };
                let mut fds = [rustix::event::PollFd::new(
                    &pipe,
                    rustix::event::PollFlags::IN,
                )];
                let _ = rustix::event::poll(&mut fds, Some(&timeout));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(String::from_utf8_lossy(&data).into_owned())
}
