//! The history window's Retry button: a dictation whose text was not delivered (queue full,
//! failed transcription or typing, a killed Dictum) is transcribed again from its kept audio
//! with the configured model and backend (`dictum_engine::dictation::retry`, the same code as
//! `dictum history --retry`), stored, and typed into the window that had the focus before
//! Dictum's (the calling window is hidden first, as for Re-inject).

use crate::state::AppState;
use dictum_engine::dictation::retry;
use dictum_engine::pipeline::Engine;
use tauri::State;

type Res<T> = Result<T, String>;

#[tauri::command]
pub async fn history_retry(
    app: tauri::AppHandle,
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
    let typed = crate::commands::type_behind(&window, id).await?;
    match typed {
        // The dictation recorded how it went on the row.
        Some(done) => done.map(|_| text),
        None => {
            let copied = crate::tray::copy_text(&app, &text);
            let report = dictum_engine::dictation::SinkReport {
                method: if copied.is_ok() { "clipboard" } else { "none" }.into(),
                error: copied.clone().err(),
                ..Default::default()
            };
            state.with_history(|h| {
                retry::delivered(h, &mut entry, &report, keep_audio_dir.as_deref()).map_err(|e| {
                    dictum_engine::Error::Store {
                        path: h.path().to_path_buf(),
                        reason: e,
                    }
                })
            })?;
            copied?;
            Err(
                "dictation is not running, so nothing was typed: the text is stored in \
                 history and on the clipboard"
                    .into(),
            )
        }
    }
}
