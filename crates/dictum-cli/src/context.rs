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

pub fn open_history() -> Result<History> {
    History::open(&paths::history_db()?)
}
