//! The stream's life: the keeper thread that owns the cpal stream from open to drop, and
//! building it with the format the backend offers (16 kHz mono f32 asked of PulseAudio, the
//! device's native format through ALSA) wired to the converter and the error callback.

use super::convert::Converter;
use super::device::{backend_of, choose, device_name};
use super::error::CaptureError;
use super::options::{Backend, CaptureOptions, StreamInfo};
use super::shared::Shared;
use crate::SAMPLE_RATE;
use cpal::traits::{DeviceTrait, StreamTrait};
use cpal::SampleFormat;
use std::sync::mpsc;
use std::sync::Arc;

/// Frames per callback asked of PulseAudio (20 ms at 16 kHz): low latency, steady delivery.
/// (With the server's default buffer the first frames took ~3.8 s and came in bursts.)
const PULSE_FRAMES: u32 = 320;

pub(super) fn keeper(
    opts: CaptureOptions,
    shared: Arc<Shared>,
    ready: mpsc::Sender<Result<StreamInfo, CaptureError>>,
    shutdown: mpsc::Receiver<()>,
) {
    let stream = match build(&opts, &shared) {
        Ok((stream, info)) => {
            if ready.send(Ok(info)).is_err() {
                return; // open() gave up waiting.
            }
            stream
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if let Err(e) = stream.play() {
        shared.fail(format!("cannot start the stream: {e}"));
    }
    // Runs until the Capture is dropped (the sender closes).
    let _ = shutdown.recv();
    drop(stream);
}

fn build(
    opts: &CaptureOptions,
    shared: &Arc<Shared>,
) -> Result<(cpal::Stream, StreamInfo), CaptureError> {
    let (host, device) = choose(opts)?;
    let backend = backend_of(&host);
    let name = device_name(&device);
    let open_err = |reason: String| CaptureError::Open {
        device: name.clone(),
        reason,
    };
    let (config, format) = if backend == Backend::PulseAudio {
        // The server converts: ask for exactly what the engine uses.
        (
            cpal::StreamConfig {
                channels: 1,
                sample_rate: SAMPLE_RATE,
                buffer_size: cpal::BufferSize::Fixed(PULSE_FRAMES),
            },
            SampleFormat::F32,
        )
    } else {
        let def = device
            .default_input_config()
            .map_err(|e| open_err(format!("no usable input configuration: {e}")))?;
        (def.config(), def.sample_format())
    };
    let converter =
        Converter::new(config.sample_rate, config.channels, shared.clone()).map_err(open_err)?;
    let err_shared = shared.clone();
    let on_error = move |e: cpal::Error| {
        use cpal::ErrorKind::*;
        match e.kind() {
            // Recoverable: the stream goes on.
            Xrun | RealtimeDenied | DeviceChanged => tracing::warn!("capture: {e}"),
            _ => err_shared.fail(format!("input stream error: {e}")),
        }
    };
    let timeout = Some(opts.open_timeout);
    macro_rules! build_as {
        ($t:ty) => {{
            let mut conv = converter;
            device.build_input_stream::<$t, _, _>(
                config.clone(),
                move |data: &[$t], _: &cpal::InputCallbackInfo| conv.process(data),
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
        SampleFormat::I8 => build_as!(i8),
        SampleFormat::F64 => build_as!(f64),
        other => {
            return Err(open_err(format!(
                "sample format {other} is not supported; configure the device for 16-bit or float"
            )))
        }
    }
    .map_err(|e| open_err(e.to_string()))?;
    let info = StreamInfo {
        backend,
        device: name,
        sample_rate: config.sample_rate,
        channels: config.channels,
        sample_format: format.to_string(),
    };
    Ok((stream, info))
}
