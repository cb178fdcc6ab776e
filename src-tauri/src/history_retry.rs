//! The history window's Retry button: a dictation whose text was not delivered (queue full,
//! failed transcription or typing, a killed Dictum) is transcribed again from its kept audio
//! with the configured model and backend (`dictum_engine::dictation::retry`, the same code as
//! `dictum history --retry`), stored, and typed into the window that had the focus before
//! Dictum's (the calling window is hidden first, as for Re-inject).

use crate::state::AppState;
use dictum_engine::dictation::{retry, Sink};
use dictum_engine::pipeline::Engine;
use tauri::State;

type Res<T> = Result<T, String>;

#[tauri::command]
pub async fn history_retry(
    window: tauri::WebviewWindow,
    state: State<'_, AppState>,
    id: i64,
) -> Res<String> {
    let config = state.config();
    let db = state.history_path.clone();
    let engine_config = config.clone();
    // Loading the model and transcribing take seconds: off the IPC thread, with a
    // connection of its own.
    let entry = tauri::async_runtime::spawn_blocking(move || {
        let history = dictum_engine::store::History::open(&db).map_err(|e| e.to_string())?;
        let dirs = dictum_engine::paths::model_dirs().map_err(|e| e.to_string())?;
        let mut engine = Engine::new(engine_config, dirs);
        retry::transcribe(&history, &mut engine, id)
    })
    .await
    .map_err(|e| format!("the retry stopped: {e}"))??;
    let text = entry.text.clone().unwrap_or_default();
    let mut entry = entry;
    let keep_audio_dir = if config.history.keep_audio {
        dictum_engine::paths::audio_dir().ok()
    } else {
        None
    };
    if text.trim().is_empty() {
        state.with_history(|h| {
            retry::delivered(h, &mut entry, &Default::default(), None).map_err(|e| {
                dictum_engine::Error::Store {
                    path: h.path().to_path_buf(),
                    reason: e,
                }
            })
        })?;
        return Err(format!("#{id}: no speech in its audio (nothing to type)"));
    }
    let _ = window.hide();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let over = dictum_engine::inject::gate::over_budget(&config.inject, &text, entry.audio_ms);
    let report = match dictum_engine::inject::Injector::new(&config.inject) {
        // A runaway text is stored, never typed (the character budget of its audio).
        _ if over.is_some() => dictum_engine::dictation::SinkReport {
            method: "none".into(),
            error: over,
            ..Default::default()
        },
        Ok(mut injector) => injector.deliver(&text),
        Err(e) => dictum_engine::dictation::SinkReport {
            method: "none".into(),
            error: Some(e.to_string()),
            ..Default::default()
        },
    };
    let _ = window.show();
    state.with_history(|h| {
        retry::delivered(h, &mut entry, &report, keep_audio_dir.as_deref()).map_err(|e| {
            dictum_engine::Error::Store {
                path: h.path().to_path_buf(),
                reason: e,
            }
        })
    })?;
    match report.error {
        Some(e) => Err(format!(
            "the text is stored in history but was not typed: {e} (it is on the clipboard)"
        )),
        None => Ok(text),
    }
}
