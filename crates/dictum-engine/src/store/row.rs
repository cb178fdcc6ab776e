//! A dictation's row: the row model and its one writer.
//!
//! The model, for files and live dictation alike: [`Words`] (the pieces' texts in order →
//! text, raw text, outcome) and [`fail_row`] (outcome, error kind and message, a rejected
//! server answer) fill an [`Entry`]. The writer, [`RowWriter`]: a row is created once and then
//! changed only by typed updates ([`RowUpdate`]: transcribed, cleaned, delivered, failed,
//! gave up, retried, edit, corrected), each one transaction that checks the row's stored
//! state ([`RowState`]) and moves it forward, so a late update (a replaced worker's) never
//! overwrites a row already delivered. A whole row the database refuses can go to the journal
//! (`journal::write_or_journal`).

use super::{Entry, History, Outcome, Source};
use crate::snippets::Rewriter;
use crate::subtitles::Segment;
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};
use std::sync::Arc;

/// One piece of an utterance as whisper (or the speech server) gave it: what [`Words`] keeps.
#[derive(Debug, Clone, Copy)]
pub struct Piece<'a> {
    /// The words, annotations removed; empty = no speech.
    pub text: &'a str,
    /// Whisper's own output.
    pub raw: &'a str,
    /// The snippets and replacements of the engine that made it.
    pub rewriter: Option<&'a Arc<Rewriter>>,
}

/// The row's text from the transcript: replacements, then snippets. A file's text keeps a
/// snippet's newlines; a typed dictation's get spaces (the typing path sends no newline: in a
/// terminal it would be Enter).
pub(crate) fn rewritten(rewriter: Option<&Arc<Rewriter>>, text: String, entry: &Entry) -> String {
    let Some(r) = rewriter.filter(|r| !r.is_empty() && !text.is_empty()) else {
        return text;
    };
    let out = r.apply(&text, entry.source == Source::File);
    if !out.applied.is_empty() {
        tracing::debug!(applied = ?out.applied, "snippets and replacements applied");
    }
    out.text.trim().to_string()
}

/// Keeps in `entry.raw_text` the speech server's answer `e` set aside (judged not a
/// transcript, and nothing could redo it), after whatever raw text the row already has.
pub fn keep_rejected_answer(entry: &mut Entry, e: &Error) {
    if let Some(answer) = e.rejected_answer() {
        let raw = entry.raw_text.get_or_insert_with(String::new);
        if !raw.trim().is_empty() {
            raw.push(' ');
        }
        raw.push_str(answer);
    }
}

/// The words of one utterance transcribed in pieces, in order: a file's pieces, or a live
/// dictation's committed chunks and its tail. The text so far is the next piece's context.
/// Both paths turn them into the finished row here ([`Words::into_row`], [`fail_row`]).
#[derive(Debug, Default, Clone)]
pub struct Words {
    /// The pieces' texts, empty ones left out.
    pub texts: Vec<String>,
    /// Whisper's raw text of every piece.
    pub raws: Vec<String>,
    /// The snippets and replacements the row's text gets (the latest piece's engine's).
    pub rewriter: Option<Arc<Rewriter>>,
}

impl Words {
    /// Adds the next piece.
    pub fn push(&mut self, piece: Piece<'_>) {
        self.adopt(piece.rewriter);
        if !piece.text.is_empty() {
            self.texts.push(piece.text.to_string());
        }
        self.raws.push(piece.raw.to_string());
    }

    /// Takes a piece's snippets and replacements for the row (the engine's latest tables).
    pub fn adopt(&mut self, rewriter: Option<&Arc<Rewriter>>) {
        if rewriter.is_some() {
            self.rewriter = rewriter.cloned();
        }
    }

    /// The text so far: whisper's prompt for the next piece. Whisper's words as they came:
    /// snippets and replacements are applied once, to the whole, by [`Words::into_row`] (a
    /// phrase may span two pieces).
    pub fn text(&self) -> String {
        self.texts.join(" ")
    }

    /// The raw texts, each trimmed, joined by spaces.
    pub fn raw(&self) -> String {
        self.raws
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Makes these the finished row's words: its text (with the snippets and replacements),
    /// raw text (whisper's), and the outcome they give (no text: no speech). Call after every
    /// piece's `Segment::apply_to`.
    pub fn into_row(self, entry: &mut Entry) {
        let text = rewritten(self.rewriter.as_ref(), self.text(), entry);
        entry.outcome = if text.is_empty() {
            Outcome::NoSpeech
        } else {
            Outcome::Ok
        };
        entry.raw_text = Some(self.raw());
        entry.text = Some(text);
    }
}

/// Fails the finished row with `e` (file and live path alike): `outcome` (`Error`, or `Ok`
/// when the live path still delivers what its committed chunks hold), the error's kind,
/// `message` for the user, and the server answer `e` set aside, if any.
pub fn fail_row(entry: &mut Entry, e: &Error, outcome: Outcome, message: String) {
    keep_rejected_answer(entry, e);
    entry.outcome = outcome;
    entry.error_kind = Some(e.kind().to_string());
    entry.error = Some(message);
}

/// The row's raw SQL: the insert [`RowWriter::create`] runs, and whole-row writes for seeding
/// (`examples/seed_history.rs`, imports) and tests. A dictation's row is otherwise written
/// only through [`RowWriter`] (in the daemon, its owner thread: `row_owner.rs`).
impl History {
    /// Inserts `entry` (normally as `pending`) and sets its id.
    pub fn insert(&self, entry: &mut Entry) -> Result<i64> {
        if entry.created_at_ms == 0 {
            entry.created_at_ms = super::now_ms();
        }
        let sql = format!(
            "INSERT INTO dictations ({}) VALUES ({})",
            super::entry::COLUMNS.join(", "),
            (1..=super::entry::COLUMNS.len())
                .map(|i| format!("?{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut stmt| stmt.execute(rusqlite::params_from_iter(entry.values())))
            .map_err(|e| self.err(e))?;
        let id = self.conn.last_insert_rowid();
        entry.id = Some(id);
        Ok(id)
    }

    /// Inserts many entries in one transaction (seeding, imports); sets their ids.
    pub fn insert_batch(&self, entries: &mut [Entry]) -> Result<()> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        for entry in entries.iter_mut() {
            self.insert(entry)?;
        }
        tx.commit().map_err(|e| self.err(e))
    }

    /// Writes every field of an inserted entry.
    pub fn update(&self, entry: &Entry) -> Result<()> {
        let id = entry.id.ok_or_else(|| Error::Store {
            path: self.path.clone(),
            reason: "update of an entry that was never inserted".into(),
        })?;
        let sets: Vec<String> = super::entry::COLUMNS
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c} = ?{}", i + 1))
            .collect();
        let sql = format!(
            "UPDATE dictations SET {} WHERE id = ?{}",
            sets.join(", "),
            super::entry::COLUMNS.len() + 1
        );
        let mut values = entry.values();
        values.push(id.into());
        let n = self
            .conn
            .execute(&sql, rusqlite::params_from_iter(values))
            .map_err(|e| self.err(e))?;
        if n != 1 {
            return Err(Error::Store {
                path: self.path.clone(),
                reason: format!("entry {id} no longer exists"),
            });
        }
        Ok(())
    }
}

/// Where a row is in its life, stored with it (`row_state`, `migrations/0013_row_state.sql`):
/// an update of a lower rank than the row's is refused, so a late write (a replaced worker's
/// result) never overwrites what came after it (the row as typed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RowState {
    /// Created at the press (or a file's start), `pending`.
    Started = 0,
    /// Whisper's words stored before the first of them is typed.
    Transcribed = 1,
    /// The finished row: text (cleaned or not), outcome, every stage's timings.
    Cleaned = 2,
    /// Typed (or not) and completed by the injector, or ended before the stages (cancelled,
    /// capture failed, queue full): nothing after it may overwrite it.
    Delivered = 3,
}

impl RowState {
    fn from_rank(rank: i64) -> RowState {
        match rank {
            0 => RowState::Started,
            1 => RowState::Transcribed,
            2 => RowState::Cleaned,
            _ => RowState::Delivered,
        }
    }
}

/// One change to an existing row. The row model ([`Entry`], filled with [`Words`] and
/// [`fail_row`]) is the caller's; which columns change and in what order is the writer's.
#[derive(Debug, Clone, Copy)]
pub enum RowUpdate<'a> {
    /// Whisper's words, stored before the first of them is typed (the worker's early parts).
    Transcribed(&'a Entry),
    /// The finished row: a file's, the worker's after the cleanup.
    Cleaned(&'a Entry),
    /// The injector's completion after typing (inject method and error, release → typed).
    Delivered(&'a Entry),
    /// A dictation that ended before the stages: cancelled, capture failed, queue full.
    Failed(&'a Entry),
    /// Supervision gave up on the row (or a start found it left behind): outcome, error
    /// kind and message, the kept audio; applied only while the row is still `pending`, so a
    /// result written meanwhile is never overwritten.
    GaveUp {
        outcome: Outcome,
        kind: &'a str,
        message: &'a str,
        audio_path: Option<&'a str>,
    },
    /// `dictum history --retry`: an undelivered row transcribed again from its kept audio.
    /// The user asked for it, so it re-opens the row whatever its state (as
    /// [`RowState::Cleaned`]); its delivery follows as [`RowUpdate::Delivered`].
    Retried(&'a Entry),
    /// The row is an edit of `selection` (the edit key's press): `mode` and the selection.
    Edit { selection: &'a str },
    /// The user's correction of the row's text (learning): its own column, at any state.
    Corrected { text: &'a str },
    /// A file's timed segments (its subtitles, `dictum history --export x.srt`): their own
    /// column, at any state.
    Segments { segments: &'a [Segment] },
}

impl RowUpdate<'_> {
    /// The state the row is in after this update; None: the state does not change.
    fn state(&self) -> Option<RowState> {
        match self {
            RowUpdate::Transcribed(_) => Some(RowState::Transcribed),
            RowUpdate::Cleaned(_) | RowUpdate::Retried(_) => Some(RowState::Cleaned),
            RowUpdate::Delivered(_) | RowUpdate::Failed(_) => Some(RowState::Delivered),
            RowUpdate::GaveUp { .. }
            | RowUpdate::Edit { .. }
            | RowUpdate::Corrected { .. }
            | RowUpdate::Segments { .. } => None,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            RowUpdate::Transcribed(_) => "transcribed",
            RowUpdate::Cleaned(_) => "cleaned",
            RowUpdate::Delivered(_) => "delivered",
            RowUpdate::Failed(_) => "failed",
            RowUpdate::GaveUp { .. } => "gave up",
            RowUpdate::Retried(_) => "retried",
            RowUpdate::Edit { .. } => "edit",
            RowUpdate::Corrected { .. } => "corrected",
            RowUpdate::Segments { .. } => "segments",
        }
    }

    /// The whole row this update writes, if it carries one (what the journal keeps).
    pub fn entry(&self) -> Option<&Entry> {
        match *self {
            RowUpdate::Transcribed(e)
            | RowUpdate::Cleaned(e)
            | RowUpdate::Delivered(e)
            | RowUpdate::Failed(e)
            | RowUpdate::Retried(e) => Some(e),
            _ => None,
        }
    }
}

/// The updates that write the whole row model ([`RowWriter::write`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WholeRow {
    Transcribed,
    Cleaned,
    Delivered,
    Failed,
    Retried,
}

impl WholeRow {
    /// This update of `entry`'s row.
    pub fn of(self, entry: &Entry) -> RowUpdate<'_> {
        match self {
            WholeRow::Transcribed => RowUpdate::Transcribed(entry),
            WholeRow::Cleaned => RowUpdate::Cleaned(entry),
            WholeRow::Delivered => RowUpdate::Delivered(entry),
            WholeRow::Failed => RowUpdate::Failed(entry),
            WholeRow::Retried => RowUpdate::Retried(entry),
        }
    }
}

/// What became of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    Written,
    /// Not applied: the row is already further along (`state`), or (`GaveUp`) no longer
    /// pending. Logged by the writer; nothing for the caller to do.
    Refused {
        state: RowState,
    },
}

/// The one writer of dictation rows: a row is created once ([`RowWriter::create`]) and then
/// changed only by typed updates ([`RowWriter::update`]), each one transaction that checks
/// and moves the row's state. Callers never build SQL or choose columns.
pub struct RowWriter<'h> {
    history: &'h History,
}

impl<'h> RowWriter<'h> {
    pub fn new(history: &'h History) -> RowWriter<'h> {
        RowWriter { history }
    }

    pub fn history(&self) -> &'h History {
        self.history
    }

    /// Creates `entry`'s row (normally `pending`, [`RowState::Started`]; a row whose press
    /// could not store it is created whole at `state`) and sets its id. When the database
    /// refuses it, `entry` keeps no id (nothing was created: a later write creates it).
    pub fn create(&self, entry: &mut Entry, state: RowState) -> Result<i64> {
        let h = self.history;
        if state == RowState::Started {
            // One statement: its own transaction; the id is set only once it succeeded.
            return h.insert(entry);
        }
        let created = Transaction::new_unchecked(&h.conn, TransactionBehavior::Immediate)
            .map_err(|e| h.err(e))
            .and_then(|tx| {
                let id = h.insert(entry)?;
                tx.execute(
                    "UPDATE dictations SET row_state = ?1 WHERE id = ?2",
                    params![state as i64, id],
                )
                .map_err(|e| h.err(e))?;
                tx.commit().map_err(|e| h.err(e))?;
                Ok(id)
            });
        if created.is_err() {
            // Rolled back (a full disk fails the commit): the row does not exist.
            entry.id = None;
        }
        created
    }

    /// Applies `update` to row `id` in one transaction (`BEGIN IMMEDIATE`: the state is read
    /// and written under the write lock). An update of a lower state than the row's is
    /// refused and logged; a row that no longer exists (deleted by the user) is an error.
    pub fn update(&self, id: i64, update: RowUpdate<'_>) -> Result<Applied> {
        let h = self.history;
        if let RowUpdate::Corrected { text } = update {
            super::correct::check_correction(h, text)?;
        }
        let missing = || Error::Store {
            path: h.path.clone(),
            reason: match update {
                RowUpdate::Corrected { .. } => {
                    format!("no entry #{id} (see the ids with `dictum history`)")
                }
                RowUpdate::Edit { .. } => format!("no entry #{id} to mark as an edit"),
                _ => format!("entry {id} no longer exists"),
            },
        };
        let tx = Transaction::new_unchecked(&h.conn, TransactionBehavior::Immediate)
            .map_err(|e| h.err(e))?;
        let current: Option<(i64, String)> = tx
            .query_row(
                "SELECT row_state, outcome FROM dictations WHERE id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| h.err(e))?;
        let Some((rank, outcome)) = current else {
            return Err(missing());
        };
        let state = RowState::from_rank(rank);
        let refused = match update {
            RowUpdate::Retried(_) => false,
            RowUpdate::GaveUp { .. } => outcome != Outcome::Pending.as_str(),
            _ => update.state().is_some_and(|to| to < state),
        };
        if refused {
            tracing::warn!(
                id,
                update = update.name(),
                state = ?state,
                "history: a late update of a row already further along was not applied"
            );
            return Ok(Applied::Refused { state });
        }
        let n = match update {
            RowUpdate::Edit { selection } => tx.execute(
                "UPDATE dictations SET mode = ?1, edit_selection = ?2, \
                 edit_selection_chars = ?3 WHERE id = ?4",
                params![
                    super::edit::MODE_EDIT,
                    selection,
                    selection.chars().count() as i64,
                    id
                ],
            ),
            RowUpdate::Corrected { text } => tx.execute(
                "UPDATE dictations SET correction = ?1 WHERE id = ?2",
                params![text, id],
            ),
            RowUpdate::Segments { segments } => tx.execute(
                "UPDATE dictations SET segments = ?1 WHERE id = ?2",
                params![super::segments::to_json(segments), id],
            ),
            RowUpdate::GaveUp {
                outcome,
                kind,
                message,
                audio_path,
            } => tx.execute(
                "UPDATE dictations SET outcome = ?2, error_kind = ?3, error = ?4, \
                 audio_path = COALESCE(?5, audio_path) WHERE id = ?1",
                params![id, outcome.as_str(), kind, message, audio_path],
            ),
            _ => {
                let (Some(entry), Some(to)) = (update.entry(), update.state()) else {
                    return Err(Error::Store {
                        path: h.path.clone(),
                        reason: format!("entry {id}: an update with no row"),
                    });
                };
                let cols = super::entry::COLUMNS;
                let sets: Vec<String> = cols
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{c} = ?{}", i + 1))
                    .collect();
                let sql = format!(
                    "UPDATE dictations SET {}, row_state = ?{} WHERE id = ?{}",
                    sets.join(", "),
                    cols.len() + 1,
                    cols.len() + 2
                );
                let mut values = entry.values();
                values.push((to as i64).into());
                values.push(id.into());
                tx.execute(&sql, rusqlite::params_from_iter(values))
            }
        }
        .map_err(|e| h.err(e))?;
        if n != 1 {
            return Err(missing());
        }
        tx.commit().map_err(|e| h.err(e))?;
        Ok(Applied::Written)
    }

    /// Applies a whole-row update (the row's id is its entry's); an entry never created is
    /// an error, as an update of it always was.
    pub fn apply(&self, update: RowUpdate<'_>) -> Result<Applied> {
        match update.entry().and_then(|e| e.id) {
            Some(id) => self.update(id, update),
            None => Err(Error::Store {
                path: self.history.path.clone(),
                reason: "update of an entry that was never inserted".into(),
            }),
        }
    }

    /// Applies a whole-row update to `entry`'s row; an `entry` never created (its press could
    /// not store it) is created whole at the update's state.
    pub fn write(&self, entry: &mut Entry, update: WholeRow) -> Result<Applied> {
        match entry.id {
            Some(id) => self.update(id, update.of(entry)),
            None => {
                let state = update.of(entry).state().unwrap_or(RowState::Started);
                self.create(entry, state).map(|_| Applied::Written)
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::snippets::{ReplaceConfig, SnippetConfig};

    pub(crate) fn rules() -> Arc<Rewriter> {
        Arc::new(Rewriter::new(
            &[SnippetConfig {
                phrase: "my address".into(),
                text: "12 Main Street\nSpringfield".into(),
            }],
            &[ReplaceConfig {
                from: "cooper netties".into(),
                to: "Kubernetes".into(),
            }],
        ))
    }

    /// The row of a live dictation (microphone) and of a file, from pieces as the worker and
    /// `run_file` push them: the rules apply to the whole text (a phrase across two pieces
    /// too), the raw text stays whisper's, a typed dictation gets no newline.
    #[test]
    fn the_rows_text_gets_replacements_and_snippets() {
        // (pieces, source, text, outcome)
        #[rustfmt::skip]
        let table: &[(&[&str], Source, &str, Outcome)] = &[
            (&["We run Cooper", "Netties."], Source::Mic, "We run Kubernetes.", Outcome::Ok),
            (&["My address."], Source::Mic, "12 Main Street Springfield", Outcome::Ok),
            (&["My address."], Source::File, "12 Main Street\nSpringfield", Outcome::Ok),
            (&["Send it to", "my address, please."], Source::Mic,
             "Send it to 12 Main Street Springfield, please.", Outcome::Ok),
            (&[], Source::Mic, "", Outcome::NoSpeech),
        ];
        let rules = rules();
        for &(pieces, source, text, outcome) in table {
            let mut words = Words::default();
            for p in pieces {
                let raw = format!(" {p}");
                words.push(Piece {
                    text: p,
                    raw: &raw,
                    rewriter: Some(&rules),
                });
            }
            let mut entry = Entry::new(source);
            words.into_row(&mut entry);
            assert_eq!(entry.text.as_deref(), Some(text), "{pieces:?}");
            assert_eq!(entry.outcome, outcome, "{pieces:?}");
            assert_eq!(
                entry.raw_text.as_deref(),
                Some(pieces.join(" ").as_str()),
                "{pieces:?}"
            );
        }
    }

    pub(crate) fn open(dir: &tempfile::TempDir) -> History {
        History::open(&dir.path().join("history.sqlite3")).expect("open")
    }

    pub(crate) fn state_of(history: &History, id: i64) -> i64 {
        history
            .conn
            .query_row(
                "SELECT row_state FROM dictations WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .expect("row_state")
    }

    pub(crate) fn with_text(entry: &Entry, text: &str) -> Entry {
        let mut e = entry.clone();
        e.outcome = Outcome::Ok;
        e.text = Some(text.into());
        e
    }

    /// Created once (one row, `pending`, Started); each update is in the database when the
    /// call returns (seen by another connection: committed, not left in a transaction) and
    /// moves the state forward.
    #[test]
    fn a_row_is_created_once_and_updated_in_place_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let history = open(&dir);
        let other = History::open(history.path()).expect("second connection");
        let writer = RowWriter::new(&history);
        let mut entry = Entry::new(Source::Mic);
        let id = writer
            .create(&mut entry, RowState::Started)
            .expect("create");
        assert_eq!(entry.id, Some(id));
        assert_eq!(state_of(&other, id), RowState::Started as i64);
        assert_eq!(
            writer
                .update(id, RowUpdate::Edit { selection: "Ünï" })
                .expect("edit"),
            Applied::Written
        );
        let steps = [
            (WholeRow::Transcribed, "raw words", RowState::Transcribed),
            (WholeRow::Cleaned, "Cleaned words.", RowState::Cleaned),
            (WholeRow::Delivered, "Cleaned words.", RowState::Delivered),
        ];
        for (update, text, state) in steps {
            let row = with_text(&entry, text);
            assert_eq!(
                writer.update(id, update.of(&row)).expect("update"),
                Applied::Written
            );
            let seen = other.get(id).expect("get").expect("row");
            assert_eq!(seen.text.as_deref(), Some(text));
            assert_eq!(state_of(&other, id), state as i64);
        }
        let all = other.list(&crate::store::Query::default()).expect("list");
        assert_eq!(all.len(), 1, "one row, updated in place");
        let edit = other.edit_of(id).expect("edit_of").expect("an edit");
        assert_eq!(edit.selection_chars, 3);
        // A correction is the user's, at any state.
        writer
            .update(id, RowUpdate::Corrected { text: "fixed" })
            .expect("correct");
        assert_eq!(other.correction(id).expect("c").as_deref(), Some("fixed"));
        assert!(writer
            .update(id, RowUpdate::Corrected { text: " " })
            .is_err());
    }

    /// A row created whole that the database refuses half-way (here a trigger; a full disk
    /// fails the commit the same way) does not exist, and its entry keeps no id, so the next
    /// write creates it instead of updating a row that was never there.
    #[test]
    fn a_create_that_fails_leaves_no_row_and_no_id() {
        let dir = tempfile::tempdir().expect("tempdir");
        let history = open(&dir);
        history
            .conn
            .execute_batch(
                "CREATE TRIGGER refuse BEFORE UPDATE OF row_state ON dictations \
                 BEGIN SELECT RAISE(ABORT, 'refused'); END;",
            )
            .expect("trigger");
        let writer = RowWriter::new(&history);
        let mut typed = with_text(&Entry::new(Source::Mic), "typed");
        assert!(writer.write(&mut typed, WholeRow::Delivered).is_err());
        assert_eq!(typed.id, None);
        let all = history.list(&crate::store::Query::default()).expect("list");
        assert!(all.is_empty(), "{all:?}");
        history
            .conn
            .execute_batch("DROP TRIGGER refuse;")
            .expect("drop");
        writer
            .write(&mut typed, WholeRow::Delivered)
            .expect("created now");
        assert_eq!(
            state_of(&history, typed.id.expect("id")),
            RowState::Delivered as i64
        );
    }

    /// A replaced worker's late result cannot overwrite a delivered row: refused, the row
    /// unchanged; the same for a give-up that comes after a result. A retry re-opens it.
    #[test]
    fn a_late_update_is_refused_and_changes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let history = open(&dir);
        let writer = RowWriter::new(&history);
        let mut entry = Entry::new(Source::Mic);
        let id = writer
            .create(&mut entry, RowState::Started)
            .expect("create");
        let typed = with_text(&entry, "typed");
        writer
            .update(id, RowUpdate::Delivered(&typed))
            .expect("delivered");
        let late = with_text(&entry, "late");
        for update in [RowUpdate::Transcribed(&late), RowUpdate::Cleaned(&late)] {
            assert_eq!(
                writer.update(id, update).expect("update"),
                Applied::Refused {
                    state: RowState::Delivered
                }
            );
        }
        let gave_up = RowUpdate::GaveUp {
            outcome: Outcome::Error,
            kind: "timeout",
            message: "late",
            audio_path: None,
        };
        assert!(matches!(
            writer.update(id, gave_up).expect("gave up"),
            Applied::Refused { .. }
        ));
        let row = history.get(id).expect("get").expect("row");
        assert_eq!(row.text.as_deref(), Some("typed"));
        assert_eq!(row.outcome, Outcome::Ok);
        assert_eq!(state_of(&history, id), RowState::Delivered as i64);
        // `dictum history --retry` asked for it: applied whatever the state.
        let retried = with_text(&entry, "retried");
        assert_eq!(
            writer
                .update(id, RowUpdate::Retried(&retried))
                .expect("retry"),
            Applied::Written
        );
        assert_eq!(state_of(&history, id), RowState::Cleaned as i64);
        // A give-up applies to a pending row only.
        let mut pending = Entry::new(Source::Mic);
        let id = writer
            .create(&mut pending, RowState::Started)
            .expect("create");
        assert_eq!(
            writer.update(id, gave_up).expect("gave up"),
            Applied::Written
        );
        assert_eq!(
            history.get(id).expect("get").expect("row").outcome,
            Outcome::Error
        );
        // A row deleted meanwhile is an error, as before.
        assert!(writer.update(9999, RowUpdate::Cleaned(&late)).is_err());
    }
}
