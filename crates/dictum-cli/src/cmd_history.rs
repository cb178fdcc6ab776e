use crate::context::open_history;
use dictum_engine::store::{format_utc, Entry, Query};
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// How many entries to show (0 = all).
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Only entries whose raw or final text matches these words (full-text search).
    #[arg(long)]
    search: Option<String>,
    /// Print a JSON array of entries.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let history = open_history()?;
    let entries = history.list(&Query {
        limit: args.limit,
        search: args.search,
    })?;
    if args.json {
        let list: Vec<serde_json::Value> = entries.iter().map(entry_json).collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(ExitCode::SUCCESS);
    }
    for e in &entries {
        let when = format_utc(e.created_at_ms);
        let text = match (&e.text, &e.error) {
            (_, Some(err)) => format!("error: {err}"),
            (Some(t), _) if !t.is_empty() => t.clone(),
            _ => "(nothing)".into(),
        };
        println!(
            "#{:<5} {}  {:<9} {:>7}  {}",
            e.id.unwrap_or_default(),
            &when[..19],
            e.outcome.as_str(),
            e.total_ms.map(|t| format!("{t:.0}ms")).unwrap_or_default(),
            text
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn entry_json(e: &Entry) -> serde_json::Value {
    let mut v = serde_json::to_value(e).unwrap_or_else(|_| json!({}));
    v["created_at"] = json!(format_utc(e.created_at_ms));
    v
}
