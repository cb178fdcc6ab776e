//! The utterances handed to the worker and not finished yet, oldest first: their numbers,
//! their deadlines and quit's grace. An utterance's deadline (`budget`) counts from the
//! moment it is the oldest in flight; one past it is given up on (`supervise.rs`).

use crate::config::Config;
use crate::fault;
use crate::profile::Profile;
use crate::SAMPLE_RATE;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An utterance the worker and injector have not finished.
pub(super) struct Flight {
    pub id: Option<i64>,
    pub samples: Arc<Vec<f32>>,
    /// How long it may take once it is the oldest.
    pub budget: Duration,
}

/// How long an utterance may take, from the moment it is the oldest in flight: whisper at
/// worst a few times real time on a slow CPU, the LLM's own timeout, and typing.
pub(super) fn budget(audio_samples: usize, config: &Config, profile: &Profile) -> Duration {
    let audio = Duration::from_secs_f64(audio_samples as f64 / SAMPLE_RATE as f64);
    let min = fault::min_deadline().unwrap_or(Duration::from_secs(60));
    let llm = if profile.llm_enabled(config) {
        Duration::from_millis(config.llm.timeout_ms) * 2
    } else {
        Duration::ZERO
    };
    min.max(audio * 4) + llm
}

pub(super) struct Flights {
    by_seq: BTreeMap<u64, Flight>,
    /// Since when the oldest flight has been the oldest (its deadline counts from there).
    oldest_since: Instant,
    /// The next utterance's sequence number in this process.
    next_seq: u64,
    /// When quit was asked for: what is in flight then has `SHUTDOWN_GRACE` to finish.
    pub quit_asked: Option<Instant>,
}

impl Flights {
    pub(super) fn new() -> Flights {
        Flights {
            by_seq: BTreeMap::new(),
            oldest_since: Instant::now(),
            next_seq: 1,
            quit_asked: None,
        }
    }

    /// A number for a new utterance: 1, 2, 3… in this process.
    pub(super) fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    pub(super) fn len(&self) -> usize {
        self.by_seq.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_seq.is_empty()
    }

    /// Utterance `seq` is handed to the worker; the first in flight starts the clock.
    pub(super) fn insert(&mut self, seq: u64, flight: Flight) {
        if self.by_seq.is_empty() {
            self.oldest_since = Instant::now();
        }
        self.by_seq.insert(seq, flight);
    }

    /// Utterance `seq` is finished with; when it was the oldest, the next one's clock starts.
    pub(super) fn land(&mut self, seq: u64) {
        if self
            .by_seq
            .first_key_value()
            .is_some_and(|(&s, _)| s == seq)
        {
            self.oldest_since = Instant::now();
        }
        self.by_seq.remove(&seq);
    }

    /// The oldest flight, taken out, once it has been the oldest for its whole budget; with
    /// how long it waited. The next one's clock starts now.
    pub(super) fn overdue(&mut self) -> Option<(u64, Flight, Duration)> {
        let (&seq, flight) = self.by_seq.first_key_value()?;
        let waited = self.oldest_since.elapsed();
        if waited < flight.budget {
            return None;
        }
        let flight = self.by_seq.remove(&seq)?;
        self.oldest_since = Instant::now();
        Some((seq, flight, waited))
    }

    /// Every flight, taken out (quit's grace is over).
    pub(super) fn take_all(&mut self) -> BTreeMap<u64, Flight> {
        std::mem::take(&mut self.by_seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flight(budget_ms: u64) -> Flight {
        Flight {
            id: None,
            samples: Arc::new(Vec::new()),
            budget: Duration::from_millis(budget_ms),
        }
    }

    #[test]
    fn numbers_start_at_one_and_go_up() {
        let mut f = Flights::new();
        assert_eq!((f.next_seq(), f.next_seq(), f.next_seq()), (1, 2, 3));
    }

    #[test]
    fn only_the_oldest_past_its_budget_is_overdue() {
        let mut f = Flights::new();
        f.insert(1, flight(60_000));
        f.insert(2, flight(0));
        // The oldest (1) has a long budget: the younger one's zero budget does not count yet.
        assert!(f.overdue().is_none());
        f.land(1);
        let Some((seq, _, _)) = f.overdue() else {
            panic!("2 is the oldest now and past its zero budget");
        };
        assert_eq!((seq, f.len()), (2, 0));
    }

    #[test]
    fn landing_a_younger_one_keeps_the_oldest_in_flight() {
        let mut f = Flights::new();
        f.insert(1, flight(60_000));
        f.insert(2, flight(60_000));
        f.land(2);
        assert_eq!(f.len(), 1);
        assert!(!f.is_empty());
        assert_eq!(f.take_all().into_keys().collect::<Vec<_>>(), [1]);
        assert!(f.is_empty());
    }
}
