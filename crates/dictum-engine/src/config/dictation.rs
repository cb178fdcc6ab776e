//! The `[dictation]` config section: the hotkey, its mode, and how live audio is captured and
//! streamed. Documented with its defaults in `config::DEFAULT_TOML`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Mode {
    /// Hold the hotkey while speaking; releasing it ends the utterance.
    PushToTalk,
    /// Press once to start, press again to stop.
    Toggle,
    /// Press once to start listening, again to stop: each pause of `hands_free_pause_ms`
    /// after speech ends one dictation (`"hands-free"` is accepted too).
    HandsFree,
}

/// By hand only to accept `"hands-free"` (the spelling people write) next to `"hands_free"`.
impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Mode, D::Error> {
        let name = String::deserialize(d)?;
        match name.as_str() {
            "push_to_talk" => Ok(Mode::PushToTalk),
            "toggle" => Ok(Mode::Toggle),
            "hands_free" | "hands-free" => Ok(Mode::HandsFree),
            other => Err(serde::de::Error::unknown_variant(
                other,
                &["push_to_talk", "toggle", "hands_free"],
            )),
        }
    }
}

/// When the microphone's capture stream is open (`[dictation] microphone`; the rule is
/// `audio::mic_policy`). The desktop shows "microphone in use" while it is, and a Bluetooth
/// headset stays in its call profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum MicrophoneMode {
    /// Closed while idle: the press opens it, the end of the dictation closes it (no
    /// pre-roll: the first words come from a cold open).
    OnDemand,
    /// Open from start to quit (a pre-roll before every press).
    Always,
    /// Open while dictating and `microphone_keep_s` after the last dictation (closed right
    /// after each dictation on a Bluetooth source).
    Auto,
}

/// By hand to name the accepted values when one is not (`"on-demand"` is accepted too).
impl<'de> Deserialize<'de> for MicrophoneMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MicrophoneMode, D::Error> {
        let name = String::deserialize(d)?;
        match name.as_str() {
            "on_demand" | "on-demand" => Ok(MicrophoneMode::OnDemand),
            "always" => Ok(MicrophoneMode::Always),
            "auto" => Ok(MicrophoneMode::Auto),
            other => Err(serde::de::Error::unknown_variant(
                other,
                &["on_demand", "always", "auto"],
            )),
        }
    }
}

impl MicrophoneMode {
    /// The name used in the config file, the ready event and `dictum doctor`.
    pub fn as_str(self) -> &'static str {
        match self {
            MicrophoneMode::OnDemand => "on_demand",
            MicrophoneMode::Always => "always",
            MicrophoneMode::Auto => "auto",
        }
    }
}

impl Mode {
    /// The name used in the config file and the ready event.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::PushToTalk => "push_to_talk",
            Mode::Toggle => "toggle",
            Mode::HandsFree => "hands_free",
        }
    }

    /// The name shown to people.
    pub fn describe(self) -> &'static str {
        match self {
            Mode::PushToTalk => "push-to-talk",
            Mode::Toggle => "toggle",
            Mode::HandsFree => "hands-free",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct DictationConfig {
    /// The dictation hotkey, e.g. "ctrl+alt+space", "super+shift+d", "f9".
    pub hotkey: String,
    pub mode: Mode,
    /// Discards the utterance being recorded (or not yet typed); "" = no cancel key. Only
    /// grabbed while a dictation is under way, so it never steals the key from other apps.
    pub cancel_key: String,
    /// Types the last dictation again into the window focused now, through the same gate as
    /// a fresh one (what `dictum ctl retype` does); "" = no such key (the default). Same
    /// syntax as `hotkey`, and not the same key; grabbed on X11 (elsewhere bind `dictum ctl
    /// retype` to a shortcut of the desktop).
    pub retype_hotkey: String,
    /// The style every dictation is written in unless one is picked at the key or by the
    /// app's profile (`[[style]]`, `config/style.rs`); "" = none. The tray menu sets it.
    pub style: String,
    /// Input device name (see `dictum doctor`); "" = the system default.
    pub input_device: String,
    /// When the capture stream is open: "on_demand", "always" or "auto" (see [`MicrophoneMode`]).
    pub microphone: MicrophoneMode,
    /// `microphone = "auto"`: how long the stream stays open after the last dictation.
    pub microphone_keep_s: u32,
    /// Audio kept from just before the key went down, so the first word is never clipped;
    /// only when the microphone was open before the press (see `microphone`).
    pub preroll_ms: u32,
    /// Audio recorded after the key goes up, so the last word is never clipped.
    pub post_roll_ms: u32,
    /// Silence already heard at the release that lets the text be typed before the
    /// post-roll is recorded (0 = always wait for it); speech in the post-roll is then a
    /// dictation of its own.
    pub type_before_post_roll_ms: u32,
    /// Longest utterance; audio after it is not recorded and the user is told.
    pub max_utterance_s: u32,
    /// Transcribe while the key is held, so only the tail is left after the release.
    pub streaming: bool,
    /// Silence that ends a streamed chunk.
    pub pause_ms: u32,
    /// Silence after speech that already starts a speculative pass over what was said
    /// since the last final point, so the release finds it under way (0 = only at
    /// `pause_ms`); speech that resumes stops it.
    pub speculate_after_ms: u32,
    /// A chunk is final (not re-transcribed) once it holds at least this much audio. 6 s:
    /// shorter stretches lose words at their edges (docs/perf/live-wer-corpus.md).
    pub commit_min_ms: u32,
    /// Speech without a pause is cut at its quietest point after this long.
    pub chunk_max_ms: u32,
    /// Utterances that may wait for transcription; one over the cap is stored (audio and
    /// row), not transcribed, and the user is told.
    pub queue_max: u32,
    /// Unload the speech model after this many idle minutes (0 = keep it loaded; fractions
    /// allowed); it is reloaded on the next key press while the pre-roll keeps the first words.
    pub idle_unload_min: f64,
    /// Hands-free: silence after speech that ends a dictation (it is then transcribed and
    /// typed while listening goes on).
    pub hands_free_pause_ms: u32,
    /// Hands-free stops by itself after this many seconds without speech (0 = never).
    pub hands_free_idle_s: u32,
    /// Show the words while you speak: the text transcribed so far goes to the recording
    /// indicator and `dictum run --json`'s `partial` events. Off, nothing is sent; the same
    /// whisper passes run either way (they are what makes the release fast).
    pub live_words: bool,
    /// Pause the media players that are playing (MPRIS) while recording, and play them again
    /// once the text is typed; only those Dictum paused are resumed.
    pub pause_media: bool,
    /// Mute the default output device (PulseAudio / PipeWire) while recording, unless it is
    /// muted already, and unmute it once the text is typed; the alternative to `pause_media`
    /// for sounds no MPRIS player makes (both may be on).
    pub mute_output: bool,
    /// Play a short sound when recording starts and stops, and when a dictation fails.
    pub sound_cues: bool,
    /// Loudness of the sound cues: their peak, from 0.0 (silent) to 1.0 (full scale).
    pub sound_volume: f32,
}

impl Default for DictationConfig {
    fn default() -> Self {
        DictationConfig {
            hotkey: "ctrl+alt+space".into(),
            mode: Mode::PushToTalk,
            cancel_key: "escape".into(),
            retype_hotkey: String::new(),
            style: String::new(),
            input_device: String::new(),
            microphone: MicrophoneMode::Auto,
            microphone_keep_s: 180,
            preroll_ms: 300,
            post_roll_ms: 300,
            type_before_post_roll_ms: 100,
            max_utterance_s: 300,
            streaming: true,
            pause_ms: 250,
            speculate_after_ms: 48,
            commit_min_ms: 6_000,
            chunk_max_ms: 15_000,
            queue_max: 8,
            idle_unload_min: 0.0,
            hands_free_pause_ms: 700,
            hands_free_idle_s: 30,
            live_words: true,
            pause_media: false,
            mute_output: false,
            sound_cues: false,
            sound_volume: 0.3,
        }
    }
}

impl DictationConfig {
    /// `retype_hotkey`: empty, or a key of its own (not `hotkey`, not `cancel_key`).
    fn validate_retype_hotkey(&self) -> Result<(), (&'static str, String)> {
        const KEY: &str = "dictation.retype_hotkey";
        if self.retype_hotkey.trim().is_empty() {
            return Ok(());
        }
        let key = super::hotkey::parse_binding(&self.retype_hotkey).map_err(|e| (KEY, e))?;
        let spec = self.retype_hotkey.trim();
        if super::hotkey::parse_binding(&self.hotkey).is_ok_and(|d| d == key) {
            return Err((
                KEY,
                format!(
                    "`{spec}` is also [dictation] hotkey; pick another key to type the last \
                     dictation again, e.g. \"ctrl+alt+r\", or \"\" for none"
                ),
            ));
        }
        if !self.cancel_key.trim().is_empty()
            && super::hotkey::parse(&self.cancel_key)
                .is_ok_and(|c| super::hotkey::Binding::Key(c) == key)
        {
            return Err((
                KEY,
                format!(
                    "`{spec}` is also [dictation] cancel_key; pick another key, or \"\" for none"
                ),
            ));
        }
        Ok(())
    }

    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if let Err(e) = super::hotkey::parse_binding(&self.hotkey) {
            return Err(("dictation.hotkey", e));
        }
        if !self.cancel_key.trim().is_empty() {
            if let Err(e) = super::hotkey::parse(&self.cancel_key) {
                return Err(("dictation.cancel_key", e));
            }
        }
        self.validate_retype_hotkey()?;
        // Ranges documented in config::DEFAULT_TOML. max_utterance_s bounds the audio buffer
        // (1 h of 16 kHz audio is 230 MB); queue_max bounds the utterances held in memory.
        super::ranges::check_ranges(&[
            (
                "dictation.microphone_keep_s",
                self.microphone_keep_s.into(),
                1,
                86_400,
                " s",
            ),
            (
                "dictation.preroll_ms",
                self.preroll_ms.into(),
                0,
                5000,
                " ms",
            ),
            (
                "dictation.post_roll_ms",
                self.post_roll_ms.into(),
                0,
                5000,
                " ms",
            ),
            (
                "dictation.type_before_post_roll_ms",
                self.type_before_post_roll_ms.into(),
                0,
                5000,
                " ms",
            ),
            (
                "dictation.max_utterance_s",
                self.max_utterance_s.into(),
                1,
                3600,
                " s",
            ),
            ("dictation.pause_ms", self.pause_ms.into(), 100, 5000, " ms"),
            (
                "dictation.speculate_after_ms",
                self.speculate_after_ms.into(),
                0,
                5000,
                " ms",
            ),
            ("dictation.queue_max", self.queue_max.into(), 1, 64, ""),
            (
                "dictation.hands_free_pause_ms",
                self.hands_free_pause_ms.into(),
                200,
                10_000,
                " ms",
            ),
            (
                "dictation.hands_free_idle_s",
                self.hands_free_idle_s.into(),
                0,
                86_400,
                " s",
            ),
        ])?;
        if self.chunk_max_ms < 5000 || self.chunk_max_ms > 28_000 {
            return Err((
                "dictation.chunk_max_ms",
                "must be between 5000 and 28000 (whisper sees at most 30 s at once)".into(),
            ));
        }
        if self.commit_min_ms > self.chunk_max_ms {
            return Err((
                "dictation.commit_min_ms",
                "must not exceed dictation.chunk_max_ms".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.sound_volume) {
            return Err((
                "dictation.sound_volume",
                "must be between 0.0 (silent) and 1.0 (full scale)".into(),
            ));
        }
        if !(0.0..=10_000.0).contains(&self.idle_unload_min) {
            return Err((
                "dictation.idle_unload_min",
                "must be between 0 (never) and 10000 minutes".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Doc {
        dictation: DictationConfig,
    }

    fn parse(text: &str) -> Result<DictationConfig, String> {
        toml::from_str::<Doc>(text)
            .map(|d| d.dictation)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn hands_free_mode_takes_both_spellings_and_its_keys_are_checked() {
        for name in ["hands-free", "hands_free"] {
            let d = parse(&format!("[dictation]\nmode = \"{name}\"\n")).expect("parsed");
            assert_eq!(d.mode, Mode::HandsFree);
            assert_eq!(d.hands_free_pause_ms, 700);
            assert_eq!(d.hands_free_idle_s, 30);
            assert!(d.validate().is_ok());
        }
        let err = parse("[dictation]\nmode = \"handsfree\"\n").expect_err("refused");
        assert!(err.contains("hands_free"), "{err}");
        let d = parse("[dictation]\nhands_free_pause_ms = 100\n").expect("parsed");
        assert_eq!(
            d.validate().map_err(|e| e.0),
            Err("dictation.hands_free_pause_ms")
        );
        let d = parse("[dictation]\nhands_free_idle_s = 0\n").expect("parsed");
        assert!(d.validate().is_ok(), "0 = never");
        let d = parse("[dictation]\nhands_free_idle_s = 100000\n").expect("parsed");
        assert_eq!(
            d.validate().map_err(|e| e.0),
            Err("dictation.hands_free_idle_s")
        );
        assert_eq!(Mode::HandsFree.as_str(), "hands_free");
    }

    #[test]
    fn microphone_is_auto_unless_asked_and_an_unknown_value_names_the_choices() {
        let d = parse("[dictation]\n").expect("parsed");
        assert_eq!(d.microphone, MicrophoneMode::Auto);
        assert_eq!(d.microphone_keep_s, 180);
        for (name, want) in [
            ("on_demand", MicrophoneMode::OnDemand),
            ("on-demand", MicrophoneMode::OnDemand),
            ("always", MicrophoneMode::Always),
            ("auto", MicrophoneMode::Auto),
        ] {
            let d = parse(&format!("[dictation]\nmicrophone = \"{name}\"\n")).expect("parsed");
            assert_eq!(d.microphone, want);
            assert!(d.validate().is_ok());
        }
        let err = parse("[dictation]\nmicrophone = \"sometimes\"\n").expect_err("refused");
        assert!(
            err.contains("sometimes") && err.contains("on_demand") && err.contains("always"),
            "{err}"
        );
        let d = parse("[dictation]\nmicrophone_keep_s = 0\n").expect("parsed");
        assert_eq!(
            d.validate().map_err(|e| e.0),
            Err("dictation.microphone_keep_s")
        );
    }

    #[test]
    fn pause_media_is_off_unless_asked_and_takes_only_a_boolean() {
        assert!(!parse("[dictation]\n").expect("parsed").pause_media);
        let d = parse("[dictation]\npause_media = true\n").expect("parsed");
        assert!(d.pause_media && d.validate().is_ok());
        let err = parse("[dictation]\npause_media = \"yes\"\n").expect_err("refused");
        assert!(err.contains("pause_media"), "{err}");
    }

    #[test]
    fn mute_output_is_off_unless_asked_and_leaves_pause_media_alone() {
        let d = parse("[dictation]\n").expect("parsed");
        assert!(!d.mute_output && !d.pause_media);
        let d = parse("[dictation]\nmute_output = true\n").expect("parsed");
        assert!(d.mute_output && !d.pause_media && d.validate().is_ok());
        let d = parse("[dictation]\npause_media = true\nmute_output = true\n").expect("parsed");
        assert!(d.mute_output && d.pause_media && d.validate().is_ok());
        let err = parse("[dictation]\nmute_output = \"yes\"\n").expect_err("refused");
        assert!(err.contains("mute_output"), "{err}");
    }

    #[test]
    fn sound_cues_are_off_unless_asked_and_the_volume_is_checked() {
        let d = parse("[dictation]\n").expect("parsed");
        assert!(!d.sound_cues && d.sound_volume == 0.3 && d.validate().is_ok());
        let d = parse("[dictation]\nsound_cues = true\nsound_volume = 1.0\n").expect("parsed");
        assert!(d.sound_cues && d.validate().is_ok());
        for bad in ["1.5", "-0.1", "nan", "inf"] {
            let d = parse(&format!("[dictation]\nsound_volume = {bad}\n")).expect("parsed");
            let (key, why) = d.validate().expect_err("refused");
            assert_eq!(key, "dictation.sound_volume", "{bad}");
            assert!(why.contains("between 0.0"), "{why}");
        }
        let err = parse("[dictation]\nsound_cues = \"yes\"\n").expect_err("refused");
        assert!(err.contains("sound_cues"), "{err}");
    }
}
