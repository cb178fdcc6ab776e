//! The control socket: `dictum ctl toggle` (or press/release/cancel/pause/resume/quit) drives
//! a running `dictum run` or tray app. This is how a Wayland session, where no program may grab
//! a global key, binds dictation to a compositor shortcut (e.g. sway:
//! `bindsym --no-repeat $mod+d exec dictum ctl press` and
//! `bindsym --release $mod+d exec dictum ctl release`).
//!
//! A Unix socket private to the user (`$XDG_RUNTIME_DIR/dictum/control.sock`, mode 0600):
//! one command line in, one line out (`ok` or `error: ...`). One Dictum owns it at a time; a
//! socket left by a crashed one is replaced.

use super::Command;
use crate::{Error, Result};
use std::path::PathBuf;
use std::sync::mpsc::Sender;

/// The words `dictum ctl` and `dictum run --stdin-commands` understand.
pub const COMMANDS: &str = "press, release, toggle, cancel, pause, resume, quit";

/// One command word as a [`Command`].
pub fn parse_command(word: &str) -> std::result::Result<Command, String> {
    Ok(match word.trim() {
        "press" => Command::Press,
        "release" => Command::Release,
        "toggle" => Command::Toggle,
        "cancel" => Command::Cancel,
        "pause" => Command::PauseHotkey(true),
        "resume" => Command::PauseHotkey(false),
        "quit" | "exit" => Command::Shutdown,
        other => return Err(format!("unknown command `{other}` ({COMMANDS})")),
    })
}

/// Where the socket lives: `$DICTUM_CONTROL_SOCKET`; else next to the data when
/// `$DICTUM_DATA_DIR` is set (tests, portable setups); else `$XDG_RUNTIME_DIR/dictum/`; else
/// the data dir.
pub fn socket_path() -> Result<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = env("DICTUM_CONTROL_SOCKET") {
        return Ok(PathBuf::from(p));
    }
    if env(crate::paths::DATA_DIR_ENV).is_none() {
        if let Some(run) = env("XDG_RUNTIME_DIR") {
            return Ok(PathBuf::from(run).join("dictum").join("control.sock"));
        }
    }
    Ok(crate::paths::data_dir()?.join("control.sock"))
}

/// The listening socket; removed when dropped.
pub struct ControlServer {
    path: PathBuf,
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(unix)]
mod imp {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::{UnixListener, UnixStream};
    use std::time::Duration;

    pub fn serve(commands: Sender<Command>) -> Result<ControlServer> {
        let path = socket_path()?;
        let io = |what: &str, e: std::io::Error| {
            Error::Control(format!("cannot {what} at {}: {e}", path.display()))
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io("create its folder", e))?;
        }
        if path.exists() {
            if UnixStream::connect(&path).is_ok() {
                return Err(Error::Control(format!(
                    "another Dictum is running and owns {}; `dictum ctl` drives that one",
                    path.display()
                )));
            }
            // Left by a Dictum that did not exit cleanly.
            std::fs::remove_file(&path).map_err(|e| io("replace a stale one", e))?;
        }
        let listener = UnixListener::bind(&path).map_err(|e| io("listen", e))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io("make it private", e))?;
        std::thread::Builder::new()
            .name("dictum-control".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    if !answer(stream, &commands) {
                        break; // the dictation is gone
                    }
                }
            })
            .map_err(|e| io("start its thread", e))?;
        Ok(ControlServer { path })
    }

    /// Handles one connection; false when the dictation no longer takes commands.
    fn answer(stream: UnixStream, commands: &Sender<Command>) -> bool {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let mut line = String::new();
        let mut reader = BufReader::new(&stream);
        if reader.read_line(&mut line).is_err() {
            return true;
        }
        let (reply, alive) = match parse_command(&line) {
            Ok(cmd) => match commands.send(cmd) {
                Ok(()) => ("ok".to_string(), true),
                Err(_) => ("error: dictation has stopped".to_string(), false),
            },
            Err(e) => (format!("error: {e}"), true),
        };
        let _ = (&stream).write_all(format!("{reply}\n").as_bytes());
        alive
    }

    pub fn send(word: &str) -> Result<String> {
        let path = socket_path()?;
        let mut stream = UnixStream::connect(&path).map_err(|e| {
            Error::Control(format!(
                "no Dictum is running here ({} : {e}); start `dictum run` or the tray app first",
                path.display()
            ))
        })?;
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        stream
            .write_all(format!("{}\n", word.trim()).as_bytes())
            .map_err(|e| Error::Control(format!("cannot send to {}: {e}", path.display())))?;
        let mut reply = String::new();
        BufReader::new(&stream)
            .read_line(&mut reply)
            .map_err(|e| Error::Control(format!("no answer from {}: {e}", path.display())))?;
        match reply.trim() {
            "ok" => Ok("ok".into()),
            other => Err(Error::Control(
                other.strip_prefix("error: ").unwrap_or(other).to_string(),
            )),
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use super::*;

    pub fn serve(_commands: Sender<Command>) -> Result<ControlServer> {
        Err(Error::Control(
            "the control socket needs a Unix system; use the hotkey or the tray menu".into(),
        ))
    }

    pub fn send(_word: &str) -> Result<String> {
        Err(Error::Control(
            "`dictum ctl` needs a Unix system; use the hotkey or the tray menu".into(),
        ))
    }
}

/// Listens on [`socket_path`] and forwards each command to `commands` (a running dictation's
/// [`super::Dictation::command_sender`]). Fails when another Dictum owns the socket.
pub fn serve(commands: Sender<Command>) -> Result<ControlServer> {
    imp::serve(commands)
}

/// Sends one command word to the running Dictum; `Ok` when it took it.
pub fn send(word: &str) -> Result<String> {
    imp::send(word)
}
