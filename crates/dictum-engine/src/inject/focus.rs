//! The focused window on Wayland compositors that tell: sway (its IPC socket, `GET_TREE`)
//! and Hyprland (its request socket, `j/activewindow`). Both say whether the window is a
//! native Wayland client or an XWayland one, and give its app id / class and title. GNOME
//! and KDE do not tell other programs; there the focus is [`Focus::Unknown`] and the
//! native paths (which reach XWayland windows too) are used.
//!
//! Each query is bounded (`TIMEOUT`): a hung compositor costs a dictation at most that.

use super::session::{Desktop, Focus, Session};
use super::window::WindowInfo;
use serde_json::Value;
use std::io::{Read, Write};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_millis(300);
/// A tree bigger than this is not a sway tree (a wrong socket): stop reading.
const MAX_REPLY: usize = 32 << 20;

/// The focused window and its kind, as far as the compositor of `session` tells.
pub fn focused(session: &Session) -> (WindowInfo, Focus) {
    let result = match session.desktop {
        Desktop::Sway => sway_focused(),
        Desktop::Hyprland => hyprland_focused(),
        _ => return (WindowInfo::default(), Focus::Unknown),
    };
    match result {
        Ok(found) => found,
        Err(e) => {
            tracing::debug!("focused window unknown: {e}");
            (WindowInfo::default(), Focus::Unknown)
        }
    }
}

#[cfg(unix)]
fn connect(path: &std::ffi::OsStr) -> Result<std::os::unix::net::UnixStream, String> {
    let stream = std::os::unix::net::UnixStream::connect(path)
        .map_err(|e| format!("cannot connect to {}: {e}", path.to_string_lossy()))?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(TIMEOUT)))
        .map_err(|e| e.to_string())?;
    Ok(stream)
}

/// sway's IPC: `i3-ipc` magic, payload length and type (u32, native order), payload.
#[cfg(unix)]
fn sway_focused() -> Result<(WindowInfo, Focus), String> {
    let path = std::env::var_os("SWAYSOCK").ok_or("SWAYSOCK is not set")?;
    sway_focused_at(&path)
}

#[cfg(unix)]
fn sway_focused_at(path: &std::ffi::OsStr) -> Result<(WindowInfo, Focus), String> {
    const GET_TREE: u32 = 4;
    let mut stream = connect(path)?;
    let mut msg = Vec::with_capacity(14);
    msg.extend_from_slice(b"i3-ipc");
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend_from_slice(&GET_TREE.to_ne_bytes());
    stream
        .write_all(&msg)
        .map_err(|e| format!("sway IPC: {e}"))?;
    let mut header = [0u8; 14];
    stream
        .read_exact(&mut header)
        .map_err(|e| format!("sway IPC: {e}"))?;
    if &header[..6] != b"i3-ipc" {
        return Err("sway IPC: not an i3-ipc reply".into());
    }
    let len = u32::from_ne_bytes([header[6], header[7], header[8], header[9]]) as usize;
    if len > MAX_REPLY {
        return Err(format!("sway IPC: reply of {len} bytes refused"));
    }
    let mut body = vec![0u8; len];
    stream
        .read_exact(&mut body)
        .map_err(|e| format!("sway IPC: {e}"))?;
    let tree: Value = serde_json::from_slice(&body).map_err(|e| format!("sway IPC: {e}"))?;
    Ok(sway_focused_in(&tree).unwrap_or((WindowInfo::default(), Focus::Unknown)))
}

/// The focused view in a sway tree (a node with `focused: true` that is a window).
fn sway_focused_in(tree: &Value) -> Option<(WindowInfo, Focus)> {
    let mut stack = vec![tree];
    let mut visited = 0usize;
    while let Some(node) = stack.pop() {
        visited += 1;
        if visited > 100_000 {
            return None;
        }
        let is_view = node.get("pid").is_some() || node.get("app_id").is_some();
        if node.get("focused").and_then(Value::as_bool) == Some(true) && is_view {
            let shell = node.get("shell").and_then(Value::as_str).unwrap_or("");
            let focus = if shell == "xwayland" {
                Focus::XWayland
            } else {
                Focus::Native
            };
            let class = node
                .pointer("/window_properties/class")
                .and_then(Value::as_str)
                .or_else(|| node.get("app_id").and_then(Value::as_str))
                .map(str::to_owned);
            let instance = node
                .pointer("/window_properties/instance")
                .and_then(Value::as_str)
                .or_else(|| node.get("app_id").and_then(Value::as_str))
                .map(str::to_owned);
            let info = WindowInfo {
                id: node
                    .get("window")
                    .and_then(Value::as_u64)
                    .and_then(|w| u32::try_from(w).ok()),
                instance,
                class,
                title: node.get("name").and_then(Value::as_str).map(str::to_owned),
                pid: node
                    .get("pid")
                    .and_then(Value::as_u64)
                    .and_then(|p| u32::try_from(p).ok())
                    .filter(|&p| p > 0),
            };
            return Some((info, focus));
        }
        for key in ["nodes", "floating_nodes"] {
            if let Some(children) = node.get(key).and_then(Value::as_array) {
                stack.extend(children.iter());
            }
        }
    }
    None
}

/// Hyprland's request socket: `$XDG_RUNTIME_DIR/hypr/$SIG/.socket.sock` (older versions:
/// `/tmp/hypr/$SIG/`), request `j/activewindow`.
#[cfg(unix)]
fn hyprland_focused() -> Result<(WindowInfo, Focus), String> {
    let sig = std::env::var_os("HYPRLAND_INSTANCE_SIGNATURE")
        .ok_or("HYPRLAND_INSTANCE_SIGNATURE is not set")?;
    let mut candidates = Vec::new();
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR") {
        candidates.push(
            std::path::PathBuf::from(run)
                .join("hypr")
                .join(&sig)
                .join(".socket.sock"),
        );
    }
    candidates.push(
        std::path::PathBuf::from("/tmp/hypr")
            .join(&sig)
            .join(".socket.sock"),
    );
    let path = candidates
        .into_iter()
        .find(|p| p.exists())
        .ok_or("Hyprland's socket was not found")?;
    let mut stream = connect(path.as_os_str())?;
    stream
        .write_all(b"j/activewindow")
        .map_err(|e| format!("Hyprland IPC: {e}"))?;
    let mut body = Vec::new();
    stream
        .take(MAX_REPLY as u64)
        .read_to_end(&mut body)
        .map_err(|e| format!("Hyprland IPC: {e}"))?;
    let v: Value = serde_json::from_slice(&body).map_err(|e| format!("Hyprland IPC: {e}"))?;
    Ok(hyprland_window(&v))
}

fn hyprland_window(v: &Value) -> (WindowInfo, Focus) {
    let text = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let Some(class) = text("class").or_else(|| text("initialClass")) else {
        return (WindowInfo::default(), Focus::Unknown);
    };
    let focus = match v.get("xwayland").and_then(Value::as_bool) {
        Some(true) => Focus::XWayland,
        Some(false) => Focus::Native,
        None => Focus::Unknown,
    };
    let info = WindowInfo {
        id: None,
        instance: Some(class.clone()),
        class: Some(class),
        title: text("title"),
        pid: v
            .get("pid")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
            .filter(|&p| p > 0),
    };
    (info, focus)
}

#[cfg(not(unix))]
fn sway_focused() -> Result<(WindowInfo, Focus), String> {
    Err("not on this system".into())
}

#[cfg(not(unix))]
fn hyprland_focused() -> Result<(WindowInfo, Focus), String> {
    Err("not on this system".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_the_focused_native_and_xwayland_views_in_a_sway_tree() {
        let tree = |focused_foot: bool| {
            json!({"type": "root", "focused": false, "nodes": [
                {"type": "output", "name": "HEADLESS-1", "focused": false, "nodes": [
                    {"type": "workspace", "name": "1", "focused": false, "nodes": [
                        {"type": "con", "pid": 10, "app_id": "foot", "shell": "xdg_shell",
                         "name": "notes", "focused": focused_foot, "nodes": []},
                    ], "floating_nodes": [
                        {"type": "floating_con", "pid": 11, "app_id": null, "shell": "xwayland",
                         "window": 4194318u64, "name": "xterm",
                         "window_properties": {"class": "XTerm", "instance": "xterm"},
                         "focused": !focused_foot, "nodes": []},
                    ]}
                ]}
            ]})
        };
        let (w, f) = sway_focused_in(&tree(true)).expect("focused");
        assert_eq!(f, Focus::Native);
        assert_eq!(w.class.as_deref(), Some("foot"));
        assert_eq!(w.title.as_deref(), Some("notes"));
        let (w, f) = sway_focused_in(&tree(false)).expect("focused");
        assert_eq!(f, Focus::XWayland);
        assert_eq!(w.class.as_deref(), Some("XTerm"));
        assert_eq!(w.instance.as_deref(), Some("xterm"));
        assert_eq!(w.id, Some(4194318));
        // A focused workspace (nothing open) is not a window.
        let empty = json!({"nodes": [{"type": "workspace", "focused": true, "nodes": []}]});
        assert_eq!(sway_focused_in(&empty), None);
    }

    #[test]
    fn reads_hyprland_activewindow() {
        let (w, f) = hyprland_window(&json!({"class": "kitty", "title": "~", "xwayland": false}));
        assert_eq!((w.class.as_deref(), f), (Some("kitty"), Focus::Native));
        let (_, f) = hyprland_window(&json!({"class": "Steam", "xwayland": true}));
        assert_eq!(f, Focus::XWayland);
        let (w, f) = hyprland_window(&json!({}));
        assert_eq!((w, f), (WindowInfo::default(), Focus::Unknown));
    }

    #[cfg(unix)]
    #[test]
    fn a_silent_or_missing_socket_costs_at_most_the_timeout() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sway.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).expect("bind");
        let start = std::time::Instant::now();
        let r = sway_focused_at(path.as_os_str());
        assert!(r.is_err(), "{r:?}");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        drop(listener);
        assert!(sway_focused_at(dir.path().join("none.sock").as_os_str()).is_err());
    }
}
