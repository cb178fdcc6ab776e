//! Audio in: decode a file into samples, downmix, resample to 16 kHz mono.

pub mod capture;
pub mod cues;
pub mod cut;
pub mod decode;
mod decode_ffmpeg;
mod decode_symphonia;
pub mod mic_policy;
mod resample;
mod wav;

pub use capture::{Capture, CaptureError, CaptureOptions, Captured};
pub use decode::decode_file_16k_blocks;
pub use resample::{downmix, resample_to_16k, To16k};
pub use wav::{
    decode_16k, decode_16k_blocks, read_wav, read_wav_capped, write_wav_16k, Decoded, Decoded16k,
    StreamInfo, WavWriter16k, DEFAULT_MAX_SECONDS, MAX_RATE, MIN_RATE,
};

/// Mono 16 kHz f32 samples in [-1, 1].
#[derive(Debug, Clone, Default)]
pub struct Pcm16k {
    pub samples: Vec<f32>,
}

impl Pcm16k {
    pub fn duration_ms(&self) -> u64 {
        (self.samples.len() as u64 * 1000) / crate::SAMPLE_RATE as u64
    }
}
