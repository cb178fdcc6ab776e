//! `dictum ctl COMMAND`: sends one command to the running `dictum run` or tray app over its
//! control socket (`dictation/control.rs`).

use dictum_engine::dictation::control;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// press (--style NAME: written in that style), release, toggle, cancel, pause, resume, hands-free, edit-press, edit-release
    /// (edit mode: the selection rewritten on the instruction said in between), type (the
    /// text of history entry ID, through the gate: budget, cancel key), retype (the last
    /// dictation again, into the window focused now, through the same gate), transcribe
    /// (an audio or video file, in the background, after dictations) or quit; `status` says
    /// whether one runs.
    command: String,
    /// For hands-free: on, off or toggle (the default); for type: the entry's ID; for
    /// transcribe: the file.
    argument: Option<String>,
    /// For press: the style (`[[style]]`'s name) this dictation is written in.
    #[arg(long, value_name = "NAME")]
    style: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Refuse a typo here, before bothering the daemon.
    let mut line = match &args.argument {
        // The daemon may run in another folder: the file's full path.
        Some(arg) if args.command == "transcribe" => {
            let path = std::path::absolute(arg).map_err(|e| anyhow::anyhow!("{arg}: {e}"))?;
            anyhow::ensure!(path.is_file(), "{}: no such file", path.display());
            format!("transcribe {}", path.display())
        }
        Some(arg) => format!("{} {arg}", args.command),
        None => args.command.clone(),
    };
    if let Some(style) = &args.style {
        anyhow::ensure!(
            args.command == "press",
            "--style goes with `dictum ctl press` (the press that starts the dictation)"
        );
        line = format!("{line} --style {style}");
    }
    let request = control::parse_request(&line).map_err(|e| anyhow::anyhow!(e))?;
    // `type ID` and `retype` answer once the text is typed.
    let typing = matches!(
        request,
        control::Request::Command(dictum_engine::dictation::Command::TypeStored(_))
    );
    let reply = if typing {
        control::send_waiting(&line, control::TYPE_WAIT)?
    } else {
        control::send(&line)?
    };
    if reply != "ok" {
        println!("{reply}");
    }
    Ok(ExitCode::SUCCESS)
}
