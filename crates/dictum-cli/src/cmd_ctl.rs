//! `dictum ctl COMMAND`: sends one command to the running `dictum run` or tray app over its
//! control socket (`dictation/control.rs`).

use dictum_engine::dictation::control;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// press, release, toggle, cancel, pause, resume or quit; `status` says whether one runs.
    command: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Refuse a typo here, before bothering the daemon.
    control::parse_request(&args.command).map_err(|e| anyhow::anyhow!(e))?;
    let reply = control::send(&args.command)?;
    if reply != "ok" {
        println!("{reply}");
    }
    Ok(ExitCode::SUCCESS)
}
