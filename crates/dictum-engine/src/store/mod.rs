//! History in SQLite: one file, WAL mode, schema from the SQL files in `migrations/` applied in
//! order at open. Every utterance is inserted as `pending` before the work that can fail, and
//! completed afterwards, so nothing captured is ever lost without a trace.

mod browse;
mod correct;
mod delete;
pub mod demo;
mod edit;
mod entry;
pub mod journal;
mod migrations;
mod open;
pub mod recovery;
pub mod retention;
pub mod row;
pub mod row_owner;
mod segments;
pub mod spool;

pub use browse::{
    render_export, Bucketing, Cursor, EntrySummary, ExportFormat, ExportSelection, HistoryFilter,
    Page, PageRequest, Pct, Stats, StatsBucket, StatsRequest,
};
pub use correct::{Corrected, MAX_CORRECTION_CHARS};
pub use edit::EditRecord;
pub use entry::{Entry, Outcome, Source};
pub use migrations::{migrations, MIGRATION_FILES};
pub use open::Recovered;

use crate::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};

pub struct History {
    conn: Connection,
    path: PathBuf,
}

/// What to list.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub limit: usize,
    /// Full-text search over raw and final text; words are ANDed, the last one is a prefix.
    pub search: Option<String>,
}

impl History {
    /// Opens (creating folders and file as needed) and migrates to the latest schema.
    ///
    /// Every connection deletes securely (`PRAGMA secure_delete`: freed space is zeroed, so a
    /// deleted dictation's text does not linger in free pages). A damaged file is an error
    /// here; [`History::open_or_recover`] moves it aside instead.
    pub fn open(path: &Path) -> Result<History> {
        open::open(path).map_err(|e| e.into_error(path))
    }

    /// [`History::open`], for processes that must start whatever state the file is in (the
    /// daemon, the tray): a file SQLite reports as not a database or malformed (checked with
    /// `PRAGMA quick_check`) is moved aside, with its WAL and SHM, to
    /// `history.sqlite3.corrupt-<YYYYMMDD-HHMMSS>` and a fresh history is started; the
    /// [`Recovered`] says so: show it to the user (it is not logged here). A locked or unreadable file is never moved: that
    /// is an error, as from `open`.
    pub fn open_or_recover(path: &Path) -> Result<(History, Option<Recovered>)> {
        open::open_or_recover(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> Error {
        Error::Store {
            path: self.path.clone(),
            reason: e.to_string(),
        }
    }

    /// The newest row's id, if any.
    pub fn last_id(&self) -> Result<Option<i64>> {
        self.conn
            .query_row("SELECT MAX(id) FROM dictations", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    pub fn get(&self, id: i64) -> Result<Option<Entry>> {
        let sql = format!(
            "SELECT id, {} FROM dictations WHERE id = ?1",
            entry::COLUMNS.join(", ")
        );
        self.conn
            .query_row(&sql, params![id], Entry::from_row)
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Newest first.
    pub fn list(&self, query: &Query) -> Result<Vec<Entry>> {
        let cols = entry::COLUMNS
            .iter()
            .map(|c| format!("d.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let limit = if query.limit == 0 {
            -1
        } else {
            query.limit as i64
        };
        let fts = query
            .search
            .as_deref()
            .map(fts_query)
            .filter(|q| !q.is_empty());
        let mut rows = Vec::new();
        match fts {
            Some(fts) => {
                let sql = format!(
                    "SELECT d.id, {cols} FROM dictations_fts f JOIN dictations d ON d.id = f.rowid \
                     WHERE dictations_fts MATCH ?1 ORDER BY d.created_at_ms DESC, d.id DESC LIMIT ?2"
                );
                let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
                let it = stmt
                    .query_map(params![fts, limit], Entry::from_row)
                    .map_err(|e| self.err(e))?;
                for row in it {
                    rows.push(row.map_err(|e| self.err(e))?);
                }
            }
            None => {
                let sql = format!(
                    "SELECT d.id, {cols} FROM dictations d ORDER BY d.created_at_ms DESC, d.id DESC LIMIT ?1"
                );
                let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
                let it = stmt
                    .query_map(params![limit], Entry::from_row)
                    .map_err(|e| self.err(e))?;
                for row in it {
                    rows.push(row.map_err(|e| self.err(e))?);
                }
            }
        }
        Ok(rows)
    }

    /// Schema version (number of applied migrations).
    pub fn schema_version(&self) -> Result<usize> {
        let v: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| self.err(e))?;
        Ok(v as usize)
    }
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for unix milliseconds (proleptic Gregorian, UTC).
pub fn format_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        tod / 3600,
        tod % 3600 / 60,
        tod % 60
    )
}

/// Turns free text into a safe FTS5 query: each word quoted, ANDed, last word as prefix.
fn fts_query(text: &str) -> String {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{}\"", w.replace('"', "")))
        .collect();
    match words.split_last() {
        Some((last, rest)) => {
            let mut q = rest.join(" ");
            if !q.is_empty() {
                q.push(' ');
            }
            q.push_str(last);
            q.push('*');
            q
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn database_wal_and_shm_are_private_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        let db = data.join("history.sqlite3");
        // The test process runs with the usual umask (022): SQLite alone makes 0644 files.
        let history = History::open(&db).expect("open");
        let wal = data.join("history.sqlite3-wal");
        let shm = data.join("history.sqlite3-shm");
        assert!(wal.exists() && shm.exists(), "open connection in WAL mode");
        assert_eq!(mode(&data), 0o700);
        for f in [&db, &wal, &shm] {
            assert_eq!(mode(f), 0o600, "{}", f.display());
        }
        drop(history);
        // A database from before (0644) is tightened on open.
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let _history = History::open(&db).expect("reopen");
        assert_eq!(mode(&db), 0o600);
    }

    #[test]
    fn utc_formatting() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_utc(1_795_000_000_123), "2026-11-18T11:06:40.123Z");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn fts_queries_are_quoted() {
        assert_eq!(fts_query("fellow americ"), "\"fellow\" \"americ\"*");
        assert_eq!(fts_query("a\"b OR -c"), "\"a\" \"b\" \"OR\" \"c\"*");
        assert_eq!(fts_query("  "), "");
    }
}
