//! The IPC commands: each one is an engine call with its error turned into the message the UI
//! shows. Names and argument names match ui/src/ipc.ts; the types are the engine's (their
//! TypeScript twins are generated into ui/src/bindings/).
//!
//! Attack surface (docs/SECURITY.md): each window may call only the commands its capability
//! grants (`capabilities/*.json`, the list in `build.rs`); arguments are checked here as if
//! the page were hostile: a model path must be a file in the models folder or a real whisper
//! model, a server URL must be http(s) without credentials. Commands that touch the disk or
//! the network are `async`, so they run on Tauri's async runtime and never on the GUI thread
//! (a synchronous command runs on the main thread).

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
use std::path::{Component, Path};
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
        builtin_styles: dictum_engine::config::style::builtin(),
    })
}

#[tauri::command]
pub async fn get_config(state: State<'_, AppState>) -> Res<ConfigView> {
    view(&state)
}

/// Saves the file and applies it: every later command reads the new config; retention is
/// applied at once. A changed `stt.model` is checked like [`set_default_model`]'s.
#[tauri::command]
pub async fn save_config(
    app: AppHandle,
    state: State<'_, AppState>,
    config: Config,
) -> Res<ConfigView> {
    key_sources_unchanged(&config, &saved_config(&state))?;
    save(&app, &state, config)
}

/// `llm.api_key_env` and `stt.api_key_env` are set in the config file only: a page that
/// could name any environment variable could send any secret of the user's environment to
/// a server of its choosing (issue 38). A save from the settings page that changes either is
/// refused, with where to set it instead.
pub(crate) fn key_sources_unchanged(new: &Config, saved: &Config) -> Res<()> {
    for (setting, asked, on_disk) in [
        (
            "llm.api_key_env",
            &new.llm.api_key_env,
            &saved.llm.api_key_env,
        ),
        (
            "stt.api_key_env",
            &new.stt.api_key_env,
            &saved.stt.api_key_env,
        ),
    ] {
        if asked.trim() != on_disk.trim() {
            return Err(format!(
                "{setting} is set in the config file only, not from the settings page; edit it there (`dictum config --path` shows where) and restart Dictum. Nothing was saved"
            ));
        }
    }
    // A key from a variable belongs to the server the file names with it: the page may not
    // move that server to another origin (a keyring key is re-entered instead: secrets.rs).
    for (section, asked, on_disk, env) in [
        ("llm", &new.llm.url, &saved.llm.url, &saved.llm.api_key_env),
        ("stt", &new.stt.url, &saved.stt.url, &saved.stt.api_key_env),
    ] {
        let origin = |u: &str| dictum_engine::secrets::origin_of(u).ok();
        if !env.trim().is_empty() && origin(asked) != origin(on_disk) {
            return Err(format!(
                "{section}.url goes with the API key in ${} ({section}.api_key_env), so it is changed in the config file only (`dictum config --path` shows where); or empty {section}.api_key_env there and use the keyring. Nothing was saved",
                env.trim()
            ));
        }
    }
    Ok(())
}

pub(crate) fn save(app: &AppHandle, state: &AppState, mut config: Config) -> Res<ConfigView> {
    if config.stt.model != state.config().stt.model {
        config.stt.model = checked_model_choice(&config.stt.model, &state.models_dir()?)?;
    }
    config
        .save_to(&state.config_path)
        .map_err(|e| e.to_string())?;
    state.set_config(config);
    if let Ok(mut w) = state.warnings.write() {
        w.clear();
    }
    // A pass with the saved retention_days now, then daily.
    state.restart_retention();
    crate::controller::config_changed(app, state);
    view(state)
}

#[tauri::command]
pub async fn set_autostart(enabled: bool) -> Res<bool> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    dictum_engine::autostart::set_enabled(enabled, &exe).map_err(|e| e.to_string())?;
    dictum_engine::autostart::is_enabled().map_err(|e| e.to_string())
}

#[tauri::command]
pub async fn list_models(state: State<'_, AppState>) -> Res<Vec<ModelStatus>> {
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
pub async fn delete_model(state: State<'_, AppState>, name: String) -> Res<bool> {
    if state.config().stt.model == name {
        return Err(format!(
            "{name} is the default model; set another one as default first"
        ));
    }
    download::delete_model(&state.models_dir()?, &name).map_err(|e| e.to_string())
}

/// Makes `name` the default model: a catalog name, or a model file (see
/// [`checked_model_choice`]).
#[tauri::command]
pub async fn set_default_model(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
) -> Res<ConfigView> {
    let mut config = state.config();
    config.stt.model = checked_model_choice(&name, &state.models_dir()?)?;
    save(&app, &state, config)
}

/// What the UI may set `stt.model` to: a catalog name or catalog file name (resolved in the
/// models folder only, never the current folder), a file name in the models folder, or an
/// absolute path (no `..`) to a file that, links resolved, lies in the models folder or passes
/// the whisper model structure check. Returns the value to store: the name, or the resolved
/// absolute path.
pub(crate) fn checked_model_choice(name: &str, models_dir: &Path) -> Res<String> {
    let name = name.trim();
    if name.is_empty() || name.len() > 4096 || name.chars().any(char::is_control) {
        return Err("give a model name from the catalog or the path of a ggml model file".into());
    }
    if models::find(name).is_some() {
        return Ok(name.to_string());
    }
    let path = Path::new(name);
    if path.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(format!(
            "model path {name} contains `..`; give the model file's full path"
        ));
    }
    let candidate = if path.is_absolute() {
        path.to_path_buf()
    } else if path.components().count() == 1 {
        models_dir.join(path)
    } else {
        return Err(format!(
            "model path {name} is relative; give a catalog name, a file name in {}, or a full path",
            models_dir.display()
        ));
    };
    let real = candidate
        .canonicalize()
        .map_err(|e| format!("model file {} cannot be opened: {e}", candidate.display()))?;
    if !real.is_file() {
        return Err(format!("{} is not a file", real.display()));
    }
    let inside = models_dir
        .canonicalize()
        .is_ok_and(|dir| real.starts_with(dir));
    if !inside {
        dictum_engine::stt::check_model_file(&real)
            .map_err(|e| format!("{} is not a whisper model file: {e}", real.display()))?;
    }
    Ok(real.display().to_string())
}

#[tauri::command]
pub async fn list_mics() -> Vec<String> {
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

/// The settings as saved on disk (else as last loaded): the only source of an API key for the
/// probes, and the only server the key goes to. A form's arguments never name where a key
/// comes from: a hostile page could otherwise send the keyring's key, or any environment
/// variable, to a URL of its choosing (docs/SECURITY.md).
pub(crate) fn saved_config(state: &AppState) -> Config {
    match Config::load_from(&state.config_path) {
        Ok(loaded) => loaded.config,
        Err(e) => {
            tracing::warn!("the probes use the settings as last loaded: {e}");
            state.config()
        }
    }
}

/// The probes reach whatever URL the form holds: http(s) only, no credentials (the engine
/// checks again), and the rest of the form validated before any request. The key source is
/// the saved one's, whatever the form says; the engine sends the key only to the saved server
/// (`net::key_allowed`).
fn checked_probe(state: &AppState, mut llm: LlmConfig) -> Res<(LlmConfig, LlmConfig)> {
    let saved = saved_config(state).llm;
    llm.api_key_env = saved.api_key_env.clone();
    dictum_engine::net::check_url(&llm.url, "llm.url")?;
    llm.validate()
        .map_err(|(key, reason)| format!("invalid setting {key}: {reason}"))?;
    Ok((llm, saved))
}

#[tauri::command]
pub async fn llm_models(state: State<'_, AppState>, llm: LlmConfig) -> Res<Vec<String>> {
    let (llm, saved) = checked_probe(&state, llm)?;
    probe::list_models_with(&llm, &saved)
        .await
        .map_err(|e| e.to_string())
}

#[tauri::command]
pub async fn llm_test(
    state: State<'_, AppState>,
    llm: LlmConfig,
    vocabulary: Vec<String>,
    text: String,
) -> Res<LlmTestResult> {
    if text.len() > 10_000 || vocabulary.len() > 1_000 {
        return Err("the test text or vocabulary is too long".into());
    }
    let (llm, saved) = checked_probe(&state, llm)?;
    Ok(probe::test_cleanup_with(&llm, &saved, &vocabulary, &text).await)
}

#[tauri::command]
pub async fn history_page(state: State<'_, AppState>, req: PageRequest) -> Res<Page> {
    state.with_history(|h| h.page(&req))
}

#[tauri::command]
pub async fn history_count(state: State<'_, AppState>, filter: HistoryFilter) -> Res<u64> {
    state.with_history(|h| h.count(&filter))
}

#[tauri::command]
pub async fn history_apps(state: State<'_, AppState>) -> Res<Vec<String>> {
    state.with_history(|h| h.app_classes())
}

#[tauri::command]
pub async fn history_get(state: State<'_, AppState>, id: i64) -> Res<Option<Entry>> {
    state.with_history(|h| h.get(id))
}

#[tauri::command]
pub async fn history_delete(state: State<'_, AppState>, ids: Vec<i64>) -> Res<usize> {
    state.with_history(|h| h.delete(&ids))
}

/// Deletes every entry and every kept recording (the history view's "Delete all history",
/// after its confirmation); returns how many entries went.
#[tauri::command]
pub async fn history_delete_all(state: State<'_, AppState>) -> Res<usize> {
    let n = state.with_history(|h| h.delete_all())?;
    tracing::info!("history: deleted all {n} entries");
    Ok(n)
}

/// Writes the export next to the user's downloads (`$XDG_DOWNLOAD_DIR`, else home).
#[tauri::command]
pub async fn history_export(
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

/// Hides `window` (the focus goes back to the window before Dictum's), has the running
/// dictation type row `id` there ([`crate::controller::type_stored`]), and shows `window`
/// again. Shared by Re-inject and Retry.
pub(crate) async fn type_behind(
    window: &tauri::WebviewWindow,
    id: i64,
) -> Res<Option<Result<String, String>>> {
    let _ = window.hide();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let typed = tauri::async_runtime::spawn_blocking(move || crate::controller::type_stored(id))
        .await
        .map_err(|e| format!("typing stopped: {e}"))?;
    let _ = window.show();
    Ok(typed)
}

/// Types an entry's text again into the window that had the focus before Dictum's: the
/// calling window is hidden first so the focus goes back there. The running dictation types
/// it, through its gate (the character budget of its audio, the cancel key, the focus check;
/// the row records a refusal); with no dictation running the text goes to the clipboard.
#[tauri::command]
pub async fn history_reinject(
    app: AppHandle,
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
    let typed = type_behind(&window, id).await?;
    match typed {
        Some(done) => done.map(drop),
        None => {
            crate::tray::copy_text(&app, &text)?;
            Err(
                "dictation is not running, so nothing was typed: the text is on the \
                 clipboard (typing goes only through a running dictation, where the cancel \
                 key stops it)"
                    .into(),
            )
        }
    }
}

#[tauri::command]
pub async fn stats(state: State<'_, AppState>, req: StatsRequest) -> Res<Stats> {
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

/// Opens (or focuses) the window of `view`; the UI's tabs call it, since each view has its
/// own window and permissions.
#[tauri::command]
pub fn show_view(app: AppHandle, view: String) -> Res<()> {
    match view.as_str() {
        "settings" | "history" | "stats" | "transcribe" => {
            crate::windows::show(&app, &view);
            Ok(())
        }
        _ => Err(format!("no view named {view:?}")),
    }
}

/// A line from the UI on stdout (`ui: ...`): the app test waits for "rendered" lines.
#[tauri::command]
pub fn ui_log(message: String) {
    let mut line: String = message
        .chars()
        .take(500)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if message.chars().nth(500).is_some() {
        line.push('…');
    }
    println!("ui: {line}");
}

#[cfg(test)]
mod tests {
    use super::checked_model_choice;

    #[test]
    fn a_save_that_names_another_key_variable_is_refused() {
        use dictum_engine::config::Config;
        let saved = Config::default();
        assert!(super::key_sources_unchanged(&saved.clone(), &saved).is_ok());
        // The URL may change from the page (a keyring key does not follow it: secrets.rs).
        let mut url = saved.clone();
        url.llm.url = "https://elsewhere.example/v1".into();
        assert!(super::key_sources_unchanged(&url, &saved).is_ok());
        // Not when a variable's key goes with it (another path of the same server may).
        let mut with_env = saved.clone();
        with_env.llm.api_key_env = "OPENAI_API_KEY".into();
        let mut moved = url.clone();
        moved.llm.api_key_env = "OPENAI_API_KEY".into();
        let e = super::key_sources_unchanged(&moved, &with_env).expect_err("moved");
        assert!(
            e.contains("llm.url")
                && e.contains("$OPENAI_API_KEY")
                && e.contains("Nothing was saved"),
            "{e}"
        );
        let mut same_origin = with_env.clone();
        same_origin.llm.url = format!("{}/v1", with_env.llm.url.trim_end_matches('/'));
        assert!(super::key_sources_unchanged(&same_origin, &with_env).is_ok());
        for (which, form) in [
            ("llm.api_key_env", {
                let mut c = saved.clone();
                c.llm.api_key_env = "AWS_SECRET_ACCESS_KEY".into();
                c
            }),
            ("stt.api_key_env", {
                let mut c = saved.clone();
                c.stt.api_key_env = "GITHUB_TOKEN".into();
                c
            }),
        ] {
            let e = super::key_sources_unchanged(&form, &saved).expect_err(which);
            assert!(
                e.contains(which)
                    && e.contains("config file only")
                    && e.contains("Nothing was saved"),
                "{e}"
            );
        }
    }

    #[test]
    fn model_choices_are_catalog_names_files_in_the_models_folder_or_real_models() {
        let models = tempfile::tempdir().expect("tempdir");
        let elsewhere = tempfile::tempdir().expect("tempdir");
        let dir = models.path();
        assert_eq!(
            checked_model_choice("tiny.en-q8_0", dir).as_deref(),
            Ok("tiny.en-q8_0")
        );
        std::fs::write(dir.join("my-finetune.bin"), b"x").expect("write");
        let inside = checked_model_choice("my-finetune.bin", dir).expect("in the folder");
        assert!(
            inside.ends_with("/my-finetune.bin") && inside.starts_with('/'),
            "{inside}"
        );
        // Outside the folder: only a real whisper model.
        let fake = elsewhere.path().join("secret.txt");
        std::fs::write(&fake, b"not a model").expect("write");
        let e = checked_model_choice(fake.to_str().expect("utf8"), dir).expect_err("not a model");
        assert!(e.contains("not a whisper model"), "{e}");
        // A link in the models folder to a file elsewhere is judged by where it points.
        std::os::unix::fs::symlink(&fake, dir.join("link.bin")).expect("symlink");
        assert!(checked_model_choice("link.bin", dir).is_err());
        for bad in [
            "",
            "../../etc/passwd",
            &format!("{}/../x.bin", dir.display()),
            "sub/x.bin",
            "/no/such/model.bin",
            "a\nb",
        ] {
            assert!(checked_model_choice(bad, dir).is_err(), "{bad:?} accepted");
        }
        let assets = std::env::var_os("DICTUM_TEST_ASSETS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
            });
        let real = assets.join("models/ggml-tiny.en-q8_0.bin");
        assert!(real.is_file(), "test model {} missing", real.display());
        let real = real.canonicalize().expect("canonical");
        assert!(checked_model_choice(real.to_str().expect("utf8"), dir).is_ok());
    }
}
