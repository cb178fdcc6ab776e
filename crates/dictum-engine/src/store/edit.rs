//! Edit-mode rows (issue 30, `crate::edit`): the columns of `migrations/0012_edit.sql`, kept
//! apart from [`super::Entry`] like the correction column: `mode` ('edit'), the selection the
//! edit replaced (whole, so it can be restored) and its length. The row's other columns are
//! a dictation's: `raw_text` the spoken instruction, `text` the answer typed, `llm_*` the
//! edit request's timings.

use super::History;
use crate::Result;
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

/// What an edit row adds to a dictation row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditRecord {
    /// The selected text the edit was asked to change (and replaced, when it was typed).
    pub selection: String,
    /// Its length in characters.
    pub selection_chars: i64,
}

/// The row's `mode` for an edit.
pub(super) const MODE_EDIT: &str = "edit";

impl History {
    /// Row `id`'s edit, or None when it is a dictation (or does not exist).
    pub fn edit_of(&self, id: i64) -> Result<Option<EditRecord>> {
        self.conn
            .query_row(
                "SELECT edit_selection, edit_selection_chars FROM dictations \
                 WHERE id = ?1 AND mode = ?2",
                params![id, MODE_EDIT],
                |r| {
                    Ok(EditRecord {
                        selection: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                        selection_chars: r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The edits among rows `ids`, by id (a listing shows them as edits).
    pub fn edits_among(&self, ids: &[i64]) -> Result<HashMap<i64, EditRecord>> {
        let mut out = HashMap::new();
        for &id in ids {
            if let Some(e) = self.edit_of(id)? {
                out.insert(id, e);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::row::{RowUpdate, RowWriter};
    use crate::store::{Entry, Outcome, Source};

    #[test]
    fn an_edit_row_keeps_its_selection_and_a_dictation_has_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let h = History::open(&dir.path().join("h.sqlite3")).expect("open");
        let mut edit = Entry::new(Source::Mic);
        h.insert(&mut edit).expect("insert");
        let id = edit.id.expect("id");
        let mark = |id, selection| RowWriter::new(&h).update(id, RowUpdate::Edit { selection });
        mark(id, "Ünïcode selection").expect("mark");
        // The row's ordinary update (the injector completing it) leaves the edit alone.
        edit.outcome = Outcome::Ok;
        edit.raw_text = Some("make it shorter".into());
        edit.text = Some("Short.".into());
        RowWriter::new(&h)
            .apply(RowUpdate::Delivered(&edit))
            .expect("update");
        let got = h.edit_of(id).expect("read").expect("an edit");
        assert_eq!(got.selection, "Ünïcode selection");
        assert_eq!(got.selection_chars, 17);

        let mut plain = Entry::new(Source::Mic);
        h.insert(&mut plain).expect("insert");
        let plain = plain.id.expect("id");
        assert_eq!(h.edit_of(plain).expect("read"), None);
        let among = h.edits_among(&[id, plain]).expect("among");
        assert_eq!(among.len(), 1);
        assert!(among.contains_key(&id));
        assert!(mark(9999, "x").is_err());
    }
}
