//! Live microphone capture for push-to-talk: one input stream opened once and kept open,
//! converted to 16 kHz mono f32 in the audio callback, with a pre-roll ring that always holds
//! the last few hundred milliseconds so the first word spoken just before the key press is
//! kept.
//!
//! Backends (cpal 0.18): PulseAudio's native protocol (also served by pipewire-pulse) when a
//! server is reachable, else ALSA. Through PulseAudio the stream asks the server for 16 kHz
//! mono f32 directly, so the callback only copies; through ALSA it takes the device's native
//! format and downmixes + resamples (rubato FFT resampler, preallocated) in the callback.
//!
//! Threads: a keeper thread owns the cpal stream for the life of the [`Capture`] (cpal's
//! PulseAudio `play()` blocks until the server delivers the first frames, which takes up to
//! ~2 s on a null sink); the audio callback never blocks: it converts into its own
//! preallocated buffer and hands samples over with `try_lock`, keeping them for the next
//! callback when the control side holds the lock (the control side only holds it for O(1)
//! swaps and for copying the pre-roll).
//!
//! What happens when the device disappears mid-utterance (measured with PulseAudio in
//! `tests/capture_pulse.rs`; ALSA hardware unplugging was not testable here):
//! - the source goes but others remain: PulseAudio moves the stream to another source and
//!   cpal reports nothing, so [`Capture::stop`] asks the server whether the source still
//!   exists and sets [`Captured::device_error`]; the audio captured is returned.
//! - no source left: the stream dies, cpal's error callback fires ("No such entity"), stop()
//!   returns at once (no waiting for post-roll that will never come) with what was captured.
//! - a stream that silently stops delivering: stop() gives up after post-roll + 1.5 s and
//!   says so in `device_error`.

use super::Pcm16k;
use crate::SAMPLE_RATE;
use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, HostId, SampleFormat, SizedSample};
use rubato::{FftFixedIn, Resampler};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Pre-roll kept before `start()` unless told otherwise.
pub const DEFAULT_PREROLL_MS: u32 = 300;
/// Longest utterance unless told otherwise; audio after it is dropped (and reported).
pub const DEFAULT_MAX_UTTERANCE: Duration = Duration::from_secs(5 * 60);
/// Frames per callback asked of PulseAudio (20 ms at 16 kHz): low latency, steady delivery.
/// (With the server's default buffer the first frames took ~3.8 s and came in bursts.)
const PULSE_FRAMES: u32 = 320;
/// Resampler input chunk (frames at the device rate).
const RESAMPLE_CHUNK: usize = 1024;
/// What the callback can hold back while the control side holds the lock (16 kHz samples).
const PENDING_CAP: usize = SAMPLE_RATE as usize;
/// How long a question to the audio server (is the source still there?) may take.
const SERVER_QUERY_TIMEOUT: Duration = Duration::from_millis(1000);
/// Time between two re-open attempts that failed at once (no server, no device).
const REOPEN_RETRY: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("no audio input system available: {0}; check that PulseAudio or PipeWire is running (`pactl info`) or that ALSA sees a capture device (`arecord -l`)")]
    NoHost(String),

    #[error("{}", no_device_message(.wanted.as_deref(), .available))]
    NoDevice {
        wanted: Option<String>,
        available: Vec<String>,
    },

    #[error("cannot open input device {device}: {reason}; check that it is not in use exclusively by another program and that you may record from it")]
    Open { device: String, reason: String },

    #[error("input device {device} delivered no audio within {} ms; check that it is not muted or suspended (`pactl list sources short`) and that the stream was not blocked", .waited.as_millis())]
    NoFrames { device: String, waited: Duration },

    #[error("input device {device} failed: {reason}; check that it is still connected")]
    Device { device: String, reason: String },

    #[error("the audio system did not answer within {} ms while opening {device}; check that PulseAudio/PipeWire is not hung (`pactl info`)", .waited.as_millis())]
    OpenTimeout { device: String, waited: Duration },

    #[error("already recording: call stop() before start()")]
    AlreadyRecording,

    #[error("not recording: call start() before stop()")]
    NotRecording,
}

fn no_device_message(wanted: Option<&str>, available: &[String]) -> String {
    let list = if available.is_empty() {
        "none found".to_string()
    } else {
        available.join(", ")
    };
    match wanted {
        Some(name) => format!(
            "no input device named {name:?}; available: {list}. Check the name (`dictum devices`) or leave it empty for the default microphone"
        ),
        None => format!(
            "no default input device (available: {list}); plug in or enable a microphone and check it is not disabled in the sound settings (`pactl list sources short`, `arecord -l`)"
        ),
    }
}

/// Which audio system to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// PulseAudio (or pipewire-pulse) when reachable, else ALSA.
    #[default]
    Auto,
    PulseAudio,
    Alsa,
}

#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// Device name (as listed by [`Capture::input_devices`]) or `None` for the default input.
    pub device: Option<String>,
    pub preroll_ms: u32,
    pub max_utterance: Duration,
    pub backend: Backend,
    /// How long to wait for the audio system to create the stream.
    pub open_timeout: Duration,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            device: None,
            preroll_ms: DEFAULT_PREROLL_MS,
            max_utterance: DEFAULT_MAX_UTTERANCE,
            backend: Backend::Auto,
            open_timeout: Duration::from_secs(5),
        }
    }
}

/// What the stream was opened with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    pub backend: Backend,
    /// Device name (as matched by `CaptureOptions::device`).
    pub device: String,
    pub sample_rate: u32,
    pub channels: u16,
    pub sample_format: String,
}

/// One utterance.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub pcm: Pcm16k,
    /// Milliseconds of the audio that came from before `start()`.
    pub preroll_ms: u32,
    /// The utterance hit the length limit; later audio was dropped.
    pub truncated: bool,
    /// The device failed during the utterance (e.g. unplugged); `pcm` holds what came before.
    pub device_error: Option<String>,
    /// Samples the callback had to drop (control side held the lock for > 1 s).
    pub dropped_samples: u64,
}

/// Fixed-capacity ring of the most recent samples.
struct Ring {
    buf: Vec<f32>,
    /// Next write position.
    pos: usize,
    len: usize,
}

impl Ring {
    fn new(cap: usize) -> Ring {
        Ring {
            buf: vec![0.0; cap],
            pos: 0,
            len: 0,
        }
    }

    fn push(&mut self, samples: &[f32]) {
        let cap = self.buf.len();
        if cap == 0 {
            return;
        }
        let samples = &samples[samples.len().saturating_sub(cap)..];
        for &s in samples {
            self.buf[self.pos] = s;
            self.pos = (self.pos + 1) % cap;
        }
        self.len = (self.len + samples.len()).min(cap);
    }

    /// Appends the ring's contents, oldest first.
    fn copy_into(&self, out: &mut Vec<f32>) {
        let cap = self.buf.len();
        let start = (self.pos + cap - self.len) % cap.max(1);
        for i in 0..self.len {
            out.push(self.buf[(start + i) % cap]);
        }
    }
}

struct State {
    preroll: Ring,
    /// 16 kHz samples received since open.
    total: u64,
    first_frames: Option<Instant>,
    /// `Some` while recording; capacity reserved up front so the callback never reallocates.
    utterance: Option<Vec<f32>>,
    max_samples: usize,
    truncated: bool,
    dropped: u64,
}

struct Shared {
    state: Mutex<State>,
    /// Notified when frames arrive or the stream fails.
    arrived: Condvar,
    /// Recent RMS (f32 bits).
    level: AtomicU32,
    failed: AtomicBool,
    error: Mutex<Option<String>>,
    opened_at: Instant,
}

impl Shared {
    fn new(preroll_samples: usize, max_samples: usize) -> Shared {
        Shared {
            state: Mutex::new(State {
                preroll: Ring::new(preroll_samples),
                total: 0,
                first_frames: None,
                utterance: None,
                max_samples,
                truncated: false,
                dropped: 0,
            }),
            arrived: Condvar::new(),
            level: AtomicU32::new(0),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            opened_at: Instant::now(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave State inconsistent in a way that matters
        // more than losing audio: keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn fail(&self, reason: String) {
        let mut err = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if err.is_none() {
            *err = Some(reason);
        }
        drop(err);
        self.failed.store(true, Ordering::SeqCst);
        // Take the state lock so a waiter cannot miss the notification.
        drop(self.lock());
        self.arrived.notify_all();
    }

    fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The callback's private side: conversion state and buffers, all allocated before the stream
/// starts.
struct Converter {
    channels: usize,
    resampler: Option<FftFixedIn<f32>>,
    /// Mono input waiting for a full resampler chunk.
    chunk: Vec<f32>,
    out: Vec<Vec<f32>>,
    /// Resampler output still to discard (its delay), so audio lines up.
    skip: usize,
    /// Converted 16 kHz samples not yet handed over.
    pending: Vec<f32>,
    /// Samples dropped because `pending` was full, not yet reported.
    dropped: u64,
    shared: Arc<Shared>,
}

impl Converter {
    fn new(rate: u32, channels: u16, shared: Arc<Shared>) -> Result<Converter, String> {
        let resampler = if rate == SAMPLE_RATE {
            None
        } else {
            Some(
                FftFixedIn::<f32>::new(rate as usize, SAMPLE_RATE as usize, RESAMPLE_CHUNK, 2, 1)
                    .map_err(|e| format!("resampler for {rate} Hz: {e}"))?,
            )
        };
        let (out, skip) = match &resampler {
            Some(r) => (vec![vec![0.0; r.output_frames_max()]], r.output_delay()),
            None => (vec![], 0),
        };
        Ok(Converter {
            channels: channels.max(1) as usize,
            resampler,
            chunk: Vec::with_capacity(RESAMPLE_CHUNK),
            out,
            skip,
            pending: Vec::with_capacity(PENDING_CAP),
            dropped: 0,
            shared,
        })
    }

    fn push_16k(&mut self, samples: &[f32]) {
        let room = PENDING_CAP - self.pending.len();
        let take = samples.len().min(room);
        self.pending.extend_from_slice(&samples[..take]);
        // Only reachable if the control side held the lock for a whole second.
        self.dropped += (samples.len() - take) as u64;
    }

    fn process<T>(&mut self, data: &[T])
    where
        T: SizedSample,
        f32: FromSample<T>,
    {
        let ch = self.channels;
        let scale = 1.0 / ch as f32;
        let mut sum_sq = 0.0f32;
        let mut n = 0usize;
        for frame in data.chunks_exact(ch) {
            let mono = frame.iter().map(|&s| f32::from_sample_(s)).sum::<f32>() * scale;
            sum_sq += mono * mono;
            n += 1;
            match self.resampler.as_mut() {
                None => {
                    if self.pending.len() < PENDING_CAP {
                        self.pending.push(mono);
                    } else {
                        self.dropped += 1;
                    }
                }
                Some(resampler) => {
                    self.chunk.push(mono);
                    if self.chunk.len() == resampler.input_frames_next() {
                        let written = match resampler.process_into_buffer(
                            &[&self.chunk],
                            &mut self.out,
                            None,
                        ) {
                            Ok((_, written)) => written,
                            Err(_) => 0,
                        };
                        self.chunk.clear();
                        let skip = self.skip.min(written);
                        self.skip -= skip;
                        // Split borrows: move the output vector out for the copy.
                        let out = std::mem::take(&mut self.out);
                        self.push_16k(&out[0][skip..written]);
                        self.out = out;
                    }
                }
            }
        }
        if n > 0 {
            let rms = (sum_sq / n as f32).sqrt();
            self.shared.level.store(rms.to_bits(), Ordering::Relaxed);
        }
        self.hand_over();
    }

    /// Moves pending samples into the shared state, unless the control side holds the lock.
    fn hand_over(&mut self) {
        if self.pending.is_empty() && self.dropped == 0 {
            return;
        }
        let Ok(mut st) = self.shared.state.try_lock() else {
            return;
        };
        st.dropped += std::mem::take(&mut self.dropped);
        st.total += self.pending.len() as u64;
        if st.first_frames.is_none() {
            st.first_frames = Some(Instant::now());
        }
        st.preroll.push(&self.pending);
        let max = st.max_samples;
        let mut truncated = false;
        if let Some(utt) = st.utterance.as_mut() {
            let room = max.saturating_sub(utt.len());
            let take = self.pending.len().min(room);
            utt.extend_from_slice(&self.pending[..take]);
            truncated = take < self.pending.len();
        }
        if truncated {
            st.truncated = true;
        }
        drop(st);
        self.pending.clear();
        self.shared.arrived.notify_all();
    }
}

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
            st = self
                .shared
                .arrived
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Begins an utterance; the pre-roll (audio from just before this call) comes first.
    pub fn start(&mut self) -> Result<(), CaptureError> {
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
            st = self
                .shared
                .arrived
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
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

fn describe(device: Option<&str>) -> String {
    match device {
        Some(d) => format!("{d:?}"),
        None => "(default input)".into(),
    }
}

/// The process's one PulseAudio host for questions (which sources exist). cpal's PulseAudio
/// host opens a client whose reactor thread (holding the socket and a 1 MiB read buffer) runs
/// until the server hangs up: dropping the host does not end it. A host per question (one at
/// every release, to see whether the source is still there) leaked a thread, a descriptor and
/// ~0.7 MB per dictation (found by the soak; 1000 dictations would have hit the descriptor
/// limit). One host answers every question and is replaced only once the server no longer
/// answers it (its client's thread ends with the connection). Streams get a host of their own
/// (opened rarely: start-up and re-opens).
static PULSE_HOST: Mutex<Option<Arc<cpal::Host>>> = Mutex::new(None);

/// The PulseAudio sources' names, asked through the one query host; a host whose server went
/// away (or restarted) is replaced once.
fn pulse_source_names() -> Result<Vec<String>, String> {
    let cached = PULSE_HOST.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // Asked outside the lock: a frozen server must not block other callers on it.
    if let Some(host) = cached {
        if let Ok(devices) = host.input_devices() {
            return Ok(devices.map(|d| device_name(&d)).collect());
        }
    }
    let host = Arc::new(new_pulse_host()?);
    *PULSE_HOST.lock().unwrap_or_else(|e| e.into_inner()) = Some(host.clone());
    host.input_devices()
        .map(|devices| devices.map(|d| device_name(&d)).collect())
        .map_err(|e| format!("PulseAudio: {e}"))
}

fn new_pulse_host() -> Result<cpal::Host, String> {
    if !cpal::available_hosts().contains(&HostId::PulseAudio) {
        return Err(
            "no PulseAudio server socket found (PULSE_SERVER, XDG_RUNTIME_DIR/pulse/native)".into(),
        );
    }
    cpal::host_from_id(HostId::PulseAudio).map_err(|e| format!("PulseAudio: {e}"))
}

/// A host to open a stream with (start-up and re-opens: rare). PulseAudio questions go
/// through [`pulse_source_names`].
fn pick_host(backend: Backend) -> Result<cpal::Host, CaptureError> {
    let alsa = || cpal::host_from_id(HostId::Alsa).map_err(|e| format!("ALSA: {e}"));
    match backend {
        Backend::PulseAudio => new_pulse_host().map_err(CaptureError::NoHost),
        Backend::Alsa => alsa().map_err(CaptureError::NoHost),
        Backend::Auto => new_pulse_host()
            .or_else(|p| alsa().map_err(|a| format!("{p}; {a}")))
            .map_err(CaptureError::NoHost),
    }
}

fn device_name(device: &cpal::Device) -> String {
    match device.id() {
        Ok(id) => id.id().to_string(),
        Err(_) => device
            .description()
            .map(|d| d.name().to_string())
            .unwrap_or_default(),
    }
}

fn device_names(host: &cpal::Host) -> Vec<String> {
    match host.input_devices() {
        Ok(devices) => devices.map(|d| device_name(&d)).collect(),
        Err(_) => Vec::new(),
    }
}

fn backend_of(host: &cpal::Host) -> Backend {
    if host.id() == HostId::PulseAudio {
        Backend::PulseAudio
    } else {
        Backend::Alsa
    }
}

fn find_device(
    host: &cpal::Host,
    wanted: Option<&str>,
) -> Result<Option<cpal::Device>, CaptureError> {
    let Some(name) = wanted else {
        return Ok(host.default_input_device());
    };
    let devices = host
        .input_devices()
        .map_err(|e| CaptureError::NoHost(e.to_string()))?;
    for d in devices {
        let matches =
            device_name(&d) == name || d.description().map(|x| x.name() == name).unwrap_or(false);
        if matches {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

/// Chooses the host and device; with `Auto`, a named device missing from PulseAudio is looked
/// for in ALSA too.
fn choose(opts: &CaptureOptions) -> Result<(cpal::Host, cpal::Device), CaptureError> {
    let wanted = opts.device.as_deref().filter(|d| !d.is_empty());
    let hosts: Vec<Backend> = match opts.backend {
        Backend::Auto => vec![Backend::PulseAudio, Backend::Alsa],
        b => vec![b],
    };
    let mut available = Vec::new();
    let mut host_errors = Vec::new();
    for b in hosts {
        let host = match pick_host(b) {
            Ok(h) => h,
            Err(e) => {
                host_errors.push(e.to_string());
                continue;
            }
        };
        if let Some(device) = find_device(&host, wanted)? {
            return Ok((host, device));
        }
        available.extend(device_names(&host));
    }
    if available.is_empty() && !host_errors.is_empty() {
        return Err(CaptureError::NoHost(host_errors.join("; ")));
    }
    Err(CaptureError::NoDevice {
        wanted: wanted.map(str::to_string),
        available,
    })
}

fn keeper(
    opts: CaptureOptions,
    shared: Arc<Shared>,
    ready: mpsc::Sender<Result<StreamInfo, CaptureError>>,
    shutdown: mpsc::Receiver<()>,
) {
    let stream = match build(&opts, &shared) {
        Ok((stream, info)) => {
            if ready.send(Ok(info)).is_err() {
                return; // open() gave up waiting.
            }
            stream
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if let Err(e) = stream.play() {
        shared.fail(format!("cannot start the stream: {e}"));
    }
    // Runs until the Capture is dropped (the sender closes).
    let _ = shutdown.recv();
    drop(stream);
}

fn build(
    opts: &CaptureOptions,
    shared: &Arc<Shared>,
) -> Result<(cpal::Stream, StreamInfo), CaptureError> {
    let (host, device) = choose(opts)?;
    let backend = backend_of(&host);
    let name = device_name(&device);
    let open_err = |reason: String| CaptureError::Open {
        device: name.clone(),
        reason,
    };
    let (config, format) = if backend == Backend::PulseAudio {
        // The server converts: ask for exactly what the engine uses.
        (
            cpal::StreamConfig {
                channels: 1,
                sample_rate: SAMPLE_RATE,
                buffer_size: cpal::BufferSize::Fixed(PULSE_FRAMES),
            },
            SampleFormat::F32,
        )
    } else {
        let def = device
            .default_input_config()
            .map_err(|e| open_err(format!("no usable input configuration: {e}")))?;
        (def.config(), def.sample_format())
    };
    let converter =
        Converter::new(config.sample_rate, config.channels, shared.clone()).map_err(open_err)?;
    let err_shared = shared.clone();
    let on_error = move |e: cpal::Error| {
        use cpal::ErrorKind::*;
        match e.kind() {
            // Recoverable: the stream goes on.
            Xrun | RealtimeDenied | DeviceChanged => tracing::warn!("capture: {e}"),
            _ => err_shared.fail(format!("input stream error: {e}")),
        }
    };
    let timeout = Some(opts.open_timeout);
    macro_rules! build_as {
        ($t:ty) => {{
            let mut conv = converter;
            device.build_input_stream::<$t, _, _>(
                config.clone(),
                move |data: &[$t], _: &cpal::InputCallbackInfo| conv.process(data),
                on_error,
                timeout,
            )
        }};
    }
    let stream = match format {
        SampleFormat::F32 => build_as!(f32),
        SampleFormat::I16 => build_as!(i16),
        SampleFormat::I32 => build_as!(i32),
        SampleFormat::U8 => build_as!(u8),
        SampleFormat::U16 => build_as!(u16),
        SampleFormat::I8 => build_as!(i8),
        SampleFormat::F64 => build_as!(f64),
        other => {
            return Err(open_err(format!(
                "sample format {other} is not supported; configure the device for 16-bit or float"
            )))
        }
    }
    .map_err(|e| open_err(e.to_string()))?;
    let info = StreamInfo {
        backend,
        device: name,
        sample_rate: config.sample_rate,
        channels: config.channels,
        sample_format: format.to_string(),
    };
    Ok((stream, info))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_most_recent_samples_in_order() {
        let mut r = Ring::new(4);
        r.push(&[1.0, 2.0]);
        let mut out = vec![];
        r.copy_into(&mut out);
        assert_eq!(out, [1.0, 2.0]);
        r.push(&[3.0, 4.0, 5.0]);
        out.clear();
        r.copy_into(&mut out);
        assert_eq!(out, [2.0, 3.0, 4.0, 5.0]);
        r.push(&[6.0, 7.0, 8.0, 9.0, 10.0, 11.0]);
        out.clear();
        r.copy_into(&mut out);
        assert_eq!(out, [8.0, 9.0, 10.0, 11.0]);
        let mut empty = Ring::new(0);
        empty.push(&[1.0]);
        out.clear();
        empty.copy_into(&mut out);
        assert!(out.is_empty());
    }

    fn shared(max: usize) -> Arc<Shared> {
        Arc::new(Shared::new(4800, max))
    }

    #[test]
    fn converter_downmixes_and_resamples_48k_stereo_i16() {
        let sh = shared(1_000_000);
        sh.lock().utterance = Some(Vec::with_capacity(1_000_000));
        let mut conv = Converter::new(48_000, 2, sh.clone()).expect("converter");
        // 1 s of a 440 Hz tone, left only, in 10 ms callbacks.
        let tone: Vec<i16> = (0..48_000)
            .flat_map(|i| {
                let v = (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 48_000.0).sin() * 0.5;
                [(v * 32767.0) as i16, 0]
            })
            .collect();
        for block in tone.chunks(960) {
            conv.process(block);
        }
        let st = sh.lock();
        let utt = st.utterance.as_ref().expect("recording");
        // Whole chunks only: within one resampler chunk of 1 s.
        assert!(
            utt.len() > 16_000 - 700 && utt.len() <= 16_000,
            "{}",
            utt.len()
        );
        let peak = utt[2000..].iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!((peak - 0.25).abs() < 0.02, "downmixed peak {peak}");
        assert!(f32::from_bits(sh.level.load(Ordering::Relaxed)) > 0.1);
    }

    #[test]
    fn utterance_is_bounded_and_flagged() {
        let sh = shared(1000);
        sh.lock().utterance = Some(Vec::with_capacity(1000));
        let mut conv = Converter::new(16_000, 1, sh.clone()).expect("converter");
        conv.process(&vec![0.1f32; 3000]);
        let st = sh.lock();
        assert_eq!(st.utterance.as_ref().map(Vec::len), Some(1000));
        assert!(st.truncated);
        assert_eq!(st.total, 3000);
    }

    #[test]
    fn callback_holds_samples_while_the_lock_is_taken() {
        let sh = shared(100_000);
        sh.lock().utterance = Some(Vec::with_capacity(100_000));
        let mut conv = Converter::new(16_000, 1, sh.clone()).expect("converter");
        {
            let _held = sh.lock();
            conv.process(&vec![0.1f32; 320]);
        }
        assert_eq!(sh.lock().total, 0);
        conv.process(&vec![0.1f32; 320]);
        assert_eq!(sh.lock().total, 640);
    }
}
