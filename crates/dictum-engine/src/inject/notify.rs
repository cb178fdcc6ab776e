//! The desktop notification shown when the text could not be injected. Fire and forget:
//! `notify-send` runs on a thread of its own and is killed after a few seconds, so a session
//! without a notification daemon (or without D-Bus) never blocks or fails a dictation.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(3);

/// The notification's body for a failure in `window` (as [`super::WindowInfo::describe`]).
pub fn failure_message(window: &str, on_clipboard: bool) -> String {
    if on_clipboard {
        format!("Dictum: could not type into {window}; the text is on the clipboard (Ctrl+V)")
    } else {
        format!("Dictum: could not type into {window}, and the clipboard is unavailable; the text is in the history (dictum history)")
    }
}

/// Shows `message` if `notify-send` is installed; returns at once. False when it is not.
pub fn notify(message: &str) -> bool {
    if !super::wayland::on_path("notify-send") {
        tracing::info!("notify-send not installed; not shown: {message}");
        return false;
    }
    let message = message.to_owned();
    let spawned = std::thread::Builder::new()
        .name("dictum-notify".into())
        .spawn(move || {
            let child = Command::new("notify-send")
                .args([
                    "--app-name=Dictum",
                    "--expire-time=8000",
                    "Dictum",
                    &message,
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            let Ok(mut child) = child else { return };
            let start = Instant::now();
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => return,
                    Ok(None) if start.elapsed() < TIMEOUT => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        return;
                    }
                }
            }
        });
    spawned.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_window_and_clipboard() {
        let m = failure_message("\"notes\" (Gedit)", true);
        assert_eq!(
            m,
            "Dictum: could not type into \"notes\" (Gedit); the text is on the clipboard (Ctrl+V)"
        );
        assert!(failure_message("x", false).contains("history"));
    }

    #[test]
    fn notify_returns_at_once_without_a_daemon() {
        let start = Instant::now();
        notify("Dictum test notification");
        assert!(start.elapsed() < Duration::from_millis(500));
    }
}
