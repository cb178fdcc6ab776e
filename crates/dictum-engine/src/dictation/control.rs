//! The control socket: `dictum ctl toggle` (or press/release/cancel/pause/resume/quit) drives
//! a running `dictum run` or tray app. This is how a Wayland session, where no program may grab
//! a global key, binds dictation to a compositor shortcut (e.g. sway:
//! `bindsym --no-repeat $mod+d exec dictum ctl press` and
//! `bindsym --release $mod+d exec dictum ctl release`).
//!
//! A Unix socket private to the user (`$XDG_RUNTIME_DIR/dictum/control.sock`, mode 0600, in a
//! folder that must be the user's own and 0700: a wider one is tightened, another user's is
//! refused): one command line in (at most [`MAX_LINE`] bytes, newline included), one line out
//! (`ok`, `ok <detail>` or `error: ...`), connection closed. Each connection has its own
//! thread and a read deadline, so a client that connects and says nothing delays nobody but
//! itself; at most [`MAX_CLIENTS`] are served at once (more are told to retry). One Dictum
//! owns the socket at a time; a socket left by a crashed one is replaced.

use super::Command;
use crate::{Error, Result};
use std::path::PathBuf;
use std::sync::mpsc::Sender;

/// The words `dictum ctl` and `dictum run --stdin-commands` understand.
pub const COMMANDS: &str =
    "press, press --style NAME, release, toggle, cancel, pause, resume, hands-free [on|off|toggle], edit-press, edit-release, type ID, retype, transcribe FILE, quit";

/// Longest request line the socket reads, newline included; a longer one is refused.
pub const MAX_LINE: usize = 256;

/// Connections served at the same time; more are answered `error: busy` at once.
pub const MAX_CLIENTS: usize = 16;

/// How long a connection may take to send its line.
pub const READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// How long `type ID` and `retype` wait for the typing to end before answering (the typing goes on; the
/// row says how it went).
pub const TYPE_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// One command word as a [`Command`].
pub fn parse_command(word: &str) -> std::result::Result<Command, String> {
    let mut words = word.split_whitespace();
    let first = words.next().unwrap_or("");
    if matches!(first, "hands-free" | "hands_free") {
        let on = match (words.next(), words.next()) {
            (None | Some("toggle"), None) => None,
            (Some("on" | "start"), None) => Some(true),
            (Some("off" | "stop"), None) => Some(false),
            _ => {
                return Err(format!(
                    "unknown command `{}` (hands-free on, hands-free off or hands-free toggle)",
                    word.trim()
                ))
            }
        };
        return Ok(Command::HandsFree(on));
    }
    if first == "press" {
        return match (words.next(), words.next(), words.next()) {
            (None, ..) => Ok(Command::Press),
            (Some("--style"), Some(name), None) if style_name(name) => {
                Ok(Command::PressStyle(name.to_string()))
            }
            _ => Err(format!(
                "unknown command `{}` (press, or press --style NAME: a [[style]]'s name)",
                word.trim()
            )),
        };
    }
    if first == "transcribe" {
        // The rest of the line is the path (it may hold spaces).
        let path = word.trim().strip_prefix("transcribe").unwrap_or("").trim();
        let path = std::path::Path::new(path);
        return if path.is_absolute() {
            Ok(Command::TranscribeFile(path.to_path_buf()))
        } else {
            Err(format!(
                "unknown command `{}` (transcribe FILE: the file's full path)",
                word.trim()
            ))
        };
    }
    if first == "type" {
        return match (words.next().map(str::parse::<i64>), words.next()) {
            (Some(Ok(id)), None) => Ok(Command::TypeStored(super::TypeStored::id(id))),
            _ => Err(format!(
                "unknown command `{}` (type ID: the history row whose text is typed)",
                word.trim()
            )),
        };
    }
    Ok(match word.trim() {
        "press" => Command::Press,
        "release" => Command::Release,
        "toggle" => Command::Toggle,
        "cancel" => Command::Cancel,
        "pause" => Command::PauseHotkey(true),
        "resume" => Command::PauseHotkey(false),
        "edit-press" => Command::EditPress,
        "edit-release" => Command::EditRelease,
        // The last dictation again, through the same gate (`dictation::retype`).
        "retype" => Command::TypeStored(super::TypeStored::last_dictation()),
        "quit" | "exit" => Command::Shutdown,
        other => return Err(format!("unknown command `{other}` ({COMMANDS})")),
    })
}

/// A word that can be a style's name (`config::style::validate` says which are).
fn style_name(word: &str) -> bool {
    word.chars().count() <= crate::config::style::NAME_MAX
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
}

/// What a client can ask the socket.
#[derive(Debug)]
pub enum Request {
    /// Forwarded to the dictation.
    Command(Command),
    /// Answered by the socket itself: `ok running (pid N)`; is a Dictum there?
    Status,
}

/// One request word: a [`COMMANDS`] word or `status`.
pub fn parse_request(word: &str) -> std::result::Result<Request, String> {
    match word.trim() {
        "status" => Ok(Request::Status),
        other => parse_command(other)
            .map(Request::Command)
            .map_err(|_| format!("unknown command `{other}` ({COMMANDS}, status)")),
    }
}

/// Reads one request line from `input`, never more than [`MAX_LINE`] bytes of it, and parses
/// it. The error is the reply's text (after `error: `).
pub fn read_request(input: impl std::io::Read) -> std::result::Result<Request, String> {
    use std::io::Read;
    let mut line = Vec::with_capacity(64);
    let mut limited = input.take(MAX_LINE as u64);
    let mut byte = [0u8; 1];
    let mut ended = false;
    // Byte by byte: nothing past the newline (or past the limit) is consumed.
    loop {
        match limited.read(&mut byte) {
            Ok(0) => break,
            Ok(_) if byte[0] == b'\n' => {
                ended = true;
                break;
            }
            Ok(_) => line.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!(
                    "no complete command within {} s",
                    READ_TIMEOUT.as_secs()
                ))
            }
            Err(e) => return Err(format!("cannot read the command: {e}")),
        }
    }
    if !ended && line.len() >= MAX_LINE {
        return Err(format!(
            "command too long (at most {MAX_LINE} bytes a line; {COMMANDS}, status)"
        ));
    }
    let text = std::str::from_utf8(&line)
        .map_err(|_| format!("the command is not UTF-8 text ({COMMANDS}, status)"))?;
    parse_request(text)
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

/// The listening socket; removed when dropped, and its accept thread ended (a tray that
/// restarts its dictation must not leave a thread and a descriptor behind each time).
pub struct ControlServer {
    path: PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accept loop, which sees `stop` and returns, closing the listener.
        #[cfg(unix)]
        let _ = std::os::unix::net::UnixStream::connect(&self.path);
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(unix)]
mod imp {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::{UnixListener, UnixStream};
    use std::path::Path;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Makes sure `dir` is a private folder of this user: created 0700 (parents too) if
    /// missing; otherwise used only if it is a real folder of this user with no access for
    /// anyone else. A folder that exists is never changed: one open to others, another
    /// user's, a symlink or a shared sticky folder such as /tmp is refused with what to do
    /// (its files may already have been seen or planted; tightening it would hide that).
    pub fn private_socket_dir(dir: &Path) -> Result<()> {
        let refuse = |why: String| {
            Error::Control(format!(
                "cannot use {} for the control socket: {why}; set DICTUM_CONTROL_SOCKET to a path in a folder of your own",
                dir.display()
            ))
        };
        if std::fs::symlink_metadata(dir).is_err() {
            crate::paths::create_private_dir_all(dir)
                .map_err(|e| refuse(format!("cannot create it ({e})")))?;
        }
        match crate::paths::check_private_dir(dir) {
            Ok(()) => Ok(()),
            Err(crate::paths::NotPrivate::OpenToOthers { mode }) => Err(Error::Control(format!(
                "cannot use {} for the control socket: it is open to others (mode {mode:o}); \
                 make it private with `chmod 700 {}` if only you use it, or set \
                 DICTUM_CONTROL_SOCKET to a path in a folder of your own",
                dir.display(),
                dir.display()
            ))),
            Err(why) => Err(refuse(why.to_string())),
        }
    }

    /// Waits after a failed `accept` (out of descriptors, memory): 10 ms, doubling up to
    /// 1 s, back to 10 ms after a success, so a lasting failure does not spin a core.
    pub(crate) struct AcceptBackoff {
        next: Duration,
    }

    impl AcceptBackoff {
        pub(crate) const FIRST: Duration = Duration::from_millis(10);
        pub(crate) const MAX: Duration = Duration::from_secs(1);

        pub(crate) fn new() -> AcceptBackoff {
            AcceptBackoff { next: Self::FIRST }
        }

        /// The pause after one more failure.
        pub(crate) fn failed(&mut self) -> Duration {
            let now = self.next;
            self.next = (self.next * 2).min(Self::MAX);
            now
        }

        pub(crate) fn succeeded(&mut self) {
            self.next = Self::FIRST;
        }
    }

    pub fn serve(commands: Sender<Command>) -> Result<ControlServer> {
        let path = socket_path()?;
        let io = |what: &str, e: std::io::Error| {
            Error::Control(format!("cannot {what} at {}: {e}", path.display()))
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // The data folder (the socket's place without XDG_RUNTIME_DIR) is Dictum's own,
            // kept 0700 wherever Dictum opens it.
            if crate::paths::data_dir().is_ok_and(|d| d == dir) {
                crate::paths::create_private_dir_all(dir).map_err(|e| io("make its folder", e))?;
            }
            private_socket_dir(dir)?;
        }
        if std::fs::symlink_metadata(&path).is_ok() {
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
        let clients = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::Builder::new()
            .name("dictum-control".into())
            .spawn(move || accept_loop(listener, commands, clients, stopped))
            .map_err(|e| io("start its thread", e))?;
        Ok(ControlServer { path, stop })
    }

    fn accept_loop(
        listener: UnixListener,
        commands: Sender<Command>,
        clients: Arc<AtomicUsize>,
        stop: Arc<std::sync::atomic::AtomicBool>,
    ) {
        let alive = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let mut backoff = AcceptBackoff::new();
        let mut logged = false;
        for stream in listener.incoming() {
            if !alive.load(Ordering::SeqCst) || stop.load(Ordering::SeqCst) {
                break; // the dictation is gone, or the server was dropped
            }
            let stream = match stream {
                Ok(s) => {
                    backoff.succeeded();
                    s
                }
                Err(e) => {
                    if !logged {
                        logged = true;
                        tracing::warn!(
                            "control socket: cannot accept a connection ({e}); retrying with \
                             pauses up to {:?}",
                            AcceptBackoff::MAX
                        );
                    }
                    std::thread::sleep(backoff.failed());
                    continue;
                }
            };
            if clients.fetch_add(1, Ordering::SeqCst) >= MAX_CLIENTS {
                clients.fetch_sub(1, Ordering::SeqCst);
                let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
                let _ = (&stream).write_all(b"error: busy (too many connections); retry\n");
                continue;
            }
            let (commands, count, alive) = (commands.clone(), clients.clone(), alive.clone());
            let spawned = std::thread::Builder::new()
                .name("dictum-control-client".into())
                .spawn(move || {
                    if !answer(&stream, &commands) {
                        alive.store(false, Ordering::SeqCst);
                    }
                    count.fetch_sub(1, Ordering::SeqCst);
                });
            if spawned.is_err() {
                clients.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// The stream with one deadline for the whole line (a per-read timeout alone would let a
    /// client trickle a byte a second for minutes).
    struct Deadline<'a> {
        stream: &'a UnixStream,
        until: Instant,
    }

    impl Read for Deadline<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let left = self.until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            self.stream.set_read_timeout(Some(left))?;
            (&*self.stream).read(buf)
        }
    }

    /// Handles one connection; false when the dictation no longer takes commands.
    fn answer(stream: &UnixStream, commands: &Sender<Command>) -> bool {
        let _ = stream.set_write_timeout(Some(READ_TIMEOUT));
        let request = read_request(Deadline {
            stream,
            until: Instant::now() + READ_TIMEOUT,
        });
        let (reply, alive) = match request {
            Ok(Request::Status) => (format!("ok running (pid {})", std::process::id()), true),
            // Answered before it is forwarded: a quitting process may be gone before this
            // thread could write (`ctl quit` then saw a closed connection instead of "ok").
            Ok(Request::Command(Command::Shutdown)) => {
                let _ = (&*stream).write_all(b"ok\n");
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return commands.send(Command::Shutdown).is_ok();
            }
            Ok(Request::Command(Command::TypeStored(mut job))) => {
                // `type ID` and `retype` are answered once typed: `dictum history --retry`
                // tells how it went.
                let (tx, rx) = std::sync::mpsc::channel();
                job.reply = Some(tx);
                match commands.send(Command::TypeStored(job)) {
                    Err(_) => ("error: dictation has stopped".to_string(), false),
                    Ok(()) => match rx.recv_timeout(TYPE_WAIT) {
                        Ok(Ok(done)) => (format!("ok {done}"), true),
                        Ok(Err(why)) => (format!("error: {why}"), true),
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => (
                            "error: still typing after the wait; the row says how it went \
                             (`dictum history`)"
                                .to_string(),
                            true,
                        ),
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => (
                            "error: the dictation is not running; nothing was typed".to_string(),
                            true,
                        ),
                    },
                }
            }
            Ok(Request::Command(cmd)) => match commands.send(cmd) {
                Ok(()) => ("ok".to_string(), true),
                Err(_) => ("error: dictation has stopped".to_string(), false),
            },
            Err(e) => (format!("error: {e}"), true),
        };
        let _ = (&*stream).write_all(format!("{reply}\n").as_bytes());
        // Whatever else the client sent is not read: the connection ends here.
        let _ = stream.shutdown(std::net::Shutdown::Both);
        alive
    }

    pub fn send(word: &str) -> Result<String> {
        send_waiting(word, Duration::from_secs(5))
    }

    pub fn send_waiting(word: &str, wait: Duration) -> Result<String> {
        let path = socket_path()?;
        let mut stream = UnixStream::connect(&path).map_err(|e| {
            Error::Control(format!(
                "no Dictum is running here ({} : {e}); start `dictum run` or the tray app first",
                path.display()
            ))
        })?;
        let _ = stream.set_read_timeout(Some(wait));
        stream
            .write_all(format!("{}\n", word.trim()).as_bytes())
            .map_err(|e| Error::Control(format!("cannot send to {}: {e}", path.display())))?;
        let mut reply = String::new();
        BufReader::new((&stream).take(4096))
            .read_line(&mut reply)
            .map_err(|e| Error::Control(format!("no answer from {}: {e}", path.display())))?;
        match reply.trim() {
            "ok" => Ok("ok".into()),
            ok if ok.starts_with("ok ") => Ok(ok.to_string()),
            "" => Err(Error::Control(format!(
                "{} closed the connection without answering; is it a Dictum?",
                path.display()
            ))),
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

    pub fn send(word: &str) -> Result<String> {
        send_waiting(word, std::time::Duration::ZERO)
    }

    pub fn send_waiting(_word: &str, _wait: std::time::Duration) -> Result<String> {
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

/// Sends one request word to the running Dictum; `Ok` with its reply (`ok`, or `ok running
/// (pid N)` for `status`) when it took it.
pub fn send(word: &str) -> Result<String> {
    imp::send(word)
}

/// [`send`], waiting up to `wait` for the answer (`type ID` and `retype` answer once typed).
pub fn send_waiting(word: &str, wait: std::time::Duration) -> Result<String> {
    imp::send_waiting(word, wait)
}

/// Whether a Dictum (`dictum run` or the tray app) answers on [`socket_path`].
pub fn running() -> bool {
    send("status").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Failed accepts wait 10 ms, 20 ms, ... up to 1 s each, and a success starts over.
    #[cfg(unix)]
    #[test]
    fn accept_failures_back_off_doubling_to_a_second() {
        use std::time::Duration;
        let mut b = imp::AcceptBackoff::new();
        let pauses: Vec<u128> = (0..10).map(|_| b.failed().as_millis()).collect();
        assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]);
        b.succeeded();
        assert_eq!(b.failed(), Duration::from_millis(10));
    }

    #[test]
    fn type_takes_one_row_id() {
        match parse_request("type 42\n") {
            Ok(Request::Command(Command::TypeStored(job))) => {
                assert_eq!(job.row, super::super::StoredRow::Id(42));
                assert!(job.reply.is_none());
            }
            other => panic!("{other:?}"),
        }
        for bad in ["type", "type x", "type 4 2", "type -"] {
            assert!(parse_request(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn retype_is_the_last_dictation_through_the_same_path() {
        match parse_request("retype\n") {
            Ok(Request::Command(Command::TypeStored(job))) => {
                assert_eq!(job.row, super::super::StoredRow::LastDictation);
                assert!(job.reply.is_none());
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_request("retype 3").is_err());
        assert!(COMMANDS.contains("retype"));
    }

    #[test]
    fn press_may_name_a_style() {
        assert!(matches!(parse_command("press"), Ok(Command::Press)));
        match parse_command("press --style chat\n") {
            Ok(Command::PressStyle(name)) => assert_eq!(name, "chat"),
            other => panic!("{other:?}"),
        }
        for bad in [
            "press --style",
            "press chat",
            "press --style a b",
            "press --style a;b",
        ] {
            let err = parse_command(bad).expect_err(bad);
            assert!(err.contains("press --style NAME"), "{err}");
        }
        assert!(COMMANDS.contains("press --style NAME"));
    }

    #[test]
    fn hands_free_takes_on_off_or_toggle() {
        let on = |line: &str| match parse_command(line) {
            Ok(Command::HandsFree(on)) => Ok(on),
            Ok(other) => panic!("{line:?} gave {other:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(on("hands-free"), Ok(None));
        assert_eq!(on(" hands-free toggle\n"), Ok(None));
        assert_eq!(on("hands-free on"), Ok(Some(true)));
        assert_eq!(on("hands_free off"), Ok(Some(false)));
        let err = on("hands-free maybe").expect_err("refused");
        assert!(err.starts_with("unknown command"), "{err}");
        assert!(on("hands-free on now").is_err());
        assert!(matches!(
            parse_request("hands-free off"),
            Ok(Request::Command(Command::HandsFree(Some(false))))
        ));
    }
}
