//! `dictum key set|clear|status stt|llm`: the servers' API keys in the desktop keyring. The key
//! is read from stdin (never a command-line argument: those are visible to every process), and
//! never printed: on a terminal it is read with echo off (restored afterwards, also on Ctrl-C),
//! so it is not on the screen or in the terminal's scrollback; a piped key is read as it comes.

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

/// One line from stdin; on a terminal, asked for and read with echo off.
fn read_key_line(server: Server) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    let quiet = if stdin.is_terminal() {
        let quiet = no_echo::NoEcho::start().map_err(|e| {
            anyhow::anyhow!(
                "cannot turn off the terminal's echo ({e}), so the key would show; pipe it instead: `dictum key set {} < file`",
                server.slot()
            )
        })?;
        eprintln!(
            "dictum: paste the {} server's API key and press Enter (it is not shown):",
            server.slot()
        );
        Some(quiet)
    } else {
        None
    };
    let mut line = String::new();
    stdin.lock().read_line(&mut line)?;
    drop(quiet);
    Ok(line)
}

/// The terminal's echo turned off for as long as the guard lives (Unix termios on stdin).
#[cfg(unix)]
mod no_echo {
    use std::sync::OnceLock;

    /// The settings to put back, for the signal handler.
    static SAVED: OnceLock<libc::termios> = OnceLock::new();
    const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

    /// Puts the echo back, then dies of the signal as it would have.
    extern "C" fn restore_and_die(sig: libc::c_int) {
        if let Some(t) = SAVED.get() {
            // SAFETY: tcsetattr, signal and raise are async-signal-safe; `t` is a valid termios.
            unsafe {
                libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t);
            }
        }
        // SAFETY: as above.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    pub struct NoEcho {
        old: libc::termios,
        handlers: Vec<(libc::c_int, libc::sighandler_t)>,
    }

    impl NoEcho {
        pub fn start() -> std::io::Result<NoEcho> {
            // SAFETY: termios is plain data; tcgetattr fills it or fails.
            let mut old: libc::termios = unsafe { std::mem::zeroed() };
            // SAFETY: a valid pointer to a termios.
            if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut old) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let _ = SAVED.set(old);
            let handler = restore_and_die as extern "C" fn(libc::c_int) as libc::sighandler_t;
            let handlers = SIGNALS
                .iter()
                // SAFETY: installs a handler that only calls async-signal-safe functions.
                .map(|&sig| (sig, unsafe { libc::signal(sig, handler) }))
                .collect();
            let mut quiet = old;
            // No echo of what is typed, but the Enter still moves to the next line.
            quiet.c_lflag &= !libc::ECHO;
            quiet.c_lflag |= libc::ECHONL;
            let guard = NoEcho { old, handlers };
            // SAFETY: a valid termios for stdin.
            if unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &quiet) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(guard)
        }
    }

    impl Drop for NoEcho {
        fn drop(&mut self) {
            // SAFETY: the settings read at the start; the handlers that were there before.
            unsafe {
                libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.old);
                for &(sig, previous) in &self.handlers {
                    libc::signal(sig, previous);
                }
            }
        }
    }
}

/// No termios here: a terminal's key would show, so only a piped key is accepted.
#[cfg(not(unix))]
mod no_echo {
    pub struct NoEcho;

    impl NoEcho {
        pub fn start() -> std::io::Result<NoEcho> {
            Err(std::io::Error::other("no termios on this system"))
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        Action::Set { server } => {
            let line = read_key_line(server)?;
            // Bound to the server saved now: a later URL change does not carry it along.
            let config = crate::context::load_config()?;
            let url = match server {
                Server::Stt => config.stt.url,
                Server::Llm => config.llm.url,
            };
            dictum_engine::secrets::keyring_set_for(server.slot(), line.trim(), &url)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let origin = dictum_engine::secrets::origin_of(&url).unwrap_or(url);
            eprintln!(
                "dictum: the {} key is in the keyring, for {origin} only (used when {}.api_key_env is empty; after changing {}.url, enter it again)",
                server.slot(),
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
