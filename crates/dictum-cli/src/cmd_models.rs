//! `dictum models`: the model manager's command-line face (the tray's Models settings do the
//! same through the same engine calls): list the catalog, download with verification, delete,
//! set the default.

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
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action.unwrap_or(Action::List { json: false }) {
        Action::List { json } => list(json),
        Action::Download { name, base_url } => download_one(&name, base_url),
        Action::Delete { name } => delete(&name),
        Action::Default { name } => set_default(&name),
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
