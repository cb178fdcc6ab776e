//! The IPC commands: each one is an engine call with its error turned into the message the UI
//! shows. Names and argument names match ui/src/ipc.ts; the types are the engine's (their
//! TypeScript twins are generated into ui/src/bindings/).

use crate::state::AppState;
use dictum_engine::config::Config;
use dictum_engine::ipc::{ConfigView, ExportResult, MicLevel, TrayStatus};
use dictum_engine::llm::config::LlmConfig;
use dictum_engine::llm::probe::{self, LlmTestResult};
use dictum_engine::models::download::{self, DownloadOutcome};
use dictum_engine::models::{self, ModelStatus};
use dictum_engine::store::{
    Entry, ExportFormat, ExportSelection, HistoryFilter, Page, PageRequest, Stats, StatsRequest,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tauri::{AppHandle, Emitter, State};

type Res<T> = Result<T, String>;

fn view(state: &AppState) -> Res<ConfigView> {
    Ok(ConfigView {
        config: state.config(),
        path: state.config_path.display().to_string(),
        warnings: state.warnings.read().map(|w| w.clone()).unwrap_or_default(),
        autostart: dictum_engine::autostart::is_enabled().unwrap_or(false),
        models_dir: state.models_dir()?.display().to_string(),
    })
}

#[tauri::command]
pub fn get_config(state: State<'_, AppState>) -> Res<ConfigView> {
    view(&state)
}

/// Saves the file and applies it: every later command reads the new config; retention is
/// applied at once.
#[tauri::command]
pub fn save_config(app: AppHandle, state: State<'_, AppState>, config: Config) -> Res<ConfigView> {
    config
        .save_to(&state.config_path)
        .map_err(|e| e.to_string())?;
    let days = config.history.retention_days;
    state.set_config(config);
    if let Ok(mut w) = state.warnings.write() {
        w.clear();
    }
    if days > 0 {
        let removed = state.with_history(|h| h.apply_retention(days))?;
        if removed > 0 {
            tracing::info!("retention: removed {removed} entries older than {days} days");
        }
    }
    crate::controller::config_changed(&app, &state);
    view(&state)
}

#[tauri::command]
pub fn set_autostart(enabled: bool) -> Res<bool> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    dictum_engine::autostart::set_enabled(enabled, &exe).map_err(|e| e.to_string())?;
    dictum_engine::autostart::is_enabled().map_err(|e| e.to_string())
}

#[tauri::command]
pub fn list_models(state: State<'_, AppState>) -> Res<Vec<ModelStatus>> {
    Ok(models::catalog(
        &state.models_dir()?,
        &state.config().stt.model,
    ))
}

/// Downloads a catalog model; progress goes out as `download-progress` events.
#[tauri::command]
pub async fn download_model(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
) -> Res<DownloadOutcome> {
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let mut running = state
            .downloads
            .lock()
            .map_err(|_| "download lock poisoned")?;
        if running.contains_key(&name) {
            return Err(format!("{name} is already downloading"));
        }
        running.insert(name.clone(), cancel.clone());
    }
    let base = state.config().models.base_url;
    let dir = state.models_dir()?;
    let emitter = app.clone();
    let mut progress = move |p: &download::DownloadProgress| {
        let _ = emitter.emit("download-progress", p);
    };
    let result = download::download_model(&base, &name, &dir, &cancel, &mut progress).await;
    if let Ok(mut running) = state.downloads.lock() {
        running.remove(&name);
    }
    result.map_err(|e| e.to_string())
}

#[tauri::command]
pub fn cancel_download(state: State<'_, AppState>, name: String) -> Res<()> {
    if let Some(flag) = state
        .downloads
        .lock()
        .map_err(|_| "download lock poisoned")?
        .get(&name)
    {
        flag.store(true, Ordering::SeqCst);
    }
    Ok(())
}

#[tauri::command]
pub fn delete_model(state: State<'_, AppState>, name: String) -> Res<bool> {
    if state.config().stt.model == name {
        return Err(format!(
            "{name} is the default model; set another one as default first"
        ));
    }
    download::delete_model(&state.models_dir()?, &name).map_err(|e| e.to_string())
}

#[tauri::command]
pub fn set_default_model(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
) -> Res<ConfigView> {
    let mut config = state.config();
    config.stt.model = name;
    save_config(app, state, config)
}

#[tauri::command]
pub fn list_mics() -> Vec<String> {
    dictum_engine::audio::capture::Capture::input_devices()
}

/// Opens `device` ("" = default) and sends its level as `mic-level` events until stopped.
#[tauri::command]
pub fn start_level_meter(app: AppHandle, state: State<'_, AppState>, device: String) -> Res<()> {
    let mut meter = state.meter.lock().map_err(|_| "meter lock poisoned")?;
    if let Some(old) = meter.take() {
        old.stop();
    }
    let emitter = app.clone();
    *meter = Some(crate::meter::Meter::start(device, move |l: MicLevel| {
        let _ = emitter.emit("mic-level", l);
    }));
    Ok(())
}

#[tauri::command]
pub fn stop_level_meter(state: State<'_, AppState>) -> Res<()> {
    if let Some(old) = state
        .meter
        .lock()
        .map_err(|_| "meter lock poisoned")?
        .take()
    {
        old.stop();
    }
    Ok(())
}

#[tauri::command]
pub async fn llm_models(llm: LlmConfig) -> Res<Vec<String>> {
    probe::list_models(&llm).await.map_err(|e| e.to_string())
}

#[tauri::command]
pub async fn llm_test(llm: LlmConfig, vocabulary: Vec<String>, text: String) -> LlmTestResult {
    probe::test_cleanup(&llm, &vocabulary, &text).await
}

#[tauri::command]
pub fn history_page(state: State<'_, AppState>, req: PageRequest) -> Res<Page> {
    state.with_history(|h| h.page(&req))
}

#[tauri::command]
pub fn history_count(state: State<'_, AppState>, filter: HistoryFilter) -> Res<u64> {
    state.with_history(|h| h.count(&filter))
}

#[tauri::command]
pub fn history_apps(state: State<'_, AppState>) -> Res<Vec<String>> {
    state.with_history(|h| h.app_classes())
}

#[tauri::command]
pub fn history_get(state: State<'_, AppState>, id: i64) -> Res<Option<Entry>> {
    state.with_history(|h| h.get(id))
}

#[tauri::command]
pub fn history_delete(state: State<'_, AppState>, ids: Vec<i64>) -> Res<usize> {
    state.with_history(|h| h.delete(&ids))
}

/// Writes the export next to the user's downloads (`$XDG_DOWNLOAD_DIR`, else home).
#[tauri::command]
pub fn history_export(
    state: State<'_, AppState>,
    selection: ExportSelection,
    format: ExportFormat,
) -> Res<ExportResult> {
    let (text, count) = state.with_history(|h| h.export(&selection, format))?;
    let dir = std::env::var_os("DICTUM_EXPORT_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from)?;
            let downloads = home.join("Downloads");
            Some(if downloads.is_dir() { downloads } else { home })
        })
        .ok_or("no home folder to export to; set DICTUM_EXPORT_DIR")?;
    let stamp = dictum_engine::store::format_utc(dictum_engine::store::now_ms())
        .replace([':', '-'], "")
        .replace('T', "-");
    let path = dir.join(format!(
        "dictum-history-{}.{}",
        &stamp[..15],
        format.extension()
    ));
    dictum_engine::paths::write_private(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(ExportResult {
        path: path.display().to_string(),
        count: count as u32,
        format,
    })
}

/// Types an entry's text again into the window that had the focus before Dictum's: the
/// calling window is hidden first so the focus goes back there.
#[tauri::command]
pub fn history_reinject(
    window: tauri::WebviewWindow,
    state: State<'_, AppState>,
    id: i64,
) -> Res<()> {
    let entry = state
        .with_history(|h| h.get(id))?
        .ok_or_else(|| format!("entry {id} no longer exists"))?;
    let text = entry.text.unwrap_or_default();
    if text.trim().is_empty() {
        return Err("this entry has no text to type".into());
    }
    let config = state.config();
    let _ = window.hide();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut injector =
        dictum_engine::inject::Injector::new(&config.inject).map_err(|e| e.to_string())?;
    let report = injector.inject(&text);
    let _ = window.show();
    match report.error {
        Some(e) => Err(format!("{e} (the text is on the clipboard)")),
        None => Ok(()),
    }
}

#[tauri::command]
pub fn stats(state: State<'_, AppState>, req: StatsRequest) -> Res<Stats> {
    state.with_history(|h| h.stats(&req))
}

#[tauri::command]
pub fn tray_status(state: State<'_, AppState>) -> Res<TrayStatus> {
    state
        .status
        .lock()
        .map(|s| s.clone())
        .map_err(|_| "status lock poisoned".into())
}

#[tauri::command]
pub fn toggle_dictation(app: AppHandle, state: State<'_, AppState>) -> Res<TrayStatus> {
    crate::controller::toggle(&app, &state)
}

#[tauri::command]
pub fn set_hotkey_paused(
    app: AppHandle,
    state: State<'_, AppState>,
    paused: bool,
) -> Res<TrayStatus> {
    crate::controller::set_paused(&app, &state, paused)
}

/// A line from the UI on stdout (`ui: ...`): the app test waits for "rendered" lines.
#[tauri::command]
pub fn ui_log(message: String) {
    println!("ui: {}", message.replace('\n', " "));
}
