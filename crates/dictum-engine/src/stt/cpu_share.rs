//! How many CPU threads whisper takes for its next pass: at most `[stt] threads`, and no more
//! than the cores other programs leave free (`[stt] adapt_threads`, on by default).
//!
//! whisper.cpp's CPU threads meet at a barrier after every step of the graph, and they wait
//! there by spinning, not by sleeping. When another program keeps a core busy (a local LLM
//! cleaning the sentence before, a compiler, a browser tab) and whisper asks for every core,
//! one of its threads waits for the scheduler at each barrier while the others spin through
//! their time slices: measured on this project's 2-core VM with other work running, a pass over
//! 3.5 s of speech took 2976–8018 ms with 2 threads and 248–490 ms with 1 (tiny.en q8_0,
//! docs/perf/cpu-share.md). One thread fewer than the cores costs at most the lost core's
//! share; too many costs ten times that. So each pass counts the cores other programs used
//! over the last quarter second (`/proc/stat` minus this process's own time), adds the local
//! requests Dictum itself has in flight ([`LocalWork`], e.g. the cleanup of the sentence
//! before by an LLM server on this machine, which starts faster than the window sees it),
//! and takes the rest, never fewer than one thread.
//!
//! A sampler thread reads `/proc/stat` and `/proc/self/stat` every 50 ms (a few µs each), so
//! a pass never waits for a measurement. Elsewhere than Linux nothing is measured and the
//! configured count is used.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How often the sampler reads the counters.
const TICK: Duration = Duration::from_millis(50);
/// The window over which other programs' load is averaged.
const WINDOW: Duration = Duration::from_millis(250);

/// Local requests in flight that keep a core of this machine busy outside this process.
static LOCAL_WORK: AtomicU32 = AtomicU32::new(0);

/// A core kept busy by work Dictum started on this machine (an LLM request to a loopback
/// server), counted until dropped.
pub struct LocalWork(());

impl LocalWork {
    pub fn start() -> LocalWork {
        LOCAL_WORK.fetch_add(1, Ordering::Relaxed);
        LocalWork(())
    }
}

impl Drop for LocalWork {
    fn drop(&mut self) {
        LOCAL_WORK.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The threads for a pass when `others` cores' worth of work from other programs runs on a
/// machine with `cores` cores: the free cores, rounded down unless nearly whole, between 1
/// and `most`.
pub fn threads_for(most: u32, cores: u32, others: f64) -> u32 {
    let most = most.max(1);
    if !others.is_finite() || others <= 0.0 {
        return most;
    }
    let free = f64::from(cores) - others;
    // 1.8 free cores is two threads' worth; 1.5 is not (a half-busy core still stalls the
    // barrier half the time).
    let fit = (free + 0.25).floor();
    if fit < 1.0 {
        1
    } else {
        most.min(fit as u32).max(1)
    }
}

/// The threads for the next pass, at most `most` (see the module's text), and the load it
/// saw (other programs' busy cores, Dictum's own local requests included).
pub fn threads_for_pass(most: u32) -> (u32, f64) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    if most <= 1 {
        return (most.max(1), 0.0);
    }
    let window = sampler().and_then(|s| s.others());
    let local = f64::from(LOCAL_WORK.load(Ordering::Relaxed));
    let others = window.unwrap_or(0.0).max(local);
    (threads_for(most, cores, others), others)
}

/// One reading: when, the machine's busy and total jiffies, and this process's own.
#[derive(Clone, Copy)]
struct Reading {
    at: Instant,
    busy: u64,
    total: u64,
    own: u64,
}

struct Sampler {
    readings: Mutex<VecDeque<Reading>>,
}

impl Sampler {
    /// Other programs' busy cores over the window; None before two readings exist.
    fn others(&self) -> Option<f64> {
        let r = self.readings.lock().unwrap_or_else(|e| e.into_inner());
        let last = *r.back()?;
        let first = *r
            .iter()
            .find(|x| last.at.duration_since(x.at) <= WINDOW + TICK / 2)?;
        others_between(&first, &last)
    }
}

/// Other programs' busy cores between two readings (the machine's busy time minus this
/// process's, as cores: busy jiffies over elapsed jiffies per core).
fn others_between(a: &Reading, b: &Reading) -> Option<f64> {
    let total = b.total.checked_sub(a.total)?;
    if total == 0 {
        return None;
    }
    let busy = b.busy.saturating_sub(a.busy);
    let own = b.own.saturating_sub(a.own);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    // `total` counts every core's jiffies: elapsed jiffies per core = total / cores.
    let others = busy.saturating_sub(own) as f64 * cores / total as f64;
    Some(others.clamp(0.0, cores))
}

/// The machine's busy and total jiffies (the `cpu` line of `/proc/stat`).
fn machine_jiffies(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest is counted in user already).
    if v.len() < 4 {
        return None;
    }
    let total: u64 = v.iter().take(8).sum();
    let idle = v[3] + v.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// This process's user + system jiffies (fields 14 and 15 of `/proc/self/stat`, counted
/// after the command name's closing parenthesis).
fn own_jiffies(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ")": state is field 3, so utime (14) is index 11 and stime (15) index 12.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

fn read() -> Option<Reading> {
    let (busy, total) = machine_jiffies(&std::fs::read_to_string("/proc/stat").ok()?)?;
    let own = own_jiffies(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    Some(Reading {
        at: Instant::now(),
        busy,
        total,
        own,
    })
}

/// The sampler, started on first use; None where `/proc` cannot be read.
fn sampler() -> Option<&'static Sampler> {
    static SAMPLER: OnceLock<Option<&'static Sampler>> = OnceLock::new();
    *SAMPLER.get_or_init(|| {
        let first = read()?;
        let sampler: &'static Sampler = Box::leak(Box::new(Sampler {
            readings: Mutex::new(VecDeque::from([first])),
        }));
        let spawned = std::thread::Builder::new()
            .name("dictum-cpu-share".into())
            .spawn(move || loop {
                std::thread::sleep(TICK);
                let Some(r) = read() else { continue };
                let mut q = sampler.readings.lock().unwrap_or_else(|e| e.into_inner());
                q.push_back(r);
                while q.len() > 2 && r.at.duration_since(q[1].at) > WINDOW {
                    q.pop_front();
                }
            });
        match spawned {
            Ok(_) => Some(sampler),
            Err(e) => {
                tracing::warn!("whisper keeps its configured threads: no load sampler ({e})");
                None
            }
        }
    })
}

/// Starts the sampler now, so the first pass already has a window to look at.
pub fn start_sampling() {
    let _ = sampler();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_the_free_cores_between_one_and_the_most() {
        // A quiet 2-core machine: both.
        assert_eq!(threads_for(2, 2, 0.0), 2);
        assert_eq!(threads_for(2, 2, 0.1), 2);
        // An LLM request on one core: one thread, not two fighting over one core.
        assert_eq!(threads_for(2, 2, 1.0), 1);
        assert_eq!(threads_for(2, 2, 0.6), 1);
        // Everything busy: still one.
        assert_eq!(threads_for(2, 2, 2.0), 1);
        assert_eq!(threads_for(8, 8, 9.0), 1);
        // Never more than configured, whatever is free.
        assert_eq!(threads_for(4, 16, 3.0), 4);
        assert_eq!(threads_for(8, 16, 10.0), 6);
        assert_eq!(threads_for(0, 16, 0.0), 1);
        // Nonsense load readings change nothing.
        assert_eq!(threads_for(4, 8, f64::NAN), 4);
        assert_eq!(threads_for(4, 8, -1.0), 4);
    }

    #[test]
    fn proc_stat_lines_are_read_as_busy_and_total() {
        let stat = "cpu  100 5 50 800 20 1 2 3 0 0\ncpu0 50 2 25 400 10 0 1 1 0 0\n";
        assert_eq!(machine_jiffies(stat), Some((161, 981)));
        assert_eq!(machine_jiffies("intr 1 2 3\n"), None);
        // A command name with spaces and parentheses does not shift the fields.
        let own = "1234 (dictum (x) y) S 1 2 3 4 5 6 7 8 9 10 70 30 0 0 20 0";
        assert_eq!(own_jiffies(own), Some(100));
    }

    #[test]
    fn others_exclude_this_process() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let a = Reading {
            at: Instant::now(),
            busy: 0,
            total: 0,
            own: 0,
        };
        // 100 jiffies per core elapsed; 150 busy of which 100 our own: 50 others' jiffies.
        let b = Reading {
            busy: 150,
            total: (100.0 * cores) as u64,
            own: 100,
            ..a
        };
        let others = others_between(&a, &b).expect("a window");
        assert!((others - 0.5).abs() < 1e-9, "{others}");
    }
}
