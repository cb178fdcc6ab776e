//! The journal: history rows the database refused (locked by another program, disk full),
//! appended as JSON lines to `<database>.journal` (0600, beside the database) so that a
//! dictation is not lost when Dictum quits or is killed before the database takes it again.
//! It is replayed into the database at the next start and whenever the database accepts
//! writes again, then removed. A torn last line (killed mid-write) is skipped.

use super::row::{Applied, RowWriter, WholeRow};
use super::{Entry, History};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Appends and replays do not interleave within a process (the injector and the controller
/// may both write).
static LOCK: Mutex<()> = Mutex::new(());

#[derive(Debug, Clone)]
pub struct Journal {
    path: PathBuf,
}

/// What a [`Journal::replay`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Replayed {
    /// Rows written to the database.
    pub written: usize,
    /// Lines that could not be read (a torn write) or rows deleted meanwhile.
    pub skipped: usize,
    /// Rows the database still refuses (kept in the journal).
    pub left: usize,
}

impl Journal {
    /// The journal of the history database at `db`: `<db>.journal`.
    pub fn for_history(db: &Path) -> Journal {
        let mut path = db.as_os_str().to_owned();
        path.push(".journal");
        Journal {
            path: PathBuf::from(path),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether there is anything to replay.
    pub fn is_empty(&self) -> bool {
        std::fs::metadata(&self.path).map_or(true, |m| m.len() == 0)
    }

    /// Appends `entry` as one line and syncs it to disk.
    pub fn append(&self, entry: &Entry) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        // 0600, and a link at the journal's place is refused, never followed.
        let mut file = crate::paths::append_private_file(&self.path)?;
        file.write_all(&line)?;
        file.sync_data()
    }

    /// Writes the journal's rows into `history`, in order, through the row writer (an update
    /// for a row with an id, created whole for one that never got one). When all are written the journal is removed;
    /// otherwise it keeps the rows still refused, and the error says why.
    pub fn replay(&self, history: &History) -> Result<Replayed, (Replayed, String)> {
        let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let mut done = Replayed::default();
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err((
                done,
                format!(
                    "{} is a symbolic link, not Dictum's journal; it is not read (remove the link)",
                    self.path.display()
                ),
            ));
        }
        let text = match std::fs::read(&self.path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(done),
            Err(e) => return Err((done, format!("cannot read {}: {e}", self.path.display()))),
        };
        let mut left: Vec<&str> = Vec::new();
        let mut why = None;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            if why.is_some() {
                left.push(line);
                continue;
            }
            let mut entry: Entry = match serde_json::from_str(line) {
                Ok(e) => e,
                Err(e) => {
                    tracing::warn!(
                        "history journal {}: a line that cannot be read is skipped ({e})",
                        self.path.display()
                    );
                    done.skipped += 1;
                    continue;
                }
            };
            // Ok(true): written; Ok(false): the row was deleted meanwhile (by the user),
            // nothing to restore. A journaled row is a completed one (the injector's, a full
            // queue's): it is written as delivered, or created whole when it never was.
            let id = entry.id;
            let written = RowWriter::new(history)
                .write(&mut entry, WholeRow::Delivered)
                .map(|_| true)
                .or_else(|e| match id.map(|id| history.get(id)) {
                    Some(Ok(None)) => Ok(false),
                    _ => Err(e),
                });
            match written {
                Ok(true) => done.written += 1,
                Ok(false) => done.skipped += 1,
                Err(e) => {
                    why = Some(e.to_string());
                    left.push(line);
                }
            }
        }
        if left.is_empty() {
            std::fs::remove_file(&self.path).or_else(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Ok(())
                } else {
                    Err((done, format!("cannot remove {}: {e}", self.path.display())))
                }
            })?;
            return Ok(done);
        }
        done.left = left.len();
        let mut rest = left.join("\n");
        rest.push('\n');
        let tmp = self.path.with_extension("journal.tmp");
        crate::paths::write_private(&tmp, rest.as_bytes())
            .and_then(|_| std::fs::rename(&tmp, &self.path))
            .map_err(|e| (done, format!("cannot rewrite {}: {e}", self.path.display())))?;
        Err((done, why.unwrap_or_default()))
    }
}

/// [`RowWriter::write`]; a row the database refuses goes to the journal (replayed at the next
/// start). The error says where the row is.
pub fn write_or_journal(
    rows: &RowWriter<'_>,
    entry: &mut Entry,
    update: WholeRow,
) -> Result<Applied, String> {
    match rows.write(entry, update) {
        Ok(applied) => Ok(applied),
        Err(e) => Err(keep_refused(rows.history().path(), entry, &e)),
    }
}

/// Keeps `entry`, a row the history at `db` refused with `e`, in its journal; the message
/// says where the row is now.
pub fn keep_refused(db: &std::path::Path, entry: &Entry, e: &dyn std::fmt::Display) -> String {
    let journal = Journal::for_history(db);
    match journal.append(entry) {
        Ok(()) => format!(
            "{e}; the row is kept in {} and written at the next start",
            journal.path().display()
        ),
        Err(j) => format!(
            "{e}; it could not be kept in {} either ({j})",
            journal.path().display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::row::tests::{open, state_of, with_text};
    use crate::store::row::RowState;
    use crate::store::{Outcome, Source};

    #[test]
    fn rows_are_appended_replayed_in_order_and_the_journal_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("history.sqlite3");
        let history = History::open(&db).expect("open");
        let mut pending = Entry::new(Source::Mic);
        history.insert(&mut pending).expect("insert");
        let journal = Journal::for_history(&db);
        assert!(journal.is_empty());
        // The row's final state (written while the database refused it)...
        let mut done = pending.clone();
        done.outcome = Outcome::Ok;
        done.text = Some("first version".into());
        journal.append(&done).expect("append");
        done.text = Some("hello world".into());
        journal.append(&done).expect("append");
        // ...and a row the press could not even insert.
        let mut fresh = Entry::new(Source::Mic);
        fresh.outcome = Outcome::Ok;
        fresh.text = Some("never inserted".into());
        journal.append(&fresh).expect("append");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(journal.path())
                .expect("stat")
                .permissions();
            assert_eq!(mode.mode() & 0o777, 0o600);
        }
        let got = journal.replay(&history).expect("replay");
        assert_eq!(got.left, 0, "{got:?}");
        assert!(!journal.path().exists(), "removed once replayed");
        let id = pending.id.expect("id");
        let row = history.get(id).expect("get").expect("row");
        assert_eq!(row.outcome, Outcome::Ok);
        assert_eq!(
            row.text.as_deref(),
            Some("hello world"),
            "the last line wins"
        );
        let all = history.list(&crate::store::Query::default()).expect("list");
        assert_eq!(all.len(), 2);
        assert!(all
            .iter()
            .any(|e| e.text.as_deref() == Some("never inserted")));
        // A second replay has nothing to do.
        assert_eq!(
            journal.replay(&history).expect("again"),
            Replayed::default()
        );
    }

    #[test]
    fn a_torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("history.sqlite3");
        let history = History::open(&db).expect("open");
        let mut row = Entry::new(Source::Mic);
        history.insert(&mut row).expect("insert");
        row.outcome = Outcome::Ok;
        row.text = Some("kept".into());
        let journal = Journal::for_history(&db);
        journal.append(&row).expect("append");
        // Killed in the middle of the next append.
        let line = serde_json::to_string(&row).expect("json");
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(journal.path())
            .expect("open");
        file.write_all(&line.as_bytes()[..line.len() / 2])
            .expect("write");
        drop(file);
        let got = journal.replay(&history).expect("replay");
        assert_eq!((got.written, got.skipped, got.left), (1, 1, 0));
        let back = history.get(row.id.expect("id")).expect("get").expect("row");
        assert_eq!(back.text.as_deref(), Some("kept"));
        assert!(!journal.path().exists());
    }

    #[test]
    fn a_symlinked_journal_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("history.sqlite3");
        let history = History::open(&db).expect("open");
        let journal = Journal::for_history(&db);
        // A link planted where the journal goes, to a file of someone else's choosing.
        let target = dir.path().join("planted");
        std::fs::write(&target, "").expect("target");
        std::os::unix::fs::symlink(&target, journal.path()).expect("symlink");
        let mut row = Entry::new(Source::Mic);
        row.text = Some("dictated words".into());
        let e = journal.append(&row).expect_err("a link is refused");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "");
        // Nor is a link read back into the history.
        let line = serde_json::to_string(&row).expect("json");
        std::fs::write(&target, format!("{line}\n")).expect("write");
        let (got, why) = journal.replay(&history).expect_err("refused");
        assert_eq!(got.written, 0);
        assert!(why.contains("symbolic link"), "{why}");
        assert!(
            journal.path().exists(),
            "the link is left for the user to look at"
        );
    }

    #[test]
    fn rows_the_database_still_refuses_stay_in_the_journal() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("history.sqlite3");
        let history = History::open(&db).expect("open");
        let mut row = Entry::new(Source::Mic);
        history.insert(&mut row).expect("insert");
        row.text = Some("waiting".into());
        let journal = Journal::for_history(&db);
        journal.append(&row).expect("append");
        let refused = History::open(&db).expect("open");
        refused
            .conn
            .busy_timeout(std::time::Duration::ZERO)
            .expect("no wait");
        // Another connection holds the write lock.
        let other = rusqlite::Connection::open(&db).expect("open");
        other.execute_batch("BEGIN IMMEDIATE;").expect("lock");
        let (got, why) = journal.replay(&refused).expect_err("refused");
        assert_eq!(got.left, 1, "{why}");
        assert!(journal.path().exists());
        other.execute_batch("COMMIT;").expect("unlock");
        let got = journal.replay(&history).expect("replay");
        assert_eq!(got.written, 1);
        assert!(!journal.path().exists());
    }

    /// The database refuses the write (another program holds the write lock): nothing of the
    /// update is applied, and the row goes to the journal, from which it is replayed.
    #[test]
    fn a_refused_write_goes_to_the_journal() {
        let dir = tempfile::tempdir().expect("tempdir");
        let history = open(&dir);
        let mut entry = Entry::new(Source::Mic);
        RowWriter::new(&history)
            .create(&mut entry, RowState::Started)
            .expect("create");
        let refused = History::open(history.path()).expect("open");
        refused
            .conn
            .busy_timeout(std::time::Duration::ZERO)
            .expect("no wait");
        let other = rusqlite::Connection::open(history.path()).expect("open");
        other.execute_batch("BEGIN IMMEDIATE;").expect("lock");
        let mut failed = entry.clone();
        failed.outcome = Outcome::Error;
        failed.error_kind = Some("queue_full".into());
        let why = write_or_journal(&RowWriter::new(&refused), &mut failed, WholeRow::Failed)
            .expect_err("refused");
        assert!(why.contains("journal"), "{why}");
        other.execute_batch("COMMIT;").expect("unlock");
        let id = entry.id.expect("id");
        let row = history.get(id).expect("get").expect("row");
        assert_eq!(row.outcome, Outcome::Pending, "nothing applied");
        assert_eq!(state_of(&history, id), RowState::Started as i64);
        let journal = Journal::for_history(history.path());
        assert!(!journal.is_empty());
        journal.replay(&history).expect("replay");
        let row = history.get(id).expect("get").expect("row");
        assert_eq!(row.error_kind.as_deref(), Some("queue_full"));
        // A row never created (its press could not store it) is created whole.
        let mut fresh = with_text(&Entry::new(Source::Mic), "typed");
        RowWriter::new(&history)
            .write(&mut fresh, WholeRow::Delivered)
            .expect("created");
        let fresh_id = fresh.id.expect("id");
        assert_eq!(state_of(&history, fresh_id), RowState::Delivered as i64);
    }
}
