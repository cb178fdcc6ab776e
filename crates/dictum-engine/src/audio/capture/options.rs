//! What a caller asks of a microphone stream ([`CaptureOptions`], the [`Backend`]) and what it
//! gets back: the stream's format ([`StreamInfo`]) and one utterance ([`Captured`]).

use crate::audio::Pcm16k;
use std::time::Duration;

/// Pre-roll kept before `start()` unless told otherwise.
pub const DEFAULT_PREROLL_MS: u32 = 300;
/// Longest utterance unless told otherwise; audio after it is dropped (and reported).
pub const DEFAULT_MAX_UTTERANCE: Duration = Duration::from_secs(5 * 60);

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
    /// Device name (as listed by [`Capture::input_devices`](super::Capture::input_devices)) or `None` for the default input.
    pub device: Option<String>,
    pub preroll_ms: u32,
    pub max_utterance: Duration,
    pub backend: Backend,
    /// How long to wait for the audio system to create the stream.
    pub open_timeout: Duration,
    /// Record from the stream's first buffer on, as if `start()` had been called before the
    /// first frame (a press that found the microphone closed: nothing said after the press
    /// is lost while the stream starts). The next `start()` takes that utterance as its own.
    pub record_from_open: bool,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            device: None,
            preroll_ms: DEFAULT_PREROLL_MS,
            max_utterance: DEFAULT_MAX_UTTERANCE,
            backend: Backend::Auto,
            open_timeout: Duration::from_secs(5),
            record_from_open: false,
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
