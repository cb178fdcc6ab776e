//! The settings panel's speech-server commands (issue 15): check a server with the built-in
//! clip (round trip, text, model list), and keep its API key in the desktop keyring. The key
//! goes from the form straight to the keyring; it is never returned, logged or saved in the
//! config.

use dictum_engine::config::SttConfig;
use dictum_engine::stt::remote::{self, ServerCheck};

type Res<T> = Result<T, String>;

/// Sends the built-in clip to the server the form names (blocking work off the async runtime).
#[tauri::command]
pub async fn stt_server_check(stt: SttConfig) -> Res<ServerCheck> {
    tauri::async_runtime::spawn_blocking(move || remote::check_server(&stt))
        .await
        .map_err(|e| format!("the server check crashed: {e}"))
}

/// Stores the speech server's key in the keyring (`service=dictum username=stt`).
#[tauri::command]
pub async fn stt_key_set(secret: String) -> Res<()> {
    tauri::async_runtime::spawn_blocking(move || {
        dictum_engine::secrets::keyring_set("stt", &secret)
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
