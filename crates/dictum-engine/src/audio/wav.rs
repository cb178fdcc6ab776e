//! WAV decoding: 8/16/24/32-bit integer and 32-bit float PCM, any channel count, sample rates
//! 8–384 kHz.
//!
//! A WAV file is untrusted input: everything its header promises is checked before a sample
//! is decoded or a buffer allocated. The rate must be in [`MIN_RATE`]..=[`MAX_RATE`] (a 1 Hz
//! header would otherwise turn 200 kB of samples into 27 hours of 16 kHz audio, and a prime
//! rate near 4 GHz would make the resampler plan a 4-billion-point FFT); the duration must be
//! at most the caller's cap (`stt.max_file_s`); and the header may not claim more sample
//! bytes than the file holds. Buffers are sized from what the file can actually contain, never
//! from the header alone.

use super::resample::To16k;
use crate::{Error, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// Lowest sample rate accepted (telephone audio).
pub const MIN_RATE: u32 = 8_000;
/// Highest sample rate accepted (studio recorders go up to 384 kHz).
pub const MAX_RATE: u32 = 384_000;
/// The default cap on a file's duration in seconds (`stt.max_file_s`): 4 hours; the `[stt]`
/// section's default, defined with it.
pub use crate::config::stt::DEFAULT_MAX_SECONDS;

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

/// A file decoded straight to 16 kHz mono ([`decode_16k`]), with what it was before.
#[derive(Debug, Clone)]
pub struct Decoded16k {
    /// Mono 16 kHz samples in [-1, 1].
    pub samples: Vec<f32>,
    /// The file's own rate and channel count.
    pub source_rate: u32,
    pub source_channels: u16,
    /// Frames in the file (at its own rate).
    pub source_frames: u64,
    /// Time spent resampling (the rest of the call was decoding).
    pub resample: Duration,
}

impl Decoded16k {
    /// The file's duration.
    pub fn duration_ms(&self) -> u64 {
        self.source_frames * 1000 / self.source_rate.max(1) as u64
    }
}

type Reader = hound::WavReader<std::io::BufReader<std::fs::File>>;

/// A reader whose header passed every check, and the most samples the file can hold.
struct Checked {
    reader: Reader,
    spec: hound::WavSpec,
    /// Interleaved samples the decoder may yield: the header's count, bounded by the bytes
    /// the file really has.
    samples_bound: usize,
}

/// `1:02:03`, `4:05`, or `12 s`.
pub(super) fn human_duration(secs: u64) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02} h")
    } else if m > 0 {
        format!("{m}:{s:02} min")
    } else {
        format!("{s} s")
    }
}

/// Opens `path` and checks its header: layout, rate, sample format, declared size against the
/// file's size, and duration against `max_seconds`. Nothing is decoded yet.
fn open_checked(path: &Path, max_seconds: u32) -> Result<Checked> {
    let unreadable = |reason: String| Error::AudioUnreadable {
        path: path.to_path_buf(),
        reason,
    };
    let format = |reason: String| Error::AudioFormat {
        path: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let file_bytes = file
        .metadata()
        .map_err(|e| unreadable(e.to_string()))?
        .len();
    let reader = hound::WavReader::new(std::io::BufReader::new(file)).map_err(|e| match e {
        // (hound reports a short read as "Failed to read enough bytes.", kind Other.)
        hound::Error::IoError(io)
            if io.kind() == std::io::ErrorKind::UnexpectedEof
                || io.to_string().contains("read enough bytes") =>
        {
            format("the file ends inside its header (truncated?)".into())
        }
        hound::Error::IoError(io) => unreadable(io.to_string()),
        other => format(other.to_string()),
    })?;
    let spec = reader.spec();
    if spec.channels == 0 {
        return Err(format("the header says 0 channels".into()));
    }
    if !(MIN_RATE..=MAX_RATE).contains(&spec.sample_rate) {
        return Err(format(format!(
            "its sample rate is {} Hz; accepted rates are {MIN_RATE} to {MAX_RATE} Hz",
            spec.sample_rate
        )));
    }
    match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Float, 32) | (hound::SampleFormat::Int, 8 | 16 | 24 | 32) => {}
        (f, bits) => {
            return Err(format(format!(
                "{bits}-bit {f:?} samples are not supported"
            )));
        }
    }
    // The header's sample count must fit in the file (each sample takes at least
    // ceil(bits / 8) bytes); a header that claims more is lying or the file is cut short.
    let header_samples = u64::from(reader.len());
    let min_bytes_per_sample = u64::from(spec.bits_per_sample.div_ceil(8));
    let declared_bytes = header_samples.saturating_mul(min_bytes_per_sample);
    if declared_bytes > file_bytes {
        return Err(format(format!(
            "the header declares {declared_bytes} bytes of samples but the whole file is \
             {file_bytes} bytes (truncated or damaged)"
        )));
    }
    let frames = header_samples / u64::from(spec.channels);
    let max_frames = u64::from(max_seconds) * u64::from(spec.sample_rate);
    if frames > max_frames {
        return Err(Error::AudioTooLong {
            path: path.to_path_buf(),
            duration: human_duration(frames.div_ceil(u64::from(spec.sample_rate))),
            max_seconds,
        });
    }
    let samples_bound = usize::try_from(header_samples.min(file_bytes / min_bytes_per_sample))
        .map_err(|_| format("too many samples for this machine".into()))?;
    Ok(Checked {
        reader,
        spec,
        samples_bound,
    })
}

/// Feeds every sample of `reader` to `sink` in order, as f32 in [-1, 1], in blocks.
fn for_each_block(
    path: &Path,
    reader: Reader,
    spec: hound::WavSpec,
    sink: &mut dyn FnMut(&[f32]) -> Result<()>,
) -> Result<()> {
    const BLOCK: usize = 64 * 1024;
    let format_err = |e: hound::Error| Error::AudioFormat {
        path: path.to_path_buf(),
        reason: format!("bad sample data: {e}"),
    };
    let mut block: Vec<f32> = Vec::with_capacity(BLOCK);
    let mut feed = |v: f32, block: &mut Vec<f32>| -> Result<()> {
        block.push(v);
        if block.len() == BLOCK {
            sink(block)?;
            block.clear();
        }
        Ok(())
    };
    match spec.sample_format {
        hound::SampleFormat::Float => {
            for s in reader.into_samples::<f32>() {
                feed(s.map_err(format_err)?, &mut block)?;
            }
        }
        hound::SampleFormat::Int => {
            let scale = 1.0 / (1u64 << (spec.bits_per_sample.clamp(1, 32) - 1)) as f32;
            for s in reader.into_samples::<i32>() {
                feed(s.map_err(format_err)? as f32 * scale, &mut block)?;
            }
        }
    }
    if !block.is_empty() {
        sink(&block)?;
    }
    Ok(())
}

/// Decodes a WAV file (interleaved, at its own rate), refusing files longer than 4 hours
/// ([`DEFAULT_MAX_SECONDS`]); see [`read_wav_capped`].
pub fn read_wav(path: &Path) -> Result<Decoded> {
    read_wav_capped(path, DEFAULT_MAX_SECONDS)
}

/// Decodes a WAV file whose header passes the checks (module docs), at most `max_seconds`
/// long. Memory: the samples as f32, never more than the file can hold.
pub fn read_wav_capped(path: &Path, max_seconds: u32) -> Result<Decoded> {
    let Checked {
        reader,
        spec,
        samples_bound,
    } = open_checked(path, max_seconds)?;
    let mut samples: Vec<f32> = Vec::with_capacity(samples_bound);
    for_each_block(path, reader, spec, &mut |block| {
        samples.extend_from_slice(block);
        Ok(())
    })?;
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

/// Decodes a WAV file straight to 16 kHz mono, at most `max_seconds` long: samples are
/// downmixed and resampled block by block as they are read, so memory is the 16 kHz result
/// (64 kB per second of audio) plus a fixed working set, whatever the file's rate or
/// channel count.
pub fn decode_16k(path: &Path, max_seconds: u32) -> Result<Decoded16k> {
    let mut samples: Vec<f32> = Vec::new();
    let info = decode_16k_blocks(path, max_seconds, &mut |block, expected| {
        if samples.capacity() == 0 {
            samples.reserve(usize::try_from(expected).unwrap_or(0));
        }
        samples.extend_from_slice(block);
        Ok(())
    })?;
    Ok(Decoded16k {
        samples,
        source_rate: info.source_rate,
        source_channels: info.source_channels,
        source_frames: info.source_frames,
        resample: info.resample,
    })
}

/// What [`decode_16k_blocks`] decoded.
#[derive(Debug, Clone)]
pub struct StreamInfo {
    pub source_rate: u32,
    pub source_channels: u16,
    /// Frames in the file (at its own rate).
    pub source_frames: u64,
    /// Time spent resampling.
    pub resample: Duration,
    /// Why the file was not decoded to its end (cut short, damaged), when it was not: what
    /// came before is kept.
    pub truncated: Option<String>,
}

impl StreamInfo {
    /// The file's duration.
    pub fn duration_ms(&self) -> u64 {
        self.source_frames * 1000 / u64::from(self.source_rate.max(1))
    }
}

/// Decodes a WAV file to 16 kHz mono block by block: `sink` gets each stretch of 16 kHz
/// samples as soon as it is resampled (in order, together exactly [`decode_16k`]'s output),
/// with the number of 16 kHz samples the header promises in all (for progress). Memory is a
/// fixed working set whatever the file's length: long files are transcribed as they are read.
pub fn decode_16k_blocks(
    path: &Path,
    max_seconds: u32,
    sink: &mut dyn FnMut(&[f32], u64) -> Result<()>,
) -> Result<StreamInfo> {
    let Checked {
        reader,
        spec,
        samples_bound,
    } = open_checked(path, max_seconds)?;
    let channels = usize::from(spec.channels);
    let frames_bound = (samples_bound / channels) as u64;
    let expected = frames_bound.saturating_mul(u64::from(crate::SAMPLE_RATE))
        / u64::from(spec.sample_rate.max(1));
    let mut resampler = To16k::new(spec.sample_rate, 0)?;
    let mut resample = Duration::ZERO;
    // A frame split across two blocks is carried over.
    let mut partial: Vec<f32> = Vec::with_capacity(channels);
    let mut mono: Vec<f32> = Vec::new();
    let scale = 1.0 / channels as f32;
    let mut frames: u64 = 0;
    for_each_block(path, reader, spec, &mut |block| {
        mono.clear();
        let mut rest = block;
        if !partial.is_empty() {
            let take = (channels - partial.len()).min(rest.len());
            partial.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if partial.len() == channels {
                mono.push(partial.iter().sum::<f32>() * scale);
                partial.clear();
            }
        }
        let mut whole = rest.chunks_exact(channels);
        mono.extend(whole.by_ref().map(|f| f.iter().sum::<f32>() * scale));
        partial.extend_from_slice(whole.remainder());
        frames += mono.len() as u64;
        let t = Instant::now();
        let pushed = resampler.push(&mono);
        let ready = resampler.take_ready();
        resample += t.elapsed();
        pushed?;
        if ready.is_empty() {
            return Ok(());
        }
        sink(&ready, expected)
    })?;
    if frames == 0 {
        return Err(Error::AudioEmpty {
            path: path.to_path_buf(),
        });
    }
    let t = Instant::now();
    let rest = resampler.finish()?;
    resample += t.elapsed();
    if !rest.is_empty() {
        sink(&rest, expected)?;
    }
    Ok(StreamInfo {
        source_rate: spec.sample_rate,
        source_channels: spec.channels,
        source_frames: frames,
        resample,
        truncated: None,
    })
}

/// Writes 16 kHz mono 16-bit PCM (used to keep audio when the user asks for it), as a
/// private (0600) file.
pub fn write_wav_16k(path: &Path, samples: &[f32]) -> std::io::Result<()> {
    let mut writer = WavWriter16k::create(path)?;
    writer.write(samples)?;
    writer.finish()
}

/// A 16 kHz mono 16-bit WAV written piece by piece (kept audio of a long file), private (0600).
pub struct WavWriter16k {
    writer: hound::WavWriter<std::io::BufWriter<std::fs::File>>,
}

impl WavWriter16k {
    pub fn create(path: &Path) -> std::io::Result<WavWriter16k> {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: crate::SAMPLE_RATE,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let file = std::io::BufWriter::new(crate::paths::create_private_file(path)?);
        let writer = hound::WavWriter::new(file, spec).map_err(std::io::Error::other)?;
        Ok(WavWriter16k { writer })
    }

    pub fn write(&mut self, samples: &[f32]) -> std::io::Result<()> {
        for &s in samples {
            let v = (s.clamp(-1.0, 1.0) * i16::MAX as f32).round() as i16;
            self.writer.write_sample(v).map_err(std::io::Error::other)?;
        }
        Ok(())
    }

    pub fn finish(self) -> std::io::Result<()> {
        self.writer.finalize().map_err(std::io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAV header (PCM, 16-bit) declaring `rate`, `channels` and `data_bytes`, followed by
    /// `actual` bytes of samples.
    fn crafted(rate: u32, channels: u16, data_bytes: u32, actual: usize) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(b"RIFF");
        v.extend_from_slice(&(36 + data_bytes).to_le_bytes());
        v.extend_from_slice(b"WAVEfmt ");
        v.extend_from_slice(&16u32.to_le_bytes());
        v.extend_from_slice(&1u16.to_le_bytes());
        v.extend_from_slice(&channels.to_le_bytes());
        v.extend_from_slice(&rate.to_le_bytes());
        let block = u32::from(channels) * 2;
        v.extend_from_slice(&rate.wrapping_mul(block).to_le_bytes());
        v.extend_from_slice(&(block as u16).to_le_bytes());
        v.extend_from_slice(&16u16.to_le_bytes());
        v.extend_from_slice(b"data");
        v.extend_from_slice(&data_bytes.to_le_bytes());
        v.extend((0..actual).map(|i| (i * 37 % 251) as u8));
        v
    }

    fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write");
        p
    }

    #[test]
    fn rates_outside_8_to_384_khz_are_refused_with_the_fix() {
        let dir = tempfile::tempdir().expect("tempdir");
        // (hound itself refuses rates whose byte rate overflows 32 bits.)
        for rate in [1, 7_999, 384_001, 2_000_000_000] {
            let p = write(&dir, "r.wav", &crafted(rate, 1, 20_000, 20_000));
            for err in [
                read_wav(&p).expect_err("refused"),
                decode_16k(&p, 3600).expect_err("refused"),
            ] {
                let msg = err.to_string();
                assert!(
                    matches!(err, Error::AudioFormat { .. })
                        && msg.contains(&format!("{rate} Hz"))
                        && msg.contains("8000 to 384000 Hz")
                        && msg.contains("sox"),
                    "{msg}"
                );
            }
        }
        for rate in [8_000, 384_000] {
            let p = write(&dir, "ok.wav", &crafted(rate, 1, 2_000, 2_000));
            assert!(decode_16k(&p, 3600).is_ok(), "rate {rate}");
        }
    }

    #[test]
    fn duration_is_capped_from_the_header_before_decoding() {
        let dir = tempfile::tempdir().expect("tempdir");
        // 8 kHz mono 16-bit: 16 000 bytes a second; 3 s of samples, cap 2 s.
        let p = write(&dir, "long.wav", &crafted(8_000, 1, 48_000, 48_000));
        let err = decode_16k(&p, 2).expect_err("too long");
        assert!(
            matches!(err, Error::AudioTooLong { max_seconds: 2, .. })
                && err.to_string().contains("3 s")
                && err.to_string().contains("stt.max_file_s"),
            "{err}"
        );
        assert!(read_wav_capped(&p, 2).is_err());
        let ok = decode_16k(&p, 3).expect("3 s fits a 3 s cap");
        assert_eq!(ok.duration_ms(), 3000);
        assert_eq!(ok.samples.len(), 48_000);
    }

    #[test]
    fn a_header_claiming_more_than_the_file_holds_is_refused_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Claims ~4 GB of samples, holds 100 bytes.
        let p = write(&dir, "liar.wav", &crafted(16_000, 1, u32::MAX - 65, 100));
        let t = Instant::now();
        let err = decode_16k(&p, u32::MAX).expect_err("refused");
        assert!(err.to_string().contains("truncated or damaged"), "{err}");
        let err = read_wav_capped(&p, u32::MAX).expect_err("refused");
        assert!(err.to_string().contains("truncated or damaged"), "{err}");
        assert!(t.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn streamed_decoding_equals_decode_then_downmix_then_resample() {
        let dir = tempfile::tempdir().expect("tempdir");
        // 3 channels so frames straddle the 64 Ki-sample blocks; 44.1 kHz, 2.5 s.
        let frames = 110_250usize;
        let spec = hound::WavSpec {
            channels: 3,
            sample_rate: 44_100,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let p = dir.path().join("three.wav");
        let mut w = hound::WavWriter::create(&p, spec).expect("create");
        for i in 0..frames * 3 {
            let t = (i / 3) as f32 / 44_100.0;
            let v = (2.0 * std::f32::consts::PI * 300.0 * t * (1 + i % 3) as f32).sin();
            w.write_sample((v * 12_000.0) as i16).expect("sample");
        }
        w.finalize().expect("finalize");
        let whole = read_wav(&p).expect("decode");
        let mono = super::super::downmix(&whole.samples, whole.channels);
        let expected = super::super::resample_to_16k(&mono, whole.sample_rate).expect("resample");
        let streamed = decode_16k(&p, 10).expect("stream");
        assert_eq!(streamed.source_frames, frames as u64);
        assert_eq!(streamed.samples.len(), expected.len());
        let worst = streamed
            .samples
            .iter()
            .zip(&expected)
            .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(worst < 1e-4, "differs by {worst}");
    }
}
