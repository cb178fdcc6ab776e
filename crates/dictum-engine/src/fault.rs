//! Fault-injection test hooks (`DICTUM_FAULT`), at the bottom of the layers so every stage
//! can use them; compiled into debug builds and `--features test-hooks` only.

/// Test hooks, compiled into debug builds and `--features test-hooks` only (release builds and
/// the packages have none of this):
/// `DICTUM_FAULT=point[@n],...` makes `point` fail its n-th time (default 1; `@*` every time).
/// Points: `stt_panic`, `llm_panic`, `inject_panic` (panic in that stage), `stt_hang`,
/// `inject_hang` (the stage never returns), `focus_unknown` (no focused window can be
/// known, as on GNOME/KDE Wayland). `DICTUM_FAULT_DEADLINE_MS` replaces the minimum
/// time an utterance may take before the controller gives up on it (60 s).
#[cfg(any(debug_assertions, feature = "test-hooks"))]
mod hooks {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::Duration;

    static SEEN: Mutex<Option<HashMap<String, u32>>> = Mutex::new(None);

    /// True when `point` should fail now.
    fn due(point: &str) -> bool {
        let Ok(spec) = std::env::var("DICTUM_FAULT") else {
            return false;
        };
        let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
        let count = seen.get_or_insert_with(HashMap::new);
        for item in spec.split(',') {
            let (name, at) = item.split_once('@').unwrap_or((item, "1"));
            if name.trim() != point {
                continue;
            }
            let n = count.entry(point.to_string()).or_insert(0);
            *n += 1;
            return at == "*" || at.parse::<u32>().is_ok_and(|at| at == *n);
        }
        false
    }

    pub fn point(point: &str) {
        if due(point) {
            if point.ends_with("_hang") {
                tracing::warn!("test hook DICTUM_FAULT: {point}");
                std::thread::sleep(Duration::from_secs(3600));
            } else {
                panic!("test hook DICTUM_FAULT: {point}");
            }
        }
    }

    /// True while `point` is due (`focus_unknown@*`: the focused window cannot be known,
    /// as on GNOME or KDE Wayland).
    pub fn active(point: &str) -> bool {
        due(point)
    }

    pub fn min_deadline() -> Option<Duration> {
        std::env::var("DICTUM_FAULT_DEADLINE_MS")
            .ok()?
            .parse()
            .ok()
            .map(Duration::from_millis)
    }
}

#[cfg(not(any(debug_assertions, feature = "test-hooks")))]
mod hooks {
    #[inline(always)]
    pub fn point(_: &str) {}
    #[inline(always)]
    pub fn active(_: &str) -> bool {
        false
    }
    #[inline(always)]
    pub fn min_deadline() -> Option<std::time::Duration> {
        None
    }
}

pub use hooks::{active, min_deadline, point};
