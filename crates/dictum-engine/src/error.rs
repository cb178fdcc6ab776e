//! One error type for the engine. Every variant's message says what went wrong *and* what the
//! user can do about it, because the CLI prints it as the single line a user sees.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read audio file {path}: {reason}")]
    AudioUnreadable { path: PathBuf, reason: String },

    #[error("audio file {path} is not a supported WAV file ({reason}); convert it first, e.g. `sox input.ext -r 16000 -c 1 output.wav`")]
    AudioFormat { path: PathBuf, reason: String },

    #[error("audio file {path} is {duration} long; the longest accepted is {max_seconds} s (stt.max_file_s); split it first, e.g. `sox in.wav part.wav trim 0 3600 : newfile : restart`, or raise stt.max_file_s")]
    AudioTooLong {
        path: PathBuf,
        duration: String,
        max_seconds: u32,
    },

    #[error("cannot decode audio file {path}: {reason}. Check that it plays in a media player; if it does, convert it to WAV, e.g. `ffmpeg -i in.ext -ar 16000 -ac 1 out.wav`")]
    AudioDecode { path: PathBuf, reason: String },

    #[error("audio file {path} {what}: Dictum reads WAV, FLAC, MP3, M4A/MP4 (AAC, ALAC), Ogg Vorbis and Matroska/WebM itself and everything else through ffmpeg, which is not installed; install it (Debian/Ubuntu: `sudo apt install ffmpeg`) or convert the file to one of those formats")]
    NeedsFfmpeg { path: PathBuf, what: String },

    #[error("audio file {path} has no audio track ({reason}); pick a file with sound in it")]
    AudioNoTrack { path: PathBuf, reason: String },

    #[error("audio file {path} contains no samples; record or pick a file with sound in it")]
    AudioEmpty { path: PathBuf },

    #[error("resampling failed: {0}")]
    Resample(String),

    #[error("{0}")]
    ModelNotFound(String),

    #[error("model file {path} is damaged: {reason}; delete it and download it again, or pass another file with --model")]
    ModelCorrupt { path: PathBuf, reason: String },

    #[error("whisper could not load model {path}: {reason}")]
    ModelLoad { path: PathBuf, reason: String },

    #[error("transcription failed: {0}")]
    Transcribe(String),

    /// The speech server answered, the answer was judged not a transcript, and nothing could
    /// redo the utterance. The answer travels with the error so the row keeps it (nothing a
    /// server said is thrown away); the message quotes only a snippet.
    #[error("transcription failed: {why}")]
    AnswerRejected { why: String, answer: String },

    #[error("config file {path}:{line}:{column}: {message} (the file was left untouched; fix it or run `dictum config --print-default` to see every key)")]
    ConfigSyntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },

    #[error("cannot read config file {path}: {reason}")]
    ConfigIo { path: PathBuf, reason: String },

    #[error("invalid setting {key}: {reason}")]
    ConfigValue { key: String, reason: String },

    #[error("history database {path}: {reason}")]
    Store { path: PathBuf, reason: String },

    #[error("LLM cleanup: {0}")]
    Llm(String),

    #[error("model download: {0}")]
    Download(String),

    #[error("control socket: {0}")]
    Control(String),

    #[error("cannot find a data directory; set DICTUM_DATA_DIR to a writable folder")]
    NoDataDir,
}

impl Error {
    /// The speech server's answer this error set aside ([`Error::AnswerRejected`]), to be
    /// kept in the row.
    pub fn rejected_answer(&self) -> Option<&str> {
        match self {
            Error::AnswerRejected { answer, .. } => Some(answer),
            _ => None,
        }
    }

    /// Short machine-readable kind, stored in history next to the message.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::AudioUnreadable { .. } => "audio_unreadable",
            Error::AudioFormat { .. } => "audio_format",
            Error::AudioEmpty { .. } => "audio_empty",
            Error::AudioDecode { .. } => "audio_decode",
            Error::NeedsFfmpeg { .. } => "needs_ffmpeg",
            Error::AudioNoTrack { .. } => "audio_no_track",
            Error::AudioTooLong { .. } => "audio_too_long",
            Error::Resample(_) => "resample",
            Error::ModelNotFound(_) => "model_not_found",
            Error::ModelCorrupt { .. } => "model_corrupt",
            Error::ModelLoad { .. } => "model_load",
            Error::Transcribe(_) | Error::AnswerRejected { .. } => "transcribe",
            Error::ConfigSyntax { .. } | Error::ConfigIo { .. } | Error::ConfigValue { .. } => {
                "config"
            }
            Error::Store { .. } => "store",
            Error::Llm(_) => "llm",
            Error::Download(_) => "download",
            Error::Control(_) => "control",
            Error::NoDataDir => "no_data_dir",
        }
    }
}
