//! Per-stage wall-clock timings. Every stage of every dictation is measured, always, and the
//! numbers go to history: "where did the time go" must be answerable from the database.

use serde::Serialize;
use std::time::Instant;

/// Milliseconds per stage; `None` means the stage did not run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StageTimings {
    pub decode: Option<f64>,
    pub resample: Option<f64>,
    pub vad: Option<f64>,
    pub model_load: Option<f64>,
    pub warmup: Option<f64>,
    pub stt: Option<f64>,
    pub llm: Option<f64>,
    pub total: Option<f64>,
}

/// Runs `f` and returns its result with the elapsed milliseconds.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, ms_since(start))
}

pub fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}
