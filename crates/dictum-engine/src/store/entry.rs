//! One history row.

use rusqlite::types::Value;
use rusqlite::Row;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Outcome {
    /// Inserted, work not finished (a crash leaves this behind, never nothing).
    Pending,
    Ok,
    NoSpeech,
    Error,
    /// Left `pending` by a Dictum that crashed or was killed; marked by the next one at
    /// start (`store::recovery`), its audio kept when it exists.
    Interrupted,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pending => "pending",
            Outcome::Ok => "ok",
            Outcome::NoSpeech => "no_speech",
            Outcome::Error => "error",
            Outcome::Interrupted => "interrupted",
        }
    }

    fn parse(s: &str) -> Outcome {
        match s {
            "ok" => Outcome::Ok,
            "no_speech" => Outcome::NoSpeech,
            "error" => Outcome::Error,
            "interrupted" => Outcome::Interrupted,
            _ => Outcome::Pending,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Source {
    File,
    Mic,
}

/// A dictation as stored. Timings are milliseconds; `None` = the stage did not run.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Entry {
    #[ts(type = "number | null")]
    pub id: Option<i64>,
    #[ts(type = "number")]
    pub created_at_ms: i64,
    pub source: Source,
    pub source_path: Option<String>,
    pub outcome: Outcome,
    pub error_kind: Option<String>,
    pub error: Option<String>,
    pub raw_text: Option<String>,
    pub text: Option<String>,
    pub language: Option<String>,
    pub model: Option<String>,
    pub device: Option<String>,
    pub app_class: Option<String>,
    pub window_title: Option<String>,
    #[ts(type = "number | null")]
    pub audio_ms: Option<i64>,
    #[ts(type = "number | null")]
    pub speech_ms: Option<i64>,
    pub audio_path: Option<String>,
    pub decode_ms: Option<f64>,
    pub resample_ms: Option<f64>,
    pub vad_ms: Option<f64>,
    pub model_load_ms: Option<f64>,
    pub warmup_ms: Option<f64>,
    pub stt_ms: Option<f64>,
    pub llm_ms: Option<f64>,
    pub inject_ms: Option<f64>,
    pub total_ms: Option<f64>,
    pub llm_tokens_per_sec: Option<f64>,
    pub llm_load_ms: Option<f64>,
    pub llm_reloaded: Option<bool>,
    pub llm_backend: Option<String>,
    pub llm_model: Option<String>,
    pub llm_outcome: Option<String>,
    pub llm_reject_reason: Option<String>,
    pub llm_error: Option<String>,
    pub llm_prompt_eval_ms: Option<f64>,
    pub llm_eval_ms: Option<f64>,
    pub press_to_capture_ms: Option<f64>,
    #[ts(type = "number | null")]
    pub preroll_ms: Option<i64>,
    #[ts(type = "number | null")]
    pub post_roll_ms: Option<i64>,
    pub release_to_text_ms: Option<f64>,
    pub release_to_typed_ms: Option<f64>,
    pub tail_stt_ms: Option<f64>,
    #[ts(type = "number | null")]
    pub chunks: Option<i64>,
    pub inject_method: Option<String>,
    pub inject_error: Option<String>,
    /// Where speech was transcribed: "local", or "openai" when the server's answer was used.
    pub stt_backend: Option<String>,
    /// Why the local model stood in for the speech server (server down, timeout, refused...).
    pub stt_fallback: Option<String>,
    /// Server backend: round trip minus the server's reported time (upload, queue, download).
    pub stt_upload_ms: Option<f64>,
    /// Server backend: the server's own processing time, when it reports one.
    pub stt_server_ms: Option<f64>,
    /// Voice commands executed, as a JSON array of names (`["new line"]`).
    pub commands: Option<String>,
    /// The per-app profile the focused window picked at the press ("default": none matched
    /// or the app could not be known).
    pub profile: Option<String>,
    /// Voice commands heard but not done, and why, as a JSON array of `{name, why}`
    /// (`commands::trust`: a terminal's text with a key, hands-free, …).
    pub commands_refused: Option<String>,
    /// How the recording started: "preroll" (the microphone was open before the press) or
    /// "cold" (the press opened it; `[dictation] microphone`).
    pub mic_start: Option<String>,
    /// A cold open: the time from the press to the stream's first samples.
    pub press_to_first_sample_ms: Option<f64>,
    /// The style (`[[style]]`) the dictation was written in: picked at the key, by the
    /// app's profile or by `[dictation] style`; null when none was.
    pub style: Option<String>,
    /// What the text around the cursor did at typing (`[context] around_cursor`): "joined",
    /// "as heard", "not read: a password field", "unavailable: …"; null when not looked at.
    pub context: Option<String>,
    /// How long reading the text around the cursor took at typing.
    pub context_ms: Option<f64>,
    /// Whether the LLM was given the place the text goes (`[context] llm`): "sent" or
    /// "not sent: why"; null when there was nothing to give.
    pub llm_context: Option<String>,
}

/// Columns in the order of `Entry::values` (id excluded).
pub(super) const COLUMNS: &[&str] = &[
    "created_at_ms",
    "source",
    "source_path",
    "outcome",
    "error_kind",
    "error",
    "raw_text",
    "text",
    "language",
    "model",
    "device",
    "app_class",
    "window_title",
    "audio_ms",
    "speech_ms",
    "audio_path",
    "decode_ms",
    "resample_ms",
    "vad_ms",
    "model_load_ms",
    "warmup_ms",
    "stt_ms",
    "llm_ms",
    "inject_ms",
    "total_ms",
    "llm_tokens_per_sec",
    "llm_load_ms",
    "llm_reloaded",
    "llm_backend",
    "llm_model",
    "llm_outcome",
    "llm_reject_reason",
    "llm_error",
    "llm_prompt_eval_ms",
    "llm_eval_ms",
    "press_to_capture_ms",
    "preroll_ms",
    "post_roll_ms",
    "release_to_text_ms",
    "release_to_typed_ms",
    "tail_stt_ms",
    "chunks",
    "inject_method",
    "inject_error",
    "stt_backend",
    "stt_fallback",
    "stt_upload_ms",
    "stt_server_ms",
    "commands",
    "profile",
    "commands_refused",
    "mic_start",
    "press_to_first_sample_ms",
    "style",
    "context",
    "context_ms",
    "llm_context",
];

fn opt<T: Into<Value> + Clone>(v: &Option<T>) -> Value {
    v.clone().map_or(Value::Null, Into::into)
}

impl Entry {
    pub fn new(source: Source) -> Entry {
        Entry {
            id: None,
            created_at_ms: 0,
            source,
            source_path: None,
            outcome: Outcome::Pending,
            error_kind: None,
            error: None,
            raw_text: None,
            text: None,
            language: None,
            model: None,
            device: None,
            app_class: None,
            window_title: None,
            audio_ms: None,
            speech_ms: None,
            audio_path: None,
            decode_ms: None,
            resample_ms: None,
            vad_ms: None,
            model_load_ms: None,
            warmup_ms: None,
            stt_ms: None,
            llm_ms: None,
            inject_ms: None,
            total_ms: None,
            llm_tokens_per_sec: None,
            llm_load_ms: None,
            llm_reloaded: None,
            llm_backend: None,
            llm_model: None,
            llm_outcome: None,
            llm_reject_reason: None,
            llm_error: None,
            llm_prompt_eval_ms: None,
            llm_eval_ms: None,
            press_to_capture_ms: None,
            preroll_ms: None,
            post_roll_ms: None,
            release_to_text_ms: None,
            release_to_typed_ms: None,
            tail_stt_ms: None,
            chunks: None,
            inject_method: None,
            inject_error: None,
            stt_backend: None,
            stt_fallback: None,
            stt_upload_ms: None,
            stt_server_ms: None,
            commands: None,
            profile: None,
            commands_refused: None,
            mic_start: None,
            press_to_first_sample_ms: None,
            style: None,
            context: None,
            context_ms: None,
            llm_context: None,
        }
    }

    pub(super) fn values(&self) -> Vec<Value> {
        let source = match self.source {
            Source::File => "file",
            Source::Mic => "mic",
        };
        vec![
            self.created_at_ms.into(),
            source.to_string().into(),
            opt(&self.source_path),
            self.outcome.as_str().to_string().into(),
            opt(&self.error_kind),
            opt(&self.error),
            opt(&self.raw_text),
            opt(&self.text),
            opt(&self.language),
            opt(&self.model),
            opt(&self.device),
            opt(&self.app_class),
            opt(&self.window_title),
            opt(&self.audio_ms),
            opt(&self.speech_ms),
            opt(&self.audio_path),
            opt(&self.decode_ms),
            opt(&self.resample_ms),
            opt(&self.vad_ms),
            opt(&self.model_load_ms),
            opt(&self.warmup_ms),
            opt(&self.stt_ms),
            opt(&self.llm_ms),
            opt(&self.inject_ms),
            opt(&self.total_ms),
            opt(&self.llm_tokens_per_sec),
            opt(&self.llm_load_ms),
            opt(&self.llm_reloaded),
            opt(&self.llm_backend),
            opt(&self.llm_model),
            opt(&self.llm_outcome),
            opt(&self.llm_reject_reason),
            opt(&self.llm_error),
            opt(&self.llm_prompt_eval_ms),
            opt(&self.llm_eval_ms),
            opt(&self.press_to_capture_ms),
            opt(&self.preroll_ms),
            opt(&self.post_roll_ms),
            opt(&self.release_to_text_ms),
            opt(&self.release_to_typed_ms),
            opt(&self.tail_stt_ms),
            opt(&self.chunks),
            opt(&self.inject_method),
            opt(&self.inject_error),
            opt(&self.stt_backend),
            opt(&self.stt_fallback),
            opt(&self.stt_upload_ms),
            opt(&self.stt_server_ms),
            opt(&self.commands),
            opt(&self.profile),
            opt(&self.commands_refused),
            opt(&self.mic_start),
            opt(&self.press_to_first_sample_ms),
            opt(&self.style),
            opt(&self.context),
            opt(&self.context_ms),
            opt(&self.llm_context),
        ]
    }

    /// Reads a row selected as `id, COLUMNS...`.
    pub(super) fn from_row(row: &Row<'_>) -> rusqlite::Result<Entry> {
        let source: String = row.get(2)?;
        let outcome: String = row.get(4)?;
        Ok(Entry {
            id: Some(row.get(0)?),
            created_at_ms: row.get(1)?,
            source: if source == "mic" {
                Source::Mic
            } else {
                Source::File
            },
            source_path: row.get(3)?,
            outcome: Outcome::parse(&outcome),
            error_kind: row.get(5)?,
            error: row.get(6)?,
            raw_text: row.get(7)?,
            text: row.get(8)?,
            language: row.get(9)?,
            model: row.get(10)?,
            device: row.get(11)?,
            app_class: row.get(12)?,
            window_title: row.get(13)?,
            audio_ms: row.get(14)?,
            speech_ms: row.get(15)?,
            audio_path: row.get(16)?,
            decode_ms: row.get(17)?,
            resample_ms: row.get(18)?,
            vad_ms: row.get(19)?,
            model_load_ms: row.get(20)?,
            warmup_ms: row.get(21)?,
            stt_ms: row.get(22)?,
            llm_ms: row.get(23)?,
            inject_ms: row.get(24)?,
            total_ms: row.get(25)?,
            llm_tokens_per_sec: row.get(26)?,
            llm_load_ms: row.get(27)?,
            llm_reloaded: row.get(28)?,
            llm_backend: row.get(29)?,
            llm_model: row.get(30)?,
            llm_outcome: row.get(31)?,
            llm_reject_reason: row.get(32)?,
            llm_error: row.get(33)?,
            llm_prompt_eval_ms: row.get(34)?,
            llm_eval_ms: row.get(35)?,
            press_to_capture_ms: row.get(36)?,
            preroll_ms: row.get(37)?,
            post_roll_ms: row.get(38)?,
            release_to_text_ms: row.get(39)?,
            release_to_typed_ms: row.get(40)?,
            tail_stt_ms: row.get(41)?,
            chunks: row.get(42)?,
            inject_method: row.get(43)?,
            inject_error: row.get(44)?,
            stt_backend: row.get(45)?,
            stt_fallback: row.get(46)?,
            stt_upload_ms: row.get(47)?,
            stt_server_ms: row.get(48)?,
            commands: row.get(49)?,
            profile: row.get(50)?,
            commands_refused: row.get(51)?,
            mic_start: row.get(52)?,
            press_to_first_sample_ms: row.get(53)?,
            style: row.get(54)?,
            context: row.get(55)?,
            context_ms: row.get(56)?,
            llm_context: row.get(57)?,
        })
    }
}
