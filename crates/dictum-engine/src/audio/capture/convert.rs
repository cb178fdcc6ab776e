//! The audio callback's work: each buffer downmixed to mono, resampled to 16 kHz when the
//! device runs at another rate (rubato FFT resampler, preallocated), its level measured, and
//! the samples handed to the control side without ever blocking.

use super::shared::Shared;
use crate::SAMPLE_RATE;
use cpal::{FromSample, SizedSample};
use rubato::{FftFixedIn, Resampler};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// Resampler input chunk (frames at the device rate).
const RESAMPLE_CHUNK: usize = 1024;
/// What the callback can hold back while the control side holds the lock (16 kHz samples).
const PENDING_CAP: usize = SAMPLE_RATE as usize;

/// The callback's private side: conversion state and buffers, all allocated before the stream
/// starts.
pub(super) struct Converter {
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
    pub(super) fn new(rate: u32, channels: u16, shared: Arc<Shared>) -> Result<Converter, String> {
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

    pub(super) fn process<T>(&mut self, data: &[T])
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

#[cfg(test)]
mod tests {
    use super::*;

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
