//! A private X server (Xvfb, no window manager) and an xterm whose input is written to a
//! file, for tests that type into a real window. Shared by the engine's injection tests and
//! the CLI's end-to-end dictation test.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const TOOLS: &[&str] = &["Xvfb", "xterm", "xdotool", "xclip", "xprop", "xwininfo"];
/// xterm pastes CLIPBOARD on Ctrl+Shift+V, like modern terminals (its default is PRIMARY
/// on Shift+Insert only).
pub const XTERM_PASTE: &str =
    "XTerm*VT100.translations: #override Shift Ctrl <Key>V: insert-selection(CLIPBOARD)";

pub static LOCK: Mutex<()> = Mutex::new(());

pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// False (skip) when the tools are missing and E2E is not required; panics when required.
pub fn tools_present() -> bool {
    super::tools_ready(
        TOOLS,
        " (sudo apt install xvfb xterm xdotool xclip x11-utils)",
    )
}

/// A private X server; killed on drop. Holds the test lock and points DISPLAY at itself.
pub struct Xvfb {
    child: Child,
    pub display: String,
    _lock: MutexGuard<'static, ()>,
}

impl Xvfb {
    pub fn start() -> Xvfb {
        Xvfb::start_with(&[])
    }

    /// With extra server arguments (e.g. `-extension XTEST` to take away simulated input).
    pub fn start_with(extra: &[&str]) -> Xvfb {
        let lock = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let base = 77 + std::process::id() % 300;
        for n in base..base + 50 {
            if Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                || Path::new(&format!("/tmp/.X{n}-lock")).exists()
            {
                continue;
            }
            let display = format!(":{n}");
            // -noreset: by default the server resets when its last client (the readiness
            // probe) disconnects, and a client connecting during the reset is refused.
            let mut child = Command::new("Xvfb")
                .args([
                    &display,
                    "-screen",
                    "0",
                    "1280x800x24",
                    "-nolisten",
                    "tcp",
                    "-noreset",
                ])
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start Xvfb");
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // display taken meanwhile: try the next number
                }
                let ready = Command::new("xdotool")
                    .arg("getmouselocation")
                    .env("DISPLAY", &display)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if ready {
                    // Under the lock: no other test reads or writes the environment now.
                    std::env::set_var("DISPLAY", &display);
                    std::env::remove_var("WAYLAND_DISPLAY");
                    // An X11 session, whatever session the tests were started from.
                    std::env::remove_var("XDG_SESSION_TYPE");
                    return Xvfb {
                        child,
                        display,
                        _lock: lock,
                    };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("could not start Xvfb on any display from :{base}");
    }

    pub fn xdotool(&self, args: &[&str]) -> String {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .expect("run xdotool");
        assert!(
            out.status.success(),
            "xdotool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Makes another client (xclip) own CLIPBOARD with `text`.
    pub fn set_clipboard_elsewhere(&self, text: &str) {
        use std::io::Write;
        let mut child = Command::new("xclip")
            .args(["-selection", "clipboard", "-i"])
            .env("DISPLAY", &self.display)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run xclip");
        child
            .stdin
            .take()
            .expect("xclip stdin")
            .write_all(text.as_bytes())
            .expect("write to xclip");
        // xclip forks a server for the selection and the parent exits; on a busy machine
        // the server may own CLIPBOARD a moment after that (seen: None right after).
        assert!(child.wait().expect("xclip").success());
        let start = Instant::now();
        while self.clipboard().as_deref() != Some(text) && start.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(self.clipboard().as_deref(), Some(text));
    }

    /// CLIPBOARD's value for `target` (e.g. "image/png"), bytes as another application
    /// gets them; None when the owner refuses it or nobody owns CLIPBOARD.
    pub fn clipboard_target(&self, target: &str) -> Option<Vec<u8>> {
        let out = Command::new("xclip")
            .args(["-selection", "clipboard", "-t", target, "-o"])
            .env("DISPLAY", &self.display)
            .stderr(Stdio::null())
            .output()
            .expect("run xclip -o");
        out.status.success().then_some(out.stdout)
    }

    /// CLIPBOARD's text as another application sees it.
    pub fn clipboard(&self) -> Option<String> {
        let out = Command::new("xclip")
            .args(["-selection", "clipboard", "-o"])
            .env("DISPLAY", &self.display)
            .stderr(Stdio::null())
            .output()
            .expect("run xclip -o");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM first: Xvfb then removes its lock file and socket.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(2) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An xterm whose shell writes every line typed into it to `file`. Killed on drop.
pub struct Xterm {
    child: Child,
    /// Top-left corner on the screen (from the geometry).
    origin: (i32, i32),
    pub file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Xterm {
    pub fn start(x: &Xvfb, title: &str) -> Xterm {
        Xterm::start_with(x, title, false)
    }

    /// `raw`: the terminal is not line-buffered (`stty -icanon`), so each character reaches
    /// `file` as soon as the xterm gets it (for timing the first typed character).
    pub fn start_with(x: &Xvfb, title: &str, raw: bool) -> Xterm {
        Xterm::spawn(x, title, raw, None, "80x24+0+0")
    }

    /// An xterm whose WM_CLASS class is `class` (`xterm -class`), at `geometry` (e.g.
    /// "80x10+0+420"): a second window of another class for per-app profiles. The pointer
    /// (hence the focus: no window manager) is moved onto it.
    pub fn start_as(x: &Xvfb, title: &str, class: &str, geometry: &str) -> Xterm {
        Xterm::spawn(x, title, false, Some(class), geometry)
    }

    /// [`Xterm::start_as`] with the WM_CLASS instance `name` too (`xterm -name`): a window
    /// that is not a terminal by `[inject] terminal_classes` (e.g. "editor"/"Editor").
    pub fn start_named(x: &Xvfb, title: &str, class: &str, name: &str, geometry: &str) -> Xterm {
        let script = "cat > \"$DICTUM_TYPED\"".to_string();
        Xterm::spawn_script(x, title, Some((class, name)), geometry, script, None, true)
    }

    /// An xterm running a real interactive shell (`sh`) in the folder `cwd`: what a user's
    /// terminal does with a typed line and a Return (runs it). `class`/`name` set WM_CLASS
    /// (`xterm -class C -name N`; None: XTerm/xterm). `file` is `cwd/typed.txt`, created
    /// empty (nothing writes it unless a typed command does).
    pub fn start_shell(
        x: &Xvfb,
        title: &str,
        class: Option<(&str, &str)>,
        geometry: &str,
        cwd: &Path,
    ) -> Xterm {
        let file = cwd.join("typed.txt");
        std::fs::write(&file, "").expect("typed.txt");
        let script = format!("cd '{}' && PS1='$ ' exec sh -i", cwd.display());
        Xterm::spawn_script(x, title, class, geometry, script, Some(file), true)
    }

    fn spawn(x: &Xvfb, title: &str, raw: bool, class: Option<&str>, geometry: &str) -> Xterm {
        let stty = if raw {
            "stty -icanon min 1 time 0; "
        } else {
            ""
        };
        let script = format!("{stty}cat > \"$DICTUM_TYPED\"");
        Xterm::spawn_script(
            x,
            title,
            class.map(|c| (c, "xterm")),
            geometry,
            script,
            None,
            true,
        )
    }

    /// An xterm with its default bindings: no paste chord for CLIPBOARD (it pastes PRIMARY
    /// on Shift+Insert only), so a Ctrl+Shift+V pastes nothing there.
    pub fn start_without_paste(x: &Xvfb, title: &str) -> Xterm {
        let script = "cat > \"$DICTUM_TYPED\"".to_string();
        Xterm::spawn_script(x, title, None, "80x24+0+0", script, None, false)
    }

    fn spawn_script(
        x: &Xvfb,
        title: &str,
        class: Option<(&str, &str)>,
        geometry: &str,
        script: String,
        file: Option<PathBuf>,
        paste_binding: bool,
    ) -> Xterm {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = file.unwrap_or_else(|| dir.path().join("typed.txt"));
        // Resources by class: a renamed class gets the paste binding under its own name.
        let paste = match class {
            Some((c, _)) => XTERM_PASTE.replacen("XTerm", c, 1),
            None => XTERM_PASTE.to_string(),
        };
        let mut cmd = Command::new("xterm");
        if paste_binding {
            cmd.args(["-xrm", &paste]);
        }
        if let Some((c, name)) = class {
            cmd.args(["-class", c]);
            if name != "xterm" {
                cmd.args(["-name", name]);
            }
        }
        cmd.env("DICTUM_TYPED", &file);
        let child = cmd
            .args(["-T", title, "-geometry", geometry, "-u8"])
            .args(["-e", "sh", "-c", &script])
            .env("DISPLAY", &x.display)
            .env("LC_ALL", "C.UTF-8")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("xterm.log")).expect("log file"))
            .spawn()
            .expect("start xterm");
        let origin = geometry_origin(geometry);
        let mut term = Xterm {
            child,
            origin,
            file,
            _dir: dir,
        };
        let start = Instant::now();
        loop {
            let found = Command::new("xdotool")
                .args(["search", "--onlyvisible", "--name", &format!("^{title}$")])
                .env("DISPLAY", &x.display)
                .output()
                .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
            if found && term.file.exists() {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "xterm did not come up on {} (window found: {found}, file: {}, exited: {:?}):\n{}",
                x.display,
                term.file.exists(),
                term.child.try_wait(),
                std::fs::read_to_string(term._dir.path().join("xterm.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        term.point_at(x);
        term
    }

    /// Moves the pointer onto this window: without a window manager the focus is
    /// PointerRoot, and keys go to the window under the pointer.
    pub fn point_at(&self, x: &Xvfb) {
        let (gx, gy) = self.origin;
        x.xdotool(&[
            "mousemove",
            "--sync",
            &(gx + 60).to_string(),
            &(gy + 60).to_string(),
        ]);
    }

    /// Presses Return (so `cat` writes the line) and returns everything written so far,
    /// once the new line is in the file.
    pub fn line(&self, x: &Xvfb) -> String {
        let lines = |t: &str| t.matches('\n').count();
        let before = lines(&std::fs::read_to_string(&self.file).unwrap_or_default());
        x.xdotool(&["key", "Return"]);
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(&self.file).unwrap_or_default();
            if lines(&text) > before || start.elapsed() > Duration::from_secs(5) {
                return text;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Xterm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The "+X+Y" of an X geometry ("80x24+0+420" → (0, 420)); (0, 0) without one.
fn geometry_origin(geometry: &str) -> (i32, i32) {
    let mut parts = geometry.split('+').skip(1).map(|n| n.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// Another application owning CLIPBOARD with an image and HTML together
/// (`tests/clipboard_owner.py`, GTK 4): `png` and `html` are the bytes it serves. Killed on
/// drop.
pub struct ClipboardOwner {
    child: Child,
    pub png: Vec<u8>,
    pub html: Vec<u8>,
    _dir: tempfile::TempDir,
}

/// The GTK 4 the clipboard owner needs (python3-gi, gir1.2-gtk-4.0): false (skip) when
/// missing and E2E is not required; panics when required.
pub fn gtk4_present() -> bool {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import gi; gi.require_version('Gtk', '4.0')"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but GTK 4 for Python is not installed \
             (sudo apt install python3-gi gir1.2-gtk-4.0)"
        );
        eprintln!("SKIPPED: GTK 4 for Python not installed (python3-gi gir1.2-gtk-4.0)");
    }
    ok
}

impl ClipboardOwner {
    /// Starts it with about `png_kib` of PNG and `html_kib` of HTML and waits until it owns
    /// CLIPBOARD (xclip reads both back).
    pub fn start(x: &Xvfb, png_kib: usize, html_kib: usize) -> ClipboardOwner {
        use std::io::BufRead;
        let dir = tempfile::tempdir().expect("tempdir");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clipboard_owner.py");
        let mut child = Command::new("/usr/bin/python3")
            .arg(&script)
            .arg("--out")
            .arg(dir.path())
            .args(["--png-kib", &png_kib.to_string()])
            .args(["--html-kib", &html_kib.to_string()])
            .env("DISPLAY", &x.display)
            .env("GDK_BACKEND", "x11")
            .env("NO_AT_BRIDGE", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start tests/clipboard_owner.py");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the owner's stdout");
        assert_eq!(
            line.trim(),
            "ready",
            "tests/clipboard_owner.py did not start"
        );
        let owner = ClipboardOwner {
            child,
            png: std::fs::read(dir.path().join("clip.png")).expect("clip.png"),
            html: std::fs::read(dir.path().join("clip.html")).expect("clip.html"),
            _dir: dir,
        };
        let start = Instant::now();
        while x.clipboard_target("image/png").as_ref() != Some(&owner.png) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the clipboard owner did not take CLIPBOARD"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        owner
    }
}

impl Drop for ClipboardOwner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
