//! Re-opening a lost microphone in the background, one attempt at a time ([`Reopener`]), and
//! closing an old stream without waiting for it ([`drop_in_background`]).

use super::error::CaptureError;
use super::options::CaptureOptions;
use super::stream::Capture;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Time between two re-open attempts that failed at once (no server, no device).
const REOPEN_RETRY: Duration = Duration::from_secs(2);

/// The result of one open attempt, sent when the attempt ends.
pub type Attempt<S> = mpsc::Receiver<Result<S, CaptureError>>;

/// How a re-open attempt is started: [`OpenCapture`] opens a real stream on a thread of its
/// own; unit tests give a fake that hands out streams (or failures, or nothing at all: a
/// frozen server) when the test says so.
pub trait Open {
    /// What an attempt opens.
    type Stream: Send + 'static;
    /// Starts one attempt with `opts` and returns at once; the result comes on the receiver
    /// (a dropped sender reads as a failed attempt). `Err`: the attempt could not be started.
    fn begin(&mut self, opts: CaptureOptions) -> Result<Attempt<Self::Stream>, String>;
}

/// What [`Reopener::open_now`] does when the open takes long: after `after`, `tell` is
/// called once (the indicator says the microphone is being waited for), and the wait goes on.
pub struct Slow<'a> {
    pub after: Duration,
    pub tell: &'a mut dyn FnMut(),
}

/// Opens a [`Capture`] on a thread of its own that waits as long as the server takes (no
/// timeout to leave a thread behind on), then for its first frames (up to 2 s).
#[derive(Debug, Default, Clone, Copy)]
pub struct OpenCapture;

impl Open for OpenCapture {
    type Stream = Capture;

    fn begin(&mut self, opts: CaptureOptions) -> Result<Attempt<Capture>, String> {
        let (tx, rx) = mpsc::channel();
        let opts = CaptureOptions {
            // The attempt's own thread waits for the server; nobody else does.
            open_timeout: Duration::from_secs(24 * 3600),
            ..opts
        };
        std::thread::Builder::new()
            .name("dictum-mic-reopen".into())
            .spawn(move || {
                let opened = Capture::open_with(opts);
                if let Ok(c) = &opened {
                    let _ = c.wait_first_frames(Duration::from_secs(2));
                }
                let _ = tx.send(opened);
            })
            .map_err(|e| e.to_string())?;
        Ok(rx)
    }
}

/// Re-opens the microphone in the background, one attempt at a time, so a sound server that
/// hangs costs one waiting thread (and one connection), not a new one every few seconds, and
/// the caller (the controller, which also answers the hotkey) never waits.
///
/// An attempt waits as long as the server takes: while it waits, [`Reopener::request`]
/// starts nothing new. An attempt that fails (no server, no such device) is retried after
/// [`REOPEN_RETRY`]. The time is an argument (`now`), so the backoff is tested as data.
pub struct Reopener<O: Open = OpenCapture> {
    opener: O,
    pending: Option<(Attempt<O::Stream>, Instant)>,
    last_failure: Option<Instant>,
}

impl Default for Reopener<OpenCapture> {
    fn default() -> Self {
        Reopener::new(OpenCapture)
    }
}

impl<O: Open> Reopener<O> {
    pub fn new(opener: O) -> Self {
        Reopener {
            opener,
            pending: None,
            last_failure: None,
        }
    }

    /// Starts an attempt with `opts` unless one is under way or the last failed less than
    /// [`REOPEN_RETRY`] before `now`.
    pub fn request(&mut self, opts: CaptureOptions, now: Instant) {
        if self.pending.is_some()
            || self
                .last_failure
                .is_some_and(|at| now.saturating_duration_since(at) < REOPEN_RETRY)
        {
            return;
        }
        match self.opener.begin(opts) {
            Ok(rx) => self.pending = Some((rx, now)),
            Err(e) => {
                tracing::warn!("cannot start a microphone re-open attempt: {e}");
                self.last_failure = Some(now);
            }
        }
    }

    /// Opens now, waiting up to `wait` for the result (a press that found the microphone
    /// closed: the press needs the stream). `None` when an attempt is already under way, or
    /// this one has not answered within `wait` (it goes on in the background and lands
    /// through [`Reopener::poll`] like any other).
    pub fn open_now(
        &mut self,
        opts: CaptureOptions,
        wait: Duration,
        now: Instant,
        slow: Option<Slow<'_>>,
    ) -> Option<Result<O::Stream, CaptureError>> {
        if self.pending.is_some() {
            return None;
        }
        let rx = match self.opener.begin(opts) {
            Ok(rx) => rx,
            Err(e) => {
                self.last_failure = Some(now);
                return Some(Err(CaptureError::Open {
                    device: "(open)".into(),
                    reason: format!("cannot start opening the microphone: {e}"),
                }));
            }
        };
        let first = match slow {
            Some(slow) if slow.after < wait => rx.recv_timeout(slow.after).or_else(|e| match e {
                mpsc::RecvTimeoutError::Timeout => {
                    (slow.tell)();
                    rx.recv_timeout(wait - slow.after)
                }
                e => Err(e),
            }),
            _ => rx.recv_timeout(wait),
        };
        let result = match first {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.pending = Some((rx, now));
                return None;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(CaptureError::Open {
                device: "(open)".into(),
                reason: "the open attempt ended unexpectedly".into(),
            }),
        };
        if result.is_err() {
            self.last_failure = Some(now);
        }
        Some(result)
    }

    /// The attempt's result, once it has one (then a new attempt may be requested); a failure
    /// counts from `now` for the retry.
    pub fn poll(&mut self, now: Instant) -> Option<Result<O::Stream, CaptureError>> {
        let (rx, _) = self.pending.as_ref()?;
        let result = match rx.try_recv() {
            Ok(r) => r,
            Err(mpsc::TryRecvError::Empty) => return None,
            Err(mpsc::TryRecvError::Disconnected) => Err(CaptureError::Open {
                device: "(re-open)".into(),
                reason: "the re-open attempt ended unexpectedly".into(),
            }),
        };
        self.pending = None;
        if result.is_err() {
            self.last_failure = Some(now);
        }
        Some(result)
    }

    /// When the attempt under way started, if one is.
    pub fn waiting_since(&self) -> Option<Instant> {
        self.pending.as_ref().map(|(_, since)| *since)
    }
}

/// Drops a stream on a thread of its own: closing a stream whose server hangs blocks (up to
/// 2 s, then its keeper is left behind), and the caller must not wait for that.
pub fn drop_in_background<S: Send + 'static>(capture: S) {
    let spawned = std::thread::Builder::new()
        .name("dictum-mic-close".into())
        .spawn(move || drop(capture));
    if let Err(e) = spawned {
        tracing::warn!("cannot close the old microphone stream in the background: {e}");
    }
}
