//! STAND-IN, for tests only (`cfg(test)` or the `test-hooks` feature): a minimal MPRIS media
//! player on a private D-Bus session bus. It is not a real player (no audio): it owns an
//! `org.mpris.MediaPlayer2.<name>` name and serves `org.mpris.MediaPlayer2.Player` with the
//! `PlaybackStatus` property and the `Pause` / `Play` methods, which is all of MPRIS that
//! [`super`] uses, and it records the calls it got. The bus is a real `dbus-daemon --session`
//! started for the test ([`PrivateBus`]); tests skip when `dbus-daemon` is missing (package
//! `dbus`).

use super::{Bus, OBJECT_PATH};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A `dbus-daemon --session` of the test's own; killed on drop.
pub struct PrivateBus {
    child: Child,
    pub address: String,
}

impl PrivateBus {
    /// None when `dbus-daemon` cannot be started (not installed).
    pub fn start() -> Option<PrivateBus> {
        let mut child = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut line = String::new();
        let out = child.stdout.take()?;
        BufReader::new(out).read_line(&mut line).ok()?;
        let address = line.trim().to_string();
        if address.is_empty() {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        Some(PrivateBus { child, address })
    }

    pub fn bus(&self) -> Bus {
        Bus::Address(self.address.clone())
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Default)]
struct Inner {
    status: String,
    calls: Vec<(String, Instant)>,
}

struct PlayerIface(Arc<Mutex<Inner>>);

#[zbus::interface(name = "org.mpris.MediaPlayer2.Player")]
impl PlayerIface {
    fn pause(&self) {
        if let Ok(mut i) = self.0.lock() {
            i.calls.push(("Pause".into(), Instant::now()));
            if i.status == "Playing" {
                i.status = "Paused".into();
            }
        }
    }

    fn play(&self) {
        if let Ok(mut i) = self.0.lock() {
            i.calls.push(("Play".into(), Instant::now()));
            i.status = "Playing".into();
        }
    }

    #[zbus(property)]
    fn playback_status(&self) -> String {
        self.0.lock().map(|i| i.status.clone()).unwrap_or_default()
    }
}

/// The stand-in player; it leaves the bus on drop.
pub struct StandInPlayer {
    inner: Arc<Mutex<Inner>>,
    conn: Option<zbus::Connection>,
    /// Its well-known name, `org.mpris.MediaPlayer2.<name>`.
    pub name: String,
}

impl StandInPlayer {
    /// Joins the bus at `address` as `org.mpris.MediaPlayer2.<name>` with `status`
    /// ("Playing", "Paused" or "Stopped").
    pub fn start(address: &str, name: &str, status: &str) -> Result<StandInPlayer, String> {
        let inner = Arc::new(Mutex::new(Inner {
            status: status.into(),
            calls: Vec::new(),
        }));
        let full = format!("{}{name}", super::NAME_PREFIX);
        let iface = PlayerIface(inner.clone());
        let (addr, well_known) = (address.to_string(), full.clone());
        let conn = crate::portal::rt::run(Duration::from_secs(5), async move {
            zbus::connection::Builder::address(addr.as_str())?
                .name(well_known)?
                .serve_at(OBJECT_PATH, iface)?
                .build()
                .await
        })
        .ok_or("the private bus did not answer")?
        .map_err(|e| format!("stand-in player: {e}"))?;
        Ok(StandInPlayer {
            inner,
            conn: Some(conn),
            name: full,
        })
    }

    pub fn status(&self) -> String {
        self.inner
            .lock()
            .map(|i| i.status.clone())
            .unwrap_or_default()
    }

    /// As if the user pressed pause or play in the player.
    pub fn set_status(&self, status: &str) {
        if let Ok(mut i) = self.inner.lock() {
            i.status = status.into();
        }
    }

    /// The `Pause` / `Play` calls it got, in order.
    pub fn calls(&self) -> Vec<String> {
        self.call_times().into_iter().map(|(c, _)| c).collect()
    }

    /// [`calls`](Self::calls) with when each arrived.
    pub fn call_times(&self) -> Vec<(String, Instant)> {
        self.inner
            .lock()
            .map(|i| i.calls.clone())
            .unwrap_or_default()
    }

    /// Leaves the bus (the player quit).
    pub fn quit(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = crate::portal::rt::run(Duration::from_secs(2), conn.close());
        }
    }
}

impl Drop for StandInPlayer {
    fn drop(&mut self) {
        self.quit();
    }
}
