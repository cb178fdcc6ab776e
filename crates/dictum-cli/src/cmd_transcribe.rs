use crate::context::{load_config, open_history};
use crate::llm_args::LlmArgs;
use dictum_engine::paths;
use dictum_engine::pipeline::{Engine, Utterance};
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
    /// Print one JSON object instead of the text.
    #[arg(long)]
    json: bool,
    /// Clean the text with the LLM stage (as if llm.enabled = true).
    #[arg(long)]
    clean: bool,
    #[command(flatten)]
    llm: LlmArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut config = load_config()?;
    if let Some(model) = args.model {
        config.stt.model = model;
    }
    if let Some(language) = args.language {
        config.stt.language = language;
    }
    if args.clean {
        config.llm.enabled = true;
    }
    args.llm.apply(&mut config)?;
    let history = open_history()?;
    let mut engine = Engine::new(config, paths::model_dirs()?);
    engine.audio_dir = Some(paths::audio_dir()?);
    engine.enable_llm()?;
    let utterance = engine.transcribe_file(&history, &args.file)?;
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
