//! Live microphone capture for push-to-talk: an input stream (kept open or opened at a press:
//! `dictation/microphone.rs` decides), converted to 16 kHz mono f32 in the audio callback,
//! with a pre-roll ring that holds the last few hundred milliseconds while it is open so the
//! first word spoken just before the key press is kept; a stream opened for a press records
//! from its first buffer (`CaptureOptions::record_from_open`).
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
//!
//! One file per job: `options.rs` what a caller asks for and gets back ([`CaptureOptions`],
//! [`StreamInfo`], [`Captured`]); `error.rs` [`CaptureError`]; `device.rs` the audio system
//! and the device (PulseAudio first, ALSA fallback, the one PulseAudio query host);
//! `build.rs` the stream's format and its keeper thread; `convert.rs` the callback's
//! conversion to 16 kHz mono; `shared.rs` what the callback and the control side share;
//! `ring.rs` the pre-roll ring; `stream.rs` [`Capture`], the open stream the caller holds;
//! `reopen.rs` re-opening a lost microphone in the background ([`Reopener`]).

mod build;
mod convert;
mod device;
mod error;
mod options;
mod reopen;
mod ring;
mod shared;
mod stream;

pub use device::{default_input, dictation_input, DefaultInput};
pub use error::CaptureError;
pub use options::{
    Backend, CaptureOptions, Captured, StreamInfo, DEFAULT_MAX_UTTERANCE, DEFAULT_PREROLL_MS,
};
pub use reopen::{drop_in_background, Attempt, Open, OpenCapture, Reopener, Slow};
pub use stream::Capture;
