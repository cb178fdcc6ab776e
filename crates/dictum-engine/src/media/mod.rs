//! Media paused while recording (`[dictation] pause_media`, issue 29): players on the session
//! bus that are playing (MPRIS: `org.mpris.MediaPlayer2.*` names, the
//! `org.mpris.MediaPlayer2.Player` interface) are paused at the press and resumed once the
//! dictation's text is typed, or when it is cancelled or produced nothing. Only the players
//! Dictum paused are resumed, and only if they are still paused then: a player the user
//! paused, stopped or started again meanwhile is left as it is.
//!
//! Nothing stays paused after a crash: the players paused are written to a small private
//! state file next to the history ([`STATE_FILE`]) before the press is over, removed when they
//! are resumed, and a file left behind by a killed Dictum is resumed at the next start
//! ([`resume_left_over`]; a player that was restarted meanwhile, i.e. has another D-Bus owner,
//! is not touched).
//!
//! D-Bus calls run on the portal runtime with short limits ([`CALL_LIMIT`] per call,
//! [`PASS_LIMIT`] per pass), and the controller never waits for them: [`Pauser`] does each
//! pass on a thread of its own, so a player that hangs delays neither capture nor typing.
//!
//! The alternative, `[dictation] mute_output`: the default output sink muted while recording
//! ([`mute`]); the same [`Pauser`] drives it ([`Pauser::set_mute`]) on a thread of its own.

#[cfg(any(test, feature = "test-hooks"))]
pub mod stand_in;

pub mod mute;
mod state_file;

use crate::portal::Bus;
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
use zbus::zvariant::OwnedValue;
use zbus::Connection;

/// Well-known names of MPRIS players start with this.
pub const NAME_PREFIX: &str = "org.mpris.MediaPlayer2.";
/// The object every MPRIS player serves.
pub const OBJECT_PATH: &str = "/org/mpris/MediaPlayer2";
/// The interface with `PlaybackStatus`, `Pause` and `Play`.
pub const PLAYER_IFACE: &str = "org.mpris.MediaPlayer2.Player";
/// The state file's name, in the history database's folder.
pub const STATE_FILE: &str = "media-paused.json";
/// One D-Bus call; a player that does not answer in time is skipped.
pub const CALL_LIMIT: Duration = Duration::from_millis(500);
/// A whole pause or resume pass (calls to several players run side by side).
pub const PASS_LIMIT: Duration = Duration::from_secs(2);

/// A player Dictum paused: its well-known name and the unique name that owned it then (a
/// player restarted since has another owner and is not resumed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    pub name: String,
    pub owner: String,
}

/// The players one pause pass paused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paused {
    pub players: Vec<Player>,
}

/// The state file for a history database at `history_db`.
pub fn state_file(history_db: &Path) -> PathBuf {
    history_db
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(STATE_FILE)
}

async fn connect(bus: &Bus) -> Result<Connection, String> {
    let builder = match bus {
        Bus::Session => zbus::connection::Builder::session(),
        Bus::Address(a) => zbus::connection::Builder::address(a.as_str()),
    }
    .map_err(|e| no_bus(&e))?;
    builder.build().await.map_err(|e| no_bus(&e))
}

fn no_bus(e: &zbus::Error) -> String {
    format!("media players cannot be paused: no D-Bus session bus ({e}); turn [dictation] pause_media off or start a session bus")
}

/// One call with [`CALL_LIMIT`]; the reply's body deserialised as `R`.
async fn call<B, R>(
    conn: &Connection,
    dest: &str,
    path: &str,
    iface: &str,
    method: &str,
    body: &B,
) -> Result<R, String>
where
    B: Serialize + zbus::zvariant::DynamicType,
    R: for<'d> zbus::zvariant::DynamicDeserialize<'d>,
{
    let reply = tokio::time::timeout(
        CALL_LIMIT,
        conn.call_method(Some(dest), path, Some(iface), method, body),
    )
    .await
    .map_err(|_| format!("{dest} did not answer {iface}.{method} in time"))?
    .map_err(|e| format!("{dest}: {iface}.{method}: {e}"))?;
    reply
        .body()
        .deserialize::<R>()
        .map_err(|e| format!("{dest}: {iface}.{method} answered oddly: {e}"))
}

const DBUS: &str = "org.freedesktop.DBus";
const DBUS_PATH: &str = "/org/freedesktop/DBus";

async fn owner(conn: &Connection, name: &str) -> Option<String> {
    call::<_, String>(conn, DBUS, DBUS_PATH, DBUS, "GetNameOwner", &(name,))
        .await
        .ok()
}

/// The MPRIS players on the bus, one per owner (a player may own several names).
async fn players(conn: &Connection) -> Result<Vec<Player>, String> {
    let names: Vec<String> = call(conn, DBUS, DBUS_PATH, DBUS, "ListNames", &()).await?;
    let names: Vec<String> = names
        .into_iter()
        .filter(|n| n.starts_with(NAME_PREFIX))
        .collect();
    let owners = join_all(names.iter().map(|n| owner(conn, n))).await;
    let mut out: Vec<Player> = Vec::new();
    for (name, owner) in names.into_iter().zip(owners) {
        if let Some(owner) = owner {
            if !out.iter().any(|p| p.owner == owner) {
                out.push(Player { name, owner });
            }
        }
    }
    Ok(out)
}

/// The player's `PlaybackStatus` ("Playing", "Paused", "Stopped").
async fn status(conn: &Connection, owner: &str) -> Option<String> {
    let v: OwnedValue = call(
        conn,
        owner,
        OBJECT_PATH,
        "org.freedesktop.DBus.Properties",
        "Get",
        &(PLAYER_IFACE, "PlaybackStatus"),
    )
    .await
    .ok()?;
    String::try_from(v).ok()
}

async fn pause_async(bus: Bus) -> Result<Paused, String> {
    let conn = connect(&bus).await?;
    let all = players(&conn).await?;
    let done = join_all(all.into_iter().map(|p| {
        let conn = &conn;
        async move {
            if status(conn, &p.owner).await.as_deref() != Some("Playing") {
                return None;
            }
            match call::<_, ()>(conn, &p.owner, OBJECT_PATH, PLAYER_IFACE, "Pause", &()).await {
                Ok(()) => Some(p),
                Err(e) => {
                    tracing::warn!("media: could not pause {}: {e}", p.name);
                    None
                }
            }
        }
    }))
    .await;
    Ok(Paused {
        players: done.into_iter().flatten().collect(),
    })
}

async fn resume_async(bus: Bus, paused: Paused) -> Result<Vec<Player>, String> {
    let conn = connect(&bus).await?;
    let done = join_all(paused.players.into_iter().map(|p| {
        let conn = &conn;
        async move {
            // Calls go to the unique name that owned the player when it was paused: a player
            // that quit or was restarted since (another unique name) is never reached.
            // Stopped or playing again: the user's doing, left alone.
            if status(conn, &p.owner).await.as_deref() != Some("Paused") {
                return None;
            }
            match call::<_, ()>(conn, &p.owner, OBJECT_PATH, PLAYER_IFACE, "Play", &()).await {
                Ok(()) => Some(p),
                Err(e) => {
                    tracing::warn!("media: could not resume {}: {e}", p.name);
                    None
                }
            }
        }
    }))
    .await;
    Ok(done.into_iter().flatten().collect())
}

/// Pauses every MPRIS player that is playing; returns those it paused (within [`PASS_LIMIT`]).
pub fn pause_playing(bus: &Bus) -> Result<Paused, String> {
    run_pass(pause_async(bus.clone()))
}

/// Runs a pass on the portal runtime, at most [`PASS_LIMIT`].
fn run_pass<T: Send>(
    pass: impl std::future::Future<Output = Result<T, String>> + Send,
) -> Result<T, String> {
    crate::portal::rt::runtime()?;
    crate::portal::rt::run(PASS_LIMIT, pass).unwrap_or_else(|| {
        Err(format!(
            "the media players did not answer within {} s; one of them may hang",
            PASS_LIMIT.as_secs()
        ))
    })
}

impl Paused {
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// Plays again the players of this set that are still paused and still owned by the same
    /// process; returns those resumed.
    pub fn resume(&self, bus: &Bus) -> Result<Vec<Player>, String> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        run_pass(resume_async(bus.clone(), self.clone()))
    }

    /// Writes the set to `path` (private, written whole then renamed).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        state_file::save(self, path)
    }

    /// The set saved at `path`; None when there is none (or it cannot be read: it is then
    /// removed, a damaged file resumes nothing).
    pub fn load(path: &Path) -> Option<Paused> {
        state_file::load(path, "media")
    }
}

/// Resumes the players a previous Dictum paused and did not resume (it crashed or was killed):
/// those in the state file at `path` that are still paused. The file is removed.
pub fn resume_left_over(path: &Path, bus: &Bus) -> Result<Vec<Player>, String> {
    let Some(paused) = Paused::load(path) else {
        return Ok(Vec::new());
    };
    let resumed = paused.resume(bus);
    let _ = std::fs::remove_file(path);
    resumed
}

enum Job {
    Pause,
    Resume,
    Recover,
    /// Answered once the jobs sent before it are done.
    Sync(mpsc::Sender<()>),
}

/// The controller's side: [`Pauser::set`] says whether media should be paused now (recording
/// or typing under way with `pause_media` on); the passes run in order on a thread of their
/// own. Dropped, it resumes what it paused and waits for that (at most [`PASS_LIMIT`]s).
pub struct Pauser {
    tx: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
    paused: bool,
    /// `[dictation] mute_output` (its state file beside this one's); dropped after the
    /// players are resumed, it unmutes what it muted.
    muter: mute::Muter,
}

impl Pauser {
    /// `state` is the state file ([`state_file`]); `bus` the session bus. The output muter's
    /// state file ([`mute::STATE_FILE`]) goes in the same folder; it speaks to the sound
    /// server the environment names.
    pub fn new(bus: Bus, state: PathBuf) -> Pauser {
        let muter = mute::Muter::new(
            mute::Server::FromEnv,
            state.with_file_name(mute::STATE_FILE),
        );
        let (tx, rx) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("dictum-media".into())
            .spawn(move || serve(&bus, &state, rx))
            .map_err(|e| tracing::warn!("media: cannot start its thread: {e}"))
            .ok();
        Pauser {
            tx: thread.as_ref().map(|_| tx),
            thread,
            paused: false,
            muter,
        }
    }

    /// Resumes what a previous run left paused (see [`resume_left_over`]) and unmutes what
    /// it left muted ([`mute::unmute_left_over`]), on the threads.
    pub fn recover(&self) {
        self.send(Job::Recover);
        self.muter.recover();
    }

    /// Mutes the default output when `want` turns true, unmutes it when it turns false
    /// ([`mute::Muter::set`]: call it on every round, it is also the heartbeat).
    pub fn set_mute(&mut self, want: bool) {
        self.muter.set(want);
    }

    /// Pauses the playing players when `want` turns true, resumes them when it turns false.
    pub fn set(&mut self, want: bool) {
        if want != self.paused {
            self.paused = want;
            self.send(if want { Job::Pause } else { Job::Resume });
        }
    }

    /// Waits until the passes asked for so far (pauses and mutes) are done, at most `limit`;
    /// false on time-out.
    pub fn wait_idle(&self, limit: Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let (tx, rx) = mpsc::channel();
        self.send(Job::Sync(tx));
        rx.recv_timeout(limit).is_ok()
            && self
                .muter
                .wait_idle(deadline.saturating_duration_since(std::time::Instant::now()))
    }

    fn send(&self, job: Job) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(job);
        }
    }
}

impl Drop for Pauser {
    fn drop(&mut self) {
        self.set(false);
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(bus: &Bus, state: &Path, rx: mpsc::Receiver<Job>) {
    let mut held = Paused::default();
    let mut told = false;
    let mut problem = |e: String| {
        if std::mem::replace(&mut told, true) {
            tracing::debug!("{e}");
        } else {
            tracing::warn!("{e}");
        }
    };
    while let Ok(job) = rx.recv() {
        match job {
            Job::Sync(done) => {
                let _ = done.send(());
            }
            Job::Recover => match resume_left_over(state, bus) {
                Ok(r) if !r.is_empty() => tracing::info!(
                    players = ?r.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
                    "media: resumed the players a previous run left paused"
                ),
                Ok(_) => {}
                Err(e) => problem(e),
            },
            Job::Pause => match pause_playing(bus) {
                Ok(p) if !p.is_empty() => {
                    tracing::info!(
                        players = ?p.players.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
                        "media: paused while recording"
                    );
                    for player in p.players {
                        if !held.players.contains(&player) {
                            held.players.push(player);
                        }
                    }
                    if let Err(e) = held.save(state) {
                        problem(format!("media: {e}; a crash now would leave them paused"));
                    }
                }
                Ok(_) => {}
                Err(e) => problem(e),
            },
            Job::Resume => {
                if held.is_empty() {
                    continue;
                }
                match held.resume(bus) {
                    Ok(r) => {
                        tracing::info!(
                            players = ?r.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
                            "media: resumed"
                        );
                        let _ = std::fs::remove_file(state);
                    }
                    // The file stays: the next start tries again.
                    Err(e) => problem(e),
                }
                held = Paused::default();
            }
        }
    }
}

#[cfg(test)]
mod tests;
