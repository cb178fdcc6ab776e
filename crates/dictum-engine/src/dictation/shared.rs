//! What the dictation threads share: a few facts, each a single atomic or a small map
//! ([`Shared`]), and the per-job panic guard ([`catch`]).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Facts shared between the threads (each a single atomic, nothing to leave stale).
#[derive(Default)]
pub(crate) struct Shared {
    pub(super) shutdown: AtomicBool,
    pub(super) injecting: AtomicBool,
    /// Dictations with an id up to this are not injected (cancel key while processing).
    pub(super) cancel_upto: AtomicI64,
    /// Stored texts ([`super::Command::TypeStored`]) handed to the injector and not typed yet: the
    /// cancel key is armed while there are any.
    pub(super) stored: AtomicUsize,
    /// The cancel key was pressed since the stored text now typed began.
    pub(super) stored_stop: AtomicBool,
    /// The push-to-talk key is held for the next utterance: typing now would combine the
    /// text with its modifiers, so earlier results wait for the release.
    pub(super) key_held: AtomicBool,
    /// Utterances (by sequence number) the controller stopped waiting for: never typed late.
    pub(super) abandoned: Mutex<HashSet<u64>>,
}

impl Shared {
    pub(super) fn shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }
    pub(super) fn set_injecting(&self, on: bool) {
        self.injecting.store(on, Ordering::SeqCst)
    }
    pub(super) fn injecting(&self) -> bool {
        self.injecting.load(Ordering::SeqCst)
    }
    pub(super) fn set_key_held(&self, held: bool) {
        self.key_held.store(held, Ordering::SeqCst)
    }
    pub(super) fn key_held(&self) -> bool {
        self.key_held.load(Ordering::SeqCst)
    }
    pub(super) fn cancelled(&self, id: i64) -> bool {
        id <= self.cancel_upto.load(Ordering::SeqCst)
    }
    pub(super) fn typing_stored(&self) -> bool {
        self.stored.load(Ordering::SeqCst) > 0
    }
    pub(super) fn stop_stored(&self) {
        self.stored_stop.store(true, Ordering::SeqCst)
    }
    pub(super) fn abandon(&self, seq: u64) {
        self.abandoned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(seq);
    }
    pub(super) fn abandoned(&self, seq: u64) -> bool {
        self.abandoned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&seq)
    }
}

/// Runs `f`; a panic becomes its message (one job's panic must not end a thread).
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic with no message".into())
    })
}
