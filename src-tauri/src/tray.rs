//! The tray icon (one image per state) and its menu.

use dictum_engine::ipc::{DictationState, TrayStatus};
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};

const TRAY_ID: &str = "dictum";

fn icon(state: DictationState) -> tauri::Result<Image<'static>> {
    let bytes: &'static [u8] = match state {
        DictationState::Idle => include_bytes!("../icons/idle.png"),
        DictationState::Recording => include_bytes!("../icons/recording.png"),
        DictationState::Processing => include_bytes!("../icons/processing.png"),
        DictationState::Error => include_bytes!("../icons/error.png"),
    };
    Image::from_bytes(bytes)
}

pub struct TrayItems {
    pub toggle: MenuItem<Wry>,
    pub pause: CheckMenuItem<Wry>,
    /// "Copy last: …": the last dictation stays retrievable when typing could not be
    /// confirmed (Wayland) or failed.
    pub last: MenuItem<Wry>,
}

/// The last dictation's text, for the "Copy last" item.
static LAST_TEXT: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
/// The injector that serves copied text (on X11 the clipboard lives as long as its owner).
static COPIER: std::sync::Mutex<Option<dictum_engine::inject::Injector>> =
    std::sync::Mutex::new(None);

/// Shows `text` (the last dictation) in the menu's "Copy last" item.
pub fn set_last(app: &AppHandle, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    *LAST_TEXT.lock().unwrap_or_else(|p| p.into_inner()) = Some(text.to_string());
    if let Some(items) = app.try_state::<TrayItems>() {
        let _ = items.last.set_text(last_label(text));
        let _ = items.last.set_enabled(true);
    }
}

/// "Copy last: “Send the report…”" (at most 40 characters of the text).
fn last_label(text: &str) -> String {
    let text = text.trim();
    let short: String = text.chars().take(40).collect();
    let ellipsis = if text.chars().count() > 40 { "…" } else { "" };
    format!("Copy last: “{short}{ellipsis}”")
}

fn copy_last(app: &AppHandle) -> Result<(), String> {
    let text = LAST_TEXT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .ok_or("no dictation yet")?;
    let mut copier = COPIER.lock().unwrap_or_else(|p| p.into_inner());
    if copier.is_none() {
        let config = app.state::<crate::state::AppState>().config();
        *copier =
            Some(dictum_engine::inject::Injector::new(&config.inject).map_err(|e| e.to_string())?);
    }
    match copier.as_mut() {
        Some(injector) => injector.copy(&text),
        None => Err("no clipboard".into()),
    }
}

pub fn create(app: &AppHandle) -> tauri::Result<()> {
    let toggle = MenuItem::with_id(app, "toggle", "Start dictation", true, None::<&str>)?;
    let pause = CheckMenuItem::with_id(app, "pause", "Pause hotkey", true, false, None::<&str>)?;
    let last = MenuItem::with_id(
        app,
        "last",
        "Copy last: (no dictation yet)",
        false,
        None::<&str>,
    )?;
    let settings = MenuItem::with_id(app, "settings", "Settings…", true, None::<&str>)?;
    let history = MenuItem::with_id(app, "history", "History…", true, None::<&str>)?;
    let stats = MenuItem::with_id(app, "stats", "Stats…", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Dictum", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &toggle,
            &pause,
            &last,
            &PredefinedMenuItem::separator(app)?,
            &settings,
            &history,
            &stats,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    app.manage(TrayItems {
        toggle: toggle.clone(),
        pause: pause.clone(),
        last: last.clone(),
    });
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(icon(DictationState::Idle)?)
        .tooltip("Dictum — idle")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| {
            let state = app.state::<crate::state::AppState>();
            match event.id().as_ref() {
                "toggle" => {
                    if let Err(e) = crate::controller::toggle(app, &state) {
                        tracing::warn!("{e}");
                    }
                }
                "pause" => {
                    let paused = app
                        .try_state::<TrayItems>()
                        .and_then(|t| t.pause.is_checked().ok())
                        .unwrap_or(false);
                    let _ = crate::controller::set_paused(app, &state, paused);
                }
                "last" => {
                    if let Err(e) = copy_last(app) {
                        tracing::warn!("copy last dictation: {e}");
                    }
                }
                "settings" | "history" | "stats" => crate::windows::show(app, event.id().as_ref()),
                "quit" => {
                    crate::controller::detach();
                    app.exit(0)
                }
                _ => {}
            }
        })
        .build(app)?;
    Ok(())
}

/// Icon, tooltip and menu labels for `status`.
pub fn show_status(app: &AppHandle, status: &TrayStatus) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    let label = match status.state {
        DictationState::Idle if status.hotkey_paused => "idle, hotkey paused",
        DictationState::Idle => "idle",
        DictationState::Recording => "recording",
        DictationState::Processing => "transcribing",
        DictationState::Error => "error",
    };
    if let Ok(img) = icon(status.state) {
        let _ = tray.set_icon(Some(img));
    }
    let tip = match &status.message {
        Some(m) if status.state == DictationState::Error => format!("Dictum — {label}: {m}"),
        _ => format!("Dictum — {label}"),
    };
    let _ = tray.set_tooltip(Some(tip));
    if let Some(items) = app.try_state::<TrayItems>() {
        let _ = items.toggle.set_text(match status.state {
            DictationState::Recording => "Stop dictation",
            _ => "Start dictation",
        });
        let _ = items.pause.set_checked(status.hotkey_paused);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Size, opaque pixel count and mean colour of the opaque pixels of a state's icon.
    fn look(state: DictationState) -> (u32, u32, usize, [f64; 3]) {
        let img = icon(state).expect("icon decodes");
        let (w, h) = (img.width(), img.height());
        let opaque: Vec<&[u8]> = img.rgba().chunks_exact(4).filter(|p| p[3] > 128).collect();
        let n = opaque.len().max(1) as f64;
        let mean = [0, 1, 2].map(|c| opaque.iter().map(|p| f64::from(p[c])).sum::<f64>() / n);
        (w, h, opaque.len(), mean)
    }

    fn red_pixels(state: DictationState) -> usize {
        let img = icon(state).expect("icon decodes");
        img.rgba()
            .chunks_exact(4)
            .filter(|p| p[3] > 128 && p[0] > 180 && p[1] < 90 && p[2] < 90)
            .count()
    }

    #[test]
    fn each_state_has_its_own_recognisable_icon() {
        use DictationState::*;
        for s in [Idle, Recording, Processing, Error] {
            let (w, h, opaque, _) = look(s);
            assert_eq!((w, h), (64, 64), "{s:?}");
            assert!(opaque > 500, "{s:?}: {opaque} opaque pixels");
        }
        // Idle: a neutral grey-blue, no red.
        let [r, g, b] = look(Idle).3;
        assert!(r.max(g).max(b) - r.min(g).min(b) < 40.0, "idle {r} {g} {b}");
        assert_eq!(red_pixels(Idle), 0);
        // Recording: red.
        let [r, g, b] = look(Recording).3;
        assert!(
            r > 2.0 * g && r > 2.0 * b && r > 180.0,
            "recording {r} {g} {b}"
        );
        // Processing: amber.
        let [r, g, b] = look(Processing).3;
        assert!(
            r > 180.0 && (80.0..160.0).contains(&g) && b < 50.0,
            "processing {r} {g} {b}"
        );
        // Error: the idle microphone with a red mark on it.
        assert!(red_pixels(Error) > 50, "error has no red mark");
        assert_ne!(look(Error).2, look(Idle).2);
    }
}
