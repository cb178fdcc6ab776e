//! `dictum clean [--json] TEXT`: runs the LLM cleanup stage on typed text, exactly as a
//! dictation would (same config section, warm-up, prompt, guard).
//!
//! Not stored in history: a row's `source` is 'file' or 'mic' (a CHECK constraint SQLite
//! cannot alter in place), a typed text is neither, and nothing can be lost — the input is on
//! the command line. `dictum transcribe FILE --clean` stores its row with every LLM column.

use crate::context::load_config;
use crate::llm_args::LlmArgs;
use dictum_engine::llm::LlmOutcome;
use dictum_engine::paths;
use dictum_engine::pipeline::Engine;
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The text to clean (several words may be given unquoted).
    #[arg(required = true, num_args = 1..)]
    text: Vec<String>,
    /// Print one JSON object: text, raw_text, llm {backend, model, outcome, load_ms, ...}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    llm: LlmArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut config = load_config()?;
    config.llm.enabled = true;
    args.llm.apply(&mut config)?;
    let raw = args.text.join(" ");
    let mut engine = Engine::new(config, paths::model_dirs().unwrap_or_default());
    let warm = engine.enable_llm()?;
    let report = engine
        .clean_text(&raw)
        .ok_or_else(|| anyhow::anyhow!("the LLM stage did not start"))?;
    if args.json {
        println!(
            "{}",
            json!({
                "text": report.text,
                "raw_text": raw,
                "llm": report.to_json(),
                "warm_up": warm,
            })
        );
    } else {
        println!("{}", report.text);
    }
    match report.outcome {
        LlmOutcome::Failed => eprintln!(
            "dictum: warning: {} (the text was left as typed)",
            report.error.as_deref().unwrap_or("LLM failed")
        ),
        LlmOutcome::Rejected => eprintln!(
            "dictum: note: LLM output rejected ({}); the text was left as typed",
            report.reject_reason.as_deref().unwrap_or("?")
        ),
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}
