//! The small private JSON files that remember what Dictum paused or muted, so that a Dictum
//! that crashed puts it back at its next start: written whole then renamed, and a damaged file
//! is removed (it restores nothing) instead of failing every start.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

/// Writes `value` to `path` (private, written whole then renamed).
pub fn save<T: Serialize>(value: &T, path: &Path) -> Result<(), String> {
    let text = serde_json::to_vec(value).map_err(|e| e.to_string())?;
    let tmp = path.with_extension("json.tmp");
    crate::paths::write_private(&tmp, &text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// What is saved at `path`; None when there is nothing. A file that cannot be read as a `T` is
/// removed, with a warning naming `what` (the feature it belongs to).
pub fn load<T: DeserializeOwned>(path: &Path, what: &str) -> Option<T> {
    let bytes = std::fs::read(path).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(value) => Some(value),
        Err(e) => {
            tracing::warn!("{what}: ignoring {}: {e}", path.display());
            let _ = std::fs::remove_file(path);
            None
        }
    }
}
