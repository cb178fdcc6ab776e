//! Where Dictum keeps its files. XDG locations by default, each overridable by an env var so
//! tests and portable installs never touch the user's real data.

use crate::{Error, Result};
use std::path::PathBuf;

pub const DATA_DIR_ENV: &str = "DICTUM_DATA_DIR";
pub const CONFIG_ENV: &str = "DICTUM_CONFIG";

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "dictum")
}

/// `$DICTUM_DATA_DIR`, else the XDG data dir (`~/.local/share/dictum`).
pub fn data_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    project_dirs()
        .map(|d| d.data_dir().to_path_buf())
        .ok_or(Error::NoDataDir)
}

/// `$DICTUM_CONFIG`, else `~/.config/dictum/config.toml`.
pub fn config_file() -> Result<PathBuf> {
    if let Some(file) = std::env::var_os(CONFIG_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(file));
    }
    project_dirs()
        .map(|d| d.config_dir().join("config.toml"))
        .ok_or(Error::NoDataDir)
}

pub fn history_db() -> Result<PathBuf> {
    Ok(data_dir()?.join("history.sqlite3"))
}

pub fn models_dir() -> Result<PathBuf> {
    Ok(data_dir()?.join("models"))
}

pub fn audio_dir() -> Result<PathBuf> {
    Ok(data_dir()?.join("audio"))
}

/// Folders searched for models given by name: `$DICTUM_MODELS_DIR` (if set), then
/// `<data dir>/models`.
pub fn model_dirs() -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os("DICTUM_MODELS_DIR").filter(|v| !v.is_empty()) {
        dirs.push(PathBuf::from(dir));
    }
    dirs.push(models_dir()?);
    Ok(dirs)
}
