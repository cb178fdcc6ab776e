//! The UI's windows: one per view (settings, history, stats, transcribe) plus the recording indicator,
//! created on first use and re-shown after that.

use std::sync::atomic::{AtomicBool, Ordering};
use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindowBuilder};

/// Set when the indicator could only be an ordinary Wayland window (no layer shell: GNOME's
/// mutter). mutter gives such a window the keyboard when it appears, whatever it asks for
/// (`crates/dictum-cli/tests/tray_indicator_wayland.rs` shows keys stop reaching the focused
/// text box on mutter 43), and the words Dictum types would then go into the indicator: it is
/// never shown there, and the app log says so and how to have it (XWayland).
static SUPPRESSED: AtomicBool = AtomicBool::new(false);

/// Whether the last published status was recording. The indicator follows the changes of
/// that, not every status: a status that only says the microphone closed (or the hands-free
/// flag) leaves an indicator shown by `--show indicator` where it is.
static RECORDING: AtomicBool = AtomicBool::new(false);

const VIEWS: &[(&str, &str, f64, f64)] = &[
    ("settings", "Dictum — Settings", 920.0, 760.0),
    ("history", "Dictum — History", 1180.0, 760.0),
    ("stats", "Dictum — Stats", 1000.0, 820.0),
    ("transcribe", "Dictum — Transcribe", 960.0, 760.0),
    ("welcome", "Welcome to Dictum", 860.0, 760.0),
];

/// Opens (or focuses) the window of `view`; unknown views open settings.
pub fn show(app: &AppHandle, view: &str) {
    if view == "indicator" {
        indicator(app, true);
        return;
    }
    let (label, title, w, h) = VIEWS
        .iter()
        .copied()
        .find(|(v, ..)| *v == view)
        .unwrap_or(VIEWS[0]);
    if let Some(win) = app.get_webview_window(label) {
        let _ = win.show();
        let _ = win.unminimize();
        let _ = win.set_focus();
        return;
    }
    let mut init = format!("if (!location.hash) location.hash = '#{label}';");
    if std::env::var_os("DICTUM_TRAY_ACL_PROBE").is_some() {
        init.push_str(&acl_probe(label));
    }
    if label == "transcribe" && std::env::var_os("DICTUM_TRAY_DRIVE_TRANSCRIBE").is_some() {
        init.push_str(TRANSCRIBE_DRIVE);
    }
    let built = WebviewWindowBuilder::new(app, label, WebviewUrl::App("index.html".into()))
        .initialization_script(init)
        .title(title)
        .inner_size(w, h)
        .min_inner_size(640.0, 480.0)
        .build();
    if let Err(e) = built {
        tracing::warn!("cannot open the {label} window: {e}");
    }
}

/// Shows the indicator when a recording starts and hides it when it ends; a status with the
/// same recording state as the last one leaves it as it is.
pub fn indicator_follows(app: &AppHandle, recording: bool) {
    if RECORDING.swap(recording, Ordering::Relaxed) != recording {
        indicator(app, recording);
    }
}

/// Shows or hides the small always-on-top recording indicator. It never takes the keyboard
/// focus (`no_focus`): the words typed while it is shown go to the user's window.
pub fn indicator(app: &AppHandle, visible: bool) {
    if SUPPRESSED.load(Ordering::Relaxed) {
        return;
    }
    if let Some(win) = app.get_webview_window("indicator") {
        let _ = if visible { win.show() } else { win.hide() };
        return;
    }
    if !visible {
        return;
    }
    let built = WebviewWindowBuilder::new(app, "indicator", WebviewUrl::App("index.html".into()))
        .initialization_script("if (!location.hash) location.hash = '#indicator';")
        .title("Dictum recording")
        // Room for the words so far (two lines, `Indicator.tsx`).
        .inner_size(420.0, 110.0)
        .decorations(false)
        .always_on_top(true)
        .skip_taskbar(true)
        .resizable(false)
        .focused(false)
        // Never, not only at the first show (`focused(false)` alone gives the window the
        // focus back after its first paint).
        .focusable(false)
        // Shown once `no_focus::prepare` has set the window up: a layer surface must be
        // made one before it is mapped.
        .visible(false)
        .build();
    let win = match built {
        Ok(win) => win,
        Err(e) => {
            tracing::warn!("cannot open the recording indicator: {e}");
            return;
        }
    };
    let for_main = win.clone();
    let ran = win.run_on_main_thread(move || {
        match crate::no_focus::prepare(&for_main) {
            Ok(how) if how == crate::no_focus::WAYLAND_TOPLEVEL => {
                println!("dictum-tray: indicator: {how}");
                println!("dictum-tray: indicator: {}", crate::no_focus::NOT_SHOWN);
                SUPPRESSED.store(true, Ordering::Relaxed);
                return; // built hidden: stays so
            }
            Ok(how) => println!("dictum-tray: indicator: {how}"),
            Err(e) => tracing::warn!("the recording indicator may take the focus: {e}"),
        }
        let _ = for_main.show();
    });
    if let Err(e) = ran {
        tracing::warn!("cannot show the recording indicator: {e}");
    }
}

/// Test hook (`DICTUM_TRAY_ACL_PROBE=1`, used by tests/tray_xvfb.sh): once loaded, the window
/// calls a history command and a settings command and logs whether each was allowed, so the
/// test can check that each window's capability grants its own view's commands and no other.
fn acl_probe(label: &str) -> String {
    format!(
        r#"
window.addEventListener('DOMContentLoaded', function () {{
  var t = window.__TAURI_INTERNALS__;
  var log = function (m) {{ return t.invoke('ui_log', {{ message: 'acl: {label} ' + m }}); }};
  [['history_count', {{ filter: {{}} }}], ['get_config', {{}}]].forEach(function (c) {{
    t.invoke(c[0], c[1]).then(function () {{ return log(c[0] + ' allowed'); }},
      function (e) {{ return log(c[0] + ' refused (' + String(e).slice(0, 80) + ')'); }});
  }});
}});
"#
    )
}

/// Test hook (`DICTUM_TRAY_DRIVE_TRANSCRIBE=1`, used by tests/tray_xvfb.sh, where no hand can
/// click): in the transcribe window, clicks file #1's Cancel once its progress bar has moved,
/// then its Save as SRT, as a person would; the window's own log lines say what it showed.
const TRANSCRIBE_DRIVE: &str = r#"
window.addEventListener('DOMContentLoaded', function () {
  var did = {};
  var timer = setInterval(function () {
    var row = document.querySelector('[data-job="1"]');
    if (!row) return;
    var bar = row.querySelector('[data-testid=progress]');
    var now = bar ? Number(bar.getAttribute('aria-valuenow') || bar.value || 0) : 0;
    var cancel = row.querySelector('[data-testid=cancel]');
    if (!did.cancel && cancel && !cancel.disabled && now > 0) { did.cancel = 1; cancel.click(); return; }
    var save = row.querySelector('[data-testid=save-srt]');
    if (did.cancel && !did.save && save && !save.disabled) { did.save = 1; save.click(); clearInterval(timer); }
  }, 100);
});
"#;
