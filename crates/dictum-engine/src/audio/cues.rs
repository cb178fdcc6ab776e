//! Sound cues (issue 29 item 2): a short start, stop and error sound, generated here (sine
//! tones with raised-cosine fades: nothing shipped, license-clean by construction) and played
//! on the default output device by a thread of its own, so the controller only sends a
//! message and never waits for the audio system.
//!
//! - start: a rising pair (660 Hz then 880 Hz, 60 ms each), stop: the falling pair, error: a
//!   low double (330 Hz, 90 ms twice). Each tone fades in and out over 10 ms (no click).
//! - The peak is `volume` ([dictation] sound_volume, 0.0–1.0) of full scale.
//! - Output: cpal (the crate capture already uses): PulseAudio's native protocol when a server
//!   is reachable, else the default host (ALSA). One host for the thread's life (a PulseAudio
//!   host keeps a client thread until the server hangs up); a stream is opened per cue and
//!   dropped once it has played, so nothing stays open between dictations.
//! - A cue that waited more than [`STALE`] (the audio system was slow) is dropped: a start cue
//!   heard after the text was typed would only mislead.

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{HostId, SampleFormat};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cue {
    /// Recording started (the press).
    Start,
    /// Recording ended (the release; played once the microphone is closed).
    Stop,
    /// A dictation failed (not: heard no speech).
    Error,
}

/// A cue older than this when its turn comes is not played.
pub const STALE: Duration = Duration::from_millis(1500);
/// Fade in and out of each tone.
pub const FADE_MS: u32 = 10;

/// The tones of a cue: (frequency Hz, length ms, silence after ms).
fn tones(cue: Cue) -> &'static [(f32, u32, u32)] {
    match cue {
        Cue::Start => &[(660.0, 60, 15), (880.0, 60, 0)],
        Cue::Stop => &[(880.0, 60, 15), (660.0, 60, 0)],
        Cue::Error => &[(330.0, 90, 40), (330.0, 90, 0)],
    }
}

/// The cue's mono samples at `rate` Hz, peak `volume` (clamped to 0.0–1.0), starting and
/// ending at zero.
pub fn render(cue: Cue, rate: u32, volume: f32) -> Vec<f32> {
    let volume = if volume.is_finite() {
        volume.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let per_ms = rate as f32 / 1000.0;
    let mut out = Vec::new();
    for &(freq, ms, gap_ms) in tones(cue) {
        let n = (ms as f32 * per_ms) as usize;
        let fade = ((FADE_MS as f32 * per_ms) as usize).clamp(1, n / 2);
        for i in 0..n {
            let t = i as f32 / rate as f32;
            // Raised cosine over the first and last `fade` samples: 0 at both ends.
            let edge = i.min(n - 1 - i);
            let env = if edge < fade {
                0.5 - 0.5 * (std::f32::consts::PI * edge as f32 / fade as f32).cos()
            } else {
                1.0
            };
            out.push(volume * env * (2.0 * std::f32::consts::PI * freq * t).sin());
        }
        out.extend(std::iter::repeat_n(0.0, (gap_ms as f32 * per_ms) as usize));
    }
    out
}

/// Length of a cue in milliseconds.
pub fn duration_ms(cue: Cue) -> u32 {
    tones(cue).iter().map(|&(_, ms, gap)| ms + gap).sum()
}

/// Sends cues to the playing thread, started at the first cue (none while cues are off).
#[derive(Default)]
pub struct Player {
    tx: Option<mpsc::Sender<(Cue, f32, Instant)>>,
    /// The thread could not be started: said once.
    failed: bool,
}

impl Player {
    /// Queues `cue` at `volume`; returns at once.
    pub fn play(&mut self, cue: Cue, volume: f32) {
        if self.failed {
            return;
        }
        if self.tx.is_none() {
            let (tx, rx) = mpsc::channel();
            match std::thread::Builder::new()
                .name("dictum-cues".into())
                .spawn(move || run(rx))
            {
                Ok(_) => self.tx = Some(tx),
                Err(e) => {
                    self.failed = true;
                    tracing::warn!("sound cues: cannot start their thread ({e}); no cues");
                    return;
                }
            }
        }
        if let Some(tx) = &self.tx {
            if tx.send((cue, volume, Instant::now())).is_err() {
                self.tx = None; // The thread ended; the next cue starts another.
            }
        }
    }
}

/// The playing thread: one cue after the other until the [`Player`] is dropped.
fn run(rx: mpsc::Receiver<(Cue, f32, Instant)>) {
    let mut host: Option<cpal::Host> = None;
    let mut warned = false;
    while let Ok((cue, volume, sent)) = rx.recv() {
        if sent.elapsed() > STALE {
            tracing::debug!(?cue, "sound cue dropped: too late");
            continue;
        }
        if host.is_none() {
            host = open_host();
        }
        let Some(h) = host.as_ref() else {
            if !std::mem::replace(&mut warned, true) {
                tracing::warn!("sound cues: no audio output system; check `pactl info`");
            }
            continue;
        };
        match play_on(h, cue, volume) {
            Ok(()) => warned = false,
            Err(e) => {
                if !std::mem::replace(&mut warned, true) {
                    tracing::warn!(
                        "sound cues: cannot play on the output device ({e}); check that one is set (`pactl info`, `pactl list sinks short`)"
                    );
                }
                // A fresh host next time (the server may have restarted).
                host = None;
            }
        }
    }
}

fn open_host() -> Option<cpal::Host> {
    if cpal::available_hosts().contains(&HostId::PulseAudio) {
        if let Ok(h) = cpal::host_from_id(HostId::PulseAudio) {
            if h.default_output_device().is_some() {
                return Some(h);
            }
        }
    }
    Some(cpal::default_host())
}

/// Opens a stream on the default output device, plays the cue through it and closes it.
fn play_on(host: &cpal::Host, cue: Cue, volume: f32) -> Result<(), String> {
    let device = host
        .default_output_device()
        .ok_or_else(|| "no default output device".to_string())?;
    let pulse = host.id() == HostId::PulseAudio;
    let (rate, channels, format) = if pulse {
        (48_000, 1u16, SampleFormat::F32)
    } else {
        let def = device
            .default_output_config()
            .map_err(|e| format!("no usable output configuration: {e}"))?;
        (
            def.sample_rate(),
            def.channels().max(1),
            def.sample_format(),
        )
    };
    let samples = Arc::new(render(cue, rate, volume));
    let pos = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let buffer_size = if pulse {
        // 20 ms periods: the server's default buffer (seconds) would delay the cue.
        cpal::BufferSize::Fixed(rate / 50)
    } else {
        cpal::BufferSize::Default
    };
    let config = cpal::StreamConfig {
        channels,
        sample_rate: rate,
        buffer_size,
    };
    let on_error = |e: cpal::Error| tracing::debug!("sound cue stream: {e}");
    let timeout = Some(Duration::from_secs(2));
    macro_rules! build_as {
        ($t:ty) => {{
            let (samples, pos, done) = (samples.clone(), pos.clone(), done.clone());
            let ch = channels as usize;
            device.build_output_stream::<$t, _, _>(
                config.clone(),
                move |data: &mut [$t], _: &cpal::OutputCallbackInfo| {
                    let mut p = pos.load(Ordering::Relaxed);
                    for frame in data.chunks_mut(ch) {
                        let v = samples.get(p).copied().unwrap_or(0.0);
                        p += 1;
                        for s in frame {
                            *s = <$t as cpal::FromSample<f32>>::from_sample_(v);
                        }
                    }
                    pos.store(p, Ordering::Relaxed);
                    if p >= samples.len() {
                        done.store(true, Ordering::Relaxed);
                    }
                },
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
        SampleFormat::F64 => build_as!(f64),
        other => return Err(format!("output sample format {other} is not supported")),
    }
    .map_err(|e| format!("cannot open the output stream: {e}"))?;
    stream
        .play()
        .map_err(|e| format!("cannot start the output stream: {e}"))?;
    // Written within the cue's length plus a little; then the server's buffer drains.
    let limit = Instant::now() + Duration::from_millis(duration_ms(cue) as u64 + 1000);
    while !done.load(Ordering::Relaxed) && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(10));
    }
    // What was written last may still sit in the server's buffer: let it play out.
    std::thread::sleep(Duration::from_millis(duration_ms(cue) as u64 + 150));
    drop(stream);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cues_are_short_fade_to_zero_and_peak_at_the_volume() {
        for cue in [Cue::Start, Cue::Stop, Cue::Error] {
            for volume in [0.05f32, 0.3, 1.0] {
                let s = render(cue, 48_000, volume);
                assert_eq!(s.len() as u32, duration_ms(cue) * 48, "{cue:?}");
                assert!(duration_ms(cue) <= 220, "{cue:?} too long");
                let peak = s.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                assert!(peak <= volume + 1e-6, "{cue:?} {peak} > {volume}");
                assert!(peak >= volume * 0.95, "{cue:?} {peak} well below {volume}");
                assert!(s[0].abs() < 1e-6 && s[s.len() - 1].abs() < 1e-6, "{cue:?}");
                // The first and last 2 ms of every tone stay below a tenth of the peak.
                let ramp = 96;
                assert!(s[..ramp].iter().all(|v| v.abs() <= volume * 0.1), "{cue:?}");
                let end = s.iter().rposition(|v| v.abs() > 0.0).unwrap_or(0);
                assert!(
                    s[end.saturating_sub(ramp)..=end]
                        .iter()
                        .all(|v| v.abs() <= volume * 0.1),
                    "{cue:?} ends abruptly"
                );
            }
        }
    }

    #[test]
    fn start_rises_stop_falls_error_is_low() {
        // Zero crossings per second of the first and last 50 ms: the frequency, doubled.
        fn crossings(s: &[f32]) -> usize {
            s.windows(2)
                .filter(|w| (w[0] < 0.0) != (w[1] < 0.0))
                .count()
        }
        let rate = 48_000;
        let span = (rate / 20) as usize;
        let start = render(Cue::Start, rate, 0.5);
        let stop = render(Cue::Stop, rate, 0.5);
        let error = render(Cue::Error, rate, 0.5);
        assert!(crossings(&start[..span]) < crossings(&start[start.len() - span..]));
        assert!(crossings(&stop[..span]) > crossings(&stop[stop.len() - span..]));
        assert!(crossings(&error[..span]) < crossings(&start[..span]));
    }

    #[test]
    fn a_bad_volume_is_clamped_or_silent() {
        let loud = render(Cue::Start, 16_000, 7.0);
        assert!(loud.iter().all(|v| v.abs() <= 1.0));
        assert!(render(Cue::Error, 16_000, f32::NAN)
            .iter()
            .all(|v| *v == 0.0));
        assert!(render(Cue::Stop, 16_000, -1.0).iter().all(|v| *v == 0.0));
    }
}
