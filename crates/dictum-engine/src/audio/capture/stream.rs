//! [`Capture`]: the open microphone stream the caller holds. Opening starts the keeper thread
//! and waits for the stream; `start()`/`stop()` mark an utterance (pre-roll first, post-roll
//! after); the audio server is asked on release whether the source is still there; dropping
//! it closes the stream without hanging on a frozen server.

use super::build::keeper;
use super::device::{describe, device_names, pick_host, pulse_source_names};
use super::error::CaptureError;
use super::options::{Backend, CaptureOptions, Captured, StreamInfo};
use super::shared::Shared;
use crate::audio::Pcm16k;
use crate::SAMPLE_RATE;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a question to the audio server (is the source still there?) may take.
const SERVER_QUERY_TIMEOUT: Duration = Duration::from_millis(1000);

/// A microphone stream, open for the life of this value.
pub struct Capture {
    shared: Arc<Shared>,
    info: StreamInfo,
    preroll_ms: u32,
    shutdown: Option<mpsc::Sender<()>>,
    /// Closed by the keeper once the stream is dropped.
    closed: mpsc::Receiver<()>,
    keeper: Option<JoinHandle<()>>,
    preroll_taken: usize,
    /// Opened with `record_from_open`: recording since the first buffer, and the next
    /// `start()` adopts that utterance.
    armed: bool,
}

impl Capture {
    /// Opens `device` (by name, or the default input) with a pre-roll of `preroll_ms`.
    pub fn open(device: Option<&str>, preroll_ms: u32) -> Result<Capture, CaptureError> {
        Capture::open_with(CaptureOptions {
            device: device.map(str::to_string),
            preroll_ms,
            ..CaptureOptions::default()
        })
    }

    pub fn open_with(opts: CaptureOptions) -> Result<Capture, CaptureError> {
        let preroll_samples = (opts.preroll_ms as u64 * SAMPLE_RATE as u64 / 1000) as usize;
        let max_samples = (opts.max_utterance.as_millis() as u64 * SAMPLE_RATE as u64 / 1000)
            .min(usize::MAX as u64) as usize;
        let shared = Arc::new(Shared::new(preroll_samples, max_samples));
        if opts.record_from_open {
            // Reserved before the stream exists: the callback never reallocates.
            shared.lock().utterance = Some(Vec::with_capacity(max_samples));
        }
        let (ready_tx, ready_rx) = mpsc::channel::<Result<StreamInfo, CaptureError>>();
        let (shutdown_tx, shutdown_rx) = mpsc::channel::<()>();
        let (closed_tx, closed_rx) = mpsc::channel::<()>();
        let keeper_shared = shared.clone();
        let keeper_opts = opts.clone();
        let keeper = std::thread::Builder::new()
            .name("dictum-capture".into())
            .spawn(move || {
                keeper(keeper_opts, keeper_shared, ready_tx, shutdown_rx);
                drop(closed_tx);
            })
            .map_err(|e| CaptureError::Open {
                device: describe(opts.device.as_deref()),
                reason: format!("cannot start the capture thread: {e}"),
            })?;
        let info = match ready_rx.recv_timeout(opts.open_timeout) {
            Ok(Ok(info)) => info,
            Ok(Err(e)) => {
                let _ = keeper.join();
                return Err(e);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // The thread is stuck in the audio system; leave it behind.
                return Err(CaptureError::OpenTimeout {
                    device: describe(opts.device.as_deref()),
                    waited: opts.open_timeout,
                });
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = keeper.join();
                return Err(CaptureError::Open {
                    device: describe(opts.device.as_deref()),
                    reason: "the capture thread ended unexpectedly".into(),
                });
            }
        };
        tracing::debug!(?info, "capture stream open");
        Ok(Capture {
            shared,
            info,
            preroll_ms: opts.preroll_ms,
            shutdown: Some(shutdown_tx),
            closed: closed_rx,
            keeper: Some(keeper),
            preroll_taken: 0,
            armed: opts.record_from_open,
        })
    }

    /// Names of the input devices, usable as `device` in [`Capture::open`] (PulseAudio source
    /// names when a PulseAudio/PipeWire server is reachable, else ALSA PCM names).
    pub fn input_devices() -> Vec<String> {
        match pulse_source_names() {
            Ok(names) => names,
            Err(_) => match pick_host(Backend::Alsa) {
                Ok(host) => device_names(&host),
                Err(_) => Vec::new(),
            },
        }
    }

    pub fn info(&self) -> &StreamInfo {
        &self.info
    }

    /// Waits until the device has delivered its first frames; returns the time since open.
    /// A PulseAudio stream takes 50 ms – 2 s to start delivering.
    pub fn wait_first_frames(&self, timeout: Duration) -> Result<Duration, CaptureError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.lock();
        loop {
            if let Some(at) = st.first_frames {
                return Ok(at.saturating_duration_since(self.shared.opened_at));
            }
            if self.shared.failed.load(Ordering::SeqCst) {
                drop(st);
                return Err(self.device_failed());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(CaptureError::NoFrames {
                    device: self.info.device.clone(),
                    waited: timeout,
                });
            }
            st = self.shared.wait(st, deadline);
        }
    }

    /// Begins an utterance; the pre-roll (audio from just before this call) comes first. A
    /// stream opened with `record_from_open` has recorded since its first buffer: its first
    /// `start()` keeps all of that (no pre-roll: none of it is from before the press).
    pub fn start(&mut self) -> Result<(), CaptureError> {
        if std::mem::take(&mut self.armed) && self.shared.lock().utterance.is_some() {
            self.preroll_taken = 0;
            return Ok(());
        }
        let reserve = self.shared.lock().max_samples;
        // Reserve outside the lock: the callback must never wait on an allocation.
        let mut utt: Vec<f32> = Vec::with_capacity(reserve);
        let mut st = self.shared.lock();
        if st.utterance.is_some() {
            return Err(CaptureError::AlreadyRecording);
        }
        st.preroll.copy_into(&mut utt);
        utt.truncate(st.max_samples);
        self.preroll_taken = utt.len();
        st.truncated = false;
        st.dropped = 0;
        st.utterance = Some(utt);
        Ok(())
    }

    /// A stream opened with `record_from_open` that nobody took (its press gave up waiting):
    /// stops that recording, so a later press starts with the pre-roll as usual.
    pub fn disarm(&mut self) {
        if std::mem::take(&mut self.armed) {
            self.shared.lock().utterance = None;
        }
    }

    /// Keeps recording for `post_roll_ms` of audio after this call, then ends the utterance
    /// and returns it. If the device fails, returns at once with what was captured.
    pub fn stop(&mut self, post_roll_ms: u32) -> Result<Captured, CaptureError> {
        let want = post_roll_ms as u64 * SAMPLE_RATE as u64 / 1000;
        // Frames still in flight when stop() is called arrive within a few callbacks; allow
        // generous slack before giving up on a stalled device.
        let deadline = Instant::now() + Duration::from_millis(post_roll_ms as u64 + 1500);
        let mut st = self.shared.lock();
        if st.utterance.is_none() {
            return Err(CaptureError::NotRecording);
        }
        let target = st.total + want;
        while st.total < target && !self.shared.failed.load(Ordering::SeqCst) && !st.truncated {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            st = self.shared.wait(st, deadline);
        }
        let stalled = st.total < target && !st.truncated;
        let samples = st.utterance.take().unwrap_or_default();
        let truncated = st.truncated;
        let dropped = st.dropped;
        drop(st);
        let mut device_error = self.shared.error();
        if device_error.is_none() {
            device_error = self.source_gone();
        }
        if device_error.is_none() && stalled {
            device_error = Some(format!(
                "the device stopped delivering audio ({} ms of post-roll missing)",
                (target.saturating_sub(self.shared.lock().total)) * 1000 / SAMPLE_RATE as u64
            ));
        }
        let preroll_ms = (self.preroll_taken as u64 * 1000 / SAMPLE_RATE as u64) as u32;
        Ok(Captured {
            pcm: Pcm16k { samples },
            preroll_ms,
            truncated,
            device_error,
            dropped_samples: dropped,
        })
    }

    /// Appends the utterance's samples from index `from` on to `out` (for transcribing while
    /// the key is held); returns the utterance's length so far. Index 0 is the first pre-roll
    /// sample, the same indexing as the audio [`Capture::stop`] returns.
    pub fn recorded_since(&self, from: usize, out: &mut Vec<f32>) -> usize {
        let st = self.shared.lock();
        match &st.utterance {
            Some(utt) => {
                if from < utt.len() {
                    out.extend_from_slice(&utt[from..]);
                }
                utt.len()
            }
            None => 0,
        }
    }

    /// Moves the utterance's samples recorded so far to `out` and goes on recording into the
    /// emptied buffer (hands-free listening reads the stream this way: the buffer never grows
    /// and never reallocates). Returns how many were moved.
    pub fn take_recorded(&self, out: &mut Vec<f32>) -> usize {
        let mut st = self.shared.lock();
        match st.utterance.as_mut() {
            Some(utt) => {
                let n = utt.len();
                out.extend_from_slice(utt);
                utt.clear();
                n
            }
            None => 0,
        }
    }

    /// Asks the audio server whether this stream's source is still there (PulseAudio moves a
    /// stream whose source went away to another one and says nothing); `Some(why)` when it
    /// is gone or the server does not answer within a second. For a stream that records all
    /// along (hands-free), between two utterances.
    pub fn source_missing(&self) -> Option<String> {
        self.source_gone()
    }

    /// True once the stream has failed (device gone, server gone): reopen it.
    pub fn has_failed(&self) -> bool {
        self.shared.failed.load(Ordering::SeqCst)
    }

    /// True between `start()` and `stop()`.
    pub fn is_recording(&self) -> bool {
        self.shared.lock().utterance.is_some()
    }

    /// RMS of the most recent callback's audio (0–1), for a level meter.
    pub fn level(&self) -> f32 {
        f32::from_bits(self.shared.level.load(Ordering::Relaxed))
    }

    /// The stream's error, if it failed (device unplugged, server gone).
    pub fn device_error(&self) -> Option<String> {
        self.shared.error()
    }

    /// Milliseconds of audio received since open (for diagnostics: compare with wall time
    /// since the first frames to see delivery lag or drop-outs).
    pub fn received_ms(&self) -> u64 {
        self.shared.lock().total * 1000 / SAMPLE_RATE as u64
    }

    /// When the first frames arrived.
    pub fn first_frames_at(&self) -> Option<Instant> {
        self.shared.lock().first_frames
    }

    /// Configured pre-roll.
    pub fn preroll_ms(&self) -> u32 {
        self.preroll_ms
    }

    /// When the stream was opened (its first frames follow, [`Capture::first_frames_at`]).
    pub fn opened_at(&self) -> Instant {
        self.shared.opened_at
    }

    /// PulseAudio does not fail a record stream whose source disappears: it moves the stream
    /// to another source (or, with none left, kills it) and cpal's PulseAudio client reports
    /// neither. So ask the server whether the source is still there (~ms).
    ///
    /// A server that hangs (frozen, overloaded) must not hang the release: the question is
    /// asked on a helper thread and given up after [`SERVER_QUERY_TIMEOUT`]; while one such
    /// question is still stuck, no other is asked (one thread at most, not one per release).
    fn source_gone(&self) -> Option<String> {
        if self.info.backend != Backend::PulseAudio {
            return None;
        }
        static ASKING: AtomicBool = AtomicBool::new(false);
        if ASKING.swap(true, Ordering::SeqCst) {
            return Some(
                "the audio server does not answer (an earlier question to it is still waiting)"
                    .into(),
            );
        }
        let device = self.info.device.clone();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("dictum-pulse-query".into())
            .spawn(move || {
                let gone = match pulse_source_names() {
                    Ok(names) => (!names.contains(&device)).then(|| {
                        format!(
                            "input device {device} disappeared during the utterance; audio after that is missing or came from another source"
                        )
                    }),
                    Err(e) => Some(format!("the audio server went away: {e}")),
                };
                ASKING.store(false, Ordering::SeqCst);
                let _ = tx.send(gone);
            });
        if spawned.is_err() {
            ASKING.store(false, Ordering::SeqCst);
            return None;
        }
        match rx.recv_timeout(SERVER_QUERY_TIMEOUT) {
            Ok(gone) => gone,
            Err(_) => Some(format!(
                "the audio server did not answer within {} ms; is it frozen or overloaded?",
                SERVER_QUERY_TIMEOUT.as_millis()
            )),
        }
    }

    fn device_failed(&self) -> CaptureError {
        CaptureError::Device {
            device: self.info.device.clone(),
            reason: self.shared.error().unwrap_or_else(|| "stream error".into()),
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        // Closing the channel tells the keeper to drop the stream.
        self.shutdown.take();
        if let Some(keeper) = self.keeper.take() {
            // Closing a stream whose device or server vanished can block inside the backend
            // (seen with PulseAudio after every source was removed), and PulseAudio's play()
            // blocks until the first frames: a keeper stuck there is left behind rather than
            // hanging the caller.
            match self.closed.recv_timeout(Duration::from_secs(2)) {
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    tracing::warn!("capture stream did not close within 2 s; leaving it behind")
                }
                _ => {
                    let _ = keeper.join();
                }
            }
        }
    }
}
