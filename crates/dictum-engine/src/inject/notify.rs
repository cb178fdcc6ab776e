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
        format!(
            "Dictum: could not type into {window}, and the clipboard is unavailable; \
             the text is in the history (dictum history)"
        )
    }
}

/// Shows `message` if `notify-send` is installed; returns at once. False when it is not.
pub fn notify(message: &str) -> bool {
    if !super::wayland::on_path("notify-send") {
        // The message names the window (its title): only at debug level.
        tracing::info!("notify-send not installed; the notification was not shown");
        tracing::debug!("notification not shown: {message}");
        return false;
    }
    let mut command = Command::new("notify-send");
    command.args(["--app-name=Dictum", "--expire-time=8000", "Dictum", message]);
    run_detached(command, TIMEOUT)
}

/// Runs `command` on a thread of its own and returns at once; the process is killed if it
/// is still running after `timeout`. False when the thread could not be started.
fn run_detached(mut command: Command, timeout: Duration) -> bool {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let spawned = std::thread::Builder::new()
        .name("dictum-notify".into())
        .spawn(move || {
            let Ok(mut child) = command.spawn() else {
                return;
            };
            let start = Instant::now();
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => return,
                    Ok(None) if start.elapsed() < timeout => {
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
    use std::path::Path;

    #[test]
    fn message_names_window_and_clipboard() {
        let m = failure_message("\"notes\" (Gedit)", true);
        assert_eq!(
            m,
            "Dictum: could not type into \"notes\" (Gedit); the text is on the clipboard (Ctrl+V)"
        );
        assert!(failure_message("x", false).contains("history"));
    }

    /// A notify-send stuck on a missing D-Bus must not hold up a dictation. (`sh` + `sleep`
    /// stand in for it, so the tests show nothing on a developer's desktop.)
    #[cfg(unix)]
    #[test]
    fn a_hanging_notifier_neither_blocks_nor_outlives_its_timeout() {
        let pid_file =
            std::env::temp_dir().join(format!("dictum-notify-test-{}", std::process::id()));
        let _ = std::fs::remove_file(&pid_file);
        let start = Instant::now();
        let mut command = Command::new("sh");
        // Writes its pid, then hangs (exec: the pid stays the same).
        command.args([
            "-c",
            &format!("echo $$ > '{}'; exec sleep 30", pid_file.display()),
        ]);
        assert!(run_detached(command, Duration::from_millis(300)));
        assert!(
            start.elapsed() < Duration::from_millis(200),
            "returned at once"
        );
        let alive = |pid: &str| Path::new(&format!("/proc/{pid}")).exists();
        let mut pid = String::new();
        while start.elapsed() < Duration::from_secs(3) {
            pid = std::fs::read_to_string(&pid_file)
                .unwrap_or_default()
                .trim()
                .to_string();
            if !pid.is_empty() && !alive(&pid) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = std::fs::remove_file(&pid_file);
        assert!(!pid.is_empty(), "the command ran");
        assert!(!alive(&pid), "still running after the timeout");
        assert!(
            start.elapsed() >= Duration::from_millis(300),
            "not killed early"
        );
    }
}
