//! The worker's queue: the jobs wait here in order, and the worker can look into it, so a
//! speculation that a later job has made useless is skipped, not run (`makes_stale`), and a
//! running one is stopped through whisper's abort flag. The controller pushes; when it
//! replaces a stuck worker, it retires the old queue and takes its waiting jobs.

use crate::dictation::messages::Job;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
pub(crate) struct Queue {
    jobs: Mutex<VecDeque<Job>>,
    ready: Condvar,
    /// Since when the worker has been on its current job (None: waiting for one).
    busy_since: Mutex<Option<Instant>>,
    /// The controller gave up on this queue's worker (stuck) and started another: the worker
    /// ends as soon as its current job returns, if it ever does.
    retired: AtomicBool,
    /// The speculation being transcribed now (utterance, end), if any.
    running: Mutex<Option<(u64, usize)>>,
    /// Raised when a job pushed while `running` makes it useless: whisper then stops it
    /// (`Transcriber::set_abort`).
    pub(crate) abort: Arc<AtomicBool>,
}

/// True when `job`, coming after a speculation over utterance `utt` ending at `end`, makes
/// that speculation useless.
fn makes_stale(job: &Job, utt: u64, end: usize) -> bool {
    match job {
        Job::Chunk { utt: u, .. } => *u == utt,
        Job::Finish(f) => f.seq == utt && f.speculation_end != Some(end),
        Job::Forget(u) | Job::Stale(u) => *u == utt,
        _ => false,
    }
}

impl Queue {
    /// How long the worker has been on its current job.
    pub fn busy_for(&self) -> Option<Duration> {
        let since = *self.busy_since.lock().unwrap_or_else(|e| e.into_inner());
        since.map(|t| t.elapsed())
    }

    pub(crate) fn set_busy(&self, busy: bool) {
        *self.busy_since.lock().unwrap_or_else(|e| e.into_inner()) = busy.then(Instant::now);
    }

    /// Takes the jobs still waiting and tells this queue's worker to end.
    pub fn retire(&self) -> Vec<Job> {
        self.retired.store(true, Ordering::SeqCst);
        let mut q = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        self.ready.notify_all();
        q.drain(..).collect()
    }

    pub(crate) fn retired(&self) -> bool {
        self.retired.load(Ordering::SeqCst)
    }

    pub fn push(&self, job: Job) {
        let mut q = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let running = *self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((utt, end)) = running {
            if makes_stale(&job, utt, end) {
                self.abort.store(true, Ordering::Relaxed);
            }
        }
        q.push_back(job);
        self.ready.notify_one();
    }

    /// A speculation over `utt` ending at `end` starts: from now on a job that makes it
    /// useless raises `abort`. Returns false (and nothing starts) when a queued job already
    /// has.
    pub(crate) fn begin_speculation(&self, utt: u64, end: usize) -> bool {
        {
            let mut r = self.running.lock().unwrap_or_else(|e| e.into_inner());
            *r = Some((utt, end));
            self.abort.store(false, Ordering::Relaxed);
        }
        if self.supersedes(utt, end) {
            self.end_speculation();
            return false;
        }
        true
    }

    /// The speculation ended (or was stopped); returns true when it was aborted.
    pub(crate) fn end_speculation(&self) -> bool {
        let mut r = self.running.lock().unwrap_or_else(|e| e.into_inner());
        *r = None;
        self.abort.swap(false, Ordering::Relaxed)
    }

    pub(crate) fn pop(&self, timeout: Duration) -> Option<Job> {
        let mut q = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if q.is_empty() {
            q = self
                .ready
                .wait_timeout(q, timeout)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        q.pop_front()
    }

    /// True when a later job makes a speculation over `utt` ending at `end` useless.
    pub(crate) fn supersedes(&self, utt: u64, end: usize) -> bool {
        let q = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        q.iter().any(|j| makes_stale(j, utt, end))
    }
}
