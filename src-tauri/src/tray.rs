//! The tray icon (one image per state) and its menu.

use dictum_engine::ipc::{DictationState, TrayStatus};
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};

const TRAY_ID: &str = "dictum";

fn icon(state: DictationState) -> tauri::Result<Image<'static>> {
    let bytes: &'static [u8] = match state {
        DictationState::Idle => include_bytes!("../icons/idle.png"),
        DictationState::Recording => include_bytes!("../icons/recording.png"),
        DictationState::Processing => include_bytes!("../icons/processing.png"),
        DictationState::Listening => include_bytes!("../icons/listening.png"),
        // Waiting for a slow microphone: not recording yet (the recording icon would say
        // "speak"), so the busy icon; the tooltip says what it waits for.
        DictationState::Opening => include_bytes!("../icons/processing.png"),
        DictationState::Error => include_bytes!("../icons/error.png"),
    };
    Image::from_bytes(bytes)
}

pub struct TrayItems {
    /// The first line, disabled: "Ready: …", "Starting…", "Dictation off: why (retrying in …)".
    pub status: MenuItem<Wry>,
    pub toggle: MenuItem<Wry>,
    /// "Start hands-free" / "Stop hands-free", whatever the mode.
    pub hands_free: MenuItem<Wry>,
    pub pause: CheckMenuItem<Wry>,
    /// "Copy last: …": the last dictation stays retrievable when typing could not be
    /// confirmed (Wayland) or failed.
    pub last: MenuItem<Wry>,
    /// "Style ▸": no style, then each style in force; the one of `[dictation] style` checked.
    pub styles: Submenu<Wry>,
}

/// The prefix of the Style menu's item ids ("style:" + the name; "style:" alone: none).
const STYLE_ID: &str = "style:";

/// Fills the Style menu from `config`: "No style", then each style in force, the current
/// one checked. Called at start and after each config change.
pub fn fill_styles(app: &AppHandle, config: &dictum_engine::config::Config) {
    let Some(items) = app.try_state::<TrayItems>() else {
        return;
    };
    let filled = (|| -> tauri::Result<()> {
        for item in items.styles.items()? {
            items.styles.remove(&item)?;
        }
        let current = config.dictation.style.trim();
        let none = CheckMenuItem::with_id(
            app,
            STYLE_ID,
            "No style",
            true,
            current.is_empty(),
            None::<&str>,
        )?;
        items.styles.append(&none)?;
        for s in dictum_engine::config::style::in_force(&config.styles) {
            let checked = s.name.eq_ignore_ascii_case(current);
            let item = CheckMenuItem::with_id(
                app,
                format!("{STYLE_ID}{}", s.name),
                &s.name,
                true,
                checked,
                None::<&str>,
            )?;
            items.styles.append(&item)?;
        }
        Ok(())
    })();
    if let Err(e) = filled {
        tracing::warn!("the tray's Style menu could not be filled: {e}");
    }
}

/// The Style menu's choice: saved as `[dictation] style` and applied at once.
fn choose_style(app: &AppHandle, state: &crate::state::AppState, name: &str) {
    let mut config = state.config();
    if config.dictation.style == name {
        return;
    }
    config.dictation.style = name.to_string();
    match crate::commands::save(app, state, config) {
        Ok(_) => eprintln!(
            "dictum-tray: style for every dictation: {}",
            if name.is_empty() { "none" } else { name }
        ),
        Err(e) => tracing::warn!("style not saved: {e}"),
    }
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
    copy_text(app, &text)
}

/// Puts `text` on the clipboard, served by the tray's own injector (kept for that).
pub fn copy_text(app: &AppHandle, text: &str) -> Result<(), String> {
    let mut copier = COPIER.lock().unwrap_or_else(|p| p.into_inner());
    if copier.is_none() {
        let config = app.state::<crate::state::AppState>().config();
        *copier =
            Some(dictum_engine::inject::Injector::new(&config.inject).map_err(|e| e.to_string())?);
    }
    match copier.as_mut() {
        Some(injector) => injector.copy(text),
        None => Err("no clipboard".into()),
    }
}

pub fn create(app: &AppHandle) -> tauri::Result<()> {
    let status = MenuItem::with_id(app, "status", "Starting…", false, None::<&str>)?;
    let toggle = MenuItem::with_id(app, "toggle", "Start dictation", true, None::<&str>)?;
    let hands_free = MenuItem::with_id(app, "hands_free", "Start hands-free", true, None::<&str>)?;
    let pause = CheckMenuItem::with_id(app, "pause", "Pause hotkey", true, false, None::<&str>)?;
    let last = MenuItem::with_id(
        app,
        "last",
        "Copy last: (no dictation yet)",
        false,
        None::<&str>,
    )?;
    let styles = Submenu::with_id(app, "styles", "Style", true)?;
    let settings = MenuItem::with_id(app, "settings", "Settings…", true, None::<&str>)?;
    let history = MenuItem::with_id(app, "history", "History…", true, None::<&str>)?;
    let stats = MenuItem::with_id(app, "stats", "Stats…", true, None::<&str>)?;
    let transcribe =
        MenuItem::with_id(app, "transcribe", "Transcribe a file…", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Dictum", true, None::<&str>)?;
    // The about line: version and build features (as `dictum --version` and the first-run window).
    let about = MenuItem::with_id(
        app,
        "about",
        format!(
            "Dictum {} ({})",
            env!("CARGO_PKG_VERSION"),
            dictum_engine::BUILD_FEATURES
        ),
        false,
        None::<&str>,
    )?;
    let menu = Menu::with_items(
        app,
        &[
            &status,
            &toggle,
            &hands_free,
            &pause,
            &last,
            &styles,
            &PredefinedMenuItem::separator(app)?,
            &settings,
            &history,
            &stats,
            &transcribe,
            &PredefinedMenuItem::separator(app)?,
            &about,
            &quit,
        ],
    )?;
    app.manage(TrayItems {
        status: status.clone(),
        toggle: toggle.clone(),
        hands_free: hands_free.clone(),
        pause: pause.clone(),
        last: last.clone(),
        styles: styles.clone(),
    });
    if let Some(state) = app.try_state::<crate::state::AppState>() {
        fill_styles(app, &state.config());
    }
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
                "hands_free" => {
                    if let Err(e) = crate::controller::hands_free(app, &state) {
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
                "transcribe" => crate::file_jobs::from_menu(app),
                id if id.starts_with(STYLE_ID) => choose_style(app, &state, &id[STYLE_ID.len()..]),
                // Returns at once: the dictation is ended off the GUI thread, within a deadline.
                "quit" => crate::controller::quit(app, "menu Quit"),
                _ => {}
            }
        })
        .build(app)?;
    Ok(())
}

/// Takes the icon off the tray (quit: the app is gone for the user before its process is).
pub fn hide(app: &AppHandle) {
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_visible(false);
    }
}

/// What the tray says for a status.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Texts {
    pub tooltip: String,
    /// The menu's first line.
    pub status_line: String,
    pub toggle: &'static str,
    pub hands_free: &'static str,
}

/// The longest menu status line; the tooltip has the whole message.
const STATUS_LINE_MAX: usize = 90;

fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let short: String = text.chars().take(max - 1).collect();
    format!("{}…", short.trim_end())
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub(crate) fn texts(status: &TrayStatus) -> Texts {
    let message = status.message.as_deref().unwrap_or("").trim();
    if status.state == DictationState::Error {
        let why = if message.is_empty() {
            "dictation is not running"
        } else {
            message
        };
        return Texts {
            tooltip: format!("Dictum — not running: {why}"),
            status_line: shorten(&format!("Dictation off: {why}"), STATUS_LINE_MAX),
            toggle: "Start dictation now",
            hands_free: "Start hands-free",
        };
    }
    if !status.controller {
        // Starting (or quitting): nothing to start or stop yet.
        let what = if message.is_empty() {
            "starting"
        } else {
            message
        };
        return Texts {
            tooltip: format!("Dictum — {what}"),
            status_line: shorten(&capitalized(what), STATUS_LINE_MAX),
            toggle: "Start dictation",
            hands_free: "Start hands-free",
        };
    }
    let label = match status.state {
        DictationState::Idle if status.hotkey_paused => "idle, hotkey paused",
        DictationState::Idle => "idle",
        DictationState::Recording => "recording",
        DictationState::Processing => "transcribing",
        DictationState::Listening => "listening",
        DictationState::Opening => "waiting for the microphone",
        DictationState::Error => "error",
    };
    let hands_free = if status.hands_free {
        " (hands-free)"
    } else {
        ""
    };
    // "open: dictating" → ", microphone open" (issue 42: the privacy indicator's question).
    let microphone = status
        .microphone
        .as_deref()
        .and_then(|m| m.split(':').next())
        .map(|open| format!(", microphone {open}"))
        .unwrap_or_default();
    let style = status
        .style
        .as_deref()
        .map(|s| format!(", style {s}"))
        .unwrap_or_default();
    Texts {
        tooltip: format!("Dictum — {label}{hands_free}{microphone}{style}"),
        status_line: if message.is_empty() {
            "Dictation ready".into()
        } else {
            shorten(&capitalized(message), STATUS_LINE_MAX)
        },
        toggle: match status.state {
            DictationState::Recording => "Stop dictation",
            _ => "Start dictation",
        },
        hands_free: if status.hands_free {
            "Stop hands-free"
        } else {
            "Start hands-free"
        },
    }
}

/// The last tooltip, so each change is logged once.
static LAST_TOOLTIP: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Icon, tooltip and menu labels for `status`. Each new tooltip is also logged
/// (`dictum-tray: status: …`): what the tray shows, readable without a tray host.
pub fn show_status(app: &AppHandle, status: &TrayStatus) {
    let texts = texts(status);
    {
        let mut last = LAST_TOOLTIP.lock().unwrap_or_else(|p| p.into_inner());
        if *last != texts.tooltip {
            eprintln!("dictum-tray: status: {}", texts.tooltip);
            last.clone_from(&texts.tooltip);
        }
    }
    if let Some(items) = app.try_state::<TrayItems>() {
        let _ = items.status.set_text(&texts.status_line);
        let _ = items.toggle.set_text(texts.toggle);
        let _ = items.hands_free.set_text(texts.hands_free);
        let _ = items.pause.set_checked(status.hotkey_paused);
    }
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    if let Ok(img) = icon(status.state) {
        let _ = tray.set_icon(Some(img));
    }
    let _ = tray.set_tooltip(Some(texts.tooltip));
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

    fn status(state: DictationState, controller: bool, message: Option<&str>) -> TrayStatus {
        TrayStatus {
            state,
            hotkey_paused: false,
            hands_free: false,
            message: message.map(str::to_string),
            controller,
            microphone: None,
            style: None,
        }
    }

    #[test]
    fn the_tooltip_says_whether_the_microphone_is_open() {
        let mut s = status(DictationState::Idle, true, None);
        assert_eq!(texts(&s).tooltip, "Dictum — idle");
        s.microphone = Some("closed: nothing is being dictated".into());
        assert_eq!(texts(&s).tooltip, "Dictum — idle, microphone closed");
        s.state = DictationState::Recording;
        s.microphone = Some("open: dictating".into());
        assert_eq!(texts(&s).tooltip, "Dictum — recording, microphone open");
        s.style = Some("chat".into());
        assert_eq!(
            texts(&s).tooltip,
            "Dictum — recording, microphone open, style chat"
        );
    }

    #[test]
    fn a_failed_start_says_why_and_offers_to_start_now() {
        let why = "dictation could not start: cannot open input device default: no usable input configuration (retrying in 4 s; or choose Start dictation now)";
        let t = texts(&status(DictationState::Error, false, Some(why)));
        assert_eq!(t.tooltip, format!("Dictum — not running: {why}"));
        assert!(t
            .status_line
            .starts_with("Dictation off: dictation could not start: cannot open input device"));
        assert!(t.status_line.ends_with('…'), "{}", t.status_line);
        assert_eq!(t.status_line.chars().count(), STATUS_LINE_MAX);
        assert_eq!(t.toggle, "Start dictation now");
    }

    #[test]
    fn starting_is_not_shown_as_ready() {
        let t = texts(&status(
            DictationState::Idle,
            false,
            Some("starting: loading and warming up the speech model"),
        ));
        assert_eq!(
            t.tooltip,
            "Dictum — starting: loading and warming up the speech model"
        );
        assert_eq!(
            t.status_line,
            "Starting: loading and warming up the speech model"
        );
        let t = texts(&status(DictationState::Idle, false, None));
        assert_eq!(t.tooltip, "Dictum — starting");
    }

    #[test]
    fn running_states() {
        let ready = "ready: ctrl+alt+space (push-to-talk, x11 grab) on CPU; typing: xtest";
        let t = texts(&status(DictationState::Idle, true, Some(ready)));
        assert_eq!(t.tooltip, "Dictum — idle");
        assert_eq!(
            t.status_line,
            "Ready: ctrl+alt+space (push-to-talk, x11 grab) on CPU; typing: xtest"
        );
        assert_eq!(t.toggle, "Start dictation");
        let t = texts(&status(DictationState::Recording, true, Some(ready)));
        assert_eq!(
            (t.tooltip.as_str(), t.toggle),
            ("Dictum — recording", "Stop dictation")
        );
        let mut paused = status(DictationState::Idle, true, None);
        paused.hotkey_paused = true;
        let t = texts(&paused);
        assert_eq!(t.tooltip, "Dictum — idle, hotkey paused");
        assert_eq!(t.status_line, "Dictation ready");
        assert_eq!(t.hands_free, "Start hands-free");
    }

    #[test]
    fn hands_free_shows_listening_vs_processing_and_offers_to_stop() {
        let mut s = status(DictationState::Listening, true, None);
        s.hands_free = true;
        let t = texts(&s);
        assert_eq!(t.tooltip, "Dictum — listening (hands-free)");
        assert_eq!(t.hands_free, "Stop hands-free");
        s.state = DictationState::Processing;
        assert_eq!(texts(&s).tooltip, "Dictum — transcribing (hands-free)");
        s.state = DictationState::Recording;
        assert_eq!(texts(&s).tooltip, "Dictum — recording (hands-free)");
    }

    #[test]
    fn each_state_has_its_own_recognisable_icon() {
        use DictationState::*;
        for s in [Idle, Recording, Processing, Listening, Error] {
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
        // Listening (hands-free): green.
        let [r, g, b] = look(Listening).3;
        assert!(
            g > 1.5 * r && g > 1.5 * b && g > 120.0,
            "listening {r} {g} {b}"
        );
        // Error: the idle microphone with a red mark on it.
        assert!(red_pixels(Error) > 50, "error has no red mark");
        assert_ne!(look(Error).2, look(Idle).2);
    }
}
