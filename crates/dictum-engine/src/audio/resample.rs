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

/// A sample in [-1, 1]; NaN and infinities are silence.
fn sanitize(v: f32) -> f32 {
    if v.is_finite() {
        v.clamp(-1.0, 1.0)
    } else {
        0.0
    }
}

/// Resamples mono audio from `rate` (8–384 kHz) to 16 kHz.
pub fn resample_to_16k(mono: &[f32], rate: u32) -> Result<Vec<f32>> {
    let mut r = To16k::new(rate, mono.len() as u64)?;
    r.push(mono)?;
    r.finish()
}

/// A streaming resampler to 16 kHz mono: [`To16k::push`] blocks of any size as they are
/// decoded, then [`To16k::finish`]. The output is exactly [`resample_to_16k`]'s on the whole
/// input; memory is the output plus one FFT chunk.
pub struct To16k {
    /// None when the input already is 16 kHz.
    inner: Option<FftFixedIn<f32>>,
    rate: u32,
    /// Input not yet processed (less than one chunk).
    pending: Vec<f32>,
    out: Vec<f32>,
    buffer: Vec<Vec<f32>>,
    frames_in: u64,
    /// Output samples already handed out by [`To16k::take_ready`] (the resampler's delay
    /// included), so `out` holds the produced stream from this index on.
    drained: usize,
}

impl To16k {
    /// `expected_frames`: the input length if known (the output is allocated once for it);
    /// 0 if not. Rates outside 8–384 kHz are refused: the FFT sizes grow with the rate's
    /// prime factors, and a rate near 4 GHz would plan a 4-billion-point FFT.
    pub fn new(rate: u32, expected_frames: u64) -> Result<To16k> {
        use super::wav::{MAX_RATE, MIN_RATE};
        if !(MIN_RATE..=MAX_RATE).contains(&rate) {
            return Err(Error::Resample(format!(
                "sample rate {rate} Hz is outside the accepted {MIN_RATE} to {MAX_RATE} Hz; \
                 convert the audio first, e.g. `sox in.wav -r 16000 out.wav`"
            )));
        }
        const CHUNK: usize = 1024;
        let inner = if rate == SAMPLE_RATE {
            None
        } else {
            Some(
                FftFixedIn::<f32>::new(rate as usize, SAMPLE_RATE as usize, CHUNK, 2, 1)
                    .map_err(|e| Error::Resample(e.to_string()))?,
            )
        };
        let buffer = vec![vec![
            0.0f32;
            inner.as_ref().map_or(0, |r| r.output_frames_max())
        ]];
        let extra = inner
            .as_ref()
            .map_or(0, |r| r.output_delay() + r.output_frames_max());
        let expected_out = expected_frames.saturating_mul(u64::from(SAMPLE_RATE)) / u64::from(rate);
        let capacity = usize::try_from(expected_out)
            .unwrap_or(usize::MAX)
            .saturating_add(extra);
        Ok(To16k {
            inner,
            rate,
            pending: Vec::new(),
            out: Vec::with_capacity(capacity),
            buffer,
            frames_in: 0,
            drained: 0,
        })
    }

    /// Takes the 16 kHz output produced so far, aligned with the input (the resampler's delay
    /// dropped): long files are processed as they are decoded instead of held whole. The
    /// pieces taken, followed by [`To16k::finish`], are exactly [`resample_to_16k`]'s output.
    pub fn take_ready(&mut self) -> Vec<f32> {
        let delay = self.inner.as_ref().map_or(0, |r| r.output_delay());
        let skip = delay.saturating_sub(self.drained).min(self.out.len());
        self.drained += self.out.len();
        let mut ready = std::mem::take(&mut self.out);
        ready.drain(..skip);
        ready
    }

    /// Resamples `mono` (the next samples of the stream) as far as whole chunks allow.
    /// Samples are taken as [-1, 1]: larger ones are clipped and NaN or infinite ones become
    /// silence (one NaN in a float WAV used to panic inside the FFT and kill the process).
    pub fn push(&mut self, mono: &[f32]) -> Result<()> {
        self.frames_in += mono.len() as u64;
        let clean = mono.iter().map(|&v| sanitize(v));
        let Some(resampler) = self.inner.as_mut() else {
            self.out.extend(clean);
            return Ok(());
        };
        self.pending.extend(clean);
        let mut pos = 0;
        while self.pending.len() - pos >= resampler.input_frames_next() {
            let need = resampler.input_frames_next();
            let (_, written) = resampler
                .process_into_buffer(&[&self.pending[pos..pos + need]], &mut self.buffer, None)
                .map_err(|e| Error::Resample(e.to_string()))?;
            self.out.extend_from_slice(&self.buffer[0][..written]);
            pos += need;
        }
        self.pending.drain(..pos);
        Ok(())
    }

    /// The rest, then zeros until the delayed tail has come out; the result lines up with
    /// the input sample for sample and has ceil(frames × 16000 / rate) samples.
    pub fn finish(mut self) -> Result<Vec<f32>> {
        let err = |e: &dyn std::fmt::Display| Error::Resample(e.to_string());
        let Some(resampler) = self.inner.as_mut() else {
            return Ok(self.out);
        };
        if self.frames_in == 0 {
            return Ok(Vec::new());
        }
        let expected = usize::try_from(
            (self.frames_in * u64::from(SAMPLE_RATE)).div_ceil(u64::from(self.rate)),
        )
        .map_err(|e| err(&e))?;
        let delay = resampler.output_delay();
        // rubato refuses an empty partial block (an input of a whole number of chunks
        // used to fail here: "Insufficient buffer size 0"); None is the same zeros.
        let rest = [&self.pending[..]];
        let rest = (!self.pending.is_empty()).then_some(&rest[..]);
        let (_, written) = resampler
            .process_partial_into_buffer(rest, &mut self.buffer, None)
            .map_err(|e| err(&e))?;
        self.out.extend_from_slice(&self.buffer[0][..written]);
        // Zeros in; a call may give nothing back while a whole FFT block fills (rates with
        // few common factors with 16 kHz have blocks of up to a second), so the calls are
        // counted from the input the missing output needs, not stopped at the first empty one.
        // Lengths in the produced stream count what take_ready already handed out.
        let drained = self.drained;
        let produced = |out: &Vec<f32>| drained + out.len();
        let missing_out = (expected + delay).saturating_sub(produced(&self.out)) as u64;
        let block_out = resampler.output_frames_max() as u64;
        let zeros_needed = (missing_out + block_out) * u64::from(self.rate)
            / u64::from(SAMPLE_RATE)
            + 2 * resampler.input_frames_max() as u64;
        let mut calls = zeros_needed / resampler.input_frames_next().max(1) as u64 + 2;
        while produced(&self.out) < expected + delay && calls > 0 {
            calls -= 1;
            let (_, written) = resampler
                .process_partial_into_buffer(None::<&[&[f32]]>, &mut self.buffer, None)
                .map_err(|e| err(&e))?;
            self.out.extend_from_slice(&self.buffer[0][..written]);
        }
        // In place: no second copy of the whole output.
        let end = (delay + expected)
            .saturating_sub(self.drained)
            .min(self.out.len());
        self.out.truncate(end);
        self.out
            .drain(..delay.saturating_sub(self.drained).min(end));
        Ok(self.out)
    }
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
    fn taking_output_as_it_comes_gives_the_whole_signal_exactly() {
        for rate in [8_000, 16_000, 22_050, 44_100, 48_000, 96_000] {
            let input = sine(330.0, rate, 2.3);
            let whole = resample_to_16k(&input, rate).expect("resamples");
            for block in [1, 100, 1024, 4099] {
                let mut r = To16k::new(rate, 0).expect("rate accepted");
                let mut streamed = Vec::new();
                for piece in input.chunks(block) {
                    r.push(piece).expect("push");
                    streamed.extend(r.take_ready());
                }
                streamed.extend(r.finish().expect("finish"));
                assert_eq!(streamed.len(), whole.len(), "rate {rate}, block {block}");
                assert!(
                    streamed.iter().zip(&whole).all(|(a, b)| a == b),
                    "rate {rate}, block {block}: samples differ"
                );
            }
        }
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
    fn rates_outside_the_accepted_range_are_refused_and_prime_rates_stay_cheap() {
        for rate in [0, 1, 7_999, 384_001, 4_294_967_291] {
            let err = resample_to_16k(&[0.1; 100], rate).expect_err("refused");
            assert!(err.to_string().contains("8000 to 384000 Hz"), "{err}");
        }
        // The largest prime rate accepted: one FFT chunk is the whole second (no common
        // factor with 16 kHz), which must still be quick and small.
        let t = std::time::Instant::now();
        let out = resample_to_16k(&sine(440.0, 383_983, 2.0), 383_983).expect("resamples");
        assert_eq!(
            out.len(),
            (2 * 383_983u64 * 16_000).div_ceil(383_983) as usize
        );
        assert!(t.elapsed().as_secs() < 20, "took {:?}", t.elapsed());
    }

    #[test]
    fn nan_infinite_and_huge_samples_are_silence_or_clipped_not_a_panic() {
        let mut input = sine(440.0, 44_100, 0.5);
        input[100] = f32::NAN;
        input[200] = f32::INFINITY;
        input[300] = f32::NEG_INFINITY;
        input[400] = 1e38;
        for rate in [44_100, 16_000] {
            let out = resample_to_16k(&input, rate).expect("resamples");
            assert!(out.iter().all(|v| v.is_finite()), "rate {rate}");
        }
    }

    #[test]
    fn a_whole_number_of_chunks_resamples() {
        // 48 kHz x 1024 x 30 frames: nothing left over for the last partial block.
        let input = sine(440.0, 48_000, 0.64);
        assert_eq!(input.len() % 1024, 0);
        let out = resample_to_16k(&input, 48_000).expect("resamples");
        assert_eq!(out.len(), input.len() / 3);
    }

    #[test]
    fn streaming_in_odd_blocks_matches_one_push() {
        let input = sine(300.0, 44_100, 1.3);
        let whole = resample_to_16k(&input, 44_100).expect("resamples");
        let mut r = To16k::new(44_100, 0).expect("new");
        for block in input.chunks(777) {
            r.push(block).expect("push");
        }
        assert_eq!(r.finish().expect("finish"), whole);
    }

    #[test]
    fn downmix_averages_channels() {
        assert_eq!(downmix(&[1.0, 0.0, 0.5, 0.5], 2), vec![0.5, 0.5]);
        assert_eq!(downmix(&[0.1, 0.2], 1), vec![0.1, 0.2]);
    }
}
