//! `dictum history`: list, search, export and delete past dictations.

use crate::context::open_history;
use dictum_engine::store::{format_utc, render_export, Entry, ExportFormat, History, Query};
use serde_json::json;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
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
    /// Write the listed entries (after --limit and --search) to FILE, as CSV, JSON or
    /// Markdown by its extension (.csv, .json, .md); the file is private (0600). A file
    /// transcription's subtitles as SubRip or WebVTT (.srt, .vtt): the one listed file
    /// transcription, or the entry --id names.
    #[arg(long, value_name = "FILE", conflicts_with = "json")]
    export: Option<PathBuf>,
    /// With --export: only entry ID (as listed; e.g. the file transcription whose subtitles
    /// to write).
    #[arg(
        long,
        value_name = "ID",
        requires = "export",
        conflicts_with = "search"
    )]
    id: Option<i64>,
    /// Delete these entries (by id, as listed) and their kept audio, for good.
    #[arg(long, value_name = "ID", num_args = 1.., conflicts_with_all = ["delete_all", "export", "json", "search"])]
    delete: Vec<i64>,
    /// Delete every entry and all kept audio, for good. Asks for confirmation on a terminal;
    /// elsewhere needs --yes.
    #[arg(long, alias = "all", conflicts_with_all = ["export", "json", "search"])]
    delete_all: bool,
    /// Do not ask before --delete-all.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Transcribe entry ID again from its kept audio (a dictation whose text was not
    /// delivered: queue full, failed transcription, failed typing, Dictum killed), store the
    /// text, print it and have the running Dictum type it into the focused window (its gate:
    /// the cancel key stops it, a runaway text is not typed). With no Dictum running it is
    /// put on the clipboard instead.
    #[arg(long, value_name = "ID", conflicts_with_all = ["delete", "delete_all", "export", "json", "search"])]
    retry: Option<i64>,
    /// With --retry: put the text on the clipboard instead of typing it.
    #[arg(long, requires = "retry")]
    copy: bool,
    /// Correct entry ID: keep TEXT as what it should have been (whisper's words stay as they
    /// were) and print, numbered, what Dictum could learn from it: new vocabulary words and
    /// replacements for mistakes whisper made more than once. Nothing is learned without
    /// --accept. Without TEXT, the entry's stored correction is used.
    #[arg(long, value_names = ["ID", "TEXT"], num_args = 1..=2, conflicts_with_all = ["delete", "delete_all", "export", "search", "retry"])]
    correct: Vec<String>,
    /// With --correct: write these proposals (numbers as printed, e.g. 1,3, or `all`) into the
    /// config file; the others are not written.
    #[arg(long, value_name = "N[,M]|all", requires = "correct")]
    accept: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.delete_all {
        return delete_all(args.yes);
    }
    if !args.delete.is_empty() {
        return delete(&args.delete);
    }
    if let Some(id) = args.retry {
        return crate::cmd_retry::run(id, args.copy);
    }
    if !args.correct.is_empty() {
        return crate::cmd_learn::run(&args.correct, args.accept.as_deref(), args.json);
    }
    let history = open_history()?;
    let entries = match args.id {
        Some(id) => vec![history.get(id)?.ok_or_else(|| {
            anyhow::anyhow!("no entry #{id} (see the ids with `dictum history`)")
        })?],
        None => history.list(&Query {
            limit: args.limit,
            search: args.search,
        })?,
    };
    if let Some(file) = &args.export {
        if let Some(format) = subtitle_format(file) {
            return export_subtitles(&history, &entries, file, format);
        }
        return export(&entries, file);
    }
    // Edit-mode rows (`[edit]`): the instruction, the selection's length and the answer.
    let ids: Vec<i64> = entries.iter().filter_map(|e| e.id).collect();
    let edits = history.edits_among(&ids)?;
    if args.json {
        let list: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                let mut v = entry_json(e);
                if let Some(edit) = e.id.and_then(|id| edits.get(&id)) {
                    v["mode"] = json!("edit");
                    v["edit_instruction"] = json!(e.raw_text);
                    v["edit_selection"] = json!(edit.selection);
                    v["edit_selection_chars"] = json!(edit.selection_chars);
                }
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(ExitCode::SUCCESS);
    }
    for e in &entries {
        let when = format_utc(e.created_at_ms);
        let commands: Vec<String> = e
            .commands
            .as_deref()
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or_default();
        let said = (!commands.is_empty()).then(|| format!("[{}]", commands.join("] [")));
        let text = match (&e.text, &e.error, said) {
            // A retried row keeps a note of its first failure; its text is what matters.
            (Some(t), Some(_), _)
                if e.outcome == dictum_engine::store::Outcome::Ok && !t.is_empty() =>
            {
                t.clone()
            }
            (_, Some(err), _) => format!("error: {err}"),
            (Some(t), _, Some(c)) if !t.is_empty() => format!("{t} {c}"),
            (Some(t), _, None) if !t.is_empty() => t.clone(),
            (_, _, Some(c)) => c,
            _ => "(nothing)".into(),
        };
        let text = match e.id.and_then(|id| edits.get(&id)) {
            Some(edit) => format!(
                "edit of {} chars, \"{}\": {text}",
                edit.selection_chars,
                e.raw_text.as_deref().unwrap_or_default().trim()
            ),
            None => text,
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

fn delete(ids: &[i64]) -> anyhow::Result<ExitCode> {
    let history = open_history()?;
    let missing: Vec<String> = ids
        .iter()
        .filter(|&&id| !matches!(history.get(id), Ok(Some(_))))
        .map(|id| format!("#{id}"))
        .collect();
    let n = history.delete(ids)?;
    println!("deleted {n} {} and their audio", plural(n));
    if missing.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        anyhow::bail!(
            "no entry {} (see the ids with `dictum history`)",
            missing.join(", ")
        )
    }
}

fn delete_all(yes: bool) -> anyhow::Result<ExitCode> {
    let history = open_history()?;
    let count = count(&history)?;
    if !yes {
        if !std::io::stdin().is_terminal() {
            anyhow::bail!(
                "--delete-all deletes all {count} {} and their audio for good; add --yes to confirm",
                plural(count)
            );
        }
        eprint!(
            "Delete all {count} {} and their kept audio from {}? This cannot be undone. Type yes to confirm: ",
            plural(count),
            history.path().display()
        );
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if answer.trim() != "yes" {
            eprintln!("dictum: nothing deleted");
            return Ok(ExitCode::FAILURE);
        }
    }
    let n = history.delete_all()?;
    println!("deleted {n} {} and their audio", plural(n));
    Ok(ExitCode::SUCCESS)
}

fn count(history: &History) -> anyhow::Result<usize> {
    Ok(history.count(&dictum_engine::store::HistoryFilter::default())? as usize)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        "entry"
    } else {
        "entries"
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Subtitles {
    Srt,
    Vtt,
}

fn subtitle_format(file: &Path) -> Option<Subtitles> {
    match file.extension().and_then(|e| e.to_str()) {
        Some("srt") => Some(Subtitles::Srt),
        Some("vtt") => Some(Subtitles::Vtt),
        _ => None,
    }
}

/// A stored file transcription's subtitles, laid out as `dictum transcribe --format srt|vtt`
/// lays them (from its segments' times; the cleaned text when the LLM cleaned it).
fn export_subtitles(
    history: &History,
    entries: &[Entry],
    file: &Path,
    format: Subtitles,
) -> anyhow::Result<ExitCode> {
    use dictum_engine::store::Source;
    use dictum_engine::subtitles;
    let files: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.source == Source::File)
        .collect();
    let entry = match files.as_slice() {
        [one] => *one,
        [] => anyhow::bail!(
            "no file transcription among the {} listed {}: subtitles come from `dictum \
             transcribe FILE`; pick one with --id ID (its id in `dictum history`)",
            entries.len(),
            plural(entries.len())
        ),
        many => anyhow::bail!(
            "{} file transcriptions are listed ({}): pick the one to write with --id ID",
            many.len(),
            many.iter()
                .filter_map(|e| e.id.map(|id| format!("#{id}")))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let id = entry.id.unwrap_or_default();
    let Some(segments) = history.segments(id)? else {
        anyhow::bail!(
            "entry #{id} has no timed segments (transcribed before Dictum kept them, or it \
             failed): transcribe the file again with `dictum transcribe --format {} FILE`",
            if format == Subtitles::Srt {
                "srt"
            } else {
                "vtt"
            }
        );
    };
    let cleaned = entry.llm_outcome.as_deref() == Some("cleaned");
    let cues = subtitles::cues_for(
        segments,
        entry.text.as_deref(),
        cleaned,
        entry.audio_ms.and_then(|ms| u64::try_from(ms).ok()),
    );
    let text = match format {
        Subtitles::Srt => subtitles::to_srt(&cues),
        Subtitles::Vtt => subtitles::to_vtt(&cues),
    };
    dictum_engine::paths::write_private(file, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", file.display()))?;
    println!(
        "exported entry #{id} ({}) as {} cues to {}",
        entry.source_path.as_deref().unwrap_or("a file"),
        cues.len(),
        file.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn export(entries: &[Entry], file: &Path) -> anyhow::Result<ExitCode> {
    let format = match file.extension().and_then(|e| e.to_str()) {
        Some("csv") => ExportFormat::Csv,
        Some("json") => ExportFormat::Json,
        Some("md" | "markdown") => ExportFormat::Markdown,
        _ => anyhow::bail!(
            "cannot tell the format of {}: name it .csv, .json, .md (or .srt, .vtt for a \
             file transcription's subtitles)",
            file.display()
        ),
    };
    let text = render_export(entries, format)?;
    dictum_engine::paths::write_private(file, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", file.display()))?;
    println!(
        "exported {} {} to {}",
        entries.len(),
        plural(entries.len()),
        file.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn entry_json(e: &Entry) -> serde_json::Value {
    let mut v = serde_json::to_value(e).unwrap_or_else(|_| json!({}));
    v["created_at"] = json!(format_utc(e.created_at_ms));
    v
}
