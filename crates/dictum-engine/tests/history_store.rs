//! The SQLite history: migrations from an empty file and from every earlier version, WAL,
//! pending rows, search.

use dictum_engine::store::{migrations, Entry, History, Outcome, Query, Source, MIGRATION_FILES};
use rusqlite::Connection;

#[test]
fn every_file_in_migrations_is_applied_in_order() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("migrations dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sql"))
        .collect();
    files.sort();
    let listed: Vec<&str> = MIGRATION_FILES.iter().map(|(n, _)| *n).collect();
    assert_eq!(files, listed, "migrations/ and MIGRATION_FILES differ");
    migrations().validate().expect("migrations validate");
}

#[test]
fn fresh_file_gets_latest_schema_in_wal_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sub/dir/h.sqlite3");
    let history = History::open(&path).expect("open creates folders");
    assert_eq!(
        history.schema_version().expect("version"),
        MIGRATION_FILES.len()
    );
    let conn = Connection::open(&path).expect("open");
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .expect("pragma");
    assert_eq!(mode, "wal");
    // Re-opening is a no-op.
    drop(history);
    let again = History::open(&path).expect("reopen");
    assert_eq!(
        again.schema_version().expect("version"),
        MIGRATION_FILES.len()
    );
}

#[test]
fn upgrades_from_every_earlier_version_keep_rows_searchable() {
    for version in 0..MIGRATION_FILES.len() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("h.sqlite3");
        {
            let mut conn = Connection::open(&path).expect("open");
            migrations()
                .to_version(&mut conn, version)
                .expect("old version");
            if version >= 1 {
                // A row as version-1 code wrote it.
                conn.execute(
                    "INSERT INTO dictations (created_at_ms, source, outcome, raw_text, text, stt_ms) \
                     VALUES (1700000000000, 'file', 'ok', 'hello old world', 'Hello old world.', 12.5)",
                    [],
                )
                .expect("insert old row");
            }
        }
        let history = History::open(&path).expect("upgrade");
        assert_eq!(
            history.schema_version().expect("version"),
            MIGRATION_FILES.len(),
            "from version {version}"
        );
        let all = history.list(&Query::default()).expect("list");
        assert_eq!(
            all.len(),
            usize::from(version >= 1),
            "from version {version}"
        );
        if version >= 1 {
            assert_eq!(all[0].stt_ms, Some(12.5));
            // Rows from before the LLM stage existed have no LLM outcome.
            assert_eq!(all[0].llm_outcome, None, "from version {version}");
            let hits = history
                .list(&Query {
                    limit: 5,
                    search: Some("old wor".into()),
                })
                .expect("search");
            assert_eq!(
                hits.len(),
                1,
                "old rows are indexed after upgrade (from {version})"
            );
        }
    }
}

#[test]
fn pending_rows_are_completed_and_search_follows_updates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("h.sqlite3")).expect("open");
    let mut e = Entry::new(Source::Mic);
    history.insert(&mut e).expect("insert");
    let id = e.id.expect("id");
    let pending = history.get(id).expect("get").expect("row");
    assert_eq!(pending.outcome, Outcome::Pending);
    assert!(pending.created_at_ms > 1_700_000_000_000);

    e.outcome = Outcome::Ok;
    e.raw_text = Some("um send the report".into());
    e.text = Some("Send the report.".into());
    e.stt_ms = Some(321.0);
    e.llm_reloaded = Some(false);
    history.update(&e).expect("update");
    let done = history.get(id).expect("get").expect("row");
    assert_eq!(done.outcome, Outcome::Ok);
    assert_eq!(done.llm_reloaded, Some(false));
    let q = |s: &str| {
        history
            .list(&Query {
                limit: 10,
                search: Some(s.into()),
            })
            .expect("search")
            .len()
    };
    assert_eq!(q("report"), 1);
    assert_eq!(q("um"), 1, "raw text is searchable too");
    assert_eq!(q("nothing like this"), 0);
    assert_eq!(
        q("\"unbalanced OR NOT"),
        0,
        "user text never breaks the FTS syntax"
    );

    e.text = Some("Changed entirely.".into());
    e.raw_text = Some("changed entirely".into());
    history.update(&e).expect("update");
    assert_eq!(q("report"), 0, "index follows updates");
    assert_eq!(q("entirely"), 1);
}

#[test]
fn list_limit_and_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("h.sqlite3")).expect("open");
    for i in 0..5 {
        let mut e = Entry::new(Source::File);
        e.created_at_ms = 1_800_000_000_000 + i;
        e.text = Some(format!("entry {i}"));
        history.insert(&mut e).expect("insert");
    }
    let rows = history
        .list(&Query {
            limit: 3,
            search: None,
        })
        .expect("list");
    let texts: Vec<_> = rows
        .iter()
        .map(|r| r.text.clone().unwrap_or_default())
        .collect();
    assert_eq!(texts, ["entry 4", "entry 3", "entry 2"]);
}

#[test]
fn llm_columns_round_trip_and_outcome_is_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("h.sqlite3");
    let history = History::open(&path).expect("open");
    let mut e = Entry::new(Source::File);
    history.insert(&mut e).expect("insert");
    e.outcome = Outcome::Ok;
    e.raw_text = Some("um hello".into());
    e.text = Some("um hello".into());
    e.llm_backend = Some("ollama".into());
    e.llm_model = Some("smollm2:135m".into());
    e.llm_outcome = Some("rejected".into());
    e.llm_reject_reason = Some("preamble: output opens with \"sure\"".into());
    e.llm_error = None;
    e.llm_prompt_eval_ms = Some(12.0);
    e.llm_eval_ms = Some(34.0);
    e.llm_ms = Some(50.0);
    e.llm_load_ms = Some(0.1);
    e.llm_tokens_per_sec = Some(99.0);
    e.llm_reloaded = Some(false);
    history.update(&e).expect("update");
    let back = history.get(e.id.expect("id")).expect("get").expect("row");
    assert_eq!(back.llm_backend.as_deref(), Some("ollama"));
    assert_eq!(back.llm_model.as_deref(), Some("smollm2:135m"));
    assert_eq!(back.llm_outcome.as_deref(), Some("rejected"));
    assert_eq!(back.llm_reject_reason, e.llm_reject_reason);
    assert_eq!(back.llm_prompt_eval_ms, Some(12.0));
    assert_eq!(back.llm_eval_ms, Some(34.0));
    assert_eq!(back.llm_tokens_per_sec, Some(99.0));
    assert_eq!(back.llm_reloaded, Some(false));
    e.llm_outcome = Some("maybe".into());
    assert!(
        history.update(&e).is_err(),
        "unknown llm_outcome must be refused"
    );
}
