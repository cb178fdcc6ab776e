//! Paste mode keeps the whole Wayland clipboard: another application (`tests/clipboard_owner.py`,
//! GTK 4 on the session's Wayland display, as the session's user) offers an image and HTML
//! together; after the injector pasted into foot, `wl-paste` lists the same types and reads
//! back the same bytes. A copy made during the paste is left alone; a clipboard over the
//! 32 MiB bound keeps what fits and the report names the rest. Every Wayland paste's report
//! says it is unconfirmed ([`PASTE_UNCONFIRMED`]), and nothing else when all went well.

use super::{injector, session_copy, WAIT};
use crate::common::sway::{tools_present, Kind, Sway, Window};
use crate::common::x11::gtk4_present;
use dictum_engine::inject::backends::vkbd::VirtualKeyboard;
use dictum_engine::inject::backends::wlclip::WlClipboard;
use dictum_engine::inject::{
    Delivery, InjectBackend, InjectConfig, InjectMethod, Injector, TypePath, PASTE_UNCONFIRMED,
};
use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// foot's app id: a terminal class of [`injector`]'s config (it pastes with Ctrl+Shift+V).
const FOOT: &str = "dictumroute";

/// `tests/clipboard_owner.py --window` on the session: GTK 4 offering `image/png` and
/// `text/html` (the bytes it serves: `png`, `html`). Killed on drop.
struct Owner {
    child: Child,
    png: Vec<u8>,
    html: Vec<u8>,
    /// A keyboard on the seat (headless sway has none): without one no window gets the
    /// keyboard focus, and its key gives the owner the input serial a selection needs.
    _keyboard: VirtualKeyboard,
}

impl Owner {
    /// Starts it and waits until the session's clipboard is its image (`wl-paste` reads it).
    fn start(sway: &Sway, png_kib: usize, html_kib: usize) -> Owner {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clipboard_owner.py");
        let log_path = sway.file("clipboard_owner.log");
        let log = std::fs::File::create(&log_path).expect("owner log");
        let mut keyboard = VirtualKeyboard::connect().expect("virtual keyboard");
        let t0 = Instant::now();
        let mut child = sway
            .command("/usr/bin/python3")
            .arg(&script)
            .arg("--window")
            .arg("--out")
            .arg(&sway.dir)
            .args(["--png-kib", &png_kib.to_string()])
            .args(["--html-kib", &html_kib.to_string()])
            .env("GDK_BACKEND", "wayland")
            .env("GSK_RENDERER", "cairo")
            .env("GTK_A11Y", "none")
            .env("NO_AT_BRIDGE", "1")
            // No session bus here: fail at once rather than start one.
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/dictum-test-bus",
            )
            .env_remove("DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start tests/clipboard_owner.py");
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let logs = || std::fs::read_to_string(&log_path).unwrap_or_default();
        let mut said = |word: &str| {
            let mut line = String::new();
            let _ = stdout.read_line(&mut line);
            assert_eq!(
                line.trim(),
                word,
                "tests/clipboard_owner.py did not say {word}:\n{}",
                logs()
            );
        };
        // Its window has the focus; a key pressed there gives it the serial it claims with.
        said("focused");
        keyboard.type_text("x").expect("a key for the owner");
        said("ready");
        let owner = Owner {
            child,
            png: std::fs::read(sway.file("clip.png")).expect("clip.png"),
            html: std::fs::read(sway.file("clip.html")).expect("clip.html"),
            _keyboard: keyboard,
        };
        while wl_paste(sway, "image/png") != owner.png {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the GTK owner did not become the clipboard (types: {:?}):\n{}",
                list_types(sway),
                logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!(
            "GTK owner: {} B of PNG, {} B of HTML, the clipboard's after {:.0} ms",
            owner.png.len(),
            owner.html.len(),
            t0.elapsed().as_secs_f64() * 1e3
        );
        owner
    }
}

impl Owner {
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The session clipboard's `mime` bytes as another application reads them.
fn wl_paste(sway: &Sway, mime: &str) -> Vec<u8> {
    sway.command("wl-paste")
        .args(["--no-newline", "--type", mime])
        .output()
        .expect("wl-paste")
        .stdout
}

/// The types the session's clipboard offers, sorted.
fn list_types(sway: &Sway) -> Vec<String> {
    let out = sway
        .command("wl-paste")
        .arg("--list-types")
        .output()
        .expect("wl-paste");
    let mut types: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    types.sort();
    types
}

/// Pastes `text` into `foot` and checks it arrived, by the virtual keyboard's chord.
fn paste(inj: &mut Injector, foot: &Window, text: &str) -> dictum_engine::inject::InjectReport {
    foot.clear();
    let r = inj.inject(text);
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(
        r.method,
        Some(Delivery::Pasted(TypePath::VirtualKeyboard)),
        "{r:?}"
    );
    let expected = format!("{text} ");
    assert_eq!(foot.wait_for(&expected, WAIT), expected, "{r:?}");
    r
}

#[test]
fn a_wayland_paste_keeps_an_image_and_html_on_the_clipboard() {
    if !tools_present() || !gtk4_present() {
        return;
    }
    let sway = Sway::start();
    let mut clip = WlClipboard::connect().expect("clipboard");
    assert_eq!(
        clip.snapshot(),
        Ok(None),
        "a new session's clipboard is empty"
    );

    // Nothing on the clipboard: the text stays there afterwards (as on X11).
    let foot = Window::open(&sway, Kind::Foot, FOOT);
    let mut inj = injector(InjectMethod::Paste, InjectBackend::Auto);
    let r = paste(&mut inj, &foot, "first");
    assert_eq!(r.warning.as_deref(), Some(PASTE_UNCONFIRMED), "{r:?}");
    assert_eq!(wl_paste(&sway, "text/plain"), b"first ");

    // Above 64 KiB (a pipe's buffer): read in many pieces.
    let mut owner = Owner::start(&sway, 40, 600);
    let before = list_types(&sway);
    assert!(
        before.contains(&"image/png".to_string()) && before.contains(&"text/html".to_string()),
        "{before:?}"
    );
    let t0 = Instant::now();
    let saved = clip.snapshot().expect("snapshot").expect("not empty");
    let snap_ms = t0.elapsed().as_secs_f64() * 1e3;
    assert_eq!(saved.bytes("image/png"), Some(&owner.png[..]));
    assert_eq!(saved.bytes("text/html"), Some(&owner.html[..]));
    assert_eq!(saved.dropped_note(), None);
    eprintln!(
        "snapshot: {:?}, {} B, {snap_ms:.1} ms",
        saved.types(),
        saved.total()
    );

    foot.focus(&sway);
    for round in 0..2 {
        let r = paste(&mut inj, &foot, "Pasted over an image, Grüße ✓");
        assert_eq!(r.warning.as_deref(), Some(PASTE_UNCONFIRMED), "{r:?}");
        assert_eq!(list_types(&sway), before, "round {round}");
        assert!(wl_paste(&sway, "image/png") == owner.png, "round {round}");
        assert!(wl_paste(&sway, "text/html") == owner.html, "round {round}");
        eprintln!(
            "paste over {} B of PNG + HTML, round {round}: chord after {:.1} ms, {:.1} ms with \
             the {} ms wait and the restore",
            saved.total(),
            r.inject_ms,
            r.total_ms,
            InjectConfig::default().paste_restore_delay_ms
        );
        if round == 0 {
            // The restored clipboard is Dictum's now: it outlives the owner.
            owner.stop();
            assert!(
                wl_paste(&sway, "image/png") == owner.png,
                "after the owner quit"
            );
        }
    }
}

/// Something copied while Dictum waits to restore: that copy stays, and the report says the
/// previous clipboard was not restored, and why.
#[test]
fn a_copy_made_during_a_wayland_paste_is_left_alone() {
    if !tools_present() || !gtk4_present() {
        return;
    }
    let sway = Sway::start();
    let _owner = Owner::start(&sway, 4, 1);
    let foot = Window::open(&sway, Kind::Foot, FOOT);
    let mut inj = Injector::new(&InjectConfig {
        method: InjectMethod::Paste,
        notify_on_failure: false,
        terminal_classes: vec![FOOT.into()],
        // Room for the copy below to land before the restore.
        paste_restore_delay_ms: 1500,
        ..InjectConfig::default()
    })
    .expect("injector");
    let text = "dictated while copying";
    let r = std::thread::scope(|s| {
        let copier = s.spawn(|| {
            // Once foot has the text (the paste is done, the restore not yet): copy.
            let expected = format!("{text} ");
            assert_eq!(foot.wait_for(&expected, WAIT), expected, "no paste seen");
            session_copy(&sway, "copied meanwhile");
        });
        let r = paste(&mut inj, &foot, text);
        copier.join().expect("copier");
        r
    });
    assert_eq!(
        r.warning.as_deref(),
        Some(
            format!(
                "{PASTE_UNCONFIRMED}; the text was pasted; the previous clipboard was not \
                 restored: something else was copied meanwhile (kept)"
            )
            .as_str()
        ),
        "{r:?}"
    );
    assert_eq!(wl_paste(&sway, "text/plain"), b"copied meanwhile");
    assert!(!list_types(&sway).contains(&"image/png".to_string()));
}

/// An image over the 32 MiB bound: the HTML beside it is kept and restored, the image left
/// out, and the report names it.
#[test]
fn a_wayland_clipboard_over_the_bound_keeps_what_fits() {
    if !tools_present() || !gtk4_present() {
        return;
    }
    let sway = Sway::start();
    let owner = Owner::start(&sway, 33 << 10, 16);
    assert!(owner.png.len() > 32 << 20, "{} B", owner.png.len());
    let foot = Window::open(&sway, Kind::Foot, FOOT);
    let mut inj = injector(InjectMethod::Paste, InjectBackend::Auto);
    let r = paste(&mut inj, &foot, "a large image");
    assert_eq!(
        r.warning.as_deref(),
        Some(
            format!(
                "{PASTE_UNCONFIRMED}; the previous clipboard was restored without image/png \
                 (over 32 MiB in all)"
            )
            .as_str()
        ),
        "{r:?}"
    );
    assert_eq!(list_types(&sway), ["text/html"]);
    assert!(wl_paste(&sway, "text/html") == owner.html);
    eprintln!(
        "paste over {} B of PNG (left out) + {} B of HTML: chord after {:.1} ms, {:.1} ms in all",
        owner.png.len(),
        owner.html.len(),
        r.inject_ms,
        r.total_ms
    );
}
