//! What the audio callback and the control side share: the utterance, the pre-roll and the
//! counters behind one lock (the callback only ever `try_lock`s it), the level meter, and the
//! stream's failure with a condition variable to wake whoever waits for frames.

use super::ring::Ring;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

pub(super) struct State {
    pub(super) preroll: Ring,
    /// 16 kHz samples received since open.
    pub(super) total: u64,
    pub(super) first_frames: Option<Instant>,
    /// `Some` while recording; capacity reserved up front so the callback never reallocates.
    pub(super) utterance: Option<Vec<f32>>,
    pub(super) max_samples: usize,
    pub(super) truncated: bool,
    pub(super) dropped: u64,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    /// Notified when frames arrive or the stream fails.
    pub(super) arrived: Condvar,
    /// Recent RMS (f32 bits).
    pub(super) level: AtomicU32,
    pub(super) failed: AtomicBool,
    pub(super) error: Mutex<Option<String>>,
    pub(super) opened_at: Instant,
}

impl Shared {
    pub(super) fn new(preroll_samples: usize, max_samples: usize) -> Shared {
        Shared {
            state: Mutex::new(State {
                preroll: Ring::new(preroll_samples),
                total: 0,
                first_frames: None,
                utterance: None,
                max_samples,
                truncated: false,
                dropped: 0,
            }),
            arrived: Condvar::new(),
            level: AtomicU32::new(0),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            opened_at: Instant::now(),
        }
    }

    /// Gives the lock back until the callback brings frames (or `deadline`), and takes it
    /// again.
    pub(super) fn wait<'a>(
        &self,
        st: MutexGuard<'a, State>,
        deadline: Instant,
    ) -> MutexGuard<'a, State> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.arrived
            .wait_timeout(st, left)
            .unwrap_or_else(|e| e.into_inner())
            .0
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave State inconsistent in a way that matters
        // more than losing audio: keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn fail(&self, reason: String) {
        let mut err = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if err.is_none() {
            *err = Some(reason);
        }
        drop(err);
        self.failed.store(true, Ordering::SeqCst);
        // Take the state lock so a waiter cannot miss the notification.
        drop(self.lock());
        self.arrived.notify_all();
    }

    pub(super) fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
