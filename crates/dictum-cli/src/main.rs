//! `dictum`: the command-line face of the Dictum engine.

mod bench;
mod bench_accuracy;
mod bench_live;
mod bench_llm;
mod cmd_clean;
mod cmd_config;
mod cmd_ctl;
mod cmd_doctor;
mod cmd_generate;
mod cmd_history;
mod cmd_key;
mod cmd_learn;
mod cmd_models;
mod cmd_retry;
mod cmd_run;
mod cmd_shortcut;
mod cmd_transcribe;
mod context;
mod llm_args;
mod stt_args;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// `dictum --version`: the version from Cargo and the speech backend this build has.
const VERSION: &str = if cfg!(feature = "cuda") {
    concat!(env!("CARGO_PKG_VERSION"), " (CUDA)")
} else if cfg!(feature = "vulkan") {
    concat!(env!("CARGO_PKG_VERSION"), " (Vulkan)")
} else {
    concat!(env!("CARGO_PKG_VERSION"), " (CPU)")
};

#[derive(Parser)]
#[command(
    name = "dictum",
    version = VERSION,
    about = "Local push-to-talk dictation: speech to text, fast, nothing lost."
)]
pub(crate) struct Cli {
    /// Log more, what was dictated included (the text, the LLM's answer, window titles).
    /// Without it, logs name dictations by id, length, outcome and timings only: they may
    /// end up in the system journal (the systemd unit), where deleting history does not
    /// reach. `DICTUM_LOG` (e.g. `debug`) sets the level instead.
    #[arg(long, short = 'v', global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

/// Set by `--verbose`: the dictated text may be written to standard error.
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True when `--verbose` was given: logs may carry what was dictated.
pub(crate) fn verbose() -> bool {
    VERBOSE.load(std::sync::atomic::Ordering::Relaxed)
}

#[derive(Subcommand)]
enum Command {
    /// Run the dictation daemon: hold the hotkey, speak, release; the words are typed.
    Run(cmd_run::Args),
    /// Drive the running daemon or tray app: press, release, toggle, cancel, pause, resume,
    /// hands-free [on|off|toggle], quit (bind these to compositor shortcuts on Wayland).
    Ctl(cmd_ctl::Args),
    /// Bind dictation to a desktop shortcut where no global hotkey can be grabbed (sway,
    /// Hyprland: push-to-talk; GNOME: toggle): print, install or remove it.
    Shortcut(cmd_shortcut::Args),
    /// Transcribe audio or video files (WAV, FLAC, MP3, M4A, Ogg, WebM; Opus and video through
    /// ffmpeg) to text, JSON, SRT or VTT, and store them in history.
    Transcribe(cmd_transcribe::Args),
    /// Clean up text with the LLM stage (punctuation, capitalization, fillers), guarded.
    Clean(cmd_clean::Args),
    /// Show past dictations, newest first.
    History(cmd_history::Args),
    /// Show or check the configuration.
    Config(cmd_config::Args),
    /// Store or remove a server's API key in the desktop keyring (read from stdin, never
    /// written to the config): `dictum key set stt`, `dictum key clear llm`.
    Key(cmd_key::Args),
    /// List, download (verified), delete whisper models, or set the default one.
    Models(cmd_models::Args),
    /// Check GPU, models, config, history and display, and say how to fix what is wrong.
    Doctor(cmd_doctor::Args),
    /// Measure speed and accuracy on a folder of clips (writes a Markdown report).
    Bench(bench::Args),
    /// Print shell completions (bash, zsh, fish, elvish, powershell) to standard output.
    Completions(cmd_generate::CompletionsArgs),
    /// Print the man page (roff), or write one page per subcommand with --dir.
    Man(cmd_generate::ManArgs),
}

fn main() -> ExitCode {
    // A speech worker (whisper on the GPU, isolated from this process) runs nothing else.
    if let Some(code) = dictum_engine::stt::worker_process::serve_if_requested() {
        return code;
    }
    // Everything this process creates (history, audio, config, SQLite's WAL) is private.
    dictum_engine::paths::set_private_umask();
    // A panic is a bug; still, the user gets one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("dictum: internal error: {info}. Please report this.");
    }));
    let cli = Cli::parse();
    VERBOSE.store(cli.verbose, std::sync::atomic::Ordering::Relaxed);
    // Text (transcripts, LLM answers, window titles) is logged at debug level only.
    let level = if cli.verbose {
        "info,dictum=debug,dictum_engine=debug,pulseaudio=off,enigo=error,arboard=error"
    } else {
        "warn,pulseaudio=off,enigo=error,arboard=error"
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DICTUM_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level)),
        )
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();

    let result = match cli.command {
        Command::Run(args) => cmd_run::run(args),
        Command::Ctl(args) => cmd_ctl::run(args),
        Command::Shortcut(args) => cmd_shortcut::run(args),
        Command::Transcribe(args) => cmd_transcribe::run(args),
        Command::Clean(args) => cmd_clean::run(args),
        Command::History(args) => cmd_history::run(args),
        Command::Config(args) => cmd_config::run(args),
        Command::Key(args) => cmd_key::run(args),
        Command::Models(args) => cmd_models::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Doctor(args) => cmd_doctor::run(args),
        Command::Completions(args) => cmd_generate::completions(args),
        Command::Man(args) => cmd_generate::man(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dictum: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
