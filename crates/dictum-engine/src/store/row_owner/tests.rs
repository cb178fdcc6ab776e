use super::*;
use crate::store::row::tests::{open, state_of, with_text};
use crate::store::Source;

/// Threads that each create and complete rows through their own handle: every row is
/// created once and ends delivered with its own text, none lost, none written by two
/// connections (the owner's is the only one writing).
#[test]
fn rows_from_several_threads_are_each_created_once_and_completed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = open(&dir);
    let rows = Rows::start(History::open(history.path()).expect("open")).expect("start");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let rows = rows.clone();
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                for i in 0..25 {
                    let mut entry = Entry::new(Source::Mic);
                    let id = rows.create(&mut entry, RowState::Started).expect("create");
                    assert_eq!(entry.id, Some(id));
                    let done = with_text(&entry, &format!("thread {t} row {i}"));
                    rows.apply(RowUpdate::Cleaned(&done)).expect("cleaned");
                    let mut typed = done.clone();
                    typed.inject_method = Some("xdotool".into());
                    assert_eq!(
                        rows.write(&mut typed, WholeRow::Delivered)
                            .expect("delivered"),
                        Applied::Written
                    );
                    ids.push((id, format!("thread {t} row {i}")));
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in threads {
        all.extend(t.join().expect("thread"));
    }
    assert_eq!(all.len(), 100);
    let mut ids: Vec<i64> = all.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 100, "every row created once");
    for (id, text) in all {
        let row = history.get(id).expect("get").expect("row");
        assert_eq!(row.text.as_deref(), Some(text.as_str()));
        assert_eq!(row.inject_method.as_deref(), Some("xdotool"));
        assert_eq!(state_of(&history, id), RowState::Delivered as i64);
    }
}

/// Updates sent through the owner keep the writer's order rule: a late `Transcribed` (a
/// replaced worker's) after the row was delivered is refused and changes nothing; a
/// give-up, an edit mark and a correction reach the row.
#[test]
fn a_late_update_through_the_owner_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = open(&dir);
    let rows = Rows::start(History::open(history.path()).expect("open")).expect("start");
    let mut entry = Entry::new(Source::Mic);
    let id = rows.create(&mut entry, RowState::Started).expect("create");
    let typed = with_text(&entry, "as typed");
    rows.apply(RowUpdate::Delivered(&typed)).expect("delivered");
    let late = with_text(&entry, "a late worker's words");
    assert_eq!(
        rows.apply(RowUpdate::Transcribed(&late)).expect("answered"),
        Applied::Refused {
            state: RowState::Delivered
        }
    );
    rows.update(
        id,
        RowUpdate::Edit {
            selection: "old words",
        },
    )
    .expect("edit");
    rows.update(id, RowUpdate::Corrected { text: "as typed." })
        .expect("corrected");
    let row = history.get(id).expect("get").expect("row");
    assert_eq!(row.text.as_deref(), Some("as typed"));
    assert_eq!(
        history.correction(id).expect("correction").as_deref(),
        Some("as typed.")
    );
    // Only a pending row is given up on.
    let gave_up = RowUpdate::GaveUp {
        outcome: Outcome::Error,
        kind: "stuck",
        message: "gave up",
        audio_path: None,
    };
    assert!(matches!(
        rows.update(id, gave_up).expect("answered"),
        Applied::Refused { .. }
    ));
    let mut pending = Entry::new(Source::Mic);
    let pending_id = rows
        .create(&mut pending, RowState::Started)
        .expect("create");
    assert_eq!(
        rows.update(pending_id, gave_up).expect("gave up"),
        Applied::Written
    );
    let row = history.get(pending_id).expect("get").expect("row");
    assert_eq!(row.error_kind.as_deref(), Some("stuck"));
}

/// The database refuses the owner's write (another program holds the write lock): the row
/// goes to the journal, and the owner writes it back once the lock is gone.
#[test]
fn a_refused_write_through_the_owner_goes_to_the_journal_and_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = open(&dir);
    let owned = History::open(history.path()).expect("open");
    owned
        .conn
        .busy_timeout(std::time::Duration::ZERO)
        .expect("no wait");
    let rows = Rows::start(owned).expect("start");
    let mut entry = Entry::new(Source::Mic);
    let id = rows.create(&mut entry, RowState::Started).expect("create");
    let other = rusqlite::Connection::open(history.path()).expect("open");
    other.execute_batch("BEGIN IMMEDIATE;").expect("lock");
    let mut failed = entry.clone();
    failed.outcome = Outcome::Error;
    failed.error_kind = Some("queue_full".into());
    let why = rows
        .write_or_journal(&mut failed, WholeRow::Failed)
        .expect_err("refused");
    assert!(why.contains("journal"), "{why}");
    assert!(
        !rows.replay_journal(),
        "still locked: the row stays in the journal"
    );
    other.execute_batch("COMMIT;").expect("unlock");
    assert!(rows.replay_journal(), "written back");
    let row = history.get(id).expect("get").expect("row");
    assert_eq!(row.error_kind.as_deref(), Some("queue_full"));
    assert!(Journal::for_history(history.path()).is_empty());
}

/// A row never created (its press could not store it) is created whole by `write`, and
/// the caller's entry gets the id.
#[test]
fn write_creates_a_row_the_press_could_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = open(&dir);
    let rows = Rows::start(History::open(history.path()).expect("open")).expect("start");
    let mut fresh = with_text(&Entry::new(Source::Mic), "typed");
    rows.write(&mut fresh, WholeRow::Delivered)
        .expect("created");
    let id = fresh.id.expect("the caller's entry has the id");
    assert_eq!(state_of(&history, id), RowState::Delivered as i64);
    assert_eq!(rows.path(), history.path());
}
