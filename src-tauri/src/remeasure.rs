//! The settings panel's "Measure again": times the installed speech models on this machine, as
//! the setup window does (`welcome::measured_recommendation`, the same rule as `dictum models
//! recommend`), and returns the recommendation with the numbers behind it. Runs off the UI
//! thread, one timing at a time (this one or the setup window's), and not while a dictation is
//! under way. The dictation's own loaded model is left loaded: the timing loads its own copy of
//! each model it times and drops it after.

use crate::state::AppState;
use dictum_engine::ipc::DictationState;
use dictum_engine::models::recommend::Recommendation;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tauri::{AppHandle, Emitter, Manager, State};

/// Set while a timing runs. Two at once would share the CPU and each report the other's load.
pub static MEASURING: AtomicBool = AtomicBool::new(false);

const BUSY: &str =
    "a measurement is already running (here or in the setup window); wait for its result";

/// Holds the flag while alive; dropping it (the result, an error or a panic) clears it.
pub struct Busy<'a>(&'a AtomicBool);

impl<'a> Busy<'a> {
    pub fn claim(flag: &'a AtomicBool) -> Result<Busy<'a>, String> {
        flag.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| Busy(flag))
            .map_err(|_| BUSY.to_string())
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Why not to time now: a dictation is recording or being transcribed (the timing would slow
/// it and its passes would make the figures too high), or hands-free listening may start one.
fn refusal(state: DictationState) -> Option<&'static str> {
    match state {
        DictationState::Recording | DictationState::Processing | DictationState::Opening => Some(
            "a dictation is under way: measure again once its text is typed (the timing would slow it down and its numbers would be too high)",
        ),
        DictationState::Listening => Some(
            "hands-free listening is on: stop it (tray menu), then measure again, so that no dictation competes with the timing",
        ),
        DictationState::Idle | DictationState::Error => None,
    }
}

/// `measure` while holding `flag`, unless `state` says a dictation is under way.
fn run_exclusive<T>(
    flag: &AtomicBool,
    state: DictationState,
    measure: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
    if let Some(why) = refusal(state) {
        return Err(why.to_string());
    }
    let _busy = Busy::claim(flag)?;
    measure()
}

/// The recommendation and what the timing did.
#[derive(Serialize)]
pub struct Remeasured {
    #[serde(flatten)]
    pub recommendation: Recommendation,
    /// The configured model (the panel offers to switch when the recommendation differs).
    pub current: String,
    /// Models timed and their cost, load average before → after, skipped models and why, and
    /// whether a dictation ran during the timing.
    pub note: String,
    /// How long the timing took.
    pub seconds: f64,
}

/// `measure-progress`: the model about to be timed.
#[derive(Serialize, Clone)]
struct Progress {
    model: String,
}

fn dictation_state(state: &AppState) -> DictationState {
    state.status.lock().unwrap_or_else(|p| p.into_inner()).state
}

/// Times the installed models and recommends one (seconds per model; the panel shows
/// "measuring…" and the model being timed from `measure-progress`).
#[tauri::command]
pub async fn measure_models(
    app: AppHandle,
    state: State<'_, AppState>,
) -> Result<Remeasured, String> {
    let now = dictation_state(&state);
    let config = state.config();
    tauri::async_runtime::spawn_blocking(move || {
        run_exclusive(&MEASURING, now, || {
            let start = Instant::now();
            let mut disturbed = false;
            let mut on_model = |name: &str| {
                let _ = app.emit("measure-progress", Progress { model: name.into() });
                disturbed |= refusal(dictation_state(&app.state::<AppState>())).is_some();
            };
            let (rec, mut note) = crate::welcome::measured_recommendation(&config, &mut on_model);
            disturbed |= refusal(dictation_state(&app.state::<AppState>())).is_some();
            let Some(recommendation) = rec else {
                return Err(if note.starts_with("not measured yet") {
                    note
                } else {
                    format!("{note}; try again, or run `dictum models recommend` in a terminal for the details")
                });
            };
            if disturbed {
                note.push_str("; a dictation ran during the timing, so these figures may be too high: measure again when you are not dictating");
            }
            Ok(Remeasured {
                recommendation,
                current: config.stt.model.clone(),
                note,
                seconds: start.elapsed().as_secs_f64(),
            })
        })
    })
    .await
    .map_err(|e| format!("the timing stopped unexpectedly ({e}); measure again"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_at_a_time_and_the_flag_is_cleared_after_an_error_or_a_panic() {
        let flag = AtomicBool::new(false);
        // While one runs, a second is refused and does not run.
        let inner = run_exclusive(&flag, DictationState::Idle, || {
            Ok(run_exclusive(&flag, DictationState::Idle, || Ok(())))
        });
        assert_eq!(inner, Ok(Err(BUSY.to_string())));
        assert!(!flag.load(Ordering::Acquire), "cleared after a result");
        let failed: Result<(), String> =
            run_exclusive(&flag, DictationState::Error, || Err("no clip".into()));
        assert_eq!(failed, Err("no clip".to_string()));
        assert!(!flag.load(Ordering::Acquire), "cleared after an error");
        let panicked = std::panic::catch_unwind(|| {
            run_exclusive(&flag, DictationState::Idle, || -> Result<(), String> {
                panic!("whisper crashed")
            })
        });
        assert!(panicked.is_err());
        assert!(!flag.load(Ordering::Acquire), "cleared after a panic");
        assert_eq!(run_exclusive(&flag, DictationState::Idle, || Ok(7)), Ok(7));
    }

    #[test]
    fn refused_while_a_dictation_is_under_way_without_taking_the_flag() {
        let flag = AtomicBool::new(false);
        for state in [
            DictationState::Recording,
            DictationState::Processing,
            DictationState::Listening,
        ] {
            let mut ran = false;
            let r = run_exclusive(&flag, state, || {
                ran = true;
                Ok(())
            });
            let why = r.expect_err("refused");
            assert!(
                why.contains("measure again") || why.contains("then measure"),
                "{why}"
            );
            assert!(!ran && !flag.load(Ordering::Acquire));
        }
    }
}
