//! The output muted while recording (`[dictation] mute_output`, issue 29 item 3's
//! alternative to pausing players): the default output sink of PulseAudio (or PipeWire's
//! PulseAudio server) is muted at the press and unmuted once the dictation's text is typed, or
//! when it is cancelled, fails or produced nothing. A sink that was muted already (the user's
//! doing) is left alone and stays muted.
//!
//! Nothing stays muted after a crash:
//! - the sink's name is written to a small private state file next to the history
//!   ([`STATE_FILE`]) *before* it is muted, and removed once it is unmuted; a file left
//!   behind by a killed Dictum is undone at the next start ([`unmute_left_over`]; the
//!   systemd unit restarts a crashed `dictum run` after 5 s);
//! - a bounded time-out: the controller calls [`Muter::set`] on every round of its loop
//!   (every 20–250 ms); if it stops doing so for [`STALL_LIMIT`] while the output is muted
//!   (a hung controller), the sink is unmuted by the muter's own thread.
//!
//! The server is spoken to directly over its native protocol with the `pulseaudio` crate
//! (pure Rust, already in the tree as cpal's PulseAudio backend): no `pactl` needed at run
//! time, no child process, and each request is bounded by socket time-outs ([`CALL_LIMIT`]).
//! The passes run on a thread of their own ([`Muter`]): a hung server delays neither capture
//! nor typing.

use pulseaudio::protocol::{self as pa, Command};
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The state file's name, in the history database's folder (beside the players' one).
pub const STATE_FILE: &str = "output-muted.json";
/// One request to the sound server (socket read and write time-outs).
pub const CALL_LIMIT: Duration = Duration::from_millis(500);
/// The output is unmuted when the controller has not been heard from for this long.
pub const STALL_LIMIT: Duration = Duration::from_secs(30);
/// How often a muted muter checks the controller's heartbeat (at most).
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Which sound server to speak to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Server {
    /// As libpulse finds it: `$PULSE_SERVER` (a local one), `$PULSE_RUNTIME_PATH/native`,
    /// `$XDG_RUNTIME_DIR/pulse/native`.
    #[default]
    FromEnv,
    /// This socket (tests: a private daemon, without touching the environment).
    Socket(PathBuf),
}

fn what_to_do() -> &'static str {
    "check that PulseAudio or PipeWire (pipewire-pulse) is running (`pactl info`), or turn [dictation] mute_output off"
}

impl Server {
    fn socket(&self) -> Result<PathBuf, String> {
        match self {
            Server::Socket(p) => Ok(p.clone()),
            Server::FromEnv => socket_from(|k| std::env::var(k).ok()),
        }
    }
}

/// The server's socket as libpulse finds it from the environment (`var` reads a variable).
fn socket_from(var: impl Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    let env = |k: &str| var(k).filter(|v| !v.is_empty());
    if let Some(list) = env("PULSE_SERVER") {
        // A list of servers, tried in order; only local sockets can be used here.
        return list
            .split_whitespace()
            .find_map(|s| {
                let s = s.strip_prefix("unix:").unwrap_or(s);
                s.starts_with('/').then(|| PathBuf::from(s))
            })
            .ok_or_else(|| {
                format!(
                    "the output cannot be muted: PULSE_SERVER ({list}) names no local socket; \
                     muting needs the local sound server, or turn [dictation] mute_output off"
                )
            });
    }
    let candidates: Vec<PathBuf> = env("PULSE_RUNTIME_PATH")
        .map(|d| PathBuf::from(d).join("native"))
        .into_iter()
        .chain(env("XDG_RUNTIME_DIR").map(|d| PathBuf::from(d).join("pulse/native")))
        .collect();
    candidates
        .iter()
        .find(|p| p.exists())
        .or(candidates.last())
        .cloned()
        .ok_or_else(|| {
            format!(
                "the output cannot be muted: no sound server found (XDG_RUNTIME_DIR is not set); {}",
                what_to_do()
            )
        })
}

/// One connection to the server, requests answered in order.
struct Conn {
    sock: BufReader<UnixStream>,
    version: u16,
    seq: u32,
    path: PathBuf,
}

impl Conn {
    fn open(server: &Server) -> Result<Conn, String> {
        let path = server.socket()?;
        let stream = UnixStream::connect(&path).map_err(|e| {
            format!(
                "the output cannot be muted: no sound server at {} ({e}); {}",
                path.display(),
                what_to_do()
            )
        })?;
        stream
            .set_read_timeout(Some(CALL_LIMIT))
            .and_then(|()| stream.set_write_timeout(Some(CALL_LIMIT)))
            .map_err(|e| format!("the output cannot be muted: {e}"))?;
        let mut conn = Conn {
            sock: BufReader::new(stream),
            version: pa::MAX_VERSION,
            seq: 0,
            path,
        };
        // PulseAudio checks the cookie (PipeWire ignores it); none is an empty one.
        let cookie = pulseaudio::cookie_path_from_env()
            .and_then(|p| std::fs::read(p).ok())
            .unwrap_or_default();
        let auth: pa::AuthReply = conn.reply(Command::Auth(pa::AuthParams {
            version: pa::MAX_VERSION,
            supports_shm: false,
            supports_memfd: false,
            cookie,
        }))?;
        conn.version = auth.version.min(pa::MAX_VERSION);
        let mut props = pa::Props::new();
        props.set(pa::Prop::ApplicationName, c"Dictum");
        if let Ok(pid) = CString::new(std::process::id().to_string()) {
            props.set(pa::Prop::ApplicationProcessId, pid);
        }
        let _: pa::SetClientNameReply = conn.reply(Command::SetClientName(props))?;
        Ok(conn)
    }

    fn fail(&self, e: &pa::ProtocolError) -> String {
        match e {
            pa::ProtocolError::Io(io)
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                format!(
                    "the sound server at {} did not answer within {} ms; it may hang ({})",
                    self.path.display(),
                    CALL_LIMIT.as_millis(),
                    what_to_do()
                )
            }
            e => format!("the sound server at {}: {e}", self.path.display()),
        }
    }

    fn send(&mut self, cmd: &Command) -> Result<u32, pa::ProtocolError> {
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        pa::write_command_message(self.sock.get_mut(), seq, cmd, self.version)?;
        Ok(seq)
    }

    fn reply<R: pa::CommandReply>(&mut self, cmd: Command) -> Result<R, String> {
        self.try_reply(cmd).map_err(|e| self.fail(&e))
    }

    fn try_reply<R: pa::CommandReply>(&mut self, cmd: Command) -> Result<R, pa::ProtocolError> {
        let seq = self.send(&cmd)?;
        let (got, r) = pa::read_reply_message::<R>(&mut self.sock, self.version)?;
        if got != seq {
            return Err(pa::ProtocolError::Invalid(format!(
                "reply {got} to request {seq}"
            )));
        }
        Ok(r)
    }

    fn ack(&mut self, cmd: Command) -> Result<(), String> {
        let seq = self.send(&cmd).map_err(|e| self.fail(&e))?;
        match pa::read_ack_message(&mut self.sock) {
            Ok(got) if got == seq => Ok(()),
            Ok(got) => Err(self.fail(&pa::ProtocolError::Invalid(format!(
                "reply {got} to request {seq}"
            )))),
            Err(e) => Err(self.fail(&e)),
        }
    }

    /// The default sink's name.
    fn default_sink(&mut self) -> Result<String, String> {
        let info: pa::ServerInfo = self.reply(Command::GetServerInfo)?;
        info.default_sink_name
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                "the output cannot be muted: the sound server has no default output device (`pactl info`)".into()
            })
    }

    /// Whether the sink `name` is muted; None when there is no such sink (any more).
    fn sink_muted(&mut self, name: &str) -> Result<Option<bool>, String> {
        let cname = CString::new(name).map_err(|e| e.to_string())?;
        match self.try_reply::<pa::SinkInfo>(Command::GetSinkInfo(pa::GetSinkInfo {
            index: None,
            name: Some(cname),
        })) {
            Ok(info) => Ok(Some(info.muted)),
            Err(pa::ProtocolError::ServerError(pa::PulseError::NoEntity)) => Ok(None),
            Err(e) => Err(self.fail(&e)),
        }
    }

    fn set_sink_mute(&mut self, name: &str, mute: bool) -> Result<(), String> {
        let cname = CString::new(name).map_err(|e| e.to_string())?;
        self.ack(Command::SetSinkMute(pa::SetDeviceMuteParams {
            device_index: None,
            device_name: Some(cname),
            mute,
        }))
    }
}

/// The sink Dictum muted (by name: a sink keeps it across server restarts, and a device
/// unplugged and plugged in again gets the same one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Muted {
    pub sink: String,
}

/// The state file for a history database at `history_db`.
pub fn state_file(history_db: &Path) -> PathBuf {
    history_db
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(STATE_FILE)
}

impl Muted {
    /// Writes it to `path` (private, written whole then renamed).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        super::state_file::save(self, path)
    }

    /// The one saved at `path`; None when there is none (a damaged file is removed: it
    /// unmutes nothing).
    pub fn load(path: &Path) -> Option<Muted> {
        super::state_file::load(path, "output mute")
    }
}

/// Whether the sink `name` is muted (None: no such sink).
pub fn sink_muted(server: &Server, name: &str) -> Result<Option<bool>, String> {
    Conn::open(server)?.sink_muted(name)
}

/// Mutes the default sink unless it is muted already. Returns the sink when this call muted
/// it (None: it was muted already, left as it is). `state` is written before the sink is
/// muted, so that no crash can leave it muted without the file.
pub fn mute_default(server: &Server, state: &Path) -> Result<Option<Muted>, String> {
    let mut conn = Conn::open(server)?;
    let sink = conn.default_sink()?;
    if conn.sink_muted(&sink)? != Some(false) {
        return Ok(None);
    }
    let muted = Muted { sink };
    muted.save(state)?;
    if let Err(e) = conn.set_sink_mute(&muted.sink, true) {
        let _ = std::fs::remove_file(state);
        return Err(e);
    }
    Ok(Some(muted))
}

/// Unmutes the sink Dictum muted if it is still muted and still there; true when it did.
/// `state` is removed once the sink is unmuted (or gone); on an error it stays, for the next
/// start.
pub fn unmute(server: &Server, muted: &Muted, state: &Path) -> Result<bool, String> {
    let mut conn = Conn::open(server)?;
    let done = match conn.sink_muted(&muted.sink)? {
        Some(true) => {
            conn.set_sink_mute(&muted.sink, false)?;
            true
        }
        // Unmuted meanwhile (the user did), or unplugged: nothing to undo.
        Some(false) | None => false,
    };
    let _ = std::fs::remove_file(state);
    Ok(done)
}

/// Unmutes the sink a previous Dictum muted and did not unmute (it crashed or was killed):
/// the one in the state file at `path`. The file is removed once that is done; Some(sink)
/// when it was unmuted.
pub fn unmute_left_over(path: &Path, server: &Server) -> Result<Option<String>, String> {
    let Some(muted) = Muted::load(path) else {
        return Ok(None);
    };
    Ok(unmute(server, &muted, path)?.then_some(muted.sink))
}

enum Job {
    Want(bool),
    Recover,
    /// Answered once the jobs sent before it are done.
    Sync(mpsc::Sender<()>),
}

/// The controller's side: [`Muter::set`] says whether the output should be muted now
/// (recording or typing under way with `mute_output` on), on every round of the controller's
/// loop (its heartbeat, see [`STALL_LIMIT`]); the passes run in order on a thread of their
/// own. Dropped, it unmutes what it muted and waits for that.
pub struct Muter {
    tx: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
    want: bool,
    /// Milliseconds from `epoch` to the last [`Muter::set`].
    beat: Arc<AtomicU64>,
    epoch: Instant,
}

impl Muter {
    /// `state` is the state file ([`state_file`]).
    pub fn new(server: Server, state: PathBuf) -> Muter {
        Muter::with_stall_limit(server, state, STALL_LIMIT)
    }

    /// [`Muter::new`] with another [`STALL_LIMIT`] (tests).
    pub fn with_stall_limit(server: Server, state: PathBuf, stall: Duration) -> Muter {
        let (tx, rx) = mpsc::channel::<Job>();
        let beat = Arc::new(AtomicU64::new(0));
        let epoch = Instant::now();
        let thread = {
            let beat = beat.clone();
            std::thread::Builder::new()
                .name("dictum-mute".into())
                .spawn(move || {
                    Serve {
                        server,
                        state,
                        stall,
                        beat,
                        epoch,
                    }
                    .run(rx)
                })
                .map_err(|e| tracing::warn!("output mute: cannot start its thread: {e}"))
                .ok()
        };
        Muter {
            tx: thread.as_ref().map(|_| tx),
            thread,
            want: false,
            beat,
            epoch,
        }
    }

    /// Unmutes what a previous run left muted (see [`unmute_left_over`]), on the thread.
    pub fn recover(&self) {
        self.send(Job::Recover);
    }

    /// Mutes the default output when `want` turns true, unmutes it when it turns false; each
    /// call is also the controller's heartbeat.
    pub fn set(&mut self, want: bool) {
        self.beat.store(ms(self.epoch.elapsed()), Ordering::Relaxed);
        if want != self.want {
            self.want = want;
            self.send(Job::Want(want));
        }
    }

    /// Waits until the passes asked for so far are done, at most `limit`; false on time-out.
    pub fn wait_idle(&self, limit: Duration) -> bool {
        let (tx, rx) = mpsc::channel();
        self.send(Job::Sync(tx));
        rx.recv_timeout(limit).is_ok()
    }

    fn send(&self, job: Job) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(job);
        }
    }
}

impl Drop for Muter {
    fn drop(&mut self) {
        self.set(false);
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

struct Serve {
    server: Server,
    state: PathBuf,
    stall: Duration,
    beat: Arc<AtomicU64>,
    epoch: Instant,
}

impl Serve {
    fn run(self, rx: mpsc::Receiver<Job>) {
        // What this run muted; None when nothing is.
        let mut held: Option<Muted> = None;
        // Unmuted by the stall time-out: not muted again until the want falls.
        let mut expired = false;
        // A left-over state file that could not be undone yet (no server at the start).
        let mut left_over = false;
        let mut told = false;
        let mut problem = |e: String| {
            if std::mem::replace(&mut told, true) {
                tracing::debug!("{e}");
            } else {
                tracing::warn!("{e}");
            }
        };
        loop {
            let job = if held.is_some() {
                rx.recv_timeout(CHECK_EVERY.min(self.stall))
            } else {
                rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
            };
            match job {
                Ok(Job::Sync(done)) => {
                    let _ = done.send(());
                }
                Ok(Job::Recover) => left_over = !self.recover(&mut problem),
                Ok(Job::Want(true)) => {
                    if held.is_some() || expired {
                        continue;
                    }
                    if left_over {
                        left_over = !self.recover(&mut problem);
                    }
                    match mute_default(&self.server, &self.state) {
                        Ok(Some(m)) => {
                            tracing::info!(sink = %m.sink, "output mute: muted while recording");
                            held = Some(m);
                        }
                        Ok(None) => {
                            tracing::info!(
                                "output mute: the output was muted already; left as it is"
                            )
                        }
                        Err(e) => problem(e),
                    }
                }
                Ok(Job::Want(false)) => {
                    expired = false;
                    if let Some(m) = held.take() {
                        self.unmute(&m, &mut problem);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let since = self
                        .epoch
                        .elapsed()
                        .saturating_sub(Duration::from_millis(self.beat.load(Ordering::Relaxed)));
                    if since >= self.stall {
                        if let Some(m) = held.take() {
                            tracing::warn!(
                                "output mute: Dictum's controller has not answered for {} s; unmuting {}",
                                since.as_secs(),
                                m.sink
                            );
                            self.unmute(&m, &mut problem);
                            expired = true;
                        }
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    if let Some(m) = held.take() {
                        self.unmute(&m, &mut problem);
                    }
                    break;
                }
            }
        }
    }

    /// Undoes a left-over state file; false when it could not be (it stays).
    fn recover(&self, problem: &mut impl FnMut(String)) -> bool {
        match unmute_left_over(&self.state, &self.server) {
            Ok(Some(sink)) => {
                tracing::info!(%sink, "output mute: unmuted the output a previous run left muted");
                true
            }
            Ok(None) => true,
            Err(e) => {
                problem(format!(
                    "{e}; the output a previous run muted is still muted"
                ));
                false
            }
        }
    }

    fn unmute(&self, m: &Muted, problem: &mut impl FnMut(String)) {
        match unmute(&self.server, m, &self.state) {
            Ok(true) => tracing::info!(sink = %m.sink, "output mute: unmuted"),
            Ok(false) => {
                tracing::info!(sink = %m.sink, "output mute: unmuted meanwhile or gone; nothing to undo")
            }
            // The file stays: the next start tries again.
            Err(e) => problem(format!(
                "{e}; {} stays muted until Dictum's next start",
                m.sink
            )),
        }
    }
}

#[cfg(test)]
#[path = "mute_tests.rs"]
mod tests;
