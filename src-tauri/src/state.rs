//! What the app holds between calls: the config as last saved (read by every command, so a
//! saved change applies at once), the history connection, running downloads, the tray status,
//! the daily history retention.

use dictum_engine::config::Config;
use dictum_engine::ipc::{DictationState, TrayStatus};
use dictum_engine::store::retention::{self, RetentionHandle};
use dictum_engine::store::History;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

pub struct AppState {
    pub config: RwLock<Config>,
    pub warnings: RwLock<Vec<String>>,
    pub config_path: PathBuf,
    pub history_path: PathBuf,
    history: Mutex<Option<History>>,
    /// Cancel flags of running downloads, by catalog name.
    pub downloads: Mutex<HashMap<String, Arc<AtomicBool>>>,
    pub meter: Mutex<Option<crate::meter::Meter>>,
    pub status: Mutex<TrayStatus>,
    /// History retention, daily, for as long as the tray runs (dictation on or off).
    retention: Mutex<Option<RetentionHandle>>,
}

impl AppState {
    pub fn load() -> Result<AppState, String> {
        let config_path = dictum_engine::paths::config_file().map_err(|e| e.to_string())?;
        let loaded = Config::load_from(&config_path).map_err(|e| e.to_string())?;
        let history_path = dictum_engine::paths::history_db().map_err(|e| e.to_string())?;
        let style =
            Some(loaded.config.dictation.style.trim().to_string()).filter(|s| !s.is_empty());
        Ok(AppState {
            config: RwLock::new(loaded.config),
            warnings: RwLock::new(loaded.warnings),
            config_path,
            history_path,
            history: Mutex::new(None),
            downloads: Mutex::new(HashMap::new()),
            meter: Mutex::new(None),
            status: Mutex::new(TrayStatus {
                state: DictationState::Idle,
                hotkey_paused: false,
                hands_free: false,
                message: None,
                controller: false,
                microphone: None,
                style,
            }),
            retention: Mutex::new(None),
        })
    }

    pub fn config(&self) -> Config {
        match self.config.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn set_config(&self, config: Config) {
        match self.config.write() {
            Ok(mut c) => *c = config,
            Err(poisoned) => *poisoned.into_inner() = config,
        }
    }

    /// (Re)starts history retention with the configured `retention_days`: a pass now, then
    /// one a day while the tray runs; none with 0 (keep everything).
    pub fn restart_retention(&self) {
        let days = self.config().history.retention_days;
        let mut slot = self.retention.lock().unwrap_or_else(|e| e.into_inner());
        // The old thread stops (and is joined) before the new one starts its pass.
        slot.take();
        if days > 0 {
            *slot = Some(retention::spawn_daily(self.history_path.clone(), days));
        }
    }

    /// Runs `f` with the history database (opened on first use, kept open).
    pub fn with_history<T>(
        &self,
        f: impl FnOnce(&History) -> dictum_engine::Result<T>,
    ) -> Result<T, String> {
        let mut guard = self
            .history
            .lock()
            .map_err(|_| "history lock poisoned; restart Dictum".to_string())?;
        if guard.is_none() {
            // A damaged file is moved aside and a fresh history started; the settings panel
            // shows why (the dictation engine, which may open it first, says so in the tray).
            let (history, recovered) =
                History::open_or_recover(&self.history_path).map_err(|e| e.to_string())?;
            if let Some(r) = recovered {
                tracing::warn!("{r}");
                if let Ok(mut w) = self.warnings.write() {
                    w.push(r.to_string());
                }
            }
            *guard = Some(history);
        }
        match guard.as_ref() {
            Some(h) => f(h).map_err(|e| e.to_string()),
            None => Err("history database is not open".into()),
        }
    }

    pub fn models_dir(&self) -> Result<PathBuf, String> {
        dictum_engine::paths::models_dir().map_err(|e| e.to_string())
    }
}
