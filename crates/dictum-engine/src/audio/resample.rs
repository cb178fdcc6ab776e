//! Downmix to mono and resample to 16 kHz with rubato's FFT resampler (band-limited, no
//! aliasing), compensating its delay so the output lines up with the input sample for sample.

use crate::{Error, Result, SAMPLE_RATE};
use rubato::{FftFixedIn, Resampler};

/// Averages interleaved channels into one.
pub fn downmix(interleaved: &[f32], channels: u16) -> Vec<f32> {
    let channels = channels.max(1) as usize;
    if channels == 1 {
        return interleaved.to_vec();
    }
    let scale = 1.0 / channels as f32;
    interleaved
        .chunks_exact(channels)
        .map(|frame| frame.iter().sum::<f32>() * scale)
        .collect()
}

/// Resamples mono audio from `rate` to 16 kHz.
pub fn resample_to_16k(mono: &[f32], rate: u32) -> Result<Vec<f32>> {
    if rate == SAMPLE_RATE || mono.is_empty() {
        return Ok(mono.to_vec());
    }
    const CHUNK: usize = 1024;
    let err = |e: &dyn std::fmt::Display| Error::Resample(e.to_string());
    let mut resampler = FftFixedIn::<f32>::new(rate as usize, SAMPLE_RATE as usize, CHUNK, 2, 1)
        .map_err(|e| err(&e))?;
    let expected = (mono.len() as u64 * SAMPLE_RATE as u64).div_ceil(rate as u64) as usize;
    let delay = resampler.output_delay();
    let mut out: Vec<f32> = Vec::with_capacity(expected + delay + CHUNK);
    let mut buffer = vec![vec![0.0f32; resampler.output_frames_max()]];

    let mut pos = 0;
    while mono.len() - pos >= resampler.input_frames_next() {
        let need = resampler.input_frames_next();
        let (_, written) = resampler
            .process_into_buffer(&[&mono[pos..pos + need]], &mut buffer, None)
            .map_err(|e| err(&e))?;
        out.extend_from_slice(&buffer[0][..written]);
        pos += need;
    }
    // The rest, then zeros until the delayed tail has come out.
    let rest = &mono[pos..];
    let (_, written) = resampler
        .process_partial_into_buffer(Some(&[rest]), &mut buffer, None)
        .map_err(|e| err(&e))?;
    out.extend_from_slice(&buffer[0][..written]);
    while out.len() < expected + delay {
        let (_, written) = resampler
            .process_partial_into_buffer(None::<&[&[f32]]>, &mut buffer, None)
            .map_err(|e| err(&e))?;
        if written == 0 {
            break;
        }
        out.extend_from_slice(&buffer[0][..written]);
    }
    let end = (delay + expected).min(out.len());
    Ok(out[delay.min(end)..end].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(freq: f32, rate: u32, secs: f32) -> Vec<f32> {
        let n = (rate as f32 * secs) as usize;
        (0..n)
            .map(|i| (2.0 * std::f32::consts::PI * freq * i as f32 / rate as f32).sin() * 0.5)
            .collect()
    }

    /// Dominant frequency by counting zero crossings.
    fn zero_crossing_freq(x: &[f32], rate: u32) -> f32 {
        let crossings = x
            .windows(2)
            .filter(|w| (w[0] < 0.0) != (w[1] < 0.0))
            .count();
        crossings as f32 / 2.0 / (x.len() as f32 / rate as f32)
    }

    #[test]
    fn resampling_keeps_length_and_pitch() {
        for rate in [8_000, 22_050, 44_100, 48_000, 96_000] {
            let input = sine(440.0, rate, 1.5);
            let out = resample_to_16k(&input, rate).expect("resamples");
            let expected = (input.len() as u64 * 16_000).div_ceil(rate as u64) as usize;
            assert_eq!(out.len(), expected, "rate {rate}");
            let f = zero_crossing_freq(&out[1000..out.len() - 1000], 16_000);
            assert!((f - 440.0).abs() < 5.0, "rate {rate}: {f} Hz");
            // No delay: the signal starts where it started.
            let peak = out[..400].iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(peak > 0.3, "rate {rate}: start was lost (peak {peak})");
        }
    }

    #[test]
    fn downsampling_removes_content_above_nyquist() {
        // 12 kHz tone at 48 kHz cannot exist at 16 kHz: it must be filtered, not aliased.
        let out = resample_to_16k(&sine(12_000.0, 48_000, 1.0), 48_000).expect("resamples");
        let rms = (out[2000..14000].iter().map(|v| v * v).sum::<f32>() / 12000.0).sqrt();
        assert!(rms < 0.01, "aliased energy {rms}");
    }

    #[test]
    fn downmix_averages_channels() {
        assert_eq!(downmix(&[1.0, 0.0, 0.5, 0.5], 2), vec![0.5, 0.5]);
        assert_eq!(downmix(&[0.1, 0.2], 1), vec![0.1, 0.2]);
    }
}
