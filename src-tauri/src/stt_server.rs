//! The settings panel's speech-server commands (issue 15): check a server with the built-in
//! clip (round trip, text, model list), and keep its API key in the desktop keyring. The key
//! goes from the form straight to the keyring; it is never returned, logged or saved in the
//! config, and a check sends it only to the saved server.

use crate::state::AppState;
use dictum_engine::config::SttConfig;
use dictum_engine::stt::remote::{self, ServerCheck};
use tauri::State;

type Res<T> = Result<T, String>;

/// Sends the built-in clip to the server the form names (blocking work off the async runtime).
/// The key source is the saved settings' (never the form's), and the key goes only to the
/// saved server, over https or to this machine (`net::key_allowed`); any other URL is tested
/// without it, and the result says so.
#[tauri::command]
pub async fn stt_server_check(state: State<'_, AppState>, mut stt: SttConfig) -> Res<ServerCheck> {
    let saved = crate::commands::saved_config(&state).stt;
    stt.api_key_env = saved.api_key_env.clone();
    tauri::async_runtime::spawn_blocking(move || remote::check_server_with(&stt, &saved))
        .await
        .map_err(|e| format!("the server check crashed: {e}"))
}

/// Stores the speech server's key in the keyring (`service=dictum username=stt`), bound to
/// the origin of the speech server URL saved in the config file (never the page's): a URL
/// changed later does not carry the key along; the user enters it again.
#[tauri::command]
pub async fn stt_key_set(state: State<'_, AppState>, secret: String) -> Res<()> {
    let url = crate::commands::saved_config(&state).stt.url;
    tauri::async_runtime::spawn_blocking(move || {
        dictum_engine::secrets::keyring_set_for("stt", &secret, &url)
    })
    .await
    .map_err(|e| format!("the keyring call crashed: {e}"))?
}

/// Removes it; Ok(false) when there was none.
#[tauri::command]
pub async fn stt_key_clear() -> Res<bool> {
    tauri::async_runtime::spawn_blocking(|| dictum_engine::secrets::keyring_delete("stt"))
        .await
        .map_err(|e| format!("the keyring call crashed: {e}"))?
}

/// Whether the keyring holds a key (never the key).
#[tauri::command]
pub async fn stt_key_status() -> Res<bool> {
    tauri::async_runtime::spawn_blocking(|| {
        dictum_engine::secrets::keyring_get("stt").map(|k| k.is_some())
    })
    .await
    .map_err(|e| format!("the keyring call crashed: {e}"))?
}
