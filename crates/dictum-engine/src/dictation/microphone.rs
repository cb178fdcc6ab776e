//! The microphone as the controller sees it: one stream, open while `[dictation]
//! microphone` says it is needed (the rule is `audio::mic_policy`: "always" from start to
//! quit, "on_demand" only while dictating, "auto" while dictating and a while after), and
//! everything that happens when it goes away: the background re-open (one attempt at a time,
//! [`Reopener`]), the backoff between failed attempts, what was last told to the user (each
//! failure once, not at every retry), and a settings change that wants a new stream.
//!
//! Rules (none of them waits, the controller also answers the hotkey, but for the one open a
//! press needs):
//! - a press that finds the stream closed because nothing needed it opens it at once
//!   ([`Microphone::ensure`], waiting up to [`COLD_OPEN_WAIT`], the key's release queued
//!   meanwhile), recording from its first buffer: nothing that reaches the stream after the
//!   press is lost; the server connection was settled at start-up, so only the stream opens;
//! - a stream nothing needs any more is closed between utterances ([`Microphone::settle`],
//!   every controller round), never under one;
//! - a press without a working stream is not recorded: a re-open is started and the user is
//!   told why ("being re-opened", or "the audio server has not answered for N s" when an
//!   attempt hangs in a frozen server, or the last failure);
//! - a stream is never swapped under an utterance: the controller asks for the re-open's
//!   result ([`Microphone::poll`]) only while nothing is being recorded;
//! - a settings change (device, pre-roll, length limit) opens a new stream in the background
//!   and the old one records until the new one delivers; a change made while an attempt with
//!   the old settings is under way re-opens once more when that attempt lands.
//!
//! The time is an argument (`now`) and the opening is a trait ([`Open`]), so the tests below
//! drive a fake server: a source lost and back, a frozen server, the backoff as data.

use crate::audio::capture::{
    drop_in_background, Capture, CaptureOptions, Open, OpenCapture, Reopener, Slow,
};
use crate::audio::mic_policy::{is_bluetooth_source, MicEvent, MicMode, MicPolicy, MicReason};
use crate::config::dictation::MicrophoneMode as MicSetting;
use crate::dictation::config::DictationConfig;
use std::time::{Duration, Instant};

/// An attempt that has waited this long is told as a server that does not answer.
const FROZEN_AFTER: Duration = Duration::from_secs(2);

/// How long a press waits for a closed microphone to open (and deliver its first frames):
/// PulseAudio takes ~50–300 ms, a Bluetooth headset switching to its call profile 1–2 s.
/// Longer, the press is not recorded and the attempt lands in the background.
pub const COLD_OPEN_WAIT: Duration = Duration::from_secs(4);

/// A cold open that has not delivered its first samples after this long is told to the
/// user while the press waits (the indicator's "waiting for the microphone"): PulseAudio
/// opens in ~10–300 ms, a Bluetooth profile switch takes 1–2 s.
pub const SLOW_OPEN_AFTER: Duration = Duration::from_millis(300);

/// The rule's mode for the `[dictation]` settings.
pub fn mic_mode(d: &DictationConfig) -> MicMode {
    match d.microphone {
        MicSetting::Always => MicMode::Always,
        MicSetting::OnDemand => MicMode::OnDemand,
        MicSetting::Auto => MicMode::Auto {
            keep_ms: d.microphone_keep_s as u64 * 1000,
        },
    }
}

/// How the last press got its stream, for its history row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColdOpen {
    /// When the freshly opened stream delivered its first samples (`None`: not yet).
    pub first_sample: Option<Instant>,
}

/// What the microphone needs of a stream (a [`Capture`]; a fake in the tests).
pub trait Stream: Send + 'static {
    /// The stream has failed (device gone, server gone): it has to be re-opened.
    fn has_failed(&self) -> bool;
    /// Its device's name.
    fn device(&self) -> &str;
    /// Why it failed, if it did.
    fn device_error(&self) -> Option<String>;
    /// Asks the audio server whether the source is still there (`Some(why)` when not).
    fn source_missing(&self) -> Option<String>;
    /// An utterance is being recorded from it.
    fn is_recording(&self) -> bool;
    /// When its first frames came.
    fn first_frames_at(&self) -> Option<Instant>;
    /// Opened recording from its first buffer for a press that did not wait for it: stop.
    fn disarm(&mut self);
}

impl Stream for Capture {
    fn has_failed(&self) -> bool {
        Capture::has_failed(self)
    }
    fn device(&self) -> &str {
        &self.info().device
    }
    fn device_error(&self) -> Option<String> {
        Capture::device_error(self)
    }
    fn source_missing(&self) -> Option<String> {
        Capture::source_missing(self)
    }
    fn is_recording(&self) -> bool {
        Capture::is_recording(self)
    }
    fn first_frames_at(&self) -> Option<Instant> {
        Capture::first_frames_at(self)
    }
    fn disarm(&mut self) {
        Capture::disarm(self)
    }
}

/// The `[dictation]` settings a stream is opened with; a change of any of them re-opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Settings {
    input_device: String,
    preroll_ms: u32,
    max_utterance_s: u32,
}

impl Settings {
    fn of(d: &DictationConfig) -> Settings {
        Settings {
            input_device: d.input_device.clone(),
            preroll_ms: d.preroll_ms,
            max_utterance_s: d.max_utterance_s,
        }
    }

    fn options(&self) -> CaptureOptions {
        CaptureOptions {
            device: (!self.input_device.trim().is_empty()).then(|| self.input_device.clone()),
            preroll_ms: self.preroll_ms,
            max_utterance: Duration::from_secs(self.max_utterance_s as u64),
            ..CaptureOptions::default()
        }
    }
}

/// How to open the microphone for `d` (start-up opens it this way too).
pub fn capture_options(d: &DictationConfig) -> CaptureOptions {
    Settings::of(d).options()
}

/// The stream, its re-opener and what was told about it.
pub struct Microphone<O: Open = OpenCapture> {
    stream: Option<O::Stream>,
    reopener: Reopener<O>,
    settings: Settings,
    /// The last re-open failure (told once, not at every retry).
    last_error: Option<String>,
    /// A stream with the current settings is wanted though one works (settings changed).
    wanted: bool,
    /// The attempt under way uses settings from before the last change.
    stale: bool,
    /// What to tell the user, oldest first ([`Microphone::take_notices`]).
    notices: Vec<String>,
    /// When the stream is to be open (`[dictation] microphone`).
    policy: MicPolicy,
    /// The policy's clock starts here.
    epoch: Instant,
    /// The stream was closed because nothing needed it (not lost): a press opens it.
    closed: bool,
    /// The last press found the stream closed and opened it.
    cold_open: Option<ColdOpen>,
    /// How long a press waits for a closed stream ([`COLD_OPEN_WAIT`]).
    cold_wait: Duration,
}

impl Microphone<OpenCapture> {
    /// The microphone with the stream start-up opened for `d`.
    pub fn new(stream: Capture, d: &DictationConfig) -> Self {
        Microphone::with_opener(stream, d, OpenCapture)
    }
}

impl<O: Open> Microphone<O>
where
    O::Stream: Stream,
{
    /// `stream` was opened for `d`; re-opens go through `opener`.
    pub fn with_opener(stream: O::Stream, d: &DictationConfig, opener: O) -> Self {
        let bluetooth = is_bluetooth_source(stream.device());
        Microphone {
            stream: Some(stream),
            reopener: Reopener::new(opener),
            settings: Settings::of(d),
            last_error: None,
            wanted: false,
            stale: false,
            notices: Vec::new(),
            policy: MicPolicy::new(mic_mode(d), bluetooth),
            epoch: Instant::now(),
            closed: false,
            cold_open: None,
            cold_wait: COLD_OPEN_WAIT,
        }
    }

    fn ms(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.epoch).as_millis() as u64
    }

    /// The source's kind as the server names it (a Bluetooth microphone is closed right
    /// after each dictation in `auto`).
    fn note_source(&mut self, device: &str, now: Instant) {
        let bluetooth = is_bluetooth_source(device);
        self.policy.on(MicEvent::Source { bluetooth }, self.ms(now));
    }

    /// One line for the user: open or closed, and why ("closed: …" also for a stream that is
    /// needed but lost).
    pub fn describe(&self, now: Instant) -> String {
        let reason = self.policy.state(self.ms(now));
        if reason.is_open() && !self.is_working() {
            return format!("closed: {}", self.why_missing());
        }
        reason.describe(self.ms(now))
    }

    /// The stream is open (working or not).
    pub fn is_open(&self) -> bool {
        self.stream.is_some()
    }

    /// How the last press got its stream: `Some` when it found it closed and opened it.
    pub fn take_cold_open(&mut self) -> Option<ColdOpen> {
        self.cold_open.take()
    }

    /// Every controller round: tells the rule whether a dictation is under way (`busy`: an
    /// utterance recorded or the stream still recording one) and whether hands-free
    /// listens, and closes the stream once nothing needs it (never under an utterance; in
    /// the background, a hung server must not block the caller).
    pub fn settle(&mut self, busy: bool, listening: bool, now: Instant) {
        let ms = self.ms(now);
        if !busy && self.policy.dictating() {
            self.policy.on(MicEvent::Done, ms);
        }
        if listening != self.policy.listening() {
            self.policy.on(MicEvent::Listening(listening), ms);
        }
        if self.policy.state(ms).is_open() || busy {
            return;
        }
        if self.stream.as_ref().is_some_and(|s| s.is_recording()) {
            return;
        }
        if let Some(s) = self.stream.take() {
            tracing::info!(
                "microphone {} closed ({})",
                s.device(),
                self.policy.state(ms).describe(ms)
            );
            drop_in_background(s);
        }
        self.closed = true;
        self.wanted = false;
    }

    /// Opens the closed stream now for a press (or hands-free), recording from its first
    /// buffer; waits up to [`COLD_OPEN_WAIT`]. False when it could not (the reason is kept
    /// for the notice).
    fn open_cold(&mut self, now: Instant, slow: Option<Slow<'_>>) -> bool {
        let opts = CaptureOptions {
            record_from_open: true,
            ..self.settings.options()
        };
        match self.reopener.open_now(opts, self.cold_wait, now, slow) {
            Some(Ok(s)) => {
                self.closed = false;
                self.last_error = None;
                self.stale = false;
                self.wanted = false;
                self.cold_open = Some(ColdOpen {
                    first_sample: s.first_frames_at(),
                });
                self.note_source(s.device(), now);
                self.stream = Some(s);
                true
            }
            Some(Err(e)) => {
                self.last_error = Some(e.to_string());
                false
            }
            None => false,
        }
    }

    /// Hands-free listening starts: the stream is needed while it listens (opened now when
    /// it was closed; a failure is told by hands-free and re-opened in the background).
    pub fn listen(&mut self, now: Instant) {
        self.policy.on(MicEvent::Listening(true), self.ms(now));
        self.poll(now);
        if self.stream.is_none() && self.closed && self.open_cold(now, None) {
            self.cold_open = None;
        }
    }

    /// The stream, working or failed (none while it is being re-opened).
    pub fn stream(&self) -> Option<&O::Stream> {
        self.stream.as_ref()
    }

    pub fn stream_mut(&mut self) -> Option<&mut O::Stream> {
        self.stream.as_mut()
    }

    /// A stream is there and has not failed.
    pub fn is_working(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| !s.has_failed())
    }

    /// What the user is to be told (each once), oldest first.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Why there is no working stream: its error, else the last re-open failure.
    pub fn why_missing(&self) -> String {
        self.stream
            .as_ref()
            .and_then(|s| s.device_error())
            .or_else(|| self.last_error.clone())
            .unwrap_or_else(|| "it is being re-opened".into())
    }

    /// Lets go of the stream (closed in the background: a hung server must not block the
    /// caller). A failed stream, one PulseAudio may have moved to another source, and the
    /// stream at quit go this way; the next [`Microphone::keep_open`] re-opens.
    pub fn discard(&mut self) {
        if let Some(s) = self.stream.take() {
            drop_in_background(s);
        }
    }

    /// At a press: true when a working stream is there. Never waits: without one, a re-open
    /// is started in the background (one at a time), the user is told why, and false.
    pub fn ensure(&mut self, now: Instant) -> bool {
        self.ensure_telling(now, &mut || ())
    }

    /// [`Microphone::ensure`]; a cold open still waiting after [`SLOW_OPEN_AFTER`] calls
    /// `slow` once (the controller shows the wait) and goes on waiting.
    pub fn ensure_telling(&mut self, now: Instant, slow: &mut dyn FnMut()) -> bool {
        self.policy.on(MicEvent::Press, self.ms(now));
        self.cold_open = None;
        self.poll(now);
        if self.is_working() {
            return true;
        }
        if self.stream.is_none() && self.closed {
            let slow = Slow {
                after: SLOW_OPEN_AFTER,
                tell: slow,
            };
            if self.open_cold(now, Some(slow)) {
                return true;
            }
            if self.reopener.waiting_since().is_some() {
                self.notices.push(format!(
                    "the microphone did not open within {} s (a Bluetooth headset switching \
                     to its call profile can take that long); this press was not recorded, \
                     try again in a moment, or set [dictation] microphone = \"always\"",
                    self.cold_wait.as_secs_f64()
                ));
                return false;
            }
        }
        self.discard();
        self.reopener.request(self.settings.options(), now);
        let waited = self
            .reopener
            .waiting_since()
            .map(|since| now.saturating_duration_since(since));
        let why = match waited {
            Some(waited) if waited >= FROZEN_AFTER => format!(
                "the audio server has not answered for {} s (is PulseAudio/PipeWire frozen? \
                 `pactl info` tells)",
                waited.as_secs()
            ),
            Some(_) => "it is being re-opened".to_string(),
            None => self
                .last_error
                .clone()
                .unwrap_or_else(|| "it is being re-opened".into()),
        };
        self.notices.push(format!(
            "no microphone: {why}; this press was not recorded, try again once it is back"
        ));
        false
    }

    /// Takes the background re-open's result, if it has one. Call it only while nothing is
    /// being recorded (the stream is never swapped under an utterance).
    pub fn poll(&mut self, now: Instant) {
        let working = self.is_working();
        match self.reopener.poll(now) {
            Some(Ok(mut s)) => {
                // A cold open that landed after its press gave up: not an utterance.
                s.disarm();
                self.last_error = None;
                if std::mem::take(&mut self.stale) {
                    // Opened with the settings from before the last change: again.
                    drop_in_background(s);
                    self.reopener.request(self.settings.options(), now);
                    return;
                }
                if working && !self.wanted {
                    drop_in_background(s);
                    return;
                }
                let message = if working {
                    format!("microphone {} opened with the new settings", s.device())
                } else {
                    format!("microphone {} is back", s.device())
                };
                self.wanted = false;
                self.discard();
                if !std::mem::take(&mut self.closed) {
                    self.notices.push(message);
                }
                self.note_source(s.device(), now);
                self.stream = Some(s);
            }
            Some(Err(e)) => {
                if std::mem::take(&mut self.stale) {
                    self.reopener.request(self.settings.options(), now);
                    return;
                }
                let message = e.to_string();
                if working && std::mem::take(&mut self.wanted) {
                    // The old stream goes on; the new settings could not be had.
                    self.notices.push(format!(
                        "the new microphone settings could not be applied ({message}); \
                         recording goes on with {}",
                        self.stream.as_ref().map_or("", |s| s.device())
                    ));
                    return;
                }
                if self.last_error.as_deref() != Some(message.as_str()) {
                    self.notices.push(format!("no microphone: {message}"));
                }
                self.last_error = Some(message);
            }
            None => {}
        }
    }

    /// Between utterances (housekeeping): a device that failed comes back by itself when it
    /// returns, re-opened in the background one attempt at a time (a frozen sound server
    /// costs one waiting thread).
    pub fn keep_open(&mut self, now: Instant) {
        self.poll(now);
        let reason = self.policy.state(self.ms(now));
        if !reason.is_open() {
            return;
        }
        if self.closed && !matches!(reason, MicReason::Always | MicReason::HandsFree) {
            // Closed on purpose and only kept for a pre-roll that is gone: the next press
            // opens it.
            return;
        }
        if !self.is_working() {
            self.discard();
            self.reopener.request(self.settings.options(), now);
        } else if self.wanted {
            // New settings still to apply (their attempt was swallowed by the retry wait
            // after a failed attempt with the settings before them): ask again.
            self.reopener.request(self.settings.options(), now);
        }
    }

    /// Asks the audio server whether a working stream's source is still there (PulseAudio
    /// moves a stream whose source went away to another one and says nothing). Gone: the
    /// stream is let go (re-opened by [`Microphone::keep_open`]) and the reason returned.
    pub fn check_source(&mut self) -> Option<String> {
        let (device, why) = self
            .stream
            .as_ref()
            .filter(|s| !s.has_failed())
            .and_then(|s| s.source_missing().map(|why| (s.device().to_string(), why)))?;
        self.discard();
        self.last_error = Some(format!("input device {device} is gone"));
        Some(why)
    }

    /// Applies new `[dictation]` settings: a change of device, pre-roll or length limit opens
    /// a new stream in the background; the stream in use stays until the new one delivers (a
    /// press meanwhile is recorded with the old settings, never refused).
    pub fn reconfigure(&mut self, d: &DictationConfig, now: Instant) {
        self.policy.set_mode(mic_mode(d));
        let settings = Settings::of(d);
        if settings == self.settings {
            return;
        }
        self.settings = settings;
        self.stale = self.reopener.waiting_since().is_some();
        if self.stream.is_none() && self.closed {
            // Closed: the next open uses the new settings.
            return;
        }
        self.wanted = true;
        self.reopener.request(self.settings.options(), now);
    }
}

#[cfg(test)]
mod tests;
