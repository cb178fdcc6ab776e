//! The schema, from the SQL files in the repository's `migrations/` folder, in order.
//! Add a file there and a line here; a test fails if the two lists ever differ.
//!
//! [`migrate`] applies them inside one `BEGIN IMMEDIATE` transaction, reading the schema
//! version again once it holds the write lock: two processes opening a fresh database at once
//! (the tray and `dictum run` at login) never both run the same migration. The version is
//! `PRAGMA user_version` = the number of files applied, as `rusqlite_migration` counts it
//! (its [`migrations`] stays for validating the files and for building old schemas in tests).

use rusqlite::{Connection, TransactionBehavior};
use rusqlite_migration::{Migrations, M};

/// (file name, SQL), in the order they are applied.
pub const MIGRATION_FILES: &[(&str, &str)] = &[
    (
        "0001_history.sql",
        include_str!("../../../../migrations/0001_history.sql"),
    ),
    (
        "0002_history_fts.sql",
        include_str!("../../../../migrations/0002_history_fts.sql"),
    ),
    (
        "0003_llm.sql",
        include_str!("../../../../migrations/0003_llm.sql"),
    ),
    (
        "0004_live.sql",
        include_str!("../../../../migrations/0004_live.sql"),
    ),
    (
        "0005_history_browse.sql",
        include_str!("../../../../migrations/0005_history_browse.sql"),
    ),
    (
        "0006_interrupted.sql",
        include_str!("../../../../migrations/0006_interrupted.sql"),
    ),
    (
        "0007_remote_stt.sql",
        include_str!("../../../../migrations/0007_remote_stt.sql"),
    ),
    (
        "0008_commands.sql",
        include_str!("../../../../migrations/0008_commands.sql"),
    ),
    (
        "0009_profile.sql",
        include_str!("../../../../migrations/0009_profile.sql"),
    ),
    (
        "0010_commands_refused.sql",
        include_str!("../../../../migrations/0010_commands_refused.sql"),
    ),
    (
        "0011_correction.sql",
        include_str!("../../../../migrations/0011_correction.sql"),
    ),
    (
        "0012_edit.sql",
        include_str!("../../../../migrations/0012_edit.sql"),
    ),
    (
        "0013_row_state.sql",
        include_str!("../../../../migrations/0013_row_state.sql"),
    ),
    (
        "0014_mic_start.sql",
        include_str!("../../../../migrations/0014_mic_start.sql"),
    ),
    (
        "0015_style.sql",
        include_str!("../../../../migrations/0015_style.sql"),
    ),
    (
        "0016_context.sql",
        include_str!("../../../../migrations/0016_context.sql"),
    ),
    (
        "0017_segments.sql",
        include_str!("../../../../migrations/0017_segments.sql"),
    ),
];

pub fn migrations() -> Migrations<'static> {
    Migrations::new(MIGRATION_FILES.iter().map(|(_, sql)| M::up(sql)).collect())
}

fn user_version(conn: &Connection) -> rusqlite::Result<usize> {
    conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))
        .map(|v| usize::try_from(v).unwrap_or(usize::MAX))
}

/// What went wrong while migrating.
#[derive(Debug)]
pub(crate) enum MigrateError {
    Sqlite(rusqlite::Error),
    /// The file was written by a newer Dictum (more migrations than this build knows).
    Newer {
        found: usize,
        known: usize,
    },
}

impl From<rusqlite::Error> for MigrateError {
    fn from(e: rusqlite::Error) -> Self {
        MigrateError::Sqlite(e)
    }
}

/// Brings `conn`'s database to the latest schema; returns how many migrations ran (0 when it
/// was up to date, also when another process migrated it while this one waited for the lock).
pub(crate) fn migrate(conn: &mut Connection) -> Result<usize, MigrateError> {
    let known = MIGRATION_FILES.len();
    // Up to date (the common case): no write lock taken.
    let found = user_version(conn)?;
    if found == known {
        return Ok(0);
    }
    // Waits (busy timeout) while another connection writes, then holds the write lock until
    // commit: the version read below cannot change under us.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = user_version(&tx)?;
    if found > known {
        return Err(MigrateError::Newer { found, known });
    }
    for (_, sql) in &MIGRATION_FILES[found..] {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", known as i64)?;
    tx.commit()?;
    Ok(known - found)
}
