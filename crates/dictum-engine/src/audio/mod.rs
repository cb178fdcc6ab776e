//! Audio in: decode a file into samples, downmix, resample to 16 kHz mono.

pub mod capture;
pub mod cues;
pub mod cut;
pub mod decode;
mod decode_ffmpeg;
mod decode_symphonia;
pub mod mic_policy;
mod mp4_priming;
mod pcm;
mod resample;
mod wav;

pub use capture::{Capture, CaptureError, CaptureOptions, Captured};
pub use decode::decode_file_16k_blocks;
pub use decode_ffmpeg::find_ffmpeg;
pub use pcm::Pcm16k;
pub use resample::{downmix, resample_to_16k, To16k};
pub use wav::{
    decode_16k, decode_16k_blocks, read_wav, read_wav_capped, write_wav_16k, Decoded, Decoded16k,
    StreamInfo, WavWriter16k, DEFAULT_MAX_SECONDS, MAX_RATE, MIN_RATE,
};
