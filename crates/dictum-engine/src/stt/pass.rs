//! One whisper pass's options and result, and the encoder window's size: the types the
//! transcriber, the suspect rule and the GPU worker process share (a leaf: no circle).

use crate::SAMPLE_RATE;
use serde::{Deserialize, Serialize};

/// Encoder frames per second of audio (whisper: 1500 frames for 30 s).
pub(crate) const FRAMES_PER_SEC: f64 = 50.0;
pub(crate) const FULL_AUDIO_CTX: i32 = 1500;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SttOptions {
    /// "en", "de", … or "auto".
    pub language: String,
    pub threads: u32,
    /// Size the encoder window to the audio, or use the full 30 s (`None`).
    pub window: Option<Window>,
    /// Initial prompt (custom vocabulary).
    pub initial_prompt: String,
    /// whisper's translate task: English text whatever the language spoken (`stt.task`).
    /// Refused with an English-only model.
    #[serde(default)]
    pub translate: bool,
    /// Take fewer than `threads` when other programs keep cores busy (`stt/cpu_share.rs`).
    #[serde(default = "adapt_threads_default")]
    pub adapt_threads: bool,
}

fn adapt_threads_default() -> bool {
    true
}

/// How the encoder window is sized to an utterance, in encoder frames (20 ms each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Frames added to the utterance's own length.
    pub margin: u32,
    /// Never smaller than this: very small windows make whisper loop on its own output.
    pub min: u32,
}

/// One of whisper's segments: its text and where it lies in the audio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedText {
    pub start_ms: u64,
    pub end_ms: u64,
    pub text: String,
}

/// A segment as subtitles take it (a file's transcript, `transcribe --format srt` and the row's
/// stored segments).
impl From<&TimedText> for crate::subtitles::Segment {
    fn from(t: &TimedText) -> Self {
        crate::subtitles::Segment {
            start_ms: t.start_ms,
            end_ms: t.end_ms,
            text: t.text.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SttOutput {
    /// Whisper's text, segments joined, trimmed.
    pub text: String,
    /// Detected or forced language.
    pub language: String,
    /// Highest no-speech probability over the segments.
    pub no_speech_prob: f32,
    /// Encoder window used (frames); 0 = full.
    pub audio_ctx: i32,
    /// True when the sized window's pass was suspect (`suspect.rs`) and redone with the full
    /// window; `text` is then the better of the two.
    pub redone_full: bool,
    /// Why the sized window's pass was redone (`suspect.rs`), when it was.
    #[serde(default)]
    pub suspect: Option<String>,
    /// Average log-probability of the text tokens (whisper's `logprob_thold` compares it).
    #[serde(default)]
    pub avg_logprob: Option<f32>,
    /// Text tokens decoded (no timestamps or special tokens).
    #[serde(default)]
    pub tokens: u32,
    pub ms: f64,
    /// Where whisper's last segment ends, in ms from the start of the audio given: speech
    /// after it was not transcribed.
    #[serde(default)]
    pub end_ms: Option<u64>,
    /// Whisper's segments with their times, in ms from the start of the audio given (the
    /// subtitles and `--format json` of `dictum transcribe`).
    #[serde(default)]
    pub segments: Vec<TimedText>,
    /// The CPU threads whisper took for the (last) decode (`stt/cpu_share.rs`).
    #[serde(default)]
    pub threads: u32,
}

/// The largest sized window: half of whisper's 30 s. Above it the sized window saves less
/// than half of the encoder's work, and it costs words: on the corpus's clips of 15 to 27 s
/// tiny.en made 12 errors in 402 words with the sized window, 8 with the full one and 6 as
/// raw whisper-cli (issue 43, docs/ACCURACY.md).
pub const SIZED_MAX_AUDIO_CTX: i32 = FULL_AUDIO_CTX / 2;

/// Encoder window for `samples` of audio: the audio plus a margin, at least `min`, and 0
/// (the full 30 s, whisper's reference decode) when that would be over
/// [`SIZED_MAX_AUDIO_CTX`].
pub fn audio_ctx_for(samples: usize, window: Window) -> i32 {
    let secs = samples as f64 / SAMPLE_RATE as f64;
    let frames =
        ((secs * FRAMES_PER_SEC).ceil() as i32 + window.margin as i32).max(window.min as i32);
    if frames > SIZED_MAX_AUDIO_CTX {
        0
    } else {
        frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_sizing() {
        let w = Window { margin: 64, min: 0 };
        assert_eq!(audio_ctx_for(16_000, w), 50 + 64);
        assert_eq!(
            audio_ctx_for(16_000 * 40, w),
            0,
            "long audio uses the full window"
        );
        let w = Window {
            margin: 64,
            min: 512,
        };
        assert_eq!(audio_ctx_for(16_000, w), 512);
        assert_eq!(audio_ctx_for(16_000 * 13, w), 714);
        assert_eq!(
            audio_ctx_for(16_000 * 14, w),
            0,
            "past half of whisper's window (764 > 750 frames) the full window is used"
        );
        assert_eq!(audio_ctx_for(16_000 * 20, w), 0);
    }
}
