//! The audio system and the device: PulseAudio (or pipewire-pulse) when reachable, else ALSA;
//! a device by name or the default input; the process's one PulseAudio host for questions
//! (which sources exist, which is the default: [`default_input`]).

use super::error::CaptureError;
use super::options::{Backend, CaptureOptions};
use crate::audio::mic_policy::is_bluetooth_source;
use cpal::traits::{DeviceTrait, HostTrait};
use cpal::HostId;
use std::sync::{Arc, Mutex};

pub(super) fn describe(device: Option<&str>) -> String {
    match device {
        Some(d) => format!("{d:?}"),
        None => "(default input)".into(),
    }
}

/// The process's one PulseAudio host for questions (which sources exist). cpal's PulseAudio
/// host opens a client whose reactor thread (holding the socket and a 1 MiB read buffer) runs
/// until the server hangs up: dropping the host does not end it. A host per question (one at
/// every release, to see whether the source is still there) leaked a thread, a descriptor and
/// ~0.7 MB per dictation (found by the soak; 1000 dictations would have hit the descriptor
/// limit). One host answers every question and is replaced only once the server no longer
/// answers it (its client's thread ends with the connection). Streams share another one
/// ([`STREAM_HOST`]).
static PULSE_HOST: Mutex<Option<Arc<cpal::Host>>> = Mutex::new(None);

/// The PulseAudio sources' names, asked through the one query host; a host whose server went
/// away (or restarted) is replaced once.
pub(super) fn pulse_source_names() -> Result<Vec<String>, String> {
    let cached = PULSE_HOST.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // Asked outside the lock: a frozen server must not block other callers on it.
    if let Some(host) = cached {
        if let Ok(devices) = host.input_devices() {
            return Ok(devices.map(|d| device_name(&d)).collect());
        }
    }
    let host = Arc::new(new_pulse_host()?);
    *PULSE_HOST.lock().unwrap_or_else(|e| e.into_inner()) = Some(host.clone());
    host.input_devices()
        .map(|devices| devices.map(|d| device_name(&d)).collect())
        .map_err(|e| format!("PulseAudio: {e}"))
}

/// The input a stream without `[audio] device` opens: the audio server's default source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultInput {
    /// The server's name for it (`alsa_input.…`, `bluez_input.…`).
    pub name: String,
    /// What the desktop shows ("Jabra Evolve 65 Mono"); the name when it has none.
    pub description: String,
    /// A Bluetooth headset's microphone (by its name: [`is_bluetooth_source`]): opening it
    /// switches the headset to its call profile, so `auto` closes it after each dictation.
    pub bluetooth: bool,
}

/// The PulseAudio (or pipewire-pulse) server's default source, asked through the one query
/// host (no connection of its own); an error names what to check.
pub fn default_input() -> Result<DefaultInput, String> {
    // Also replaces a query host whose server went away.
    pulse_source_names()?;
    let host = PULSE_HOST
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .ok_or("no PulseAudio server to ask")?;
    let device = host.default_input_device().ok_or(
        "the audio server has no default source: choose a microphone in the desktop's sound \
         settings (`pactl info` shows \"Default Source\")",
    )?;
    let name = device_name(&device);
    let description = device
        .description()
        .map(|d| d.name().to_string())
        .unwrap_or_else(|_| name.clone());
    Ok(DefaultInput {
        bluetooth: is_bluetooth_source(&name),
        name,
        description,
    })
}

/// The input a dictation opens: `configured` (`[dictation] input_device`) when set, else the
/// server's default source ([`default_input`]). The doctor and the first-run window ask this.
pub fn dictation_input(configured: &str) -> Result<DefaultInput, String> {
    let configured = configured.trim();
    if configured.is_empty() {
        return default_input();
    }
    Ok(DefaultInput {
        name: configured.to_string(),
        description: configured.to_string(),
        bluetooth: is_bluetooth_source(configured),
    })
}

fn new_pulse_host() -> Result<cpal::Host, String> {
    if !cpal::available_hosts().contains(&HostId::PulseAudio) {
        return Err(
            "no PulseAudio server socket found (PULSE_SERVER, XDG_RUNTIME_DIR/pulse/native)".into(),
        );
    }
    cpal::host_from_id(HostId::PulseAudio).map_err(|e| format!("PulseAudio: {e}"))
}

/// The process's one PulseAudio host for streams. With `[dictation] microphone` other than
/// "always" a stream is opened at every dictation: a host (a client connection and its
/// reactor thread, which dropping does not end, see [`PULSE_HOST`]) per stream would leak one
/// per dictation. The connection is settled once (start-up) and only the stream opens at a
/// press; a host whose server no longer answers (restarted) is replaced.
static STREAM_HOST: Mutex<Option<Arc<cpal::Host>>> = Mutex::new(None);

fn pulse_stream_host() -> Result<Arc<cpal::Host>, String> {
    let cached = STREAM_HOST
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    // Asked outside the lock: a frozen server must not block other callers on it.
    if let Some(host) = cached {
        if host.input_devices().is_ok() {
            return Ok(host);
        }
    }
    let host = Arc::new(new_pulse_host()?);
    *STREAM_HOST.lock().unwrap_or_else(|e| e.into_inner()) = Some(host.clone());
    Ok(host)
}

/// A host to open a stream with: PulseAudio's is kept for the life of the process
/// ([`STREAM_HOST`]), ALSA's made each time. PulseAudio questions go through
/// [`pulse_source_names`].
pub(super) fn pick_host(backend: Backend) -> Result<Arc<cpal::Host>, CaptureError> {
    let alsa = || {
        cpal::host_from_id(HostId::Alsa)
            .map(Arc::new)
            .map_err(|e| format!("ALSA: {e}"))
    };
    match backend {
        Backend::PulseAudio => pulse_stream_host().map_err(CaptureError::NoHost),
        Backend::Alsa => alsa().map_err(CaptureError::NoHost),
        Backend::Auto => pulse_stream_host()
            .or_else(|p| alsa().map_err(|a| format!("{p}; {a}")))
            .map_err(CaptureError::NoHost),
    }
}

pub(super) fn device_name(device: &cpal::Device) -> String {
    match device.id() {
        Ok(id) => id.id().to_string(),
        Err(_) => device
            .description()
            .map(|d| d.name().to_string())
            .unwrap_or_default(),
    }
}

pub(super) fn device_names(host: &cpal::Host) -> Vec<String> {
    match host.input_devices() {
        Ok(devices) => devices.map(|d| device_name(&d)).collect(),
        Err(_) => Vec::new(),
    }
}

pub(super) fn backend_of(host: &cpal::Host) -> Backend {
    if host.id() == HostId::PulseAudio {
        Backend::PulseAudio
    } else {
        Backend::Alsa
    }
}

fn find_device(
    host: &cpal::Host,
    wanted: Option<&str>,
) -> Result<Option<cpal::Device>, CaptureError> {
    let Some(name) = wanted else {
        return Ok(host.default_input_device());
    };
    let devices = host
        .input_devices()
        .map_err(|e| CaptureError::NoHost(e.to_string()))?;
    for d in devices {
        let matches =
            device_name(&d) == name || d.description().map(|x| x.name() == name).unwrap_or(false);
        if matches {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

/// Chooses the host and device; with `Auto`, a named device missing from PulseAudio is looked
/// for in ALSA too.
pub(super) fn choose(
    opts: &CaptureOptions,
) -> Result<(Arc<cpal::Host>, cpal::Device), CaptureError> {
    let wanted = opts.device.as_deref().filter(|d| !d.is_empty());
    let hosts: Vec<Backend> = match opts.backend {
        Backend::Auto => vec![Backend::PulseAudio, Backend::Alsa],
        b => vec![b],
    };
    let mut available = Vec::new();
    let mut host_errors = Vec::new();
    for b in hosts {
        let host = match pick_host(b) {
            Ok(h) => h,
            Err(e) => {
                host_errors.push(e.to_string());
                continue;
            }
        };
        if let Some(device) = find_device(&host, wanted)? {
            return Ok((host, device));
        }
        available.extend(device_names(&host));
    }
    if available.is_empty() && !host_errors.is_empty() {
        return Err(CaptureError::NoHost(host_errors.join("; ")));
    }
    Err(CaptureError::NoDevice {
        wanted: wanted.map(str::to_string),
        available,
    })
}
