//! The circuit breaker in front of the speech server: after a failure (down, timeout, refused,
//! garbage) the server is not asked again for `retry_after`, so a dead server costs one timeout,
//! not one per dictation; dictations go straight to the local model meanwhile. Once the time is
//! up the next dictation is the probe: it goes to the server with the normal timeout, and its
//! result closes the breaker or opens it again. Pure state, clock passed in, so it is tested
//! without waiting.

use std::time::{Duration, Instant};

/// What to do with the next request.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// The server is believed up: send.
    Closed,
    /// The wait is over: send this one as the probe.
    Probe,
    /// Skip the server; `reason` is the failure that opened the breaker.
    Open { remaining: Duration, reason: String },
}

#[derive(Debug, Clone)]
pub struct Breaker {
    retry_after: Duration,
    open_until: Option<Instant>,
    reason: String,
    /// Failures in a row.
    pub failures: u32,
}

impl Breaker {
    pub fn new(retry_after: Duration) -> Breaker {
        Breaker {
            retry_after,
            open_until: None,
            reason: String::new(),
            failures: 0,
        }
    }

    pub fn gate(&self, now: Instant) -> Gate {
        match self.open_until {
            None => Gate::Closed,
            Some(t) if now >= t => Gate::Probe,
            Some(t) => Gate::Open {
                remaining: t - now,
                reason: self.reason.clone(),
            },
        }
    }

    pub fn success(&mut self) {
        if self.open_until.is_some() {
            tracing::info!("the speech server answers again; dictations go to it");
        }
        self.open_until = None;
        self.failures = 0;
        self.reason.clear();
    }

    pub fn failure(&mut self, reason: &str, now: Instant) {
        self.failures += 1;
        self.reason = reason.to_string();
        self.open_until = Some(now + self.retry_after);
    }

    pub fn is_open(&self) -> bool {
        self.open_until.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_on_failure_probes_after_the_wait_and_closes_on_success() {
        let t0 = Instant::now();
        let mut b = Breaker::new(Duration::from_secs(10));
        assert_eq!(b.gate(t0), Gate::Closed);
        b.failure("down", t0);
        match b.gate(t0 + Duration::from_secs(3)) {
            Gate::Open { remaining, reason } => {
                assert_eq!(remaining, Duration::from_secs(7));
                assert_eq!(reason, "down");
            }
            g => panic!("{g:?}"),
        }
        assert_eq!(b.gate(t0 + Duration::from_secs(10)), Gate::Probe);
        // The probe failed: open again for the full wait.
        b.failure("still down", t0 + Duration::from_secs(11));
        assert!(matches!(
            b.gate(t0 + Duration::from_secs(20)),
            Gate::Open { .. }
        ));
        assert_eq!(b.failures, 2);
        assert_eq!(b.gate(t0 + Duration::from_secs(21)), Gate::Probe);
        b.success();
        assert_eq!(b.gate(t0 + Duration::from_secs(21)), Gate::Closed);
        assert_eq!(b.failures, 0);
    }

    #[test]
    fn zero_wait_probes_every_time() {
        let t0 = Instant::now();
        let mut b = Breaker::new(Duration::ZERO);
        b.failure("x", t0);
        assert_eq!(b.gate(t0), Gate::Probe);
    }
}
