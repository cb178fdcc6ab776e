//! The `[commands]` config section lives in `config/commands.rs` (a leaf at the bottom of the
//! crate, docs/ARCHITECTURE.md "Module graph"); re-exported here so `commands::config::…`
//! keeps its meaning.

pub use crate::config::commands::{CommandsConfig, CustomCommand};
