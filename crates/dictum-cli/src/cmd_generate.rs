//! `dictum completions SHELL` and `dictum man`: shell completions (clap_complete) and man
//! pages (clap_mangen), generated from the same clap definition the command parses with, so
//! they never drift. `scripts/package` runs both on the built binary and ships the output.

use clap::{Args as ClapArgs, CommandFactory};
use clap_complete::Shell;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(ClapArgs)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: Shell,
}

#[derive(ClapArgs)]
pub struct ManArgs {
    /// Write dictum.1 and one page per subcommand (dictum-run.1, ...) into this folder instead
    /// of printing dictum.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = crate::Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut cmd, "dictum", &mut out);
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = crate::Cli::command();
    match args.dir {
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut buf)?;
            let mut out = std::io::stdout().lock();
            out.write_all(&buf)?;
            out.flush()?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| {
                anyhow::anyhow!(
                    "cannot create {}: {e}; give a writable folder",
                    dir.display()
                )
            })?;
            clap_mangen::generate_to(cmd, &dir).map_err(|e| {
                anyhow::anyhow!("cannot write man pages into {}: {e}", dir.display())
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(shell: Shell) -> String {
        let mut cmd = crate::Cli::command();
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut cmd, "dictum", &mut buf);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn completions_know_the_subcommands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let text = completion(shell);
            for sub in ["transcribe", "history", "models", "doctor", "completions"] {
                assert!(text.contains(sub), "{shell} completion lacks {sub}");
            }
        }
        assert!(completion(Shell::Bash).contains("complete -F _dictum"));
        assert!(completion(Shell::Fish).contains("complete -c dictum"));
        assert!(completion(Shell::Zsh).starts_with("#compdef dictum"));
    }

    #[test]
    fn man_page_has_name_synopsis_and_version() {
        let mut buf = Vec::new();
        clap_mangen::Man::new(crate::Cli::command())
            .render(&mut buf)
            .unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains(".TH dictum 1"), "{}", &text[..200]);
        assert!(text.contains(".SH NAME"));
        assert!(text.contains(".SH SYNOPSIS"));
        assert!(text.contains("transcribe"));
        assert!(text.contains(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn man_dir_writes_a_page_per_subcommand() {
        let dir = tempfile::tempdir().unwrap();
        man(ManArgs {
            dir: Some(dir.path().to_path_buf()),
        })
        .unwrap();
        for page in ["dictum.1", "dictum-transcribe.1", "dictum-models.1"] {
            assert!(dir.path().join(page).is_file(), "{page} missing");
        }
    }

    #[test]
    fn version_names_the_build_features() {
        let v = crate::Cli::command().render_version();
        assert!(
            v.starts_with(concat!("dictum ", env!("CARGO_PKG_VERSION"))),
            "{v}"
        );
        assert!(v.contains(dictum_engine::BUILD_FEATURES), "{v}");
    }
}
