//! The settings panel's per-app profile picker (issue 16): waits a few seconds (time to click
//! into the window you mean), then reads the focused window through the engine's probe, the
//! one a dictation's key press uses, and returns its class and title.

use dictum_engine::config::Config;
use dictum_engine::profile::FocusedWindow;
use std::time::Duration;

type Res<T> = Result<T, String>;

/// The window focused `seconds` from now (at most 10).
#[tauri::command]
pub async fn focused_window_in(seconds: u32) -> Res<FocusedWindow> {
    let wait = Duration::from_secs(seconds.min(10).into());
    tauri::async_runtime::spawn_blocking(move || {
        std::thread::sleep(wait);
        let config = Config::load().map(|l| l.config).unwrap_or_default();
        dictum_engine::inject::focused_window(&config)
    })
    .await
    .map_err(|e| format!("reading the focused window crashed: {e}"))
}
