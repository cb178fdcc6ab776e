//! Which display system is there, and on Wayland-only sessions (no XWayland) the command-line
//! tools that inject text: `wtype` (virtual-keyboard protocol: wlroots compositors, KDE) or
//! `ydotool` (uinput: any compositor, needs the `ydotoold` daemon), `wl-copy`/`wl-paste` for
//! paste mode and the clipboard fallback.
//!
//! The decision is a pure function of the environment and the tools on PATH, unit-tested.

use super::config::InjectMethod;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Where the text goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// An X server (DISPLAY set, XWayland included): enigo + x11rb + arboard.
    X11,
    /// Wayland without XWayland: external tools.
    Wayland(WaylandTools),
    /// No way to inject; the message says what to install or set.
    Unavailable(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typer {
    Wtype,
    Ydotool,
}

impl Typer {
    pub fn as_str(self) -> &'static str {
        match self {
            Typer::Wtype => "wtype",
            Typer::Ydotool => "ydotool",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaylandTools {
    pub typer: Typer,
    /// `wl-copy` and `wl-paste` are both on PATH.
    pub clipboard: bool,
}

/// What [`choose_backend`] needs to know about the session.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionEnv<'a> {
    pub display: Option<&'a str>,
    pub wayland_display: Option<&'a str>,
}

/// `DISPLAY` and `WAYLAND_DISPLAY` of this process (empty counts as unset).
pub fn session_vars() -> (Option<String>, Option<String>) {
    let get = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    (get("DISPLAY"), get("WAYLAND_DISPLAY"))
}

/// Picks the backend. `has(tool)` says whether an executable is on PATH.
pub fn choose_backend(
    env: SessionEnv<'_>,
    method: InjectMethod,
    has: impl Fn(&str) -> bool,
) -> Backend {
    let set = |v: Option<&str>| v.is_some_and(|v| !v.trim().is_empty());
    if set(env.display) {
        return Backend::X11;
    }
    if !set(env.wayland_display) {
        return Backend::Unavailable(
            "no graphical session: neither DISPLAY nor WAYLAND_DISPLAY is set; run Dictum inside \
             your desktop session (or export DISPLAY=:0)"
                .into(),
        );
    }
    let clipboard = has("wl-copy") && has("wl-paste");
    let typer = if has("wtype") {
        Typer::Wtype
    } else if has("ydotool") {
        Typer::Ydotool
    } else {
        let paste_hint = if method == InjectMethod::Paste && !clipboard {
            " and wl-clipboard"
        } else {
            ""
        };
        return Backend::Unavailable(format!(
            "Wayland session without XWayland: typing needs `wtype` (wlroots compositors, KDE) or \
             `ydotool` (any compositor, with its ydotoold daemon running); install one, e.g. \
             `sudo apt install wtype{paste_hint}`"
        ));
    };
    if method == InjectMethod::Paste && !clipboard {
        return Backend::Unavailable(
            "Wayland paste mode needs `wl-copy` and `wl-paste`: `sudo apt install wl-clipboard` \
             (or set [inject] method = \"type\")"
                .into(),
        );
    }
    Backend::Wayland(WaylandTools { typer, clipboard })
}

/// True when `name` is an executable file in one of PATH's folders.
pub fn on_path(name: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| is_executable(&dir.join(name)))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// Runs `program args`, feeding `stdin`; an error names the tool and its stderr.
fn run(program: &str, args: &[&str], stdin: Option<&str>) -> Result<String, String> {
    run_with(program, args, stdin, true)
}

/// `capture = false` for tools that leave a background process serving the clipboard
/// (`wl-copy`): it inherits the output pipes, so reading them to the end would wait until
/// something else is copied.
fn run_with(
    program: &str,
    args: &[&str],
    stdin: Option<&str>,
    capture: bool,
) -> Result<String, String> {
    let output = || {
        if capture {
            Stdio::piped()
        } else {
            Stdio::null()
        }
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(output())
        .stderr(output())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .map_err(|e| format!("{program}: cannot write its input: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{program} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Types `text` with the chosen tool.
pub(crate) fn type_text(typer: Typer, text: &str) -> Result<(), String> {
    match typer {
        // `-` reads the text from stdin: no argument parsing of text that starts with '-'.
        Typer::Wtype => run("wtype", &["-"], Some(text)).map(drop),
        Typer::Ydotool => run("ydotool", &["type", "--", text], None).map(drop),
    }
}

/// Sends Ctrl+V (no window class on Wayland, so never the terminal variant).
pub(crate) fn paste_chord(typer: Typer) -> Result<(), String> {
    match typer {
        Typer::Wtype => run("wtype", &["-M", "ctrl", "v", "-m", "ctrl"], None).map(drop),
        // Linux input codes: 29 = left Ctrl, 47 = V.
        Typer::Ydotool => run("ydotool", &["key", "29:1", "47:1", "47:0", "29:0"], None).map(drop),
    }
}

pub(crate) fn clipboard_text() -> Option<String> {
    run("wl-paste", &["--no-newline", "--type", "text"], None).ok()
}

pub(crate) fn set_clipboard(text: &str) -> Result<(), String> {
    run_with(
        "wl-copy",
        &["--type", "text/plain;charset=utf-8"],
        Some(text),
        false,
    )
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(list: &'static [&'static str]) -> impl Fn(&str) -> bool {
        move |t| list.contains(&t)
    }

    fn env<'a>(display: Option<&'a str>, wayland: Option<&'a str>) -> SessionEnv<'a> {
        SessionEnv {
            display,
            wayland_display: wayland,
        }
    }

    #[test]
    fn display_means_x11_even_under_wayland() {
        let all = tools(&["wtype", "ydotool", "wl-copy", "wl-paste"]);
        for e in [env(Some(":0"), None), env(Some(":0"), Some("wayland-0"))] {
            assert_eq!(choose_backend(e, InjectMethod::Type, &all), Backend::X11);
        }
    }

    #[test]
    fn wayland_only_prefers_wtype_then_ydotool() {
        let e = env(None, Some("wayland-0"));
        assert_eq!(
            choose_backend(e, InjectMethod::Type, tools(&["wtype", "ydotool"])),
            Backend::Wayland(WaylandTools {
                typer: Typer::Wtype,
                clipboard: false
            })
        );
        assert_eq!(
            choose_backend(
                e,
                InjectMethod::Type,
                tools(&["ydotool", "wl-copy", "wl-paste"])
            ),
            Backend::Wayland(WaylandTools {
                typer: Typer::Ydotool,
                clipboard: true
            })
        );
        // Empty DISPLAY counts as unset.
        assert_eq!(
            choose_backend(
                env(Some(""), Some("wayland-0")),
                InjectMethod::Type,
                tools(&["wtype"])
            ),
            Backend::Wayland(WaylandTools {
                typer: Typer::Wtype,
                clipboard: false
            })
        );
    }

    #[test]
    fn missing_tools_say_what_to_install() {
        let e = env(None, Some("wayland-0"));
        match choose_backend(e, InjectMethod::Type, tools(&["wl-copy", "wl-paste"])) {
            Backend::Unavailable(msg) => {
                assert!(msg.contains("sudo apt install wtype"), "{msg}");
                assert!(msg.contains("ydotool"), "{msg}");
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
        match choose_backend(e, InjectMethod::Paste, tools(&["wtype", "wl-copy"])) {
            Backend::Unavailable(msg) => assert!(msg.contains("wl-clipboard"), "{msg}"),
            other => panic!("expected Unavailable, got {other:?}"),
        }
        match choose_backend(e, InjectMethod::Paste, tools(&[])) {
            Backend::Unavailable(msg) => assert!(msg.contains("wtype and wl-clipboard"), "{msg}"),
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }

    #[test]
    fn no_session_at_all_is_unavailable() {
        match choose_backend(env(None, None), InjectMethod::Type, tools(&["wtype"])) {
            Backend::Unavailable(msg) => assert!(msg.contains("DISPLAY"), "{msg}"),
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }

    #[cfg(unix)]
    #[test]
    fn tools_get_the_text_on_stdin_and_failures_carry_stderr() {
        assert_eq!(
            run("sh", &["-c", "cat"], Some("Grüße -n ✓")).as_deref(),
            Ok("Grüße -n ✓")
        );
        let err = run("sh", &["-c", "echo no compositor >&2; exit 3"], None).expect_err("fails");
        assert!(
            err.contains("no compositor") && err.contains("sh failed"),
            "{err}"
        );
        let err = run("dictum-no-such-tool-xyz", &[], None).expect_err("fails");
        assert!(err.contains("cannot run dictum-no-such-tool-xyz"), "{err}");
    }

    /// wl-copy leaves a process serving the clipboard; waiting for its output pipes to
    /// close would hang until the next copy.
    #[cfg(unix)]
    #[test]
    fn a_tool_that_leaves_a_background_process_does_not_block() {
        let start = std::time::Instant::now();
        run_with("sh", &["-c", "sleep 3 & exit 0"], Some("x"), false).expect("runs");
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn on_path_finds_sh_and_not_nonsense() {
        assert!(on_path("sh"));
        assert!(!on_path("dictum-no-such-tool-xyz"));
    }
}
