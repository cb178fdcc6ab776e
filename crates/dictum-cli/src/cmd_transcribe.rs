use crate::context::{load_config, open_history};
use crate::llm_args::LlmArgs;
use crate::stt_args::SttArgs;
use dictum_engine::paths;
use dictum_engine::pipeline::{Engine, FileProgress, Utterance};
use dictum_engine::store::Outcome;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Audio file to transcribe (WAV: 8/16/24/32-bit integer or 32-bit float, any rate and channels).
    file: PathBuf,
    /// Model: a catalog name such as `tiny.en-q8_0`, or a path to a ggml .bin file.
    #[arg(long)]
    model: Option<String>,
    /// Spoken language ("en", "de", ... or "auto").
    #[arg(long)]
    language: Option<String>,
    /// English text whatever language is spoken (as if stt.task = "translate"; needs a
    /// multilingual model such as base-q8_0).
    #[arg(long)]
    translate: bool,
    /// Print one JSON object instead of the text.
    #[arg(long)]
    json: bool,
    /// Clean the text with the LLM stage (as if llm.enabled = true).
    #[arg(long)]
    clean: bool,
    /// Longest stretch of audio whisper takes at once, in seconds: longer files are cut at
    /// their quietest point near this length and transcribed piece by piece, with progress
    /// on stderr.
    #[arg(long, default_value_t = dictum_engine::pipeline::FILE_PIECE_S,
          value_parser = clap::value_parser!(u32).range(10..=1800))]
    piece_s: u32,
    #[command(flatten)]
    llm: LlmArgs,
    #[command(flatten)]
    stt: SttArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut config = load_config()?;
    if let Some(model) = args.model {
        config.stt.model = model;
    }
    if let Some(language) = args.language {
        config.stt.language = language;
    }
    if args.translate {
        config.stt.task = dictum_engine::config::SttTask::Translate;
    }
    if args.clean {
        config.llm.enabled = true;
    }
    args.llm.apply(&mut config)?;
    args.stt.apply(&mut config)?;
    let history = open_history()?;
    let mut engine = Engine::new(config, paths::model_dirs()?);
    engine.audio_dir = Some(paths::audio_dir()?);
    engine.file_piece_s = args.piece_s;
    engine.enable_llm()?;
    let mut shown = Progress::new(&args.file);
    let utterance = engine.transcribe_file_with(&history, &args.file, &mut |p| shown.show(p))?;
    shown.end();
    if let Some(why) = &utterance.entry.stt_fallback {
        eprintln!("dictum: warning: {why}");
    }
    if args.json {
        println!("{}", to_json(&utterance));
    } else if let Some(text) = utterance.entry.text.as_deref().filter(|t| !t.is_empty()) {
        println!("{text}");
    } else if utterance.entry.outcome == Outcome::NoSpeech {
        eprintln!("dictum: no speech detected (nothing to type)");
    }
    match utterance.error {
        Some(e) => {
            eprintln!("dictum: error: {e}");
            Ok(ExitCode::FAILURE)
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

/// Progress of a long file on stderr: one line rewritten in place on a terminal, a line per
/// piece otherwise (logs, CI).
struct Progress {
    name: String,
    tty: bool,
    shown: bool,
}

impl Progress {
    fn new(file: &std::path::Path) -> Progress {
        use std::io::IsTerminal;
        Progress {
            name: file.file_name().map_or_else(
                || file.display().to_string(),
                |n| n.to_string_lossy().into(),
            ),
            tty: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn show(&mut self, p: &FileProgress) {
        let pct = (p.done_ms * 100)
            .checked_div(p.total_ms)
            .map_or(100, |pct| pct.min(100));
        let speed = if p.elapsed_ms > 0.0 {
            p.done_ms as f64 / p.elapsed_ms
        } else {
            0.0
        };
        let line = format!(
            "dictum: {}: {} of {} transcribed ({pct}%), {speed:.1}x real time, about {} left",
            self.name,
            clock(p.done_ms),
            clock(p.total_ms),
            clock(p.remaining_ms() as u64),
        );
        if self.tty {
            eprint!("\r{line}\x1b[K");
        } else {
            eprintln!("{line}");
        }
        self.shown = true;
    }

    fn end(&self) {
        if self.tty && self.shown {
            eprintln!();
        }
    }
}

/// `h:mm:ss` or `m:ss`.
fn clock(ms: u64) -> String {
    let s = ms / 1000;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

pub fn to_json(u: &Utterance) -> serde_json::Value {
    let e = &u.entry;
    let mut obj = json!({
        "id": e.id,
        "text": e.text.clone().unwrap_or_default(),
        "raw_text": e.raw_text.clone().unwrap_or_default(),
        "outcome": e.outcome,
        "language": e.language,
        "model": e.model,
        "device": e.device,
        "stt_backend": e.stt_backend,
        "stt_fallback": e.stt_fallback,
        "stt_upload_ms": e.stt_upload_ms,
        "stt_server_ms": e.stt_server_ms,
        "audio_ms": e.audio_ms,
        "speech_ms": e.speech_ms,
        "timings_ms": u.timings,
    });
    obj["llm"] = u
        .llm
        .as_ref()
        .map_or(serde_json::Value::Null, |r| r.to_json());
    if let Some(err) = &u.error {
        obj["error"] = json!(err.to_string());
        obj["error_kind"] = json!(err.kind());
    }
    obj
}
