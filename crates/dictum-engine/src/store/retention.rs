//! Retention in long-running processes: a thread that deletes entries (and their audio)
//! older than `history.retention_days` (and spool audio older than 7 days, `store::spool`)
//! when it starts and then every 24 hours, so a daemon or
//! tray left running for weeks keeps to the period too. It opens its own connection for each
//! pass and closes it after; stopping it (drop or [`RetentionHandle::stop`]) is immediate.

use super::History;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Time between two passes.
pub const INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Default)]
struct State {
    stop: bool,
    passes: u64,
    removed: u64,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

/// The running retention thread; stops it when dropped.
pub struct RetentionHandle {
    shared: Shared,
    thread: Option<JoinHandle<()>>,
}

impl RetentionHandle {
    /// Passes completed so far (successful or not).
    pub fn passes(&self) -> u64 {
        self.shared.0.lock().map(|s| s.passes).unwrap_or(0)
    }

    /// Entries removed so far, all passes together.
    pub fn removed(&self) -> u64 {
        self.shared.0.lock().map(|s| s.removed).unwrap_or(0)
    }

    /// Whether a thread runs (false when retention is off: 0 days).
    pub fn is_running(&self) -> bool {
        self.thread.is_some()
    }

    /// Stops the thread and waits for it (at most the pass under way).
    pub fn stop(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        let (lock, wake) = &*self.shared;
        if let Ok(mut s) = lock.lock() {
            s.stop = true;
        }
        wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RetentionHandle {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

/// Starts retention for the history at `db_path`: a pass now, then one every 24 h. With
/// `days == 0` (keep everything) no thread starts.
pub fn spawn_daily(db_path: PathBuf, days: u32) -> RetentionHandle {
    spawn_every(db_path, days, INTERVAL)
}

/// [`spawn_daily`] with another interval (tests).
pub fn spawn_every(db_path: PathBuf, days: u32, interval: Duration) -> RetentionHandle {
    let shared: Shared = Arc::default();
    let mut handle = RetentionHandle {
        shared: shared.clone(),
        thread: None,
    };
    if days == 0 {
        return handle;
    }
    let spawned = std::thread::Builder::new()
        .name("dictum-retention".into())
        .spawn(move || run(&db_path, days, interval, &shared));
    match spawned {
        Ok(t) => handle.thread = Some(t),
        Err(e) => tracing::warn!(
            "retention: cannot start its thread ({e}); entries older than {days} days are removed at the next start"
        ),
    }
    handle
}

fn run(db_path: &std::path::Path, days: u32, interval: Duration, shared: &Shared) {
    let (lock, wake) = &**shared;
    loop {
        let removed = pass(db_path, days);
        let Ok(mut s) = lock.lock() else { return };
        s.passes += 1;
        s.removed += removed as u64;
        wake.notify_all();
        let (s, _) = match wake.wait_timeout_while(s, interval, |s| !s.stop) {
            Ok(r) => r,
            Err(_) => return,
        };
        if s.stop {
            return;
        }
    }
}

/// One pass; returns how many entries went (0 on error, which is logged).
fn pass(db_path: &std::path::Path, days: u32) -> usize {
    // The spool (audio of undelivered dictations) keeps its own bounds: 7 days, 1 GiB.
    super::spool::Spool::for_history(db_path).prune(super::spool::MAX_BYTES, super::spool::MAX_AGE);
    match History::open(db_path).and_then(|h| h.apply_retention(days)) {
        Ok(0) => {
            tracing::debug!("retention: nothing older than {days} days");
            0
        }
        Ok(n) => {
            tracing::info!(
                "retention: removed {n} entries older than {days} days (and their audio)"
            );
            n
        }
        Err(e) => {
            tracing::warn!("retention: {e}");
            0
        }
    }
}
