//! Dictum's tray app. Presentation only: every decision is the engine's (`dictum_engine`); this
//! crate holds the tray icon and menu, opens the UI's windows, and turns IPC calls into engine
//! calls (`commands.rs`).
//!
//! Starts hidden in the tray. `--show settings|history|stats|transcribe|indicator` opens a
//! window at start; `--transcribe FILE…` queues files in the transcribe window; a second
//! launch (single instance) forwards both to the running one.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod controller;
mod file_jobs;
mod history_learn;
mod history_retry;
mod meter;
mod no_focus;
mod profiles;
mod remeasure;
mod state;
mod stt_server;
mod supervisor;
mod tray;
mod welcome;
mod windows;
mod xwayland;

use state::AppState;
use tauri::{Manager, RunEvent};

/// The `--show VIEW` of a command line, if any.
fn show_arg(args: &[String]) -> Option<String> {
    args.iter()
        .position(|a| a == "--show")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .or_else(|| {
            args.iter()
                .find_map(|a| a.strip_prefix("--show=").map(str::to_string))
        })
}

fn main() {
    // A speech worker (whisper on the GPU, isolated from this process) runs nothing else.
    dictum_engine::stt::worker_process::exit_if_worker();
    // History, audio, exports and config are private: folders 0700, files 0600.
    dictum_engine::paths::set_private_umask();
    // GNOME on Wayland: GTK as an XWayland client, so the indicator can be shown. First, while
    // this process has one thread (`xwayland::apply`'s SAFETY note).
    xwayland::apply();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tao=warn,wry=warn".into()),
        )
        .init();
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "dictum-tray: Dictum in the system tray.\n\n  --hidden          start in the tray (the default)\n  --show VIEW       open settings, history, stats, transcribe, welcome (first-run setup) or indicator\n  --transcribe FILE…  transcribe audio or video files in the Transcribe window (queued)\n  --version         print the version and build features\n\nEnv: DICTUM_CONFIG, DICTUM_DATA_DIR as for the dictum CLI."
        );
        return;
    }
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!(
            "dictum-tray {} ({})",
            env!("CARGO_PKG_VERSION"),
            dictum_engine::BUILD_FEATURES
        );
        return;
    }
    let state = match AppState::load() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("dictum-tray: {e}");
            std::process::exit(1);
        }
    };
    let initial = show_arg(&args);
    let initial_files = std::env::current_dir()
        .map(|cwd| file_jobs::transcribe_args(&args, &cwd))
        .unwrap_or_default();

    let app = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, argv, cwd| {
            // A second launch: its files queued, or what it asked to see (default: settings).
            let files = file_jobs::transcribe_args(&argv, std::path::Path::new(&cwd));
            if !files.is_empty() {
                file_jobs::queue_and_show(app, files);
                return;
            }
            let view = show_arg(&argv).unwrap_or_else(|| "settings".into());
            windows::show(app, &view);
        }))
        .manage(state)
        .manage(file_jobs::Files::default())
        .on_window_event(|window, event| {
            if let Some(paths) = file_jobs::dropped(window.label(), event) {
                file_jobs::queue_and_show(window.app_handle(), paths);
            }
        })
        .invoke_handler(tauri::generate_handler![
            commands::get_config,
            commands::save_config,
            commands::set_autostart,
            commands::list_models,
            commands::download_model,
            commands::cancel_download,
            commands::delete_model,
            commands::set_default_model,
            commands::list_mics,
            commands::start_level_meter,
            commands::stop_level_meter,
            commands::llm_models,
            commands::llm_test,
            profiles::focused_window_in,
            stt_server::stt_server_check,
            stt_server::stt_key_set,
            stt_server::stt_key_clear,
            stt_server::stt_key_status,
            commands::history_page,
            commands::history_count,
            commands::history_apps,
            commands::history_get,
            commands::history_delete,
            commands::history_delete_all,
            commands::history_export,
            commands::history_reinject,
            history_retry::history_retry,
            history_learn::history_correct,
            history_learn::history_learn,
            commands::stats,
            commands::tray_status,
            commands::toggle_dictation,
            commands::set_hotkey_paused,
            commands::show_view,
            commands::ui_log,
            welcome::first_run_info,
            welcome::import_model,
            remeasure::measure_models,
            file_jobs::file_job_defaults,
            file_jobs::file_jobs,
            file_jobs::file_jobs_add,
            file_jobs::file_jobs_pick,
            file_jobs::file_job_cancel,
            file_jobs::file_job_remove,
            file_jobs::file_job_copy,
            file_jobs::file_job_save,
        ])
        .setup(move |app| {
            if let Err(e) = tray::create(app.handle()) {
                // No tray host (no StatusNotifier/AppIndicator on this desktop): say so and
                // keep running; windows still open with --show or a second launch.
                tracing::warn!("cannot create the tray icon: {e}; open windows with `dictum-tray --show settings`");
            }
            let state = app.state::<AppState>();
            // Retention runs now and daily while the tray runs, whether dictation is on or not.
            state.restart_retention();
            controller::quit_on_signals(app.handle());
            controller::attach(app.handle(), &state);
            if welcome::needed(&state) {
                // First run (no usable speech model): the setup window, whatever was asked.
                windows::show(app.handle(), "welcome");
            } else if !initial_files.is_empty() {
                file_jobs::queue_and_show(app.handle(), initial_files.clone());
            } else if let Some(view) = &initial {
                windows::show(app.handle(), view);
            }
            println!("dictum-tray: ready (config {})", state.config_path.display());
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(a) => a,
        Err(e) => {
            eprintln!("dictum-tray: cannot start: {e}");
            std::process::exit(1);
        }
    };
    app.run(|_app, event| {
        // Closing the last window keeps the app in the tray; only Quit exits.
        if let RunEvent::ExitRequested { api, code, .. } = event {
            if code.is_none() {
                api.prevent_exit();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn show_argument() {
        let a = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            super::show_arg(&a(&["x", "--show", "history"])).as_deref(),
            Some("history")
        );
        assert_eq!(
            super::show_arg(&a(&["x", "--show=stats"])).as_deref(),
            Some("stats")
        );
        assert_eq!(super::show_arg(&a(&["x", "--hidden"])), None);
    }
}
