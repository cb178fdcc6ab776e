//! The one TOML config file. Every key has a documented default (`DEFAULT_TOML`, printed by
//! `dictum config --print-default`); a test keeps that text and `Config::default()` identical.
//! An invalid file is reported with line and column and never overwritten; unknown keys are
//! returned as warnings so a typo does not silently do nothing.
//!
//! Each section is a leaf module here (`stt.rs`, `llm.rs`, `dictation.rs`, …) that imports
//! nothing from the layers above `config` (docs/ARCHITECTURE.md, "Module graph"; measured by
//! `scripts/module-graph`); the feature modules' `config` paths re-export them.

pub mod commands;
pub mod context;
pub mod dictation;
pub mod edit;
pub mod history;
pub mod hotkey;
pub mod inject;
pub mod llm;
pub mod models;
pub mod profile;
pub(crate) mod ranges;
pub mod snippets;
pub mod stt;
pub mod style;
pub mod vad;

pub use history::HistoryConfig;
pub use models::ModelsConfig;
pub(crate) use ranges::check_ranges;
pub use stt::{AudioCtxMode, SttBackend, SttConfig, SttTask, SttUpload};
pub use vad::VadConfig;

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, TS)]
#[serde(default)]
#[ts(export)]
pub struct Config {
    pub stt: SttConfig,
    pub vad: VadConfig,
    pub history: HistoryConfig,
    pub llm: llm::LlmConfig,
    pub dictation: dictation::DictationConfig,
    pub inject: inject::InjectConfig,
    pub models: ModelsConfig,
    pub commands: commands::CommandsConfig,
    /// Edit mode (`[edit]`): the selection rewritten by the LLM on a spoken instruction.
    pub edit: edit::EditConfig,
    /// The text around the cursor (`[context]`): read to fit the words in, and LLM context.
    pub context: context::ContextConfig,
    /// Per-app profiles (`[[profile]]` tables), first match wins (`profile.rs`).
    #[serde(rename = "profile")]
    pub profiles: Vec<profile::ProfileConfig>,
    /// `[[style]]` tables: how one dictation is written, picked at the key (`style.rs`);
    /// none = the built-in styles.
    #[serde(rename = "style")]
    pub styles: Vec<style::StyleConfig>,
    /// `[[snippet]]` tables: a phrase said, a text typed (`snippets.rs`).
    #[serde(rename = "snippet")]
    pub snippets: Vec<snippets::SnippetConfig>,
    /// `[[replace]]` tables: words whisper writes, always written another way.
    #[serde(rename = "replace")]
    pub replacements: Vec<snippets::ReplaceConfig>,
}

/// The default config, documented. `dictum config --print-default` prints exactly this.
pub const DEFAULT_TOML: &str = r#"# Dictum configuration. Every key is optional; shown here with its default.

[stt]
# Catalog name (e.g. "tiny.en-q8_0", "base-q8_0") looked up in the models folder,
# or a path to a whisper.cpp ggml model file.
model = "tiny.en-q8_0"
# Spoken language as a two-letter code ("en", "de", ...) or "auto" to detect it.
language = "en"
# "transcribe" (text in the language spoken) or "translate" (English text from speech in
# another language). Translating needs a multilingual model (e.g. "base-q8_0", not a ".en"
# one); with it, language = "en" means "detect the language spoken".
task = "transcribe"
# CPU threads for whisper (0-64); 0 = number of cores (at most 8).
threads = 0
# Fewer threads for a pass while other programs keep cores busy (a local LLM, a build):
# whisper's threads wait for each other by spinning, so one on a busy core stalls them all.
adapt_threads = true
# Encoder window: "auto" sizes it to the utterance (much faster for short dictations) up
# to 15 s, and encodes 30 s past that; "full" always encodes 30 s like stock whisper.
audio_ctx = "auto"
# Extra encoder frames (20 ms each, 0-1500) on top of the utterance when audio_ctx = "auto".
audio_ctx_margin = 64
# Smallest auto-sized window in frames (0-1500; 384 = 7.68 s); smaller windows make whisper
# repeat itself or drop words on short clips (measured: docs/PERFORMANCE.md).
audio_ctx_min = 384
# Use the GPU when this binary was built with the `cuda` feature.
use_gpu = true
# Words and names whisper should spell your way, e.g. ["Kubernetes", "Dictum"].
vocabulary = []
# Longest audio file `dictum transcribe` accepts, in seconds (1-86400; 14400 = 4 h).
# Checked from the file's header before anything is decoded.
max_file_s = 14400
# Where speech is transcribed: "local" (whisper.cpp on this machine: nothing leaves it) or
# "openai" (a shared server speaking POST /v1/audio/transcriptions: whisper.cpp's
# whisper-server, speaches, vLLM, LocalAI, Groq, OpenAI). With "openai" the trimmed audio of
# each utterance, the vocabulary and the language are sent to the server (docs/REMOTE.md).
backend = "local"
# The speech server's base URL ("openai" backend); requests go to <url>/v1/audio/transcriptions.
# https is required unless the server is on this machine or allow_insecure = true.
url = "http://127.0.0.1:8080"
# The model name as the server knows it (whisper-server ignores it; OpenAI: "whisper-1").
remote_model = "whisper-1"
# How the utterance is sent: "flac" (lossless, about half the bytes of WAV on speech),
# "wav" (16 kHz mono 16-bit), or "auto" = FLAC, and WAV for a server that refuses FLAC
# (that utterance is sent again as WAV at once; remembered per server while Dictum runs).
upload = "auto"
# Name of the environment variable holding the server's API key (sent as "Authorization:
# Bearer ..."); empty = the desktop keyring's entry (`dictum key set stt`), or no key.
# Never the key itself: the key is never written here, logged or stored in history.
api_key_env = ""
# Whole-request timeout for the server in ms (100-600000); past it the utterance is
# transcribed locally.
timeout_ms = 8000
# Allow plain http to a server that is not on this machine (audio crosses the network
# unencrypted).
allow_insecure = false
# Transcribe locally (the stt.model above, loaded on demand) when the server is down, slow,
# refuses or answers garbage; the history row says so. false = such a dictation fails.
fallback = true
# After a failure, dictations go straight to the local model for this long (ms, 0-3600000)
# before the server is tried again.
retry_after_ms = 15000

[vad]
# Voice probability (0-1) above which a 16 ms frame counts as speech.
threshold = 0.5
# An utterance with less speech than this (ms, 0-10000) is "no speech": nothing is typed.
min_speech_ms = 200
# Audio kept before the first and after the last speech frame, in ms (0-5000).
pad_ms = 250

[history]
# Keep a WAV copy of each utterance (off: only the text and timings are stored).
keep_audio = false
# Delete history entries older than this many days (0-36500); 0 keeps everything.
retention_days = 0

[llm]
# Clean up each dictation with a local LLM: punctuation, capitalization, fillers removed.
# A guard keeps the raw transcript whenever the output is not a faithful cleanup.
enabled = false
# "ollama" (native API: /api/chat, /api/ps) or "openai" (any /v1/chat/completions server:
# llama-server, LM Studio, vLLM, Ollama's /v1).
backend = "ollama"
# Server base URL. Local by default: nothing leaves the machine.
url = "http://127.0.0.1:11434"
# Model name as the server knows it.
model = "llama3.2:3b"
# Name of the environment variable holding the server's API key (sent as "Authorization:
# Bearer ..."), e.g. "OPENAI_API_KEY"; empty = none. Never put the key (or user:password@)
# in the URL: such URLs are refused.
api_key_env = ""
# Ollama only: "chat" (/api/chat) or "generate" (/api/generate).
ollama_endpoint = "chat"
# Whole-request timeout in ms (1-600000); on expiry the raw transcript is typed.
timeout_ms = 10000
# Context window the model is loaded with (tokens, 1-1048576). The warm-up and every request
# send this same value: Ollama reloads the whole model when it differs from what is loaded.
num_ctx = 2048
# How long Ollama keeps the model loaded after a request: a duration up to 7 days ("90s",
# "30m", "1h30m", or plain seconds "600"), "0" to unload at once, or "-1" = forever.
keep_alive = "30m"
# Sampling temperature (0-2) and nucleus top_p (above 0, at most 1).
temperature = 0.0
top_p = 0.9
# Sampling seed (0-4294967295); -1 lets the server choose.
seed = 42
# Most tokens to generate (0-131072); 0 = automatic (2 x the input's estimated tokens + 16).
num_predict = 0
# A request (after warm-up) whose model load takes longer than this (ms, 0-600000) is
# flagged llm_reloaded in history, with a warning naming the likely cause.
reload_threshold_ms = 500
# System prompt; empty = the built-in cleanup prompt. {vocabulary} becomes a line listing
# stt.vocabulary (also fed to whisper).
system_prompt = ""
# The user message; {text} is the transcript.
user_template = "{text}"
# Show the model one built-in example (raw transcript and its cleanup) first.
examples = true

[dictation]
# The dictation hotkey (`dictum run`, tray app): modifiers ctrl, alt, shift, super joined
# with "+" to one key, e.g. "ctrl+alt+space", "super+shift+d", "f9". A lone modifier
# cannot be grabbed. Changes apply without a restart.
hotkey = "ctrl+alt+space"
# "push_to_talk": hold the key while speaking. "toggle": press to start, press to stop.
# "hands_free" (or "hands-free"): press to start listening, press again to stop; each pause
# of hands_free_pause_ms after speech ends one dictation, typed while listening goes on.
# Whatever the mode, the tray menu and `dictum ctl hands-free on|off|toggle` start and stop
# hands-free listening.
mode = "push_to_talk"
# Discards the dictation under way; only grabbed while one is. "" = no cancel key.
cancel_key = "escape"
# Types the last dictation again into the window focused now, through the same checks as a
# fresh one (typing budget, terminals, cancel key): what `dictum ctl retype` does. Same
# syntax as hotkey, e.g. "ctrl+alt+r"; grabbed on X11 (on Wayland bind `dictum ctl retype`
# to a shortcut of your desktop). "" = no key (the default).
retype_hotkey = ""
# The style every dictation is written in unless one is picked at the key or by the app's
# profile (see [[style]] below; the tray menu sets it). "" = none: as [llm] says.
style = ""
# Input device name as listed by `dictum doctor`; "" = the system default.
input_device = ""
# When the microphone is open (the desktop shows "microphone in use" while it is, and a
# Bluetooth headset stays in its call profile): "on_demand" = only while dictating (the
# press opens it, the end of the dictation closes it); "always" = from start to quit;
# "auto" = while dictating and microphone_keep_s after the last dictation, so a burst of
# dictations keeps the pre-roll (on a Bluetooth microphone closed right after each one).
# Hands-free listening keeps it open while it listens.
microphone = "auto"
# microphone = "auto": seconds the microphone stays open after the last dictation (1-86400).
microphone_keep_s = 180
# Audio kept from just before the key press (the first word is never clipped), in ms
# (0-5000). It needs the microphone open before the press: with microphone = "on_demand"
# (or "auto" once it closed) the recording starts at the press, from the first buffer.
preroll_ms = 300
# Audio recorded after the release (the last word is never clipped), in ms (0-5000).
# The silence already heard before the release counts toward it.
post_roll_ms = 300
# When the voice had already been silent this long at the release (ms, 0-5000; 0 = never),
# the text is typed as soon as it is transcribed, without waiting for the post-roll: the
# last word is over. The post-roll is still recorded, and speech in it becomes a dictation of
# its own, typed right after.
type_before_post_roll_ms = 100
# Longest utterance in seconds (1-3600); you are told when it is reached.
max_utterance_s = 300
# Transcribe while the key is held, so only the tail is left after the release.
streaming = true
# A pause (ms of silence, 100-5000) while the key is held starts transcribing what was said
# so far.
pause_ms = 250
# A shorter silence (ms, 0-5000; 0 = only at pause_ms) already starts transcribing what was
# said since the last final point, so the text is ready sooner when you let go right after
# your last word; speech that goes on stops that pass.
speculate_after_ms = 48
# What was said so far becomes final (never transcribed again) at a pause once it holds this
# much audio (ms, 0 to chunk_max_ms); shorter stretches are re-transcribed whole at the next
# pause. Smaller stretches leave less work for the release (a pass costs about in proportion
# to its audio, at least 7.7 s of it), but whisper hears less around their first and last
# words and more of their text rests on the prompt: at 3000 the live words had 1.2 points
# more errors than one pass over the same speech, at 6000 0.2 (docs/perf/live-wer-corpus.md).
commit_min_ms = 6000
# Speech without a pause is cut at its quietest point after this long (ms, 5000-28000;
# whisper sees at most 30 s at once).
chunk_max_ms = 15000
# Utterances that may wait for transcription (1-64); one over the cap is stored (row and
# audio), not dropped, and you are told.
queue_max = 8
# Unload the speech model after this many idle minutes (0-10000; 0 = never); it reloads on
# the next key press while the pre-roll keeps your first words.
idle_unload_min = 0.0
# Hands-free: ms of silence after speech that end a dictation (200-10000). Shorter cuts
# sentences at a breath; longer waits before typing.
hands_free_pause_ms = 700
# Hands-free stops by itself after this many seconds without speech (0-86400; 0 = never).
hands_free_idle_s = 30
# Show the words while you speak: the recording indicator shows the text transcribed so far
# (and `dictum run --json` prints `partial` events). Off, the indicator only says that it is
# listening. Whisper does the same work either way.
live_words = true
# Pause the media players that are playing (music, videos: any MPRIS player on the session
# bus) while you dictate, and play them again once the text is typed. Only the players Dictum
# paused are resumed, and only if they are still paused; if Dictum is killed meanwhile, they
# are resumed at its next start.
pause_media = false
# Or (or also) mute the default output device (PulseAudio / PipeWire) while you dictate:
# every sound, MPRIS player or not, Dictum's own sound cues included. Muted at the press
# unless it is muted already (then it stays muted), unmuted once the text is typed (or the
# dictation is cancelled or fails). If Dictum is killed meanwhile, the next start unmutes it;
# a Dictum that hangs unmutes it after 30 s.
mute_output = false
# Play a short sound when recording starts (at the press) and stops (once the microphone is
# closed after the release), and a low double sound when a dictation fails (hearing no
# speech is not a failure). Generated tones, on the default output device.
sound_cues = false
# Loudness of the sound cues (0.0-1.0, their peak).
sound_volume = 0.3

[inject]
# How the text reaches the focused window: "type" (simulated key presses; leaves the
# clipboard alone) or "paste" (clipboard + Ctrl+V, Ctrl+Shift+V in terminals; the previous
# clipboard text is restored afterwards). If either fails, the text is left on the clipboard
# and a desktop notification says so.
method = "type"
# Which path delivers the keys: "auto" picks by session and focused window (X11 sessions and
# XWayland windows: XTest; native Wayland windows: the virtual-keyboard protocol on
# wlroots compositors, the RemoteDesktop portal on GNOME and KDE, then wtype, uinput, ydotool).
# Force one with "x11", "virtual-keyboard", "portal", "wtype", "uinput" or "ydotool".
backend = "auto"
# Window classes (WM_CLASS instance or class, or Wayland app_id; any case) that paste with
# Ctrl+Shift+V.
terminal_classes = ["XTerm", "UXTerm", "URxvt", "Alacritty", "kitty", "Gnome-terminal", "org.gnome.Terminal", "Konsole", "xfce4-terminal", "Tilix", "terminator", "foot", "Wezterm", "org.wezfurlong.wezterm", "st-256color", "Terminology", "Guake", "Ptyxis", "com.mitchellh.ghostty"]
# Paste mode on Wayland: ms to wait after Ctrl+V before restoring the previous clipboard; the
# target fetches the text asynchronously, and restoring too early pastes the old text. (X11
# sees the fetch and restores right after it.)
paste_restore_delay_ms = 250
# Append a space so consecutive dictations do not run together.
trailing_space = true
# Wait up to this many ms for the hotkey's Ctrl/Alt/Shift/Super to be released before
# typing (held modifiers would turn letters into shortcuts); still held after that, Dictum
# releases them itself.
modifier_release_timeout_ms = 300
# Desktop notification when the text could not be typed (it is then on the clipboard).
notify_on_failure = true
# A dictation whose text is longer than 200 + this many characters per second of audio is
# stored but not typed (a speech server or LLM gone wild cannot type for minutes); fast
# speech is about 20 characters a second.
max_chars_per_second = 40

[models]
# Where model downloads come from: the models' public home (default), a mirror, or a local
# folder ("/path" or "file:///path") holding the ggml-*.bin files. Downloads are checked
# (SHA-256 where known) before they are used.
base_url = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/"

[commands]
# Spoken commands act instead of being typed, said alone or at the end of a dictation
# ("...the report new line"), never in the middle ("a new line of products" stays text):
# "new line", "new paragraph", "press enter", "tab" and "undo" (alone only; "press tab" and
# "undo that" also at the end), "scratch that" / "delete that" (alone: removes the previous
# dictation if Dictum typed it into the same window and nothing was typed since; at the
# end: this dictation is not typed), "stop dictation" (ends hands-free listening).
enabled = true
# "comma", "period", "question mark", "exclamation mark", "colon", "semicolon" become marks.
punctuation = false
# Built-in commands to turn off, by name, e.g. ["undo", "tab"].
disabled = []
# Your own commands, pressing keys (chords separated by spaces), e.g.
# custom = [{ phrase = "save the file", keys = "ctrl+s" }]
custom = []

[edit]
# Edit mode: select text, hold the edit hotkey, say what to do with it ("make this more
# formal", "turn this into a bullet list"), let go: the selection and your words go to the
# LLM of the [llm] section (its backend, url, model and key; [llm] enabled must be on) and
# its answer is typed over the selection. The answer may change the meaning (that is the
# point): no cleanup guard. Nothing is typed when the focus moved since the press, in a
# terminal, or with no selection, no words heard or no answer. The original selection is
# kept in history and, below, on the clipboard; Ctrl+Z in the app restores it.
enabled = false
# The edit hotkey; same syntax as [dictation] hotkey, and not the same key.
hotkey = "ctrl+alt+e"
# System prompt of an edit; empty = the built-in one. The selection and the instruction are
# sent as the user message.
prompt = ""
# Whole-request timeout of an edit in ms (1-600000); past it nothing is typed.
timeout_ms = 30000
# Longest selection sent (characters, 1-100000); a longer one is refused.
max_selection_chars = 8000
# Put the original selection on the clipboard before replacing it (a clipboard manager keeps
# it in its history; Ctrl+V pastes it back).
keep_on_clipboard = true
# Type the answer's line breaks as Return (a bullet list stays a list). In a one-line field
# Return may submit a form: false types them as spaces.
type_newlines = true
[context]
# The text around the cursor, read through accessibility (AT-SPI) where the focused app
# exposes it (GTK apps do; Qt and Chromium/Electron apps when accessibility is on; terminals
# never): the words are fitted in (no capital mid-sentence, one space each side, no final
# period when the sentence goes on). Never read from a password field or an app below;
# nothing of it is stored or logged. Where it cannot be read, the words are typed as heard.
around_cursor = true
# Apps whose text is never read (window class, app id, program name or Flatpak id; a name
# without a dot also matches a part of one: "keepassxc" matches org.keepassxc.KeePassXC).
opt_out = ["keepassxc", "org.keepassxc.KeePassXC", "keepass", "keepass2", "keepassx", "1password", "bitwarden", "com.bitwarden.desktop", "enpass", "seahorse", "org.gnome.seahorse.Application", "gcr-prompter", "gnome-keyring", "kwalletmanager5", "org.kde.kwalletmanager5", "org.gnome.World.Secrets", "gnome-secrets", "keeweb", "proton-pass", "pinentry"]
# Give the LLM cleanup the app's class, the window title and the text before the cursor
# (marked as data, never as instructions) when the [llm] server is on this machine.
llm = true
# ... and when it is on another machine too (the text then leaves this machine).
llm_remote = false
# How long one read may take, in ms (10-2000); past it the words are typed as heard.
budget_ms = 150
# Qt and Chromium/Electron apps expose their text only when the desktop's accessibility
# switch is on (GTK apps always do). true: Dictum turns it on while it runs (apps started
# afterwards expose their text; it may make Chromium a little slower), and off again when
# you set this back to false, if Dictum turned it on.
switch_on_accessibility = false

# Per-app profiles: the window focused at the key press picks the first [[profile]] whose
# match_class (window class / Wayland app id) and/or match_title (window title) regular
# expressions match, in any case; both given = both must match. Its overrides apply to that
# dictation only; every override is optional. No match, or an app that cannot be known:
# the built-in "default" profile (the settings above).
# [[profile]]
# name = "terminal"
# match_class = "^(xterm|uxterm|foot|kitty|alacritty|konsole|gnome-terminal.*)$"
# inject_method = "paste"      # "type" or "paste"
# llm = false                  # LLM cleanup on/off
# llm_prompt = ""              # the LLM's system prompt ({vocabulary} works)
# vocabulary = ["kubectl"]     # replaces stt.vocabulary
# language = "en"              # replaces stt.language
# task = "translate"           # replaces stt.task (English text; multilingual models only)
# commands = false             # voice commands on/off
# trailing_period = false      # false: one final "." is dropped
# terminal = false             # (match_class only) this app is no terminal: a way out when
#                              # its process holds a pseudo-terminal (key commands then act
#                              # at the end of text; snippet line breaks are Returns)
# Styles: how one dictation is written, picked at the press by a modifier held with the
# hotkey, by a key of their own, by `dictum ctl press --style NAME` (Wayland: bind it to a
# shortcut), per app by a profile's `style = "NAME"`, or for all by [dictation] style.
# Without [[style]] tables the built-in ones are there: "spoken" (no LLM), "clean" (the
# configured prompt), "formal", "chat" and "commit" (no final period); tables replace them.
# [[style]]
# name = "chat"
# prompt = ""                  # the LLM's system prompt ({vocabulary} works); "" = [llm]'s
# llm = true                   # LLM cleanup on/off
# trailing_period = false      # false: one final "." is dropped
# model = ""                   # another model of the same LLM server
# modifier = "shift"           # held with the hotkey: shift+ctrl+alt+space (X11 grab)
# hotkey = ""                  # a key of its own, held like the hotkey (X11 grab)
# Replacements: words whisper writes (whole words, any case) always written another way,
# e.g. a name it keeps getting wrong; to = "" removes the words.
# [[replace]]
# from = "cooper netties"
# to = "Kubernetes"
# Snippets: a phrase said alone or inside a sentence (whole words, any case) is replaced by
# its text. Replacements run first, then snippets, before voice commands and the LLM.
# Newlines stay in `dictum transcribe`'s text and become spaces in a typed dictation.
# [[snippet]]
# phrase = "my address"
# text = "12 Main Street\nSpringfield"
"#;

/// A loaded config plus what the loader noticed.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Where it came from; `None` when no file exists and defaults are used.
    pub path: Option<PathBuf>,
    /// Human-readable warnings (unknown keys), one per line.
    pub warnings: Vec<String>,
}

impl Config {
    /// Parses TOML text. Unknown keys are collected as warnings instead of failing.
    pub fn parse(text: &str, path: &Path) -> Result<(Config, Vec<String>)> {
        let mut unknown = Vec::new();
        let de = toml::de::Deserializer::parse(text).map_err(|e| syntax_error(text, path, &e))?;
        let config: Config = serde_ignored::deserialize(de, |p| unknown.push(p.to_string()))
            .map_err(|e| syntax_error(text, path, &e))?;
        config.validate()?;
        let warnings = unknown
            .into_iter()
            .map(|k| format!("{}: unknown key `{k}` ignored", path.display()))
            .collect();
        Ok((config, warnings))
    }

    /// Loads the config file at `path`; a missing file means defaults (the file is not created).
    pub fn load_from(path: &Path) -> Result<Loaded> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let (config, warnings) = Config::parse(&text, path)?;
                Ok(Loaded {
                    config,
                    path: Some(path.to_path_buf()),
                    warnings,
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Loaded {
                config: Config::default(),
                path: None,
                warnings: Vec::new(),
            }),
            Err(e) => Err(Error::ConfigIo {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }),
        }
    }

    /// Loads from `$DICTUM_CONFIG` or the XDG config dir.
    pub fn load() -> Result<Loaded> {
        Config::load_from(&crate::paths::config_file()?)
    }

    fn validate(&self) -> Result<()> {
        let bad = |key: &str, reason: &str| {
            Err(Error::ConfigValue {
                key: key.into(),
                reason: reason.into(),
            })
        };
        if !(0.0..=1.0).contains(&self.vad.threshold) {
            return bad("vad.threshold", "must be between 0 and 1");
        }
        // Every number has a range (documented in DEFAULT_TOML): values past it would
        // allocate absurdly, spin up absurd thread counts, or mean nothing to whisper.
        let s = &self.stt;
        let ranges: [(&str, u64, u64, u64, &str); 7] = [
            (
                "stt.threads",
                s.threads.into(),
                0,
                64,
                " (0 = the number of cores, at most 8)",
            ),
            (
                "stt.audio_ctx_margin",
                s.audio_ctx_margin.into(),
                0,
                1500,
                " frames (1500 = 30 s)",
            ),
            (
                "stt.audio_ctx_min",
                s.audio_ctx_min.into(),
                0,
                1500,
                " frames (1500 = 30 s)",
            ),
            (
                "stt.max_file_s",
                s.max_file_s.into(),
                1,
                86_400,
                " seconds (86400 = 24 h)",
            ),
            (
                "vad.min_speech_ms",
                self.vad.min_speech_ms.into(),
                0,
                10_000,
                " ms",
            ),
            ("vad.pad_ms", self.vad.pad_ms.into(), 0, 5_000, " ms"),
            (
                "history.retention_days",
                self.history.retention_days.into(),
                0,
                36_500,
                " days (0 = keep everything)",
            ),
        ];
        if let Err((key, reason)) = check_ranges(&ranges) {
            return bad(key, &reason);
        }
        if self.stt.model.trim().is_empty() {
            return bad("stt.model", "must name a model or a file");
        }
        if let Err((key, reason)) = stt::validate(&self.stt) {
            return bad(key, &reason);
        }
        if let Err((key, reason)) = self.dictation.validate() {
            return bad(key, &reason);
        }
        if let Err((key, reason)) = self.inject.validate() {
            return bad(key, &reason);
        }
        if let Err((key, reason)) = self.llm.validate() {
            return bad(key, &reason);
        }
        if let Err((key, reason)) = self.commands.validate() {
            return bad(key, &reason);
        }
        if let Err((key, reason)) = self.context.validate() {
            return bad(key, &reason);
        }
        if let Err((key, reason)) = self
            .edit
            .validate(&self.dictation.hotkey, &self.dictation.cancel_key)
        {
            return bad(key, &reason);
        }
        if self.edit.enabled
            && !self.dictation.retype_hotkey.trim().is_empty()
            && hotkey::parse_binding(&self.dictation.retype_hotkey).ok()
                == hotkey::parse_binding(&self.edit.hotkey).ok()
        {
            return bad(
                "dictation.retype_hotkey",
                &format!(
                    "`{}` is also [edit] hotkey; pick another key to type the last dictation \
                     again, or \"\" for none",
                    self.dictation.retype_hotkey.trim()
                ),
            );
        }
        if let Err((key, reason)) = profile::compile_patterns(&self.profiles) {
            return bad(&key, &reason);
        }
        let d = &self.dictation;
        let mut taken = vec![
            ("dictation.hotkey", d.hotkey.as_str()),
            ("dictation.cancel_key", d.cancel_key.as_str()),
            ("dictation.retype_hotkey", d.retype_hotkey.as_str()),
        ];
        if self.edit.enabled {
            taken.push(("edit.hotkey", self.edit.hotkey.as_str()));
        }
        if let Err((key, reason)) = style::validate(&self.styles, &d.hotkey, &taken) {
            return bad(&key, &reason);
        }
        if let Err(reason) = style::check_named(&self.styles, &d.style) {
            return bad("dictation.style", &reason);
        }
        for p in &self.profiles {
            if let Err(reason) = style::check_named(&self.styles, p.style.as_deref().unwrap_or(""))
            {
                return bad(&format!("profile \"{}\".style", p.name.trim()), &reason);
            }
        }
        for p in &self.profiles {
            if let Some(task) = p.task {
                if let Err(reason) = stt::check_task(&self.stt, task) {
                    return bad(&format!("profile \"{}\".task", p.name.trim()), &reason);
                }
            }
        }
        if let Err((key, reason)) = snippets::validate(&self.snippets, &self.replacements) {
            return bad(&key, &reason);
        }
        if let Err(reason) = models::check_base_url(&self.models.base_url) {
            return bad("models.base_url", &reason);
        }
        let lang = self.stt.language.as_str();
        if lang != "auto" && whisper_rs::get_lang_id(lang).is_none() {
            return bad(
                "stt.language",
                "unknown language code; use a two-letter code like \"en\" or \"auto\"",
            );
        }
        Ok(())
    }

    pub fn threads(&self) -> u32 {
        if self.stt.threads > 0 {
            return self.stt.threads;
        }
        std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(2)
            .min(8)
    }
}

impl Config {
    /// Checks the values (what `parse` checks after reading a file).
    pub fn check(&self) -> Result<()> {
        self.validate()
    }

    /// Writes the whole config to `path` atomically (temp file + rename), documented like
    /// `DEFAULT_TOML` with the current values. An existing file that does not parse is left
    /// alone (error), as everywhere else; comments of your own in the file are not kept.
    pub fn save_to(&self, path: &Path) -> Result<()> {
        self.validate()?;
        let io = |e: std::io::Error| Error::ConfigIo {
            path: path.to_path_buf(),
            reason: format!("{e}; check the folder is writable"),
        };
        if let Ok(existing) = std::fs::read_to_string(path) {
            Config::parse(&existing, path)?;
        }
        let text = render_documented(self)?;
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::paths::create_private_dir_all(dir).map_err(io)?;
        }
        // 0600: the file names the LLM server and may one day hold more.
        let tmp = path.with_extension("toml.tmp");
        crate::paths::write_private(&tmp, text.as_bytes()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

/// `DEFAULT_TOML` with every value replaced by `config`'s: the same documentation, the current
/// settings. Falls back to plain TOML if a key is ever missing from the documented text.
pub fn render_documented(config: &Config) -> Result<String> {
    let value = toml::Value::try_from(config).map_err(|e| Error::ConfigValue {
        key: "(all)".into(),
        reason: e.to_string(),
    })?;
    let mut out = String::with_capacity(DEFAULT_TOML.len() + 256);
    let mut section: Option<&toml::Value> = None;
    for line in DEFAULT_TOML.lines() {
        let trimmed = line.trim();
        if let Some(name) = trimmed.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            section = value.get(name);
        } else if !trimmed.starts_with('#') {
            if let Some((key, _)) = trimmed.split_once(" = ") {
                if let Some(v) = section.and_then(|t| t.get(key)) {
                    out.push_str(&format!("{key} = {}\n", inline_value(v)));
                    continue;
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    if !config.profiles.is_empty()
        || !config.styles.is_empty()
        || !config.snippets.is_empty()
        || !config.replacements.is_empty()
    {
        #[derive(Serialize)]
        struct Tables<'a> {
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            profile: &'a [profile::ProfileConfig],
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            style: &'a [style::StyleConfig],
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            replace: &'a [snippets::ReplaceConfig],
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            snippet: &'a [snippets::SnippetConfig],
        }
        let tables = toml::to_string(&Tables {
            profile: &config.profiles,
            style: &config.styles,
            replace: &config.replacements,
            snippet: &config.snippets,
        })
        .map_err(|e| Error::ConfigValue {
            key: "profile".into(),
            reason: e.to_string(),
        })?;
        out.push('\n');
        out.push_str(&tables);
    }
    match Config::parse(&out, Path::new("(rendered)")) {
        Ok((back, warnings)) if back == *config && warnings.is_empty() => Ok(out),
        _ => to_toml(config),
    }
}

/// A TOML value on one line; floats in their shortest f32 form (0.9, not 0.8999999761581421).
fn inline_value(v: &toml::Value) -> String {
    match v {
        toml::Value::Float(f) => {
            let short = *f as f32;
            if f64::from(short) == *f {
                format!("{short:?}")
            } else {
                format!("{f:?}")
            }
        }
        toml::Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(inline_value)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The effective settings as TOML.
pub fn to_toml(config: &Config) -> Result<String> {
    toml::to_string_pretty(config).map_err(|e| Error::ConfigValue {
        key: "(all)".into(),
        reason: e.to_string(),
    })
}

fn syntax_error(text: &str, path: &Path, e: &toml::de::Error) -> Error {
    let (line, column) = e
        .span()
        .map(|span| line_col(text, span.start))
        .unwrap_or((1, 1));
    Error::ConfigSyntax {
        path: path.to_path_buf(),
        line,
        column,
        message: e.message().trim().to_string(),
    }
}

/// 1-based line and column (in characters) of byte offset `at`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests;
