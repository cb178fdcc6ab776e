//! The history window's correction flow (issue 30 item 3): a row's text is corrected, the
//! engine proposes what to learn (`dictum_engine::learn`, the same code as
//! `dictum history --correct`), and the user accepts or rejects each proposal. Nothing is
//! learned without an accept, and an accept can only confirm what the engine proposes for the
//! stored correction (`learn::accept` checks every one again): the history window holds no
//! `save_config` permission, so a hostile page cannot write other settings through here either.

use crate::state::AppState;
use dictum_engine::config::Config;
use dictum_engine::learn::{self, Proposal, Review, Written};
use tauri::{AppHandle, State};

type Res<T> = Result<T, String>;

/// Saves `text` as row `id`'s correction and returns the proposals; the config is untouched.
#[tauri::command]
pub async fn history_correct(state: State<'_, AppState>, id: i64, text: String) -> Res<Review> {
    let config = state.config();
    state.with_history(|h| learn::review(h, id, Some(&text), &config))
}

/// Writes the accepted proposals of row `id`'s correction into the config file, as
/// `dictum history --correct ID --accept` does, and applies the config at once.
#[tauri::command]
pub async fn history_learn(
    app: AppHandle,
    state: State<'_, AppState>,
    id: i64,
    accepted: Vec<Proposal>,
) -> Res<Written> {
    if accepted.len() > 1_000 {
        return Err("too many proposals accepted at once".into());
    }
    let config = state.config();
    let path = state.config_path.clone();
    let written = state.with_history(|h| learn::accept(h, id, &accepted, &config, &path))?;
    if written.vocabulary.is_empty() && written.replacements.is_empty() {
        return Ok(written);
    }
    // What was written is what the dictation uses from now on (the file is re-read, so the
    // running config is exactly the file's).
    let loaded = Config::load_from(&path).map_err(|e| {
        format!("learned, but the config could not be read back ({e}); restart Dictum")
    })?;
    state.set_config(loaded.config);
    crate::controller::config_changed(&app, &state);
    Ok(written)
}
