//! Forgetting: delete chosen entries, all of them, or those past the retention period, each
//! with its kept audio file. A deletion leaves no readable trace in the files: connections
//! run with `secure_delete` (freed space zeroed), and after each deletion the full-text index
//! is merged (FTS5 keeps deleted terms in its segments until then) and the WAL, which still
//! holds the old pages, is checkpointed and truncated to zero bytes.

use super::{now_ms, History};
use crate::Result;
use rusqlite::params_from_iter;
use rusqlite::types::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

impl History {
    /// Deletes entries and their kept audio files; returns how many rows went (ids that do
    /// not exist are skipped).
    pub fn delete(&self, ids: &[i64]) -> Result<usize> {
        if ids.is_empty() {
            return Ok(0);
        }
        let mut total = 0;
        // Bounded statements (SQLite limits bound parameters): 500 ids at a time.
        for chunk in ids.chunks(500) {
            let marks = vec!["?"; chunk.len()].join(",");
            let values: Vec<Value> = chunk.iter().map(|&id| Value::Integer(id)).collect();
            total += self.delete_where(&format!("id IN ({marks})"), values)?;
        }
        // Their undelivered audio in the spool too.
        let spool = super::spool::Spool::for_history(&self.path);
        for &id in ids {
            spool.remove(id);
        }
        self.scrub_after_delete(total);
        Ok(total)
    }

    /// Deletes every entry and every kept audio file ("Delete all"); returns how many rows
    /// went.
    pub fn delete_all(&self) -> Result<usize> {
        let n = self.delete_where("1", Vec::new())?;
        // Recordings whose row is gone already (a crash between the two): Dictum names them
        // `<id>.wav` in the `audio` folder beside the database.
        if let Some(dir) = self.path.parent().map(|p| p.join("audio")) {
            remove_orphan_recordings(&dir);
        }
        // And everything in the spool (audio of undelivered dictations).
        super::spool::Spool::for_history(&self.path).prune(0, super::spool::MAX_AGE);
        self.scrub_after_delete(usize::MAX);
        Ok(n)
    }

    /// Deletes entries older than `days` days, with their audio; returns how many (0 days
    /// keeps everything).
    pub fn apply_retention(&self, days: u32) -> Result<usize> {
        if days == 0 {
            return Ok(0);
        }
        let cutoff = now_ms().saturating_sub(i64::from(days) * 86_400_000);
        let n = self.delete_where("created_at_ms < ?", vec![Value::Integer(cutoff)])?;
        self.scrub_after_delete(n);
        Ok(n)
    }

    /// Deletes the rows matching `condition` in one transaction, then their audio files.
    fn delete_where(&self, condition: &str, values: Vec<Value>) -> Result<usize> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        let audio: Vec<String> = {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT audio_path FROM dictations WHERE audio_path IS NOT NULL AND ({condition})"
                ))
                .map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map(params_from_iter(values.iter()), |r| r.get(0))
                .map_err(|e| self.err(e))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(|e| self.err(e))?
        };
        let n = tx
            .execute(
                &format!("DELETE FROM dictations WHERE {condition}"),
                params_from_iter(values.iter()),
            )
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        // Only once the rows are gone for good: a failed commit keeps row and audio together.
        for path in audio {
            remove_recording(Path::new(&path));
        }
        Ok(n)
    }

    /// Merges the full-text index and truncates the WAL after `deleted` rows went (nothing to
    /// do for none). Failures are logged, not returned: the rows are deleted either way.
    fn scrub_after_delete(&self, deleted: usize) {
        if deleted == 0 {
            return;
        }
        if let Err(e) = self.conn.execute(
            "INSERT INTO dictations_fts (dictations_fts) VALUES ('optimize')",
            [],
        ) {
            tracing::warn!("history: could not merge the search index after a deletion: {e}");
        }
        // TRUNCATE waits for readers (busy timeout) and reports busy = 1 when one still holds
        // an old snapshot; a few short retries cover a reader finishing its query.
        for attempt in 0..5 {
            match self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0))
            {
                Ok(0) => return,
                Ok(_) if attempt < 4 => std::thread::sleep(Duration::from_millis(100)),
                Ok(_) => tracing::warn!(
                    "history: another connection is reading; the deleted text stays in {}-wal until the next deletion or restart",
                    self.path.display()
                ),
                Err(e) => {
                    tracing::warn!("history: could not truncate the WAL after a deletion: {e}");
                    return;
                }
            }
        }
    }
}

fn remove_recording(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!(
            "history: could not delete the recording {}: {e}; delete it yourself",
            path.display()
        ),
    }
}

/// `<digits>.wav` files in `dir` (Dictum's kept recordings).
fn remove_orphan_recordings(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let ours = |p: &PathBuf| {
        p.extension().is_some_and(|e| e == "wav")
            && p.file_stem()
                .and_then(|s| s.to_str())
                .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
    };
    for path in entries.flatten().map(|e| e.path()).filter(ours) {
        remove_recording(&path);
    }
}
