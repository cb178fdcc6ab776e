//! The Wayland clipboard without a window, through the data-control protocol
//! (`zwlr_data_control_manager_v1` or `ext_data_control_manager_v1`: wlroots compositors,
//! KWin), with the `wl-clipboard-rs` crate (pure Rust, no `wl-copy` process).
//!
//! [`WlClipboard::set_text`] and [`WlClipboard::restore`] offer their data from a background
//! thread of this process, like `wl-copy` does from its own process: it stays pasteable after
//! the call returns, until something else is copied (the thread then ends, and
//! [`WlClipboard::holds`] says so). [`WlClipboard::text`] reads what is on the clipboard now,
//! whoever offers it; [`WlClipboard::snapshot`] reads every type it offers, byte for byte
//! (the bounds and rules in `saved.rs`). A read gives up when the owner sends nothing for
//! [`READ_TIMEOUT`].

mod saved;

pub use saved::WlSaved;

use super::clip_x11::targets::SNAPSHOT_LIMIT;
use saved::{data_types, Why};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wl_clipboard_rs::{copy, paste};

/// How long reading the clipboard may wait for its owner to send more (its first bytes,
/// the next ones, or the end).
pub const READ_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a whole snapshot may take (as on X11): an owner that lists many types and sends
/// none delays a paste by this much at most; the types not read by then are left out.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long an offer may take to become the compositor's selection.
const TAKE_TIMEOUT: Duration = Duration::from_millis(300);

/// The Wayland clipboard. `Send`.
#[derive(Debug)]
pub struct WlClipboard {
    /// Set once the thread serving our latest offer has ended (something else was copied).
    offer_ended: Option<Arc<AtomicBool>>,
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
        Ok(WlClipboard { offer_ended: None })
    }

    /// The clipboard's text, or None when it is empty, holds no text, or cannot be read.
    pub fn text(&mut self) -> Option<String> {
        let (pipe, _mime) = paste::get_contents(
            paste::ClipboardType::Regular,
            paste::Seat::Unspecified,
            paste::MimeType::Text,
        )
        .ok()?;
        match read_bounded(pipe, Instant::now() + READ_TIMEOUT, SNAPSHOT_LIMIT) {
            Read::Whole(data) => Some(String::from_utf8_lossy(&data).into_owned()),
            _ => None,
        }
    }

    /// Puts `text` on the clipboard (as text/plain;charset=utf-8 and the other text types),
    /// served in the background until something else is copied.
    ///
    /// Returns once the compositor has taken the new selection (read back through it): a
    /// paste chord sent on another connection right after could otherwise reach a window
    /// that still holds the previous owner's offer (seen: foot pasted nothing).
    pub fn set_text(&mut self, text: &str) -> Result<(), String> {
        let source = copy::MimeSource {
            source: copy::Source::Bytes(text.as_bytes().into()),
            mime_type: copy::MimeType::Text,
        };
        self.offer(copy::Options::new(), vec![source])?;
        let deadline = Instant::now() + TAKE_TIMEOUT;
        while self.text().as_deref() != Some(text) {
            if Instant::now() > deadline {
                return Err(format!(
                    "the Wayland clipboard did not take the new text within {} ms",
                    TAKE_TIMEOUT.as_millis()
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    }

    /// Whether the clipboard still holds what [`WlClipboard::set_text`] offered: our offer is
    /// still served and the clipboard's text is `text`.
    pub fn holds(&mut self, text: &str) -> bool {
        let served = self
            .offer_ended
            .as_ref()
            .is_some_and(|ended| !ended.load(Ordering::Acquire));
        served && self.text().as_deref() == Some(text)
    }

    /// Every type the clipboard offers, with its bytes; None when it is empty. Bounded in
    /// size, count and time (`saved.rs`): what does not fit is left out and named in
    /// [`WlSaved::dropped_note`]. An error when it cannot be listed, or when its owner sent
    /// none of its types.
    pub fn snapshot(&mut self) -> Result<Option<WlSaved>, String> {
        let offered = match paste::get_mime_types_ordered(
            paste::ClipboardType::Regular,
            paste::Seat::Unspecified,
        ) {
            Ok(types) => types,
            Err(paste::Error::ClipboardEmpty | paste::Error::NoSeats) => return Ok(None),
            Err(e) => return Err(format!("cannot list the clipboard's types: {e}")),
        };
        let end = Instant::now() + SNAPSHOT_TIMEOUT;
        let (types, dropped) = data_types(&offered);
        let mut saved = WlSaved {
            items: Vec::new(),
            dropped,
        };
        let mut left = SNAPSHOT_LIMIT;
        for mime in types {
            if Instant::now() >= end {
                saved.dropped.push((mime, Why::TimedOut));
                continue;
            }
            let read = match paste::get_contents(
                paste::ClipboardType::Regular,
                paste::Seat::Unspecified,
                paste::MimeType::Specific(&mime),
            ) {
                Ok((pipe, _)) => read_bounded(pipe, end, left),
                Err(e) => Read::Failed(e.to_string()),
            };
            match read {
                Read::Whole(data) => {
                    left -= data.len();
                    saved.items.push((mime, data));
                }
                Read::OverLimit => saved.dropped.push((mime, Why::OverLimit)),
                Read::TimedOut => saved.dropped.push((mime, Why::TimedOut)),
                Read::Failed(e) => {
                    tracing::debug!("clipboard: cannot read {mime}: {e}");
                    saved.dropped.push((mime, Why::Failed));
                }
            }
        }
        if saved.items.is_empty() {
            return Err(if saved.dropped.is_empty() {
                format!("the clipboard offers no data ({})", offered.join(", "))
            } else {
                format!(
                    "none of the clipboard's types could be kept: {}",
                    saved.dropped_list()
                )
            });
        }
        if let Some(note) = saved.dropped_note() {
            tracing::info!("clipboard: {note}");
        }
        Ok(Some(saved))
    }

    /// Offers every type `saved` holds again, byte for byte (no text types added), served in
    /// the background like [`WlClipboard::set_text`]; returns once the compositor lists them.
    pub fn restore(&mut self, saved: WlSaved) -> Result<(), String> {
        let mut want: Vec<String> = saved.items.iter().map(|(m, _)| m.clone()).collect();
        want.sort();
        let sources = saved
            .items
            .into_iter()
            .map(|(mime, data)| copy::MimeSource {
                source: copy::Source::Bytes(data.into_boxed_slice()),
                mime_type: copy::MimeType::Specific(mime),
            })
            .collect();
        let mut opts = copy::Options::new();
        opts.omit_additional_text_mime_types(true);
        self.offer(opts, sources)?;
        let deadline = Instant::now() + TAKE_TIMEOUT;
        loop {
            let listed = paste::get_mime_types_ordered(
                paste::ClipboardType::Regular,
                paste::Seat::Unspecified,
            );
            if let Ok(mut listed) = listed {
                listed.sort();
                listed.dedup();
                if listed == want {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the Wayland clipboard did not take the restored types within {} ms",
                    TAKE_TIMEOUT.as_millis()
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Makes `sources` the selection, served by a thread of its own until something else is
    /// copied (what `copy::Options::copy_multi` does in the background, with the end seen).
    fn offer(
        &mut self,
        mut opts: copy::Options,
        sources: Vec<copy::MimeSource>,
    ) -> Result<(), String> {
        // Served in the foreground of the thread below (prepare_copy requires it).
        opts.foreground(true);
        let ended = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let flag = ended.clone();
        std::thread::Builder::new()
            .name("wl-clipboard".into())
            .spawn(move || {
                // Prepared on this thread: the prepared copy is not Send.
                match opts.prepare_copy_multi(sources) {
                    Ok(prepared) => {
                        let _ = tx.send(Ok(()));
                        if let Err(e) = prepared.serve() {
                            tracing::debug!("clipboard: serving ended: {e}");
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(format!("cannot set the Wayland clipboard: {e}")));
                    }
                }
                flag.store(true, Ordering::Release);
            })
            .map_err(|e| format!("cannot set the Wayland clipboard: {e}"))?;
        rx.recv()
            .map_err(|_| "cannot set the Wayland clipboard: its thread ended".to_string())??;
        self.offer_ended = Some(ended);
        Ok(())
    }
}

/// What reading one type's pipe gave.
enum Read {
    Whole(Vec<u8>),
    /// More than the bytes allowed: reading stopped there.
    OverLimit,
    /// The owner did not close the pipe in time.
    TimedOut,
    Failed(String),
}

/// Reads the pipe to its end, at most `max` bytes, giving up when nothing came for
/// [`READ_TIMEOUT`] or at `deadline`.
fn read_bounded(
    pipe: impl std::io::Read + std::os::fd::AsFd,
    deadline: Instant,
    max: usize,
) -> Read {
    let mut pipe = pipe;
    if let Err(e) = rustix::io::ioctl_fionbio(pipe.as_fd(), true) {
        return Read::Failed(e.to_string());
    }
    let mut data = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut last = Instant::now();
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return Read::Whole(data),
            Ok(n) if data.len() + n > max => return Read::OverLimit,
            Ok(n) => {
                data.extend_from_slice(&buf[..n]);
                last = Instant::now();
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let until = deadline.min(last + READ_TIMEOUT);
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Read::TimedOut;
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
            Err(e) => return Read::Failed(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::os::unix::net::UnixStream;

    /// A pipe's two ends (a socket pair reads the same).
    fn pipe() -> (UnixStream, UnixStream) {
        UnixStream::pair().expect("socket pair")
    }

    #[test]
    fn reading_stops_at_the_end_the_size_bound_or_the_deadline() {
        let (r, mut w) = pipe();
        w.write_all(b"hello").expect("write");
        drop(w);
        let soon = Instant::now() + Duration::from_secs(1);
        assert!(matches!(read_bounded(r, soon, 5), Read::Whole(d) if d == b"hello"));

        let (r, mut w) = pipe();
        w.write_all(b"hello!").expect("write");
        drop(w);
        assert!(matches!(read_bounded(r, soon, 5), Read::OverLimit));

        // An owner that never closes its end: the deadline, or a second without bytes.
        let (r, mut w) = pipe();
        w.write_all(b"part").expect("write");
        let t0 = Instant::now();
        let read = read_bounded(r, Instant::now() + Duration::from_millis(100), 1 << 20);
        assert!(matches!(read, Read::TimedOut));
        let took = t0.elapsed();
        assert!(took < Duration::from_millis(600), "{took:?}");
        let (r, w2) = pipe();
        let t0 = Instant::now();
        let read = read_bounded(r, Instant::now() + Duration::from_secs(10), 1 << 20);
        assert!(matches!(read, Read::TimedOut));
        let took = t0.elapsed();
        assert!(took >= READ_TIMEOUT && took < READ_TIMEOUT * 3, "{took:?}");
        drop((w, w2));
    }
}
