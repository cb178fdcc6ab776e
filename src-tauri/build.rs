/// Every IPC command of `src/commands.rs`. Listing them makes Tauri generate an `allow-NAME`
/// permission for each and refuse a command to any window whose capability
/// (`capabilities/*.json`, one per window) does not grant it.
const COMMANDS: &[&str] = &[
    "get_config",
    "save_config",
    "set_autostart",
    "list_models",
    "download_model",
    "cancel_download",
    "delete_model",
    "set_default_model",
    "list_mics",
    "start_level_meter",
    "stop_level_meter",
    "llm_models",
    "llm_test",
    "history_page",
    "history_count",
    "history_apps",
    "history_get",
    "history_delete",
    "history_delete_all",
    "history_export",
    "history_reinject",
    "history_retry",
    "history_correct",
    "history_learn",
    "stats",
    "tray_status",
    "toggle_dictation",
    "set_hotkey_paused",
    "show_view",
    "ui_log",
    "first_run_info",
    "import_model",
    "measure_models",
    "focused_window_in",
    "stt_server_check",
    "stt_key_set",
    "stt_key_clear",
    "stt_key_status",
    "file_job_defaults",
    "file_jobs",
    "file_jobs_add",
    "file_jobs_pick",
    "file_job_cancel",
    "file_job_remove",
    "file_job_copy",
    "file_job_save",
];

fn main() {
    // tauri::generate_context! embeds ../ui/dist at compile time. On a fresh checkout where the
    // UI was not built yet (`npm --prefix ui run build`, done by scripts/test and scripts/run),
    // put a page there that says so, so that `cargo check/clippy/test --workspace` still build.
    let dist = std::path::Path::new("../ui/dist");
    if !dist.join("index.html").exists() {
        let _ = std::fs::create_dir_all(dist);
        let _ = std::fs::write(
            dist.join("index.html"),
            "<!doctype html><title>Dictum</title><p>The UI was not built: run <code>npm --prefix ui ci &amp;&amp; npm --prefix ui run build</code>, then rebuild the app.</p>",
        );
    }
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .unwrap_or_else(|e| panic!("tauri build: {e:#}"));
}
