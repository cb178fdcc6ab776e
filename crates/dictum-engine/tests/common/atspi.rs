//! The AT-SPI test harness (`tests/atspi_caret.rs`): a private session bus with or without
//! the real accessibility bus, a GTK 4 field (`tests/gtk_caret_box.py`) with the focus on
//! Xvfb, and a capture of every log line of the test process.
#![allow(dead_code)]

use crate::common::tools_ready;
use crate::common::x11::Xvfb;
use dictum_engine::context::atspi;
use dictum_engine::portal::Bus;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

const LAUNCHERS: &[&str] = &[
    "/usr/libexec/at-spi-bus-launcher",
    "/usr/lib/at-spi2-core/at-spi-bus-launcher",
];
pub const HINT: &str =
    " (sudo apt install xvfb xdotool dbus-daemon at-spi2-core python3-gi gir1.2-gtk-4.0)";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn launcher() -> Option<&'static str> {
    LAUNCHERS.iter().copied().find(|p| Path::new(p).is_file())
}

/// A Python 3 with GTK 4's introspection (the system's: a pyenv python lacks python3-gi).
fn gtk_python() -> Option<&'static str> {
    ["/usr/bin/python3", "python3"].into_iter().find(|py| {
        Command::new(py)
            .args([
                "-c",
                "import gi; gi.require_version('Gtk', '4.0'); from gi.repository import Gtk",
            ])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The AT-SPI launcher when every tool is there (the GTK Python is kept for [`Field`]);
/// None: skipped (a failure with `DICTUM_REQUIRE_E2E`).
pub fn tools_present() -> Option<&'static str> {
    if !tools_ready(&["Xvfb", "xdotool", "dbus-daemon"], HINT) {
        return None;
    }
    match (launcher(), gtk_python()) {
        (Some(l), Some(py)) => {
            let _ = PYTHON.set(py);
            Some(l)
        }
        _ => {
            assert!(
                std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
                "DICTUM_REQUIRE_E2E is set but at-spi-bus-launcher or GTK 4 for Python is missing{HINT}"
            );
            eprintln!("SKIPPED: at-spi-bus-launcher or GTK 4 for Python missing{HINT}");
            None
        }
    }
}

/// Every log line of this test process, every crate, trace level.
pub fn logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Sink(sink.clone()))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("one global subscriber");
        buf
    })
    .clone()
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub fn log_text() -> String {
    String::from_utf8_lossy(&logs().lock().unwrap_or_else(|p| p.into_inner())).into_owned()
}

const BUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#;

/// A private session bus without service activation (nothing of the machine's is started on
/// it), with or without the accessibility bus. Everything is stopped on drop.
pub struct Session {
    dbus: Child,
    a11y: Option<Child>,
    address: String,
    dir: tempfile::TempDir,
}

impl Session {
    pub fn start(launcher: Option<&str>, display: &str) -> Session {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("bus.conf");
        std::fs::write(&config, BUS_CONFIG).expect("bus config");
        let mut dbus = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start dbus-daemon");
        let mut line = String::new();
        BufReader::new(dbus.stdout.take().expect("dbus-daemon stdout"))
            .read_line(&mut line)
            .expect("dbus-daemon address");
        let address = line.trim().to_string();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        let mut session = Session {
            dbus,
            a11y: None,
            address,
            dir,
        };
        if let Some(launcher) = launcher {
            use std::os::unix::process::CommandExt;
            // Its own process group: the a11y bus daemon and the registry it starts are
            // stopped with it.
            let child = Command::new(launcher)
                .arg("--launch-immediately")
                .envs(session.env(display))
                .process_group(0)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start at-spi-bus-launcher");
            session.a11y = Some(child);
            let start = Instant::now();
            while !atspi::probe_on(&session.bus()).bus {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "the accessibility bus did not come up: {:?}",
                    atspi::probe_on(&session.bus())
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        session
    }

    pub fn bus(&self) -> Bus {
        Bus::Address(self.address.clone())
    }

    /// The session bus's address (`DBUS_SESSION_BUS_ADDRESS` for a process on it).
    pub fn address(&self) -> &str {
        &self.address
    }

    fn env(&self, display: &str) -> Vec<(&'static str, String)> {
        vec![
            ("DBUS_SESSION_BUS_ADDRESS", self.address.clone()),
            ("DISPLAY", display.to_string()),
            ("XDG_RUNTIME_DIR", self.dir.path().display().to_string()),
            ("GSETTINGS_BACKEND", "memory".into()),
            ("GDK_BACKEND", "x11".into()),
            ("GSK_RENDERER", "cairo".into()),
        ]
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(mut a11y) = self.a11y.take() {
            let group = a11y.id() as libc::pid_t;
            // SAFETY: signals the process group this test started (the launcher leads it).
            unsafe { libc::kill(-group, libc::SIGTERM) };
            let start = Instant::now();
            while !matches!(a11y.try_wait(), Ok(Some(_))) {
                if start.elapsed() > Duration::from_secs(3) {
                    // SAFETY: as above.
                    unsafe { libc::kill(-group, libc::SIGKILL) };
                    let _ = a11y.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.dbus.kill();
        let _ = self.dbus.wait();
    }
}

/// The desktop's accessibility switch on `s`'s bus (`org.a11y.Status.IsEnabled`).
pub fn switch_state(s: &Session) -> Option<bool> {
    atspi::probe_on(&s.bus()).toolkit_accessibility
}

/// A GTK 4 field (`tests/gtk_caret_box.py`) with the keyboard focus; killed on drop.
pub struct Field {
    child: Child,
    pub pid: u32,
    /// The field's lines after `ready`: `text=<JSON>` at every change of its text.
    lines: mpsc::Receiver<String>,
    /// Its text as last reported.
    text: std::cell::RefCell<String>,
}

/// The GTK Python found by [`tools_present`].
static PYTHON: OnceLock<&'static str> = OnceLock::new();

impl Field {
    pub fn start(
        x: &Xvfb,
        s: &Session,
        mode: &str,
        (text, caret): (&str, usize),
        name: Option<&str>,
    ) -> Field {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let title = format!(
            "Dictum caret test {}",
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let mut cmd = Command::new(PYTHON.get().copied().unwrap_or("/usr/bin/python3"));
        cmd.arg(repo_root().join("tests/gtk_caret_box.py"))
            .args(["--mode", mode, "--text", text, "--title", &title])
            .args(["--caret", &caret.to_string()])
            .envs(s.env(&x.display))
            .env_remove("GTK_A11Y")
            .env_remove("NO_AT_BRIDGE")
            .env_remove("AT_SPI_BUS_ADDRESS")
            .env_remove("WAYLAND_DISPLAY")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(name) = name {
            cmd.args(["--name", name]);
        }
        let mut child = cmd.spawn().expect("start tests/gtk_caret_box.py");
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let line = |what: &str| {
            rx.recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("the GTK field did not print {what:?}"))
        };
        assert_eq!(line("shown"), "shown");
        // No window manager: the window under the pointer gets the keyboard focus.
        let window = x.xdotool(&["search", "--sync", "--name", title.as_str()]);
        let window = window
            .lines()
            .next()
            .expect("the field's window")
            .to_string();
        x.xdotool(&["mousemove", "--window", &window, "100", "50"]);
        let ready = line("ready pid=N");
        let pid = ready
            .strip_prefix("ready pid=")
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or_else(|| panic!("unexpected line from the field: {ready:?}"));
        Field {
            child,
            pid,
            lines: rx,
            text: std::cell::RefCell::new(text.to_string()),
        }
    }

    /// The field's text once `done` holds for it, or as it is after `timeout` (the last
    /// change the field reported).
    pub fn text_when(&self, done: impl Fn(&str) -> bool, timeout: Duration) -> String {
        let until = Instant::now() + timeout;
        let mut now = self.text.borrow_mut();
        while !done(&now) {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(json) = line.strip_prefix("text=") {
                        *now = serde_json::from_str(json).expect("a JSON string");
                    }
                }
                Err(_) => break,
            }
        }
        now.clone()
    }
}

impl Drop for Field {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
