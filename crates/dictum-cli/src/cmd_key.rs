//! `dictum key set|clear|status stt|llm`: the servers' API keys in the desktop keyring. The key
//! is read from stdin (never a command-line argument: those are visible to every process), and
//! never printed.

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Store the key for SERVER ("stt" or "llm"), read from stdin (one line).
    Set { server: Server },
    /// Remove the key for SERVER from the keyring.
    Clear { server: Server },
    /// Say whether the keyring holds a key for SERVER (the key is never shown).
    Status { server: Server },
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum Server {
    /// The speech server ([stt] backend = "openai").
    Stt,
    /// The LLM server ([llm] backend = "openai").
    Llm,
}

impl Server {
    fn slot(self) -> &'static str {
        match self {
            Server::Stt => "stt",
            Server::Llm => "llm",
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        Action::Set { server } => {
            if std::io::stdin().is_terminal() {
                eprintln!(
                    "dictum: paste the {} server's API key and press Enter:",
                    server.slot()
                );
            }
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            dictum_engine::secrets::keyring_set(server.slot(), line.trim())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            eprintln!(
                "dictum: the {} key is in the keyring (used when {}.api_key_env is empty)",
                server.slot(),
                server.slot()
            );
        }
        Action::Clear { server } => {
            let removed = dictum_engine::secrets::keyring_delete(server.slot())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            eprintln!(
                "dictum: {}",
                if removed {
                    "the key was removed from the keyring"
                } else {
                    "the keyring held no such key"
                }
            );
        }
        Action::Status { server } => {
            match dictum_engine::secrets::keyring_get(server.slot())
                .map_err(|e| anyhow::anyhow!("{e}"))?
            {
                Some(_) => println!("the keyring holds a {} key", server.slot()),
                None => {
                    println!("the keyring holds no {} key", server.slot());
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
