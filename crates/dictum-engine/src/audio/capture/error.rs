//! What can go wrong opening and using a microphone stream, each error saying what to check.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("no audio input system available: {0}; check that PulseAudio or PipeWire is running (`pactl info`) or that ALSA sees a capture device (`arecord -l`)")]
    NoHost(String),

    #[error("{}", no_device_message(.wanted.as_deref(), .available))]
    NoDevice {
        wanted: Option<String>,
        available: Vec<String>,
    },

    #[error("cannot open input device {device}: {reason}; check that it is not in use exclusively by another program and that you may record from it")]
    Open { device: String, reason: String },

    #[error("input device {device} delivered no audio within {} ms; check that it is not muted or suspended (`pactl list sources short`) and that the stream was not blocked", .waited.as_millis())]
    NoFrames { device: String, waited: Duration },

    #[error("input device {device} failed: {reason}; check that it is still connected")]
    Device { device: String, reason: String },

    #[error("the audio system did not answer within {} ms while opening {device}; check that PulseAudio/PipeWire is not hung (`pactl info`)", .waited.as_millis())]
    OpenTimeout { device: String, waited: Duration },

    #[error("already recording: call stop() before start()")]
    AlreadyRecording,

    #[error("not recording: call start() before stop()")]
    NotRecording,
}

fn no_device_message(wanted: Option<&str>, available: &[String]) -> String {
    let list = if available.is_empty() {
        "none found".to_string()
    } else {
        available.join(", ")
    };
    match wanted {
        Some(name) => format!(
            "no input device named {name:?}; available: {list}. Check the name (`dictum devices`) or leave it empty for the default microphone"
        ),
        None => format!(
            "no default input device (available: {list}); plug in or enable a microphone and check it is not disabled in the sound settings (`pactl list sources short`, `arecord -l`)"
        ),
    }
}
