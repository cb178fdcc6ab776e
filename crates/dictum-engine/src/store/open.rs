//! Opening the history: private files, connection settings, migrations, and what to do with
//! a damaged file (move it aside and start afresh, telling the user) versus a busy one (wait,
//! then fail: a locked database is not corrupt and is never moved).

use super::migrations::{migrate, MigrateError};
use super::{format_utc, now_ms, History};
use crate::{Error, Result};
use rusqlite::{Connection, ErrorCode};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a connection waits for another one's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The files SQLite keeps beside the database.
const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// A damaged history file that was moved aside; tell the user (see its `Display`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Where the damaged database went (`history.sqlite3.corrupt-YYYYMMDD-HHMMSS`, UTC); its
    /// WAL and SHM, if any, went beside it with their usual suffixes.
    pub moved_to: PathBuf,
    /// What SQLite said about it.
    pub reason: String,
}

impl std::fmt::Display for Recovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the history database was damaged ({}); it was moved to {} and a new, empty history was started (to get old entries back: `sqlite3 {} .recover | sqlite3 recovered.sqlite3`)",
            self.reason,
            self.moved_to.display(),
            self.moved_to.display()
        )
    }
}

/// Why an open failed, with enough of SQLite's answer to tell damage from a lock.
#[derive(Debug)]
pub(crate) enum OpenError {
    Io(String),
    Sqlite {
        what: &'static str,
        err: rusqlite::Error,
    },
    /// `PRAGMA quick_check` found problems (its first line).
    Check(String),
    Newer {
        found: usize,
        known: usize,
    },
}

impl OpenError {
    fn sqlite(what: &'static str) -> impl Fn(rusqlite::Error) -> OpenError {
        move |err| OpenError::Sqlite { what, err }
    }

    /// The file is not a usable database (as opposed to busy, read-only, missing, full).
    pub(crate) fn is_corrupt(&self) -> bool {
        match self {
            OpenError::Sqlite { err, .. } => matches!(
                err.sqlite_error_code(),
                Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
            ),
            OpenError::Check(_) => true,
            OpenError::Io(_) | OpenError::Newer { .. } => false,
        }
    }

    fn reason(&self) -> String {
        match self {
            OpenError::Io(s) => s.clone(),
            OpenError::Sqlite { what: "", err } => err.to_string(),
            OpenError::Sqlite { what, err } => format!("{what}: {err}"),
            OpenError::Check(s) => format!("integrity check: {s}"),
            OpenError::Newer { found, known } => format!(
                "it was written by a newer Dictum (schema {found}, this one knows {known}); update Dictum"
            ),
        }
    }

    pub(crate) fn into_error(self, path: &Path) -> Error {
        let mut reason = self.reason();
        if let OpenError::Sqlite { err, .. } = &self {
            if is_busy(err) {
                reason.push_str(
                    "; another program holds it locked: close it (or the other Dictum) and retry",
                );
            }
        }
        Error::Store {
            path: path.to_path_buf(),
            reason,
        }
    }
}

fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

pub(crate) fn open(path: &Path) -> std::result::Result<History, OpenError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::paths::create_private_dir_all(parent)
            .map_err(|e| OpenError::Io(format!("cannot create {}: {e}", parent.display())))?;
    }
    // The database is created 0600 here, before SQLite sees it: SQLite gives its -wal and
    // -shm files the database file's mode. An existing database (and its WAL and SHM) is
    // tightened to 0600.
    if !path.exists() {
        crate::paths::create_private_file(path)
            .map_err(|e| OpenError::Io(format!("cannot create the database file: {e}")))?;
    }
    for p in std::iter::once(path.to_path_buf()).chain(SIDE_FILES.map(|s| side_file(path, s))) {
        crate::paths::make_private(&p)
            .map_err(|e| OpenError::Io(format!("cannot make it private (chmod 600): {e}")))?;
    }
    let mut conn = Connection::open(path).map_err(OpenError::sqlite(""))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(OpenError::sqlite(""))?;
    enable_wal(&conn)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(OpenError::sqlite(""))?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(OpenError::sqlite(""))?;
    // Deleted rows, FTS segments and index entries are overwritten with zeros, not just
    // unlinked (per connection: every connection that deletes must have it).
    conn.pragma_update(None, "secure_delete", "ON")
        .map_err(OpenError::sqlite(""))?;
    match migrate(&mut conn) {
        Ok(_) => {}
        Err(MigrateError::Sqlite(err)) => {
            return Err(OpenError::Sqlite {
                what: "schema migration failed",
                err,
            })
        }
        Err(MigrateError::Newer { found, known }) => return Err(OpenError::Newer { found, known }),
    }
    Ok(History {
        conn,
        path: path.to_path_buf(),
    })
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Switches to WAL. SQLite answers "locked" at once, without waiting (no busy handler), when
/// another connection is switching a fresh database at the same moment: retried here for up
/// to [`BUSY_TIMEOUT`].
fn enable_wal(conn: &Connection) -> std::result::Result<(), OpenError> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(2);
    loop {
        let mode =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0));
        let retry = match &mode {
            Ok(m) if m.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(_) => true,
            Err(e) => is_busy(e),
        };
        if !retry || Instant::now() >= deadline {
            return Err(match mode {
                Ok(m) => OpenError::Io(format!(
                    "cannot enable WAL: the journal mode stays {m}; another program holds the database: close it and retry"
                )),
                Err(err) => OpenError::Sqlite {
                    what: "cannot enable WAL",
                    err,
                },
            });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// `PRAGMA quick_check`: structure of every page, without the (slow) index cross-check.
fn quick_check(history: &History) -> std::result::Result<(), OpenError> {
    let mut stmt = history
        .conn
        .prepare("PRAGMA quick_check")
        .map_err(OpenError::sqlite(""))?;
    let lines = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(OpenError::sqlite(""))?
        .collect::<rusqlite::Result<Vec<String>>>()
        .map_err(OpenError::sqlite(""))?;
    match lines.first().map(String::as_str) {
        Some("ok") | None => Ok(()),
        Some(first) => Err(OpenError::Check(first.to_string())),
    }
}

pub(crate) fn open_or_recover(path: &Path) -> Result<(History, Option<Recovered>)> {
    let problem = match open(path).and_then(|h| quick_check(&h).map(|()| h)) {
        Ok(history) => return Ok((history, None)),
        Err(e) if e.is_corrupt() => e.reason(),
        Err(e) => return Err(e.into_error(path)),
    };
    // The failed connection is closed by now (dropped above): nothing of ours holds it.
    let moved_to = move_aside(path).map_err(|e| Error::Store {
        path: path.to_path_buf(),
        reason: format!(
            "it is damaged ({problem}) and could not be moved aside: {e}; move or delete it yourself"
        ),
    })?;
    let recovered = Recovered {
        moved_to,
        reason: problem,
    };
    let history = History::open(path)?;
    Ok((history, Some(recovered)))
}

/// Renames the database and its side files to `<name>.corrupt-<YYYYMMDD-HHMMSS>[-N]`.
fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    let iso = format_utc(now_ms()); // 2026-11-23T11:36:05.123Z
    let stamp = format!(
        "{}-{}",
        iso[..10].replace('-', ""),
        iso[11..19].replace(':', "")
    );
    let base = side_file(path, &format!(".corrupt-{stamp}"));
    let mut target = base.clone();
    let mut n = 1;
    while target.exists() {
        n += 1;
        target = side_file(&base, &format!("-{n}"));
    }
    // Side files first: a database without its WAL is still a consistent (older) database,
    // a WAL without its database is nothing.
    for suffix in SIDE_FILES {
        let from = side_file(path, suffix);
        if from.exists() {
            std::fs::rename(&from, side_file(&target, suffix))?;
        }
    }
    std::fs::rename(path, &target)?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_and_its_side_files_move_together_and_never_overwrite() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("history.sqlite3");
        let write_all = || {
            std::fs::write(&db, b"db").expect("db");
            std::fs::write(side_file(&db, "-wal"), b"wal").expect("wal");
            std::fs::write(side_file(&db, "-shm"), b"shm").expect("shm");
        };
        write_all();
        let first = move_aside(&db).expect("move");
        assert!(first
            .display()
            .to_string()
            .contains("history.sqlite3.corrupt-"));
        for (suffix, content) in [("", "db"), ("-wal", "wal"), ("-shm", "shm")] {
            assert_eq!(
                std::fs::read_to_string(side_file(&first, suffix)).expect(suffix),
                content
            );
            assert!(!side_file(&db, suffix).exists(), "{suffix} left behind");
        }
        // Twice in the same second: a second name, the first file kept.
        write_all();
        let second = move_aside(&db).expect("move again");
        assert_ne!(first, second);
        assert!(first.exists() && second.exists());
    }
}
