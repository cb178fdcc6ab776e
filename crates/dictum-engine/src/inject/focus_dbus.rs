//! The focused application on KDE Plasma and GNOME, which do not tell other programs through
//! a compositor socket as sway and Hyprland do (`focus.rs`). Used to pick a per-app profile and
//! for the history row, not to route keys (the native paths reach every window there).
//!
//! - **KDE (KWin 5.27 and 6):** KWin runs scripts loaded over D-Bus, and a script may call
//!   D-Bus methods. Dictum serves one method on its own connection, loads a three-line script
//!   that calls it with the active window's class, instance and caption, runs it, and unloads
//!   it (what kdotool does).
//! - **GNOME:** only a Shell extension can see the focused window. Two published ones answer
//!   on D-Bus: "Focused Window D-Bus" (`org.gnome.shell.extensions.FocusedWindow.Get`, a
//!   JSON object) and "Window Calls" (`org.gnome.Shell.Extensions.Windows.List`, a JSON array
//!   with `focus`). Without either, the app is unknown.
//!
//! Each query is bounded by [`TIMEOUT`].

use super::window::WindowInfo;
use crate::portal::Bus;
use serde_json::Value;
use std::time::Duration;

pub const TIMEOUT: Duration = Duration::from_millis(500);

const REPLY_PATH: &str = "/org/dictum/FocusReply";

/// The script KWin runs: it answers on our connection (`@DEST@`). KWin 5 has
/// `activeClient` and byte-array classes, KWin 6 `activeWindow` and strings.
/// The reply object's interface is `org.dictum.FocusReply` (the `#[interface]` below).
const KWIN_SCRIPT: &str = r#"function s(v) {
    if (v === undefined || v === null) return "";
    if (typeof v === "string") return v;
    try { return String.fromCharCode.apply(null, new Uint8Array(v)); } catch (e) { return String(v); }
}
const w = workspace.activeWindow || workspace.activeClient;
callDBus("@DEST@", "/org/dictum/FocusReply", "org.dictum.FocusReply", "Focused",
    w ? s(w.resourceClass) : "", w ? s(w.resourceName) : "", w ? s(w.caption) : "");
"#;

async fn connect(bus: &Bus) -> Result<zbus::Connection, String> {
    let builder = match bus {
        Bus::Session => zbus::connection::Builder::session(),
        Bus::Address(a) => zbus::connection::Builder::address(a.as_str()),
    }
    .map_err(|e| format!("no session bus: {e}"))?;
    builder
        .build()
        .await
        .map_err(|e| format!("no session bus: {e}"))
}

struct Reply(tokio::sync::mpsc::UnboundedSender<(String, String, String)>);

#[zbus::interface(name = "org.dictum.FocusReply")]
impl Reply {
    async fn focused(&self, class: String, instance: String, caption: String) {
        let _ = self.0.send((class, instance, caption));
    }
}

fn info(class: &str, instance: &str, title: &str) -> WindowInfo {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    WindowInfo {
        id: None,
        instance: some(instance),
        class: some(class),
        title: some(title),
    }
}

/// The active window as KWin sees it.
pub fn kde_focused(bus: &Bus) -> Result<WindowInfo, String> {
    crate::portal::rt::run_result(TIMEOUT, "KWin's active window", kde_query(bus.clone()))
}

async fn kde_query(bus: Bus) -> Result<WindowInfo, String> {
    let conn = connect(&bus).await?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    conn.object_server()
        .at(REPLY_PATH, Reply(tx))
        .await
        .map_err(|e| format!("cannot serve the reply: {e}"))?;
    let dest = conn
        .unique_name()
        .map(|n| n.to_string())
        .ok_or("no unique name on the bus")?;
    let name = format!("dictum-focus-{}", dest.replace([':', '.'], "_"));
    let file = std::env::temp_dir().join(format!("{name}.js"));
    std::fs::write(&file, KWIN_SCRIPT.replace("@DEST@", &dest))
        .map_err(|e| format!("cannot write the KWin script: {e}"))?;
    let result = async {
        let reply = conn
            .call_method(
                Some("org.kde.KWin"),
                "/Scripting",
                Some("org.kde.kwin.Scripting"),
                "loadScript",
                &(file.display().to_string(), name.as_str()),
            )
            .await
            .map_err(|e| format!("KWin did not load the script: {e}"))?;
        let id: i32 = reply
            .body()
            .deserialize()
            .map_err(|e| format!("KWin's loadScript answer: {e}"))?;
        if id < 0 {
            return Err("KWin refused the script".to_string());
        }
        // KWin 6 and late 5.x: /Scripting/Script<id>; earlier 5.x: /<id>.
        let mut ran = Err(String::new());
        for path in [format!("/Scripting/Script{id}"), format!("/{id}")] {
            ran = conn
                .call_method(
                    Some("org.kde.KWin"),
                    path.as_str(),
                    Some("org.kde.kwin.Script"),
                    "run",
                    &(),
                )
                .await
                .map(drop)
                .map_err(|e| format!("KWin did not run the script: {e}"));
            if ran.is_ok() {
                break;
            }
        }
        ran?;
        rx.recv()
            .await
            .ok_or_else(|| "KWin's script did not answer".to_string())
    }
    .await;
    let _ = conn
        .call_method(
            Some("org.kde.KWin"),
            "/Scripting",
            Some("org.kde.kwin.Scripting"),
            "unloadScript",
            &(name.as_str()),
        )
        .await;
    let _ = std::fs::remove_file(&file);
    let (class, instance, caption) = result?;
    Ok(info(&class, &instance, &caption))
}

/// The focused window as a GNOME Shell extension tells it.
pub fn gnome_focused(bus: &Bus) -> Result<WindowInfo, String> {
    crate::portal::rt::run_result(TIMEOUT, "the focused window", gnome_query(bus.clone()))
}

async fn gnome_query(bus: Bus) -> Result<WindowInfo, String> {
    let conn = connect(&bus).await?;
    let call = |path: &'static str, iface: &'static str, method: &'static str| {
        let conn = conn.clone();
        async move {
            let reply = conn
                .call_method(Some("org.gnome.Shell"), path, Some(iface), method, &())
                .await
                .map_err(|e| e.to_string())?;
            let json: String = reply.body().deserialize().map_err(|e| e.to_string())?;
            serde_json::from_str::<Value>(&json).map_err(|e| e.to_string())
        }
    };
    let focused = call(
        "/org/gnome/shell/extensions/FocusedWindow",
        "org.gnome.shell.extensions.FocusedWindow",
        "Get",
    )
    .await;
    if let Ok(w) = focused {
        return Ok(gnome_window(&w));
    }
    let list = call(
        "/org/gnome/Shell/Extensions/Windows",
        "org.gnome.Shell.Extensions.Windows",
        "List",
    )
    .await
    .map_err(|e| {
        format!(
            "no GNOME Shell extension tells the focused window (install \"Focused Window D-Bus\" \
             or \"Window Calls\" for per-app profiles): {e}"
        )
    })?;
    Ok(list
        .as_array()
        .and_then(|a| a.iter().find(|w| w["focus"] == true))
        .map(gnome_window)
        .unwrap_or_default())
}

fn gnome_window(w: &Value) -> WindowInfo {
    let s = |k: &str| w[k].as_str().unwrap_or_default().to_string();
    info(&s("wm_class"), &s("wm_class_instance"), &s("title"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_extensions_json() {
        let w = gnome_window(&serde_json::json!({
            "title": "Inbox — Mail", "wm_class": "org.gnome.Evolution",
            "wm_class_instance": "evolution", "focus": true
        }));
        assert_eq!(w.class.as_deref(), Some("org.gnome.Evolution"));
        assert_eq!(w.instance.as_deref(), Some("evolution"));
        assert_eq!(w.title.as_deref(), Some("Inbox — Mail"));
        assert_eq!(gnome_window(&serde_json::json!({})), WindowInfo::default());
    }
}
