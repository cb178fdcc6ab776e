//! The schema, from the SQL files in the repository's `migrations/` folder, in order.
//! Add a file there and a line here; a test fails if the two lists ever differ.

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
];

pub fn migrations() -> Migrations<'static> {
    Migrations::new(MIGRATION_FILES.iter().map(|(_, sql)| M::up(sql)).collect())
}
