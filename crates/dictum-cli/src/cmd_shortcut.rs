//! `dictum shortcut print|install|remove`: the desktop shortcut that drives dictation
//! through `dictum ctl` where no global hotkey can be grabbed and the GlobalShortcuts portal
//! is missing (engine: `dictum_engine::shortcut`).

use crate::context::load_config;
use dictum_engine::shortcut::{self, install, Desktop, Trigger};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Print the exact lines for this desktop (or --desktop), from the config's
    /// [dictation] hotkey.
    Print(Target),
    /// Install the shortcut: sway and Hyprland (push-to-talk: press and release), GNOME
    /// (toggle); elsewhere print what to add by hand. Running it twice changes nothing.
    Install(Target),
    /// Take out what `install` added.
    Remove(Target),
}

#[derive(clap::Args)]
struct Target {
    /// sway, hyprland, gnome, kde or other (default: detected from SWAYSOCK,
    /// HYPRLAND_INSTANCE_SIGNATURE and XDG_CURRENT_DESKTOP).
    #[arg(long)]
    desktop: Option<String>,
}

impl Target {
    fn desktop(&self) -> anyhow::Result<Desktop> {
        match &self.desktop {
            Some(d) => Desktop::parse(d).map_err(anyhow::Error::msg),
            None => Ok(shortcut::detect_here()),
        }
    }
}

fn binding(target: &Target) -> anyhow::Result<shortcut::Binding> {
    let desktop = target.desktop()?;
    let config = load_config()?;
    // The absolute path: the compositor runs the command without the user's PATH.
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| anyhow::anyhow!("cannot tell where this dictum binary is ({e})"))?;
    shortcut::binding(desktop, &config.dictation.hotkey, &exe).map_err(|e| {
        anyhow::anyhow!(
            "{e} (set [dictation] hotkey in the config: `dictum config --path` shows where)"
        )
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        Action::Print(t) => {
            let b = binding(&t)?;
            eprintln!("# {} ({}):", b.desktop.name(), what_it_gives(&b));
            print!("{}", b.text);
            for note in &b.notes {
                eprintln!("# {note}");
            }
        }
        Action::Install(t) => {
            let b = binding(&t)?;
            let paths = install::Paths::from_env().map_err(anyhow::Error::msg)?;
            let out = install::install(&b, &paths, &install::Gsettings::default())
                .map_err(anyhow::Error::msg)?;
            for line in &out.done {
                println!("{line}");
            }
            if matches!(b.desktop, Desktop::Kde | Desktop::Other) {
                println!("add this by hand:\n{}", b.text.trim_end());
            }
            for note in &b.notes {
                println!("{note}");
            }
            if !matches!(b.desktop, Desktop::Kde | Desktop::Other) {
                println!(
                    "{} while `dictum run` or the tray app is running; `dictum shortcut remove` undoes this.",
                    what_it_gives(&b)
                );
            }
        }
        Action::Remove(t) => {
            let desktop = t.desktop()?;
            let paths = install::Paths::from_env().map_err(anyhow::Error::msg)?;
            let out = install::remove(desktop, &paths, &install::Gsettings::default())
                .map_err(anyhow::Error::msg)?;
            for line in &out.done {
                println!("{line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn what_it_gives(b: &shortcut::Binding) -> String {
    match b.trigger {
        Trigger::PushToTalk => format!("hold {} to dictate, release to type", b.chord.human()),
        Trigger::Toggle => format!(
            "press {} to start dictating, press it again to stop",
            b.chord.human()
        ),
    }
}
