//! `dictum models`: the model manager's command-line face (the tray's Models settings do the
//! same through the same engine calls): list the catalog, download with verification, delete,
//! set the default, and recommend the model this machine can afford (timed, `models::measure`
//! and `models::recommend` in the engine).

use crate::context::load_config;
use dictum_engine::models::download::{self, DownloadOutcome, DownloadProgress};
use dictum_engine::models::{self, ModelStatus};
use dictum_engine::paths;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Every model Dictum knows, with its size, checksum and whether it is installed (default).
    List {
        /// One JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Download a model into the models folder, resuming a partial download, and verify its
    /// size and published checksums. Ctrl+C stops it and keeps the partial file.
    Download {
        /// Model name (`tiny.en-q8_0`) or file name (`ggml-tiny.en-q8_0.bin`).
        name: String,
        /// Where to fetch from: an http(s) base URL, `file://FOLDER` or a folder
        /// (default: `[models] base_url` in the config, the models' public home).
        #[arg(long)]
        base_url: Option<String>,
    },
    /// Delete an installed model (and any partial download of it).
    Delete { name: String },
    /// Make a model the default (`stt.model` in the config file).
    Default { name: String },
    /// Time the installed models on this machine and recommend the most accurate one that
    /// keeps key-up → text and file transcription within the targets, with the numbers.
    Recommend(RecommendArgs),
}

#[derive(clap::Args)]
struct RecommendArgs {
    /// Key-up → text p95 target, in ms.
    #[arg(long, default_value_t = 300.0)]
    target_ms: f64,
    /// The dictation length the target is for, in seconds.
    #[arg(long, default_value_t = 10.0)]
    dictation_s: f64,
    /// Most whisper time per second of file audio.
    #[arg(long, default_value_t = 0.5)]
    file_rtf: f64,
    /// Passes per clip (the fastest counts: other programs only add time).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Time only these installed models (comma-separated catalog names).
    #[arg(long, value_delimiter = ',')]
    models: Vec<String>,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action.unwrap_or(Action::List { json: false }) {
        Action::List { json } => list(json),
        Action::Download { name, base_url } => download_one(&name, base_url),
        Action::Delete { name } => delete(&name),
        Action::Default { name } => set_default(&name),
        Action::Recommend(a) => recommend(a),
    }
}

fn statuses() -> anyhow::Result<Vec<ModelStatus>> {
    let config = load_config()?;
    Ok(models::catalog(&paths::models_dir()?, &config.stt.model))
}

fn list(json: bool) -> anyhow::Result<ExitCode> {
    let all = statuses()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("models folder: {}", paths::models_dir()?.display());
    println!(
        "{:<22} {:>9}  {:<10} {:<9}  checksum",
        "name", "size", "installed", "default"
    );
    for m in &all {
        let installed = if m.installed {
            "yes".to_string()
        } else if m.partial_bytes > 0 {
            format!("{}%", m.partial_bytes * 100 / m.exact_bytes.max(1))
        } else {
            String::new()
        };
        let checksum = format!("sha256 {}…", m.sha256.get(..16).unwrap_or(&m.sha256));
        println!(
            "{:<22} {:>9}  {:<10} {:<9}  {checksum}",
            m.name,
            format!("{:.0} MiB", m.exact_bytes as f64 / 1_048_576.0),
            installed,
            if m.is_default { "default" } else { "" },
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn find(name: &str) -> anyhow::Result<&'static models::CatalogModel> {
    models::find(name).ok_or_else(|| {
        anyhow::anyhow!("unknown model `{name}`; `dictum models list` shows the catalog")
    })
}

fn download_one(name: &str, base_url: Option<String>) -> anyhow::Result<ExitCode> {
    let model = find(name)?;
    let base = match base_url {
        Some(b) => b,
        None => load_config()?.models.base_url,
    };
    let dir = paths::models_dir()?;
    let cancel = Arc::new(AtomicBool::new(false));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let interactive = std::io::stderr().is_terminal();
    let mut last_line = Instant::now() - Duration::from_secs(10);
    let mut progress = |p: &DownloadProgress| {
        let pct = p
            .total
            .map(|t| format!("{:5.1}%", p.downloaded as f64 * 100.0 / t.max(1) as f64))
            .unwrap_or_default();
        let line = format!(
            "{} {:>7.1} MiB {pct} {}",
            p.file,
            p.downloaded as f64 / 1_048_576.0,
            p.phase
        );
        if interactive {
            eprint!("\r{line}   ");
            let _ = std::io::stderr().flush();
        } else if p.phase != "downloading" || last_line.elapsed() >= Duration::from_secs(5) {
            eprintln!("{line}");
            last_line = Instant::now();
        }
    };
    let outcome = rt.block_on(async {
        let flag = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
            }
        });
        download::download_model(&base, model.name, &dir, &cancel, &mut progress).await
    });
    if interactive {
        eprintln!();
    }
    match outcome? {
        DownloadOutcome::Completed {
            path,
            bytes,
            sha256,
            verified_by,
        } => {
            println!("{path}: {bytes} bytes, sha256 {sha256}, verified by {verified_by}");
            Ok(ExitCode::SUCCESS)
        }
        DownloadOutcome::Cancelled { partial_bytes } => {
            eprintln!(
                "dictum: download stopped at {partial_bytes} bytes; the same command resumes it"
            );
            Ok(ExitCode::from(130))
        }
    }
}

fn delete(name: &str) -> anyhow::Result<ExitCode> {
    let model = find(name)?;
    let config = load_config()?;
    if config.stt.model == model.name || config.stt.model == model.file {
        anyhow::bail!(
            "{} is the default model; make another one the default first (`dictum models default NAME`)",
            model.name
        );
    }
    if download::delete_model(&paths::models_dir()?, model.name)? {
        println!("deleted {}", model.file);
    } else {
        println!("{} was not installed", model.file);
    }
    Ok(ExitCode::SUCCESS)
}

fn set_default(name: &str) -> anyhow::Result<ExitCode> {
    let model = find(name)?;
    let mut config = load_config()?;
    config.stt.model = model.name.to_string();
    let file = paths::config_file()?;
    config.save_to(&file)?;
    let installed = paths::models_dir()?.join(model.file).is_file();
    println!(
        "default model: {} (in {}){}",
        model.name,
        file.display(),
        if installed {
            ""
        } else {
            "; not installed yet: `dictum models download` it"
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn recommend(a: RecommendArgs) -> anyhow::Result<ExitCode> {
    use dictum_engine::models::{measure, recommend};
    let config = load_config()?;
    let dirs = paths::model_dirs()?;
    let targets = recommend::Targets {
        release_p95_ms: a.target_ms,
        dictation_s: a.dictation_s,
        file_rtf: a.file_rtf,
        commit_min_s: f64::from(config.dictation.commit_min_ms) / 1000.0,
        ..recommend::Targets::default()
    };
    let english = config.stt.language == "en";
    let mut progress = |name: &str| eprintln!("timing {name}…");
    let outcome =
        measure::measure_installed(&config, &dirs, &targets, a.runs, &a.models, &mut progress)?;
    let rec = recommend::recommend(&outcome.measurements, &outcome.installed, english, &targets);
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "recommendation": rec,
                "skipped": outcome.skipped,
                "installed": outcome.installed,
                "load_before": outcome.load_before,
                "load_after": outcome.load_after,
            }))?
        );
        return Ok(if rec.is_some() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    for (name, why) in &outcome.skipped {
        println!("{name}: {why}");
    }
    let Some(rec) = rec else {
        anyhow::bail!(
            "no installed model could be timed (looked in {}); download one first, e.g. `dictum models download tiny.en-q8_0`, then run this again",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let first = &rec.measurements[0];
    println!(
        "measured on {} ({} threads), fastest of {} passes over built-in speech clips of {:.1} s and {:.1} s:",
        first.device,
        first.threads,
        a.runs.max(1),
        first.tail.audio_ms / 1000.0,
        first.long.audio_ms / 1000.0
    );
    if let (Some(before), Some(after)) = (outcome.load_before, outcome.load_after) {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!(
            "  load average {before:.2} before, {after:.2} after, on {cores} cores{}",
            if before > 0.5 * cores as f64 {
                ": other programs were using the CPU, so these times are pessimistic; run again on a quiet machine"
            } else {
                ""
            }
        );
    }
    for m in &rec.measurements {
        println!(
            "  {:<22} {:>6.0} ms ({:.1} s)  {:>6.0} ms ({:.1} s)  {:>5.0} ms per second of audio",
            m.model,
            m.tail.ms,
            m.tail.audio_ms / 1000.0,
            m.long.ms,
            m.long.audio_ms / 1000.0,
            m.long.ms_per_audio_s()
        );
    }
    println!(
        "model: key-up → text p95 = one pass over the last {:.0} s of a {:.0} s dictation (what the live path has not made final: commit_min {:.0} s + 1 s), taken as starting at the key-up, + {:.0} ms; file RTF = a 10 s pass / 10 s. Targets: p95 ≤ {:.0} ms, files ≤ {:.2}× real time.",
        targets.tail_s(),
        targets.dictation_s,
        targets.commit_min_s,
        targets.overhead_ms,
        targets.release_p95_ms,
        targets.file_rtf
    );
    println!();
    print!("{}", recommend::table(&rec));
    println!();
    println!("recommended: {} — {}", rec.model, rec.reason);
    if !rec.installed {
        println!(
            "  not installed: `dictum models download {}`, then `dictum models recommend` again to time it",
            rec.model
        );
    }
    if config.stt.model != rec.model {
        println!(
            "  to use it: `dictum models default {}` (now: {})",
            rec.model, config.stt.model
        );
    }
    Ok(ExitCode::SUCCESS)
}
