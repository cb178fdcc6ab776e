//! The command-line tools that inject text on Wayland when no in-process path is there:
//! `wtype` (virtual-keyboard protocol: wlroots compositors) or `ydotool` (uinput: any
//! compositor, needs the `ydotoold` daemon), and `wl-copy`/`wl-paste` for the clipboard when
//! the compositor offers no data-control protocol. Which one is used is decided in
//! [`super::session`].

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typer {
    Wtype,
    Ydotool,
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
        Typer::Ydotool => ydotool_type("ydotool", text),
    }
}

/// Types `text` with ydotool (`program`: "ydotool" on PATH). The text goes through a pipe,
/// never the command line: arguments are visible to every local user in `/proc/<pid>/cmdline`,
/// and ydotool 1.0.4 and later turn `\n`, `\t` and `\xNN` in arguments into key presses (a
/// dictated "C:\new" would press Enter). `--file /dev/stdin` rather than `--file -`:
/// ydotool 1.0.0–1.0.3 open `-` as a file name, 0.1.x and 1.0.4 read stdin for it, and every
/// version opens `/dev/stdin`. Text read from a file is never unescaped (1.0.4's default);
/// `--escape=0` says so explicitly where the installed ydotool knows the option (0.1.x
/// rejects unknown options).
fn ydotool_type(program: &str, text: &str) -> Result<(), String> {
    let mut args = vec!["type"];
    if ydotool_knows_escape(program) {
        args.push("--escape=0");
    }
    args.extend(["--file", "/dev/stdin"]);
    run(program, &args, Some(text)).map(drop)
}

/// True when `program type --help` lists `--escape` (ydotool 1.0.4 and later).
fn ydotool_knows_escape(program: &str) -> bool {
    Command::new(program)
        .args(["type", "--help"])
        .stdin(Stdio::null())
        .output()
        .map(|o| {
            let help = [o.stdout, o.stderr].concat();
            String::from_utf8_lossy(&help).contains("--escape")
        })
        .unwrap_or(false)
}

/// Sends Ctrl+V, or Ctrl+Shift+V for a terminal.
pub(crate) fn paste_chord(typer: Typer, terminal: bool) -> Result<(), String> {
    match (typer, terminal) {
        (Typer::Wtype, false) => run("wtype", &["-M", "ctrl", "v", "-m", "ctrl"], None),
        (Typer::Wtype, true) => run(
            "wtype",
            &[
                "-M", "ctrl", "-M", "shift", "v", "-m", "shift", "-m", "ctrl",
            ],
            None,
        ),
        // Linux input codes: 29 = left Ctrl, 42 = left Shift, 47 = V.
        (Typer::Ydotool, false) => run("ydotool", &["key", "29:1", "47:1", "47:0", "29:0"], None),
        (Typer::Ydotool, true) => run(
            "ydotool",
            &["key", "29:1", "42:1", "47:1", "47:0", "42:0", "29:0"],
            None,
        ),
    }
    .map(drop)
}

/// Presses one chord (voice commands) with wtype; ydotool would need the user's keycodes
/// for every key, so it only presses Return, Tab and BackSpace.
pub(crate) fn press(typer: Typer, chord: &crate::commands::Chord) -> Result<(), String> {
    use crate::commands::Key;
    match typer {
        Typer::Wtype => {
            let mut args: Vec<String> = Vec::new();
            let mods: Vec<&str> = [
                (chord.ctrl, "ctrl"),
                (chord.shift, "shift"),
                (chord.alt, "alt"),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, m)| *m)
            .collect();
            for m in &mods {
                args.extend(["-M".to_string(), m.to_string()]);
            }
            match chord.key {
                Key::Return => args.extend(["-k".into(), "Return".into()]),
                Key::Tab => args.extend(["-k".into(), "Tab".into()]),
                Key::BackSpace => args.extend(["-k".into(), "BackSpace".into()]),
                Key::Escape => args.extend(["-k".into(), "Escape".into()]),
                Key::Char(c) => args.push(c.to_string()),
            }
            for m in mods.iter().rev() {
                args.extend(["-m".to_string(), m.to_string()]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run("wtype", &args, None).map(drop)
        }
        // Linux input codes: 28 = Enter, 15 = Tab, 14 = BackSpace, 1 = Escape.
        Typer::Ydotool if chord.is_plain() && !chord.shift => {
            let code = match chord.key {
                Key::Return => "28",
                Key::Tab => "15",
                Key::BackSpace => "14",
                Key::Escape => "1",
                Key::Char(_) => {
                    return Err(format!(
                        "ydotool cannot press {chord} here; use another backend"
                    ))
                }
            };
            let (down, up) = (format!("{code}:1"), format!("{code}:0"));
            run("ydotool", &["key", &down, &up], None).map(drop)
        }
        Typer::Ydotool => Err(format!(
            "ydotool cannot press {chord} here; use another backend"
        )),
    }
}

pub(crate) fn clipboard_text() -> Option<String> {
    run("wl-paste", &["--no-newline", "--type", "text"], None).ok()
}

/// Sets the clipboard with `wl-copy` and returns once `wl-paste` reads the text back (at most
/// [`SELECTION_WAIT`]): wl-copy forks a process that takes the selection a moment later, and
/// a paste chord sent before that pastes the previous owner's offer (seen on GNOME: 1 of 8
/// live pastes arrived empty).
pub(crate) fn set_clipboard(text: &str) -> Result<(), String> {
    run_with(
        "wl-copy",
        &["--type", "text/plain;charset=utf-8"],
        Some(text),
        false,
    )?;
    let deadline = std::time::Instant::now() + SELECTION_WAIT;
    while std::time::Instant::now() < deadline {
        if clipboard_text().as_deref() == Some(text) {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    tracing::info!("wl-copy: the new selection was not readable back within {SELECTION_WAIT:?}");
    Ok(())
}

/// How long [`set_clipboard`] waits for the compositor to have the new selection.
const SELECTION_WAIT: std::time::Duration = std::time::Duration::from_millis(1000);

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A stand-in `ydotool` (a shell script, no uinput needed) records its arguments and the
    /// text it is given through `--file`, as ydotool reads it. Two versions: one whose help
    /// lists `--escape` (1.0.4 and later), one that rejects unknown options (0.1.x).
    #[cfg(unix)]
    fn ydotool_standin(dir: &Path, knows_escape: bool) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let help = if knows_escape {
            "  -f, --file=PATH  Specify a file\n  -e, --escape=BOOL  Escape enable (1) or disable (0)"
        } else {
            "  --file filepath  Specify a file"
        };
        let script = format!(
            r#"#!/bin/sh
# Stand-in for ydotool (tests only): records argv and what --file holds; types nothing.
out="$(dirname "$0")"
if [ "$2" = "--help" ]; then printf '%s\n' "{help}"; exit 0; fi
: >"$out/argv"
for a in "$@"; do printf '%s\n' "$a" >>"$out/argv"; done
shift
file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --file) file="$2"; shift 2 ;;
    --escape=*) {unknown} shift ;;
    *) shift ;;
  esac
done
[ -n "$file" ] || {{ echo "no --file" >&2; exit 2; }}
cat "$file" >"$out/typed"
"#,
            unknown = if knows_escape {
                ""
            } else {
                "echo \"unrecognised option '--escape'\" >&2; exit 1;"
            }
        );
        let path = dir.join("ydotool");
        std::fs::write(&path, script).expect("stand-in");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    #[cfg(unix)]
    #[test]
    fn ydotool_gets_the_text_on_a_pipe_not_its_command_line_and_unescaped() {
        let text = r"C:\new\table -- echo $HOME `id` \x41 -n Grüße";
        for knows_escape in [true, false] {
            let dir = tempfile::tempdir().expect("tempdir");
            let tool = ydotool_standin(dir.path(), knows_escape);
            ydotool_type(&tool.display().to_string(), text).expect("typed");
            let argv = std::fs::read_to_string(dir.path().join("argv")).expect("argv");
            let typed = std::fs::read_to_string(dir.path().join("typed")).expect("typed");
            assert_eq!(typed, text, "the text arrives byte for byte");
            for word in ["new", "table", "HOME", "Grüße", "x41"] {
                assert!(!argv.contains(word), "{word:?} on the command line: {argv}");
            }
            let args: Vec<&str> = argv.lines().collect();
            let expect = if knows_escape {
                vec!["type", "--escape=0", "--file", "/dev/stdin"]
            } else {
                vec!["type", "--file", "/dev/stdin"]
            };
            assert_eq!(args, expect);
        }
    }

    #[test]
    fn on_path_finds_sh_and_not_nonsense() {
        assert!(on_path("sh"));
        assert!(!on_path("dictum-no-such-tool-xyz"));
    }
}
