//! The daemon's one owner of dictation rows: a thread that holds the history connection
//! every row write goes through, and [`Rows`], the handle the controller, the worker and the
//! injector send their typed updates to.
//!
//! Each update is the [`RowWriter`]'s (one transaction that checks the row's state), run on
//! the owner's thread in the order the updates arrive; the sender waits for the answer, so a
//! caller sees its write done (or refused, or failed) before it goes on, exactly as when it
//! held the connection itself. With one connection writing, two threads never wait on each
//! other's write lock (`SQLITE_BUSY`), and a row's updates are applied one after the other.
//! The CLI's and the tray's own writes (retry, corrections) use [`RowWriter`] in their process.

use super::journal::{self, Journal};
use super::row::{Applied, RowState, RowUpdate, RowWriter, WholeRow};
use super::{Entry, History, Outcome};
use crate::subtitles::Segment;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

type Job = Box<dyn FnOnce(&RowWriter<'_>) + Send>;

/// A handle to the row owner: cheap to clone, one per thread that writes rows.
#[derive(Clone)]
pub struct Rows {
    to_owner: mpsc::Sender<Job>,
    path: PathBuf,
}

/// An update that owns what it writes: what crosses to the owner's thread.
#[derive(Debug, Clone)]
enum Update {
    Transcribed(Entry),
    Cleaned(Entry),
    Delivered(Entry),
    Failed(Entry),
    Retried(Entry),
    GaveUp {
        outcome: Outcome,
        kind: String,
        message: String,
        audio_path: Option<String>,
    },
    Edit {
        selection: String,
    },
    Corrected {
        text: String,
    },
    Segments {
        segments: Vec<Segment>,
    },
}

impl Update {
    fn of(update: RowUpdate<'_>) -> Update {
        match update {
            RowUpdate::Transcribed(e) => Update::Transcribed(e.clone()),
            RowUpdate::Cleaned(e) => Update::Cleaned(e.clone()),
            RowUpdate::Delivered(e) => Update::Delivered(e.clone()),
            RowUpdate::Failed(e) => Update::Failed(e.clone()),
            RowUpdate::Retried(e) => Update::Retried(e.clone()),
            RowUpdate::GaveUp {
                outcome,
                kind,
                message,
                audio_path,
            } => Update::GaveUp {
                outcome,
                kind: kind.to_string(),
                message: message.to_string(),
                audio_path: audio_path.map(str::to_string),
            },
            RowUpdate::Edit { selection } => Update::Edit {
                selection: selection.to_string(),
            },
            RowUpdate::Corrected { text } => Update::Corrected {
                text: text.to_string(),
            },
            RowUpdate::Segments { segments } => Update::Segments {
                segments: segments.to_vec(),
            },
        }
    }

    fn as_update(&self) -> RowUpdate<'_> {
        match self {
            Update::Transcribed(e) => RowUpdate::Transcribed(e),
            Update::Cleaned(e) => RowUpdate::Cleaned(e),
            Update::Delivered(e) => RowUpdate::Delivered(e),
            Update::Failed(e) => RowUpdate::Failed(e),
            Update::Retried(e) => RowUpdate::Retried(e),
            Update::GaveUp {
                outcome,
                kind,
                message,
                audio_path,
            } => RowUpdate::GaveUp {
                outcome: *outcome,
                kind,
                message,
                audio_path: audio_path.as_deref(),
            },
            Update::Edit { selection } => RowUpdate::Edit { selection },
            Update::Corrected { text } => RowUpdate::Corrected { text },
            Update::Segments { segments } => RowUpdate::Segments { segments },
        }
    }
}

impl Rows {
    /// Starts the owner thread on `history` (its own connection: open one for it). The
    /// thread ends when the last handle is dropped, after the updates already sent.
    pub fn start(history: History) -> Result<Rows> {
        let path = history.path().to_path_buf();
        let (to_owner, jobs) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("dictum-rows".into())
            .spawn(move || {
                let writer = RowWriter::new(&history);
                for job in jobs {
                    // A job that panics answers nothing (its sender gets an error); the
                    // owner goes on with the next one.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&writer)));
                }
            })
            .map_err(|e| Error::Store {
                path: path.clone(),
                reason: format!("cannot start the history writer thread: {e}"),
            })?;
        Ok(Rows { to_owner, path })
    }

    /// The history file the rows are in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn gone(&self) -> Error {
        Error::Store {
            path: self.path.clone(),
            reason: "the history writer stopped (see the log); the dictation is kept in the \
                     journal or on the clipboard"
                .into(),
        }
    }

    /// Runs `job` on the owner's thread and waits for its answer.
    fn run<R: Send + 'static>(
        &self,
        job: impl FnOnce(&RowWriter<'_>) -> R + Send + 'static,
    ) -> Result<R> {
        let (answer, answered) = mpsc::sync_channel(1);
        self.to_owner
            .send(Box::new(move |w| {
                let _ = answer.send(job(w));
            }))
            .map_err(|_| self.gone())?;
        answered.recv().map_err(|_| self.gone())
    }

    /// Runs `job` on a copy of `entry` on the owner's thread; `entry` gets the id the job
    /// left on the copy (a row created).
    fn run_on<R: Send + 'static>(
        &self,
        entry: &mut Entry,
        job: impl FnOnce(&RowWriter<'_>, &mut Entry) -> R + Send + 'static,
    ) -> Result<R> {
        let mut sent = entry.clone();
        let (id, answer) = self.run(move |w| {
            let answer = job(w, &mut sent);
            (sent.id, answer)
        })?;
        entry.id = id;
        Ok(answer)
    }

    /// [`RowWriter::create`]: `entry`'s row is created at `state` and `entry` gets its id.
    pub fn create(&self, entry: &mut Entry, state: RowState) -> Result<i64> {
        self.run_on(entry, move |w, e| w.create(e, state))?
    }

    /// [`RowWriter::update`] of row `id`.
    pub fn update(&self, id: i64, update: RowUpdate<'_>) -> Result<Applied> {
        let sent = Update::of(update);
        self.run(move |w| w.update(id, sent.as_update()))?
    }

    /// [`RowWriter::apply`]: a whole-row update of its entry's row.
    pub fn apply(&self, update: RowUpdate<'_>) -> Result<Applied> {
        let sent = Update::of(update);
        self.run(move |w| w.apply(sent.as_update()))?
    }

    /// [`RowWriter::write`]: a whole-row update; an entry never created is created whole (and
    /// `entry` gets its id).
    pub fn write(&self, entry: &mut Entry, update: WholeRow) -> Result<Applied> {
        self.run_on(entry, move |w, e| w.write(e, update))?
    }

    /// [`journal::write_or_journal`]: [`Rows::write`], the row kept in the journal when the
    /// database (or the owner) refuses it.
    pub fn write_or_journal(
        &self,
        entry: &mut Entry,
        update: WholeRow,
    ) -> std::result::Result<Applied, String> {
        match self.run_on(entry, move |w, e| journal::write_or_journal(w, e, update)) {
            Ok(written) => written,
            Err(e) => Err(journal::keep_refused(&self.path, entry, &e)),
        }
    }

    /// Writes the journal's rows back ([`Journal::replay`]); true when none is left.
    pub fn replay_journal(&self) -> bool {
        self.run(|w| {
            let history = w.history();
            Journal::for_history(history.path()).replay(history).is_ok()
        })
        .unwrap_or(false)
    }
}

#[cfg(test)]
#[path = "row_owner/tests.rs"]
mod tests;
