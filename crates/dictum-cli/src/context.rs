//! What every command needs: the config (with its warnings shown once) and the history file.

use dictum_engine::config::Config;
use dictum_engine::store::History;
use dictum_engine::{paths, Result};

pub fn load_config() -> Result<Config> {
    let loaded = Config::load()?;
    for warning in &loaded.warnings {
        eprintln!("dictum: warning: {warning}");
    }
    Ok(loaded.config)
}

/// The history; a damaged one is moved aside and a fresh one started, with a warning.
pub fn open_history() -> Result<History> {
    let (history, recovered) = History::open_or_recover(&paths::history_db()?)?;
    if let Some(r) = recovered {
        eprintln!("dictum: warning: {r}");
    }
    Ok(history)
}
