//! Corrections (issue 30, learning): the text as the user says it should have been, kept on the
//! row in its own column (`migrations/0011_correction.sql`) next to whisper's `raw_text`, which
//! is never changed. `crate::learn` compares the two to propose what to learn.

use super::History;
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};

/// Longest correction accepted, in characters (a dictation is a few sentences; a page is fine).
pub const MAX_CORRECTION_CHARS: usize = 20_000;

/// A corrected row: what whisper wrote and what the user corrected it to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrected {
    pub id: i64,
    pub raw_text: String,
    pub correction: String,
}

impl History {
    /// Row `id`'s correction; `None` when the row was never corrected (or does not exist).
    pub fn correction(&self, id: i64) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT correction FROM dictations WHERE id = ?1",
                params![id],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
            .map_err(|e| self.err(e))
    }

    /// Every corrected row that has whisper's text, oldest first.
    pub fn corrections(&self) -> Result<Vec<Corrected>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, raw_text, correction FROM dictations \
                 WHERE correction IS NOT NULL AND raw_text IS NOT NULL ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Corrected {
                    id: r.get(0)?,
                    raw_text: r.get(1)?,
                    correction: r.get(2)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }
}

/// Refuses a correction that is empty, has control characters other than newline and tab, or
/// more than [`MAX_CORRECTION_CHARS`].
pub(super) fn check_correction(history: &History, text: &str) -> Result<()> {
    let bad = |reason: String| Error::Store {
        path: history.path.clone(),
        reason,
    };
    if text.trim().is_empty() {
        return Err(bad(
            "the correction is empty; give the text as it should have been".into(),
        ));
    }
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(bad(
            "the correction contains control characters; give plain text".into(),
        ));
    }
    let n = text.chars().count();
    if n > MAX_CORRECTION_CHARS {
        return Err(bad(format!(
            "the correction is {n} characters; at most {MAX_CORRECTION_CHARS} are kept"
        )));
    }
    Ok(())
}
