//! The portal client (`dictum_engine::portal`) against a STAND-IN portal: `tests/portal_standin.py`,
//! a D-Bus service written from xdg-desktop-portal's published interface XML (RemoteDesktop v2,
//! GlobalShortcuts v1, Request/Session), on a private `dbus-daemon`. It is a stand-in, not the
//! real portal: it is used for what the real KDE 5.27 portal here cannot show (its RemoteDesktop
//! is version 1, without restore tokens; its shortcut timestamps are 0), namely
//! - the exact keysym sequence for text with non-ASCII characters (the real portal drops
//!   characters the keyboard layout lacks, see `portal_kde.rs`);
//! - the restore-token round trip: the second connect offers the token the first one saved,
//!   the portal sees it, and consent is asked once;
//! - press/release order with the portal's timestamps, persistence of the binding (asked once),
//!   and rebinding.
//!
//! What runs against the real KDE portal is in `portal_kde.rs`.
//!
//! Needs `dbus-daemon` and python3-dbus-next (`/usr/bin/python3`); skipped without them unless
//! `DICTUM_REQUIRE_E2E` is set. Numbers:
//! `cargo test -p dictum-engine --features test-hooks --test portal_standin -- --nocapture`.
#![cfg(target_os = "linux")]

use dictum_engine::inject::backends::portal::RemoteKeyboard;
use dictum_engine::portal::{
    self, keysyms_for_text, Bus, PortalShortcut, ShortcutEvent, ShortcutRequest, KEYSYM_RETURN,
};
use serde_json::Value as Json;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PYTHON: &str = "/usr/bin/python3";

fn tools_present() -> bool {
    let dbus = Command::new("dbus-daemon")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let py = Command::new(PYTHON)
        .args(["-c", "import dbus_next"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if dbus && py {
        return true;
    }
    assert!(
        std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
        "DICTUM_REQUIRE_E2E is set but dbus-daemon or python3-dbus-next is missing (sudo apt install dbus python3-dbus-next)"
    );
    eprintln!("SKIPPED: dbus-daemon or python3-dbus-next missing (sudo apt install dbus python3-dbus-next)");
    false
}

/// A private session bus without service activation (so that the real xdg-desktop-portal,
/// if installed, is never started on it); killed on drop.
struct PrivateBus {
    child: Child,
    address: String,
    _dir: tempfile::TempDir,
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

impl PrivateBus {
    fn start() -> PrivateBus {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("bus.conf");
        std::fs::write(&config, BUS_CONFIG).expect("bus config");
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("dbus-daemon");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("bus address");
        PrivateBus {
            child,
            address: line.trim().to_string(),
            _dir: dir,
        }
    }

    fn bus(&self) -> Bus {
        Bus::Address(self.address.clone())
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The stand-in portal on a bus; its JSON log lines are collected.
struct StandIn {
    child: Child,
    stdin: ChildStdin,
    log: Arc<Mutex<Vec<Json>>>,
}

impl StandIn {
    fn start(bus: &PrivateBus, state: &Path) -> StandIn {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/portal_standin.py");
        let mut child = Command::new(PYTHON)
            .arg(&script)
            .arg(state)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("stand-in portal");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = mpsc::channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let v: Json = serde_json::from_str(&line).expect("stand-in log is JSON");
                if v.get("ready").is_some() {
                    let _ = ready_tx.send(());
                }
                sink.lock().expect("log").push(v);
            }
        });
        ready_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("stand-in portal ready");
        StandIn { child, stdin, log }
    }

    fn calls(&self, name: &str) -> Vec<Json> {
        self.log
            .lock()
            .expect("log")
            .iter()
            .filter(|v| v["call"] == name || v["emit"] == name)
            .cloned()
            .collect()
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("stand-in stdin");
        self.stdin.flush().expect("flush");
    }

    /// Waits until `n` log lines named `name` exist.
    fn wait_for(&self, name: &str, n: usize) -> Vec<Json> {
        let t = Instant::now();
        loop {
            let c = self.calls(name);
            if c.len() >= n || t.elapsed() > Duration::from_secs(5) {
                return c;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text the recorded NotifyKeyboardKeysym calls type: each keysym must be pressed then
/// released, in order.
fn typed_text(calls: &[Json]) -> String {
    // `RemoteKeyboard::connect` primes the session with one lone Shift tap (mutter drops the
    // first keys of a session): it types nothing.
    let key = |c: &Json| (c["keysym"].as_u64(), c["state"].as_u64());
    let calls = match calls {
        [a, b, rest @ ..]
            if key(a) == (Some(0xffe1), Some(1)) && key(b) == (Some(0xffe1), Some(0)) =>
        {
            rest
        }
        all => all,
    };
    let mut out = String::new();
    let mut held: Option<u32> = None;
    for c in calls {
        let k = c["keysym"].as_u64().expect("keysym") as u32;
        match (c["state"].as_u64(), held) {
            (Some(1), None) => held = Some(k),
            (Some(0), Some(h)) if h == k => {
                held = None;
                // Only Return and Tab may stand for control characters: a newline sent as
                // Linefeed (0xff0a) types nothing in most applications.
                out.push(match k {
                    KEYSYM_RETURN => '\n',
                    0xff09 => '\t',
                    0xff00..=0xffff => panic!("function keysym {k:#x} where text was expected"),
                    k => xkeysym::Keysym::new(k)
                        .key_char()
                        .expect("printable keysym"),
                });
            }
            other => panic!("unexpected key event {c} with {other:?}"),
        }
    }
    assert_eq!(held, None, "a key was left pressed");
    out
}

#[test]
fn types_the_exact_text_including_unicode() {
    if !tools_present() {
        return;
    }
    let bus = PrivateBus::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let portal = StandIn::start(&bus, &dir.path().join("state.json"));
    let mut kb =
        RemoteKeyboard::connect_on(&bus.bus(), &dir.path().join("rd.token")).expect("connect");
    let text = "Grüße, naïve café — 10 € ✓ 😀 Łódź\nSecond line\twith a tab.";
    kb.type_text(text).expect("type");
    let calls = portal.wait_for(
        "rd.NotifyKeyboardKeysym",
        2 + keysyms_for_text(text).len() * 2,
    );
    assert_eq!(typed_text(&calls), text);

    // Paste chords: Ctrl+V, then Ctrl+Shift+V for terminals, pressed and released in order.
    kb.paste_chord(false).expect("paste");
    kb.paste_chord(true).expect("paste terminal");
    let n = calls.len();
    let calls = portal.wait_for("rd.NotifyKeyboardKeysym", n + 10);
    let chord: Vec<(u64, u64)> = calls[n..]
        .iter()
        .map(|c| {
            (
                c["keysym"].as_u64().unwrap_or(0),
                c["state"].as_u64().unwrap_or(9),
            )
        })
        .collect();
    assert_eq!(
        chord,
        vec![
            (0xffe3, 1),
            (0x76, 1),
            (0x76, 0),
            (0xffe3, 0),
            (0xffe3, 1),
            (0xffe1, 1),
            (0x76, 1),
            (0x76, 0),
            (0xffe1, 0),
            (0xffe3, 0)
        ]
    );
    // Dropping the keyboard closes the portal session.
    drop(kb);
    assert_eq!(portal.wait_for("Session.Close", 1).len(), 1);
}

#[test]
fn restore_token_round_trip_asks_consent_once() {
    if !tools_present() {
        return;
    }
    let bus = PrivateBus::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let token_file = dir.path().join("data/remote-desktop.token");
    let portal = StandIn::start(&bus, &dir.path().join("state.json"));

    let t = Instant::now();
    let first = RemoteKeyboard::connect_on(&bus.bus(), &token_file).expect("first connect");
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(!first.offered_restore_token());
    assert_eq!(first.portal_version(), 2);
    let select = portal.calls("rd.SelectDevices");
    assert_eq!(select[0]["restore_token"], "", "no token on the first run");
    assert_eq!(select[0]["persist_mode"], 2);
    assert_eq!(select[0]["types"], 1, "keyboard only");
    let start = portal.calls("rd.Start");
    assert_eq!(start[0]["consent_asked"], true);
    let token1 = start[0]["new_token"].as_str().expect("token").to_string();
    assert_eq!(
        std::fs::read_to_string(&token_file).expect("token file"),
        token1
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777,
            0o600,
            "the token grants input control: user-only"
        );
    }
    drop(first);

    let t = Instant::now();
    let mut second = RemoteKeyboard::connect_on(&bus.bus(), &token_file).expect("second connect");
    let second_ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(second.offered_restore_token());
    let select = portal.calls("rd.SelectDevices");
    assert_eq!(
        select[1]["restore_token"],
        token1.as_str(),
        "the saved token was offered"
    );
    let start = portal.calls("rd.Start");
    assert_eq!(start[1]["restored"], true);
    assert_eq!(start[1]["consent_asked"], false);
    assert_eq!(start[1]["consents"], 1, "consent was asked once in all");
    let token2 = start[1]["new_token"].as_str().expect("token").to_string();
    assert_ne!(token1, token2, "tokens are single-use");
    assert_eq!(
        std::fs::read_to_string(&token_file).expect("token file"),
        token2
    );
    second.type_text("ok").expect("type after restore");

    // A token the portal does not know (revoked) means asking again, not failing.
    std::fs::write(&token_file, "revoked-token").expect("write");
    drop(second);
    let _third = RemoteKeyboard::connect_on(&bus.bus(), &token_file).expect("third connect");
    let start = portal.calls("rd.Start");
    assert_eq!(start[2]["consent_asked"], true);
    eprintln!(
        "stand-in portal: connect without token {first_ms:.1} ms, with restore token {second_ms:.1} ms"
    );
}

#[test]
fn shortcut_press_release_in_order_bound_once_and_rebound() {
    if !tools_present() {
        return;
    }
    let bus = PrivateBus::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state.json");
    let mut portal = StandIn::start(&bus, &state);
    let (tx, rx) = mpsc::channel::<(ShortcutEvent, Instant)>();
    let sink = Mutex::new(tx.clone());
    let requests = vec![
        ShortcutRequest::dictate("ctrl+alt+space"),
        ShortcutRequest::cancel("escape"),
    ];
    let sc = PortalShortcut::start_on(&bus.bus(), requests.clone(), move |e: &ShortcutEvent| {
        let _ = sink.lock().expect("sink").send((e.clone(), Instant::now()));
    })
    .expect("start");
    assert!(sc.asked_to_bind(), "first run binds");
    assert_eq!(sc.trigger_description().as_deref(), Some("CTRL+ALT+space"));
    assert_eq!(sc.trigger_of("cancel").as_deref(), Some("Escape"));
    let bind = portal.calls("gs.BindShortcuts");
    assert_eq!(bind.len(), 1);
    assert_eq!(
        bind[0]["triggers"],
        serde_json::json!(["CTRL+ALT+space", "Escape"])
    );

    for line in [
        "press dictate",
        "release dictate",
        "press dictate",
        "press cancel",
        "release cancel",
        "release dictate",
    ] {
        portal.send(line);
    }
    let got: Vec<(ShortcutEvent, Instant)> = (0..6)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(5))
                .expect("shortcut event")
        })
        .collect();
    let seq: Vec<(&str, bool)> = got
        .iter()
        .map(|(e, _)| (e.id.as_str(), e.pressed))
        .collect();
    assert_eq!(
        seq,
        vec![
            ("dictate", true),
            ("dictate", false),
            ("dictate", true),
            ("cancel", true),
            ("cancel", false),
            ("dictate", false)
        ]
    );
    let emitted: Vec<u64> = portal
        .wait_for("Activated", 3)
        .iter()
        .chain(portal.wait_for("Deactivated", 3).iter())
        .map(|v| v["timestamp"].as_u64().expect("ts"))
        .collect();
    let mut stamps: Vec<u64> = got.iter().map(|(e, _)| e.timestamp_ms).collect();
    assert!(
        stamps.windows(2).all(|w| w[0] <= w[1]),
        "portal timestamps in order: {stamps:?}"
    );
    assert!(got.windows(2).all(|w| w[0].1 <= w[1].1), "arrival in order");
    stamps.sort_unstable();
    let mut emitted_sorted = emitted.clone();
    emitted_sorted.sort_unstable();
    assert_eq!(
        stamps, emitted_sorted,
        "the portal's timestamps are passed through"
    );
    drop(sc);

    // Second start: the binding is found with ListShortcuts, nobody is asked again.
    let (tx2, rx2) = mpsc::channel::<bool>();
    let sink2 = Mutex::new(tx2);
    let mut sc = PortalShortcut::start_on(&bus.bus(), requests, move |e: &ShortcutEvent| {
        let _ = sink2.lock().expect("sink").send(e.pressed);
    })
    .expect("second start");
    assert!(
        !sc.asked_to_bind(),
        "the binding from the first run is reused"
    );
    assert_eq!(
        portal.calls("gs.BindShortcuts").len(),
        1,
        "no second BindShortcuts"
    );
    assert_eq!(sc.trigger_description().as_deref(), Some("CTRL+ALT+space"));
    portal.send("press dictate");
    assert!(rx2.recv_timeout(Duration::from_secs(5)).expect("press"));

    // Rebind from the settings panel: a fresh session, BindShortcuts with the new trigger.
    sc.rebind("super+shift+d").expect("rebind");
    let bind = portal.calls("gs.BindShortcuts");
    assert_eq!(bind.len(), 2);
    assert_eq!(bind[1]["triggers"][0], "SHIFT+LOGO+d");
    assert_eq!(bind[1]["asked"], true);
    assert_eq!(sc.trigger_description().as_deref(), Some("SHIFT+LOGO+d"));
    portal.send("release dictate");
    assert!(!rx2
        .recv_timeout(Duration::from_secs(5))
        .expect("release in the new session"));
    assert!(
        rx2.recv_timeout(Duration::from_millis(300)).is_err(),
        "events of the closed session are not delivered twice"
    );
    drop(tx);
}

#[test]
fn probe_is_bounded_and_reads_the_portal() {
    if !tools_present() {
        return;
    }
    // No bus at all.
    let t = Instant::now();
    let info = portal::probe_on(&Bus::Address("unix:path=/nonexistent/dictum-bus".into()));
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert_eq!(info, portal::PortalInfo::default());

    // A bus without a portal.
    let bus = PrivateBus::start();
    let t = Instant::now();
    let info = portal::probe_on(&bus.bus());
    let empty_ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(t.elapsed() < Duration::from_millis(1100));
    assert_eq!(info.remote_desktop, None);
    assert_eq!(info.global_shortcuts, None);
    assert!(!info.can_type());

    // The stand-in portal.
    let dir = tempfile::tempdir().expect("tempdir");
    let _portal = StandIn::start(&bus, &dir.path().join("state.json"));
    let t = Instant::now();
    let info = portal::probe_on(&bus.bus());
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(info.remote_desktop, Some(2));
    assert_eq!(info.global_shortcuts, Some(1));
    assert_eq!(info.available_device_types, 7);
    assert!(info.can_type());
    eprintln!("probe: {ms:.1} ms with the stand-in portal, {empty_ms:.1} ms on a bus without one");
}

#[test]
fn measure_keysyms_per_second() {
    if !tools_present() {
        return;
    }
    let bus = PrivateBus::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let portal = StandIn::start(&bus, &dir.path().join("state.json"));
    let mut kb =
        RemoteKeyboard::connect_on(&bus.bus(), &dir.path().join("rd.token")).expect("connect");
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(10);
    let t = Instant::now();
    kb.type_text(&text).expect("type");
    let s = t.elapsed().as_secs_f64();
    let calls = portal.wait_for("rd.NotifyKeyboardKeysym", 2 + text.chars().count() * 2);
    assert_eq!(typed_text(&calls), text);
    eprintln!(
        "stand-in portal: {} chars in {:.1} ms = {:.0} chars/s ({:.0} keysym events/s)",
        text.chars().count(),
        s * 1e3,
        text.chars().count() as f64 / s,
        2.0 * text.chars().count() as f64 / s
    );
}

/// Per-app profiles on GNOME: the focused window from the Shell extensions' published D-Bus
/// interfaces (`tests/gnome_focus_standin.py`, a stand-in: GNOME Shell cannot run here), and a
/// clear error without either.
#[test]
fn gnome_focus_from_the_extensions_or_a_clear_error() {
    if !tools_present() {
        return;
    }
    use dictum_engine::inject::focus_dbus::gnome_focused;
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/gnome_focus_standin.py");
    for mode in ["focused-window", "window-calls"] {
        let bus = PrivateBus::start();
        let mut child = Command::new(PYTHON)
            .arg(&script)
            .arg(mode)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .stdout(Stdio::piped())
            .spawn()
            .expect("stand-in");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("ready");
        assert_eq!(line.trim(), "ready");
        let w = gnome_focused(&bus.bus()).expect(mode);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(w.class.as_deref(), Some("org.gnome.Evolution"), "{mode}");
        assert_eq!(w.instance.as_deref(), Some("evolution"), "{mode}");
        assert_eq!(w.title.as_deref(), Some("Inbox — Mail"), "{mode}");
    }
    let bus = PrivateBus::start();
    let e = gnome_focused(&bus.bus()).expect_err("no extension");
    assert!(e.contains("Focused Window D-Bus"), "{e}");
}
