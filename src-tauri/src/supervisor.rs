//! Keeps the tray's dictation running, whatever was not ready when the desktop session started
//! (sound server, hotkey, display, database): starts it, and after a failed start or an
//! unexpected stop tries again with exponential backoff (1, 2, 4 … 60 s). A wake-up (settings
//! saved, "Start dictation now") tries again at once and resets the backoff; quit stops it for
//! good. The policy is here, free of Tauri and of the engine, so it is tested on its own;
//! `controller.rs` plugs the engine's `Dictation` into it.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The first retry waits this long; each failure doubles it, up to [`BACKOFF_CAP`].
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);
pub const BACKOFF_CAP: Duration = Duration::from_secs(60);
/// A dictation that ran at least this long before it stopped starts the backoff over.
pub const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// 1, 2, 4 … `cap`.
#[derive(Debug, Clone)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    next: Duration,
}

impl Backoff {
    pub fn new(base: Duration, cap: Duration) -> Backoff {
        Backoff {
            base,
            cap,
            next: base.min(cap),
        }
    }

    /// The wait before the next try; doubles the one after it.
    pub fn next_wait(&mut self) -> Duration {
        let wait = self.next;
        self.next = self.next.saturating_mul(2).min(self.cap);
        wait
    }

    pub fn reset(&mut self) {
        self.next = self.base.min(self.cap);
    }
}

/// How a wait between tries ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The backoff ran out.
    Timeout,
    /// Someone asked for a try now.
    Now,
    Quit,
}

#[derive(Default)]
struct Flags {
    /// Bumped by each [`Control::wake`].
    wakes: u64,
    quitting: bool,
}

/// Shared between the supervisor thread and whoever wakes or ends it (GUI thread, control
/// socket).
#[derive(Default)]
pub struct Control {
    flags: Mutex<Flags>,
    changed: Condvar,
}

impl Control {
    pub const fn new() -> Control {
        Control {
            flags: Mutex::new(Flags {
                wakes: 0,
                quitting: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn flags(&self) -> MutexGuard<'_, Flags> {
        self.flags.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Try now (a retry waiting for its backoff starts at once).
    pub fn wake(&self) {
        self.flags().wakes += 1;
        self.changed.notify_all();
    }

    /// No more starts.
    pub fn quit(&self) {
        self.flags().quitting = true;
        self.changed.notify_all();
    }

    pub fn quitting(&self) -> bool {
        self.flags().quitting
    }

    pub fn wakes(&self) -> u64 {
        self.flags().wakes
    }

    /// Waits `wait`, or less when woken after `seen` wakes or told to quit.
    pub fn wait(&self, seen: u64, wait: Duration) -> Wake {
        let deadline = Instant::now() + wait;
        let mut flags = self.flags();
        loop {
            if flags.quitting {
                return Wake::Quit;
            }
            if flags.wakes != seen {
                return Wake::Now;
            }
            let now = Instant::now();
            if now >= deadline {
                return Wake::Timeout;
            }
            flags = match self.changed.wait_timeout(flags, deadline - now) {
                Ok((f, _)) => f,
                Err(p) => p.into_inner().0,
            };
        }
    }
}

/// What the supervisor tells the face, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Try number `attempt` (1 after each success) is starting.
    Starting { attempt: u32 },
    /// It started and is ready.
    Running,
    /// It could not start: `why`; the next try is in `retry_in` (or sooner when woken).
    Failed {
        why: String,
        attempt: u32,
        retry_in: Duration,
    },
    /// It ran, then stopped without being asked to: `why`; restarts in `retry_in`.
    Stopped { why: String, retry_in: Duration },
    /// Quit: no more tries.
    Ended,
}

/// Starts the supervised thing and runs it until it stops.
pub trait Starter {
    type Running;
    /// Returns once it is ready, or why it cannot run.
    fn start(&mut self) -> Result<Self::Running, String>;
    /// Runs it until it stops; returns why it stopped (used when it was not asked to).
    fn run(&mut self, running: Self::Running) -> String;
}

/// The supervision loop; returns after [`Control::quit`].
pub fn supervise<S: Starter>(
    starter: &mut S,
    control: &Control,
    mut backoff: Backoff,
    healthy_run: Duration,
    mut report: impl FnMut(Phase),
) {
    let mut attempt = 0;
    loop {
        if control.quitting() {
            break;
        }
        attempt += 1;
        report(Phase::Starting { attempt });
        let seen = control.wakes();
        let wait = match starter.start() {
            Ok(running) => {
                report(Phase::Running);
                let started = Instant::now();
                let why = starter.run(running);
                if control.quitting() {
                    break;
                }
                attempt = 0;
                if started.elapsed() >= healthy_run {
                    backoff.reset();
                }
                let retry_in = backoff.next_wait();
                report(Phase::Stopped { why, retry_in });
                // Wakes while it ran were for the running one (it applied the settings).
                control.wait(control.wakes(), retry_in)
            }
            Err(why) => {
                let retry_in = backoff.next_wait();
                report(Phase::Failed {
                    why,
                    attempt,
                    retry_in,
                });
                // A wake during the try (settings saved while it started) retries at once.
                control.wait(seen, retry_in)
            }
        };
        match wait {
            Wake::Quit => break,
            Wake::Now => backoff.reset(),
            Wake::Timeout => {}
        }
    }
    report(Phase::Ended);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::Arc;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_resets() {
        let mut b = Backoff::new(BACKOFF_BASE, BACKOFF_CAP);
        let secs: Vec<u64> = (0..9).map(|_| b.next_wait().as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        b.reset();
        assert_eq!(b.next_wait(), Duration::from_secs(1));
    }

    /// Plays a script of start results; a started one "runs" for the given time.
    struct Script {
        starts: VecDeque<Result<Duration, String>>,
        control: Arc<Control>,
        started_at: Vec<Instant>,
    }

    impl Starter for Script {
        type Running = Duration;
        fn start(&mut self) -> Result<Duration, String> {
            self.started_at.push(Instant::now());
            match self.starts.pop_front() {
                Some(r) => r,
                None => {
                    self.control.quit();
                    Err("script over".into())
                }
            }
        }
        fn run(&mut self, ran: Duration) -> String {
            std::thread::sleep(ran);
            "it stopped".into()
        }
    }

    fn script(starts: Vec<Result<Duration, String>>) -> (Script, Arc<Control>) {
        let control = Arc::new(Control::new());
        (
            Script {
                starts: starts.into(),
                control: control.clone(),
                started_at: Vec::new(),
            },
            control,
        )
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn failed_starts_are_retried_with_growing_waits_until_one_works() {
        let (mut s, control) = script(vec![
            Err("no sound server".into()),
            Err("no sound server".into()),
            Err("no sound server".into()),
            Ok(Duration::ZERO),
        ]);
        let mut phases = Vec::new();
        supervise(
            &mut s,
            &control,
            Backoff::new(20 * MS, 1000 * MS),
            Duration::from_secs(60),
            |p| phases.push(p),
        );
        let waits: Vec<u128> = s
            .started_at
            .windows(2)
            .map(|w| (w[1] - w[0]).as_millis())
            .collect();
        // 20, 40, 80 ms after the three failures; then the stop's wait (160 ms).
        for (got, want) in waits.iter().zip([20, 40, 80, 160]) {
            assert!(
                (want..want + 60).contains(got),
                "waits {waits:?}, wanted about 20, 40, 80, 160"
            );
        }
        assert_eq!(
            phases[..8],
            [
                Phase::Starting { attempt: 1 },
                Phase::Failed {
                    why: "no sound server".into(),
                    attempt: 1,
                    retry_in: 20 * MS
                },
                Phase::Starting { attempt: 2 },
                Phase::Failed {
                    why: "no sound server".into(),
                    attempt: 2,
                    retry_in: 40 * MS
                },
                Phase::Starting { attempt: 3 },
                Phase::Failed {
                    why: "no sound server".into(),
                    attempt: 3,
                    retry_in: 80 * MS
                },
                Phase::Starting { attempt: 4 },
                Phase::Running,
            ]
        );
        // It stopped by itself: reported with why, and restarted.
        assert_eq!(
            phases[8],
            Phase::Stopped {
                why: "it stopped".into(),
                retry_in: 160 * MS
            }
        );
        assert_eq!(phases[9], Phase::Starting { attempt: 1 });
        assert_eq!(phases.last(), Some(&Phase::Ended));
    }

    #[test]
    fn a_healthy_run_that_stops_restarts_after_the_base_wait() {
        let (mut s, control) = script(vec![
            Err("x".into()),
            Err("x".into()),
            Ok(30 * MS), // "healthy" here: ran ≥ 20 ms
        ]);
        let mut phases = Vec::new();
        supervise(
            &mut s,
            &control,
            Backoff::new(10 * MS, 1000 * MS),
            20 * MS,
            |p| phases.push(p),
        );
        assert!(
            phases.contains(&Phase::Stopped {
                why: "it stopped".into(),
                retry_in: 10 * MS
            }),
            "{phases:?}"
        );
    }

    #[test]
    fn a_wake_retries_at_once_and_quit_ends_a_wait() {
        let (mut s, control) = script(vec![Err("x".into()), Err("x".into())]);
        let waker = control.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            waker.wake(); // ends the first 10 s wait
            std::thread::sleep(Duration::from_millis(100));
            waker.quit(); // ends the second one
        });
        let begun = Instant::now();
        let mut phases = Vec::new();
        supervise(
            &mut s,
            &control,
            Backoff::new(Duration::from_secs(10), Duration::from_secs(60)),
            Duration::from_secs(60),
            |p| phases.push(p),
        );
        let _ = t.join();
        assert!(begun.elapsed() < Duration::from_secs(2), "{phases:?}");
        assert_eq!(s.started_at.len(), 2, "{phases:?}");
        // The wake reset the backoff: the second failure waits the base again.
        assert!(matches!(
            phases[3],
            Phase::Failed { retry_in, .. } if retry_in == Duration::from_secs(10)
        ));
        assert_eq!(phases.last(), Some(&Phase::Ended));
    }

    #[test]
    fn a_quit_while_it_runs_is_not_a_failure() {
        struct Quits(Arc<Control>);
        impl Starter for Quits {
            type Running = ();
            fn start(&mut self) -> Result<(), String> {
                Ok(())
            }
            fn run(&mut self, _: ()) -> String {
                self.0.quit();
                "asked to quit".into()
            }
        }
        let control = Arc::new(Control::new());
        let mut phases = Vec::new();
        supervise(
            &mut Quits(control.clone()),
            &control,
            Backoff::new(MS, MS),
            MS,
            |p| phases.push(p),
        );
        assert_eq!(
            phases,
            [Phase::Starting { attempt: 1 }, Phase::Running, Phase::Ended]
        );
    }
}
