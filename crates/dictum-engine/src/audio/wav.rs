//! WAV decoding: 8/16/24/32-bit integer and 32-bit float PCM, any rate and channel count.

use crate::{Error, Result};
use std::path::Path;

/// Interleaved samples as f32 in [-1, 1], with the stream's layout.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub samples: Vec<f32>,
    pub sample_rate: u32,
    pub channels: u16,
}

impl Decoded {
    pub fn frames(&self) -> usize {
        self.samples.len() / self.channels.max(1) as usize
    }

    pub fn duration_ms(&self) -> u64 {
        (self.frames() as u64 * 1000) / self.sample_rate.max(1) as u64
    }
}

pub fn read_wav(path: &Path) -> Result<Decoded> {
    let file = std::fs::File::open(path).map_err(|e| Error::AudioUnreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let reader = hound::WavReader::new(std::io::BufReader::new(file)).map_err(|e| match e {
        hound::Error::IoError(io) => Error::AudioUnreadable {
            path: path.to_path_buf(),
            reason: io.to_string(),
        },
        other => Error::AudioFormat {
            path: path.to_path_buf(),
            reason: other.to_string(),
        },
    })?;
    let spec = reader.spec();
    if spec.channels == 0 || spec.sample_rate == 0 {
        return Err(Error::AudioFormat {
            path: path.to_path_buf(),
            reason: format!(
                "header says {} channels at {} Hz",
                spec.channels, spec.sample_rate
            ),
        });
    }
    let format_err = |e: hound::Error| Error::AudioFormat {
        path: path.to_path_buf(),
        reason: format!("bad sample data: {e}"),
    };
    let samples: Vec<f32> = match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Float, 32) => reader
            .into_samples::<f32>()
            .collect::<std::result::Result<_, _>>()
            .map_err(format_err)?,
        (hound::SampleFormat::Int, bits @ (8 | 16 | 24 | 32)) => {
            let scale = 1.0 / (1u64 << (bits - 1)) as f32;
            reader
                .into_samples::<i32>()
                .map(|s| s.map(|v| v as f32 * scale))
                .collect::<std::result::Result<_, _>>()
                .map_err(format_err)?
        }
        (format, bits) => {
            return Err(Error::AudioFormat {
                path: path.to_path_buf(),
                reason: format!("{bits}-bit {format:?} samples are not supported"),
            })
        }
    };
    if samples.len() < spec.channels as usize {
        return Err(Error::AudioEmpty {
            path: path.to_path_buf(),
        });
    }
    Ok(Decoded {
        samples,
        sample_rate: spec.sample_rate,
        channels: spec.channels,
    })
}

/// Writes 16 kHz mono 16-bit PCM (used to keep audio when the user asks for it).
pub fn write_wav_16k(path: &Path, samples: &[f32]) -> std::io::Result<()> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: crate::SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::create(path, spec).map_err(std::io::Error::other)?;
    for &s in samples {
        let v = (s.clamp(-1.0, 1.0) * i16::MAX as f32).round() as i16;
        writer.write_sample(v).map_err(std::io::Error::other)?;
    }
    writer.finalize().map_err(std::io::Error::other)
}
