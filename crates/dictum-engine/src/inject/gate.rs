//! The gate between words and the keyboard: what it decides about the window that would get
//! the keys, at the moment of typing.
//!
//! Every text that becomes keystrokes or a paste goes through [`super::Injector`], and the
//! injector asks this module:
//!
//! - **is the window a terminal?** ([`judge`]) A window is a terminal when its class,
//!   instance or app id is on `[inject] terminal_classes`, when its process is a terminal
//!   emulator, **or when that cannot be known**. The process is found from the window
//!   (X11: the X-Resource extension's client pid, else `_NET_WM_PID`; sway, Hyprland and
//!   KWin (through its script, `focus_dbus.rs`) report a pid) and judged by what it is, not
//!   what it calls itself: its executable (`/proc/PID/exe`), its script for Python-based
//!   terminals (`cmdline`), or a pseudo-terminal master (`/dev/ptmx`) open by it or one of
//!   its children. GNOME Wayland tells no pid: there every window is a terminal. A `[[profile]]` matched by the
//!   window's class that says `terminal = false` is the way out of a false positive.
//! - **what may go out**: control, bidi and invisible characters never
//!   (`text_safety::strip_control`, in `Injector::final_text`).
//!
//! The typing backends (`x11`/enigo, `vkbd`, `uinput`, `wayland`, `wlclip`, the portal's
//! `RemoteKeyboard`) are private to `inject/` (the portal's to the engine, used only by
//! `inject/`): nothing outside it can type except through the injector.
//!
//! ```compile_fail,E0603
//! // The backends are not reachable from outside `inject/` (without the test-only
//! // `backends` feature): a new typing path cannot bypass the gate.
//! let _ = dictum_engine::inject::vkbd::VirtualKeyboard::connect();
//! ```
//!
//! ```compile_fail,E0603
//! let _ = dictum_engine::inject::uinput::UinputKeyboard::connect();
//! ```
//!
//! ```compile_fail,E0603
//! let _ = dictum_engine::inject::wayland::type_text;
//! ```
//!
//! ```compile_fail,E0603
//! // The RemoteDesktop portal's keyboard types too.
//! let _ = dictum_engine::portal::RemoteKeyboard::connect;
//! ```

use super::window::WindowInfo;
use serde::Serialize;
use std::path::Path;

/// Terminal emulators, by the file name of their executable (or of the script a Python
/// interpreter runs: terminator, guake).
pub const TERMINAL_PROGRAMS: &[&str] = &[
    "foot",
    "footclient",
    "kitty",
    "alacritty",
    "wezterm",
    "wezterm-gui",
    "ghostty",
    "gnome-terminal",
    "gnome-terminal-server",
    "kgx",
    "ptyxis",
    "ptyxis-agent",
    "konsole",
    "xterm",
    "uxterm",
    "urxvt",
    "urxvtd",
    "rxvt",
    "st",
    "tilix",
    "terminator",
    "xfce4-terminal",
    "guake",
    "tilda",
    "yakuake",
    "contour",
    "blackbox",
    "blackbox-terminal",
    "terminology",
    "lxterminal",
    "mate-terminal",
    "qterminal",
    "sakura",
    "rio",
];

/// Open files looked at per process before giving up (a process with more is judged on
/// what was seen, then as unknown).
const MAX_FDS: usize = 4096;
/// Children of the window's process whose open files are looked at.
const MAX_CHILDREN: usize = 64;

/// Whether the window that would get the keys is a terminal, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub terminal: bool,
    /// One line: "its class XTerm is on [inject] terminal_classes", "its process (pid 42,
    /// foot) is a terminal emulator", "the focused window cannot be known on this desktop".
    pub reason: String,
}

impl Verdict {
    fn terminal(reason: impl Into<String>) -> Verdict {
        Verdict {
            terminal: true,
            reason: reason.into(),
        }
    }

    fn not_terminal(reason: impl Into<String>) -> Verdict {
        Verdict {
            terminal: false,
            reason: reason.into(),
        }
    }
}

/// Judges `window`: `terminal_classes` is `[inject] terminal_classes`; `profile_says` is
/// the `terminal` of the `[[profile]]` matched by the window's class, if any (its name for
/// the reason).
pub fn judge(
    terminal_classes: &[String],
    window: &WindowInfo,
    profile_says: Option<(&str, bool)>,
) -> Verdict {
    judge_with(terminal_classes, window, profile_says, &|pid| {
        process_verdict(Path::new("/proc"), pid)
    })
}

fn judge_with(
    terminal_classes: &[String],
    window: &WindowInfo,
    profile_says: Option<(&str, bool)>,
    process: &dyn Fn(u32) -> Result<Option<String>, String>,
) -> Verdict {
    if let Some((name, says)) = profile_says {
        let what = if says { "a terminal" } else { "no terminal" };
        return Verdict {
            terminal: says,
            reason: format!("profile \"{name}\" (matched by its class) says it is {what}"),
        };
    }
    let known = window.class.is_some() || window.instance.is_some();
    if known
        && crate::config::inject::is_terminal(
            terminal_classes,
            window.instance.as_deref(),
            window.class.as_deref(),
        )
    {
        let name = window.class.as_deref().or(window.instance.as_deref());
        return Verdict::terminal(format!(
            "its class {} is on [inject] terminal_classes",
            name.unwrap_or_default()
        ));
    }
    let Some(pid) = window.pid else {
        return Verdict::terminal(if known {
            "its process cannot be known on this desktop, so it counts as a terminal (a \
             [[profile]] matching its class with terminal = false says otherwise)"
        } else {
            "the focused window cannot be known on this desktop, so it counts as a terminal"
        });
    };
    match process(pid) {
        Ok(Some(why)) => Verdict::terminal(format!("its process (pid {pid}) {why}")),
        Ok(None) => Verdict::not_terminal(format!(
            "its process (pid {pid}) is no terminal emulator and holds no pseudo-terminal"
        )),
        Err(e) => Verdict::terminal(format!(
            "its process (pid {pid}) cannot be inspected ({e}), so it counts as a terminal"
        )),
    }
}

/// Why `text` may not be typed: more characters than `[inject]`'s budget for `audio_ms` of
/// speech (`max_chars_base + max_chars_per_second` × seconds). Every path that types a
/// stored text (retry, "type again") asks it; None: within the budget.
pub fn over_budget(
    config: &super::InjectConfig,
    text: &str,
    audio_ms: Option<i64>,
) -> Option<String> {
    let chars = text.chars().count();
    let budget = config.char_budget(audio_ms);
    (chars > budget).then(|| {
        format!(
            "not typed: {chars} characters is more than {budget} for {:.1} s of speech \
             ([inject] max_chars_per_second); the text is in history (`dictum history`)",
            audio_ms.unwrap_or(0).max(0) as f64 / 1000.0
        )
    })
}

/// Why the process `pid` (under the `proc` file system) is a terminal emulator, None when
/// it is not; an error when it cannot be told.
pub fn process_verdict(proc: &Path, pid: u32) -> Result<Option<String>, String> {
    let dir = proc.join(pid.to_string());
    let exe = std::fs::read_link(dir.join("exe")).ok();
    let cmdline = std::fs::read(dir.join("cmdline")).ok();
    if exe.is_none() && cmdline.is_none() {
        return Err(format!("{} is not readable", dir.display()));
    }
    if let Some(name) = exe.as_deref().and_then(program_name) {
        if is_terminal_program(&name) {
            return Ok(Some(format!("is the terminal emulator {name}")));
        }
    }
    if let Some(args) = &cmdline {
        let mut args = args
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned());
        let first = args.next().unwrap_or_default();
        let first = program_name(Path::new(&first)).unwrap_or_default();
        if is_terminal_program(&first) {
            return Ok(Some(format!("is the terminal emulator {first}")));
        }
        // terminator and guake are Python scripts: the interpreter is the executable.
        if first.starts_with("python") || first.starts_with("perl") {
            let script = args
                .find(|a| !a.starts_with('-'))
                .and_then(|a| program_name(Path::new(&a)));
            if let Some(script) = script.filter(|s| is_terminal_program(s)) {
                return Ok(Some(format!("runs the terminal emulator {script}")));
            }
        }
    }
    if holds_pty_master(&dir)? {
        return Ok(Some("holds a pseudo-terminal (/dev/ptmx)".into()));
    }
    for child in children(&dir).into_iter().take(MAX_CHILDREN) {
        let child_dir = proc.join(child.to_string());
        if holds_pty_master(&child_dir).unwrap_or(false) {
            return Ok(Some(format!(
                "has a child (pid {child}) that holds a pseudo-terminal (/dev/ptmx)"
            )));
        }
    }
    Ok(None)
}

/// The file name of a program path, without a " (deleted)" mark.
fn program_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy();
    let name = name.strip_suffix(" (deleted)").unwrap_or(&name);
    (!name.is_empty()).then(|| name.to_string())
}

fn is_terminal_program(name: &str) -> bool {
    let name = name.strip_suffix(".py").unwrap_or(name);
    TERMINAL_PROGRAMS
        .iter()
        .any(|t| t.eq_ignore_ascii_case(name))
}

/// Whether the process at `dir` has `/dev/ptmx` open (the master side of a terminal).
fn holds_pty_master(dir: &Path) -> Result<bool, String> {
    let fds = std::fs::read_dir(dir.join("fd"))
        .map_err(|e| format!("its open files are not readable: {e}"))?;
    for fd in fds.take(MAX_FDS).flatten() {
        if let Ok(target) = std::fs::read_link(fd.path()) {
            if target == Path::new("/dev/ptmx") || target == Path::new("/dev/pts/ptmx") {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The children of the process at `dir` (every thread's `children` list).
fn children(dir: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(dir.join("task")) else {
        return out;
    };
    for task in tasks.flatten().take(MAX_CHILDREN) {
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes() -> Vec<String> {
        crate::config::inject::DEFAULT_TERMINAL_CLASSES
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn window(class: Option<&str>, pid: Option<u32>) -> WindowInfo {
        WindowInfo {
            class: class.map(str::to_string),
            instance: class.map(str::to_string),
            pid,
            ..WindowInfo::default()
        }
    }

    #[test]
    fn unknown_windows_and_processes_count_as_terminals() {
        let none = |_| Ok(None);
        // Nothing known (GNOME Wayland without a helper, no display).
        let v = judge_with(&classes(), &WindowInfo::default(), None, &none);
        assert!(v.terminal, "{v:?}");
        assert!(v.reason.contains("cannot be known"), "{v:?}");
        // A class but no process (KDE/GNOME tell the class only).
        let v = judge_with(&classes(), &window(Some("org.kde.kate"), None), None, &none);
        assert!(v.terminal, "{v:?}");
        // A process that cannot be inspected.
        let v = judge_with(&classes(), &window(Some("Gedit"), Some(7)), None, &|_| {
            Err("gone".into())
        });
        assert!(v.terminal, "{v:?}");
        // A known process that is no terminal: the only way to "not a terminal".
        let v = judge_with(&classes(), &window(Some("Gedit"), Some(7)), None, &none);
        assert!(!v.terminal, "{v:?}");
    }

    #[test]
    fn the_list_the_process_and_a_class_matched_profile_decide() {
        let none = |_| Ok(None);
        let v = judge_with(&classes(), &window(Some("XTerm"), None), None, &none);
        assert!(v.terminal && v.reason.contains("terminal_classes"), "{v:?}");
        // A renamed terminal: its process gives it away.
        let v = judge_with(&classes(), &window(Some("Notes"), Some(9)), None, &|_| {
            Ok(Some("is the terminal emulator foot".into()))
        });
        assert!(v.terminal && v.reason.contains("foot"), "{v:?}");
        // The user's class-matched profile is the way out of a false positive.
        let v = judge_with(
            &classes(),
            &window(Some("Code"), None),
            Some(("ide", false)),
            &none,
        );
        assert!(!v.terminal && v.reason.contains("ide"), "{v:?}");
    }

    /// A fake /proc: the process's exe link, cmdline and fd links.
    fn fake_proc(pid: u32, exe: &str, cmdline: &[&str], fds: &[&str]) -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join(pid.to_string());
        std::fs::create_dir_all(dir.join("fd")).expect("mkdir");
        std::fs::create_dir_all(dir.join("task").join(pid.to_string())).expect("mkdir");
        std::os::unix::fs::symlink(exe, dir.join("exe")).expect("exe link");
        std::fs::write(dir.join("cmdline"), cmdline.join("\0")).expect("cmdline");
        for (i, target) in fds.iter().enumerate() {
            std::os::unix::fs::symlink(target, dir.join("fd").join(i.to_string())).expect("fd");
        }
        root
    }

    #[test]
    fn stored_texts_are_held_to_the_budget_of_their_audio() {
        let config = super::super::InjectConfig::default();
        assert_eq!(over_budget(&config, "hello there", Some(1000)), None);
        let huge = "a".repeat(300_000);
        let why = over_budget(&config, &huge, Some(2000)).expect("refused");
        assert!(
            why.contains("300000 characters") && why.contains("in history"),
            "{why}"
        );
        assert!(over_budget(&config, &huge, None).is_some());
    }

    #[test]
    fn processes_are_judged_by_what_they_are() {
        let p = fake_proc(5, "/usr/bin/foot", &["foot", "--app-id=notes"], &[]);
        let why = process_verdict(p.path(), 5).expect("readable");
        assert!(why.is_some_and(|w| w.contains("foot")));
        let p = fake_proc(
            6,
            "/usr/bin/python3.12",
            &["/usr/bin/python3", "-s", "/usr/bin/terminator"],
            &[],
        );
        let why = process_verdict(p.path(), 6).expect("readable");
        assert!(why.is_some_and(|w| w.contains("terminator")));
        let p = fake_proc(
            7,
            "/opt/myterm/bin/myterm",
            &["myterm"],
            &["/dev/null", "/dev/ptmx"],
        );
        let why = process_verdict(p.path(), 7).expect("readable");
        assert!(why.is_some_and(|w| w.contains("ptmx")));
        let p = fake_proc(
            8,
            "/usr/bin/gedit",
            &["gedit"],
            &["/dev/null", "/dev/pts/3"],
        );
        assert_eq!(process_verdict(p.path(), 8), Ok(None));
        assert!(process_verdict(p.path(), 99).is_err(), "no such process");
    }
}
