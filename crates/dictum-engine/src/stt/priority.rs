//! Dictation goes first. A file transcribed in the same process (the tray app's "Transcribe a
//! file…" window, a file handed to the daemon) must not slow a dictation down: on two cores
//! whisper's threads spin at every barrier, so two passes at once each take far longer than
//! one. Each live dictation controller holds a [`Claim`] and raises it from the press until the
//! words are typed; a file's pass is stopped while any claim is raised ([`Stop`], through
//! whisper's abort callback, within a few ms) and its piece redone once no claim is left.
//!
//! Process-wide on purpose: the controller and the file jobs know nothing of each other, and
//! a leaf here keeps `dictation/` and `filejobs/` apart (`scripts/module-graph`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Claims raised now, in this process.
static RAISED: AtomicUsize = AtomicUsize::new(0);

/// True while a dictation is under way in this process (recording, transcribing or typing).
pub fn dictation_busy() -> bool {
    RAISED.load(Ordering::Acquire) > 0
}

/// One dictation controller's say in [`dictation_busy`]. Raised and lowered as the
/// controller's state changes; dropped (a controller that ended or panicked), it is lowered,
/// so no claim outlives its owner.
#[derive(Debug, Default)]
pub struct Claim {
    raised: bool,
}

impl Claim {
    pub fn new() -> Claim {
        Claim::default()
    }

    /// Raises or lowers this claim; the same value twice changes nothing.
    pub fn set(&mut self, busy: bool) {
        if busy == self.raised {
            return;
        }
        self.raised = busy;
        if busy {
            RAISED.fetch_add(1, Ordering::AcqRel);
        } else {
            RAISED.fetch_sub(1, Ordering::AcqRel);
        }
    }

    pub fn raised(&self) -> bool {
        self.raised
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.set(false);
    }
}

/// When a background pass (a file's) must stop: its job was cancelled, or, with
/// `for_dictation`, a dictation needs the cores. Read by whisper's abort callback.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    pub cancel: Arc<AtomicBool>,
    pub for_dictation: bool,
}

impl Stop {
    /// A stop raised by `cancel`, and by dictations when `for_dictation`.
    pub fn new(cancel: Arc<AtomicBool>, for_dictation: bool) -> Stop {
        Stop {
            cancel,
            for_dictation,
        }
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// True when the pass under way must stop now.
    pub fn raised(&self) -> bool {
        self.cancelled() || (self.for_dictation && dictation_busy())
    }

    /// Waits while a dictation is under way (and the job is not cancelled); `on_wait` is
    /// called once when there is something to wait for. Returns how long it waited.
    pub fn wait_for_dictation(&self, on_wait: &mut dyn FnMut()) -> Duration {
        let start = Instant::now();
        if !self.for_dictation || !dictation_busy() || self.cancelled() {
            return Duration::ZERO;
        }
        on_wait();
        while dictation_busy() && !self.cancelled() {
            std::thread::sleep(Duration::from_millis(20));
        }
        start.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the count is process-wide, and tests run in parallel threads.
    #[test]
    fn claims_count_once_each_and_are_lowered_when_dropped() {
        let before = RAISED.load(Ordering::Acquire);
        let mut a = Claim::new();
        let mut b = Claim::new();
        a.set(true);
        a.set(true);
        assert_eq!(RAISED.load(Ordering::Acquire), before + 1);
        b.set(true);
        assert_eq!(RAISED.load(Ordering::Acquire), before + 2);
        let stop = Stop::new(Arc::default(), true);
        let deaf = Stop::new(Arc::default(), false);
        assert!(stop.raised() && !deaf.raised());
        a.set(false);
        drop(b);
        assert_eq!(RAISED.load(Ordering::Acquire), before);
        deaf.cancel.store(true, Ordering::Relaxed);
        assert!(deaf.raised() && deaf.cancelled());

        // A waiter is released when the last claim drops.
        let mut c = Claim::new();
        c.set(true);
        let waiter = std::thread::spawn(move || {
            let mut told = 0;
            let waited = stop.wait_for_dictation(&mut || told += 1);
            (told, waited)
        });
        std::thread::sleep(Duration::from_millis(100));
        drop(c);
        let (told, waited) = waiter.join().expect("waiter");
        assert_eq!(told, 1);
        assert!(waited >= Duration::from_millis(80), "{waited:?}");
    }
}
