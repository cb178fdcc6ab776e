//! The focused application on KDE Plasma and GNOME, which do not tell other programs through
//! a compositor socket as sway and Hyprland do (`focus.rs`). Used to pick a per-app profile and
//! for the history row, not to route keys (the native paths reach every window there).
//!
//! - **KDE (KWin 5.27 and 6):** KWin runs scripts loaded over D-Bus, and a script may call
//!   D-Bus methods. Dictum serves one method on its own connection, loads a three-line script
//!   that calls it with the active window's class, instance, caption and process id, runs it,
//!   and unloads it (what kdotool does). The pid lets the gate judge the window by its
//!   process (`inject/gate.rs`) instead of counting every KDE window as a terminal.
//! - **GNOME:** only a Shell extension can see the focused window. Two published ones answer
//!   on D-Bus: "Focused Window D-Bus" (`org.gnome.shell.extensions.FocusedWindow.Get`, a
//!   JSON object) and "Window Calls" (`org.gnome.Shell.Extensions.Windows.List`, a JSON array
//!   with `focus`). Without either, the app is unknown.
//!
//! Each query is bounded by [`TIMEOUT`].

use super::window::WindowInfo;
use crate::portal::Bus;
use serde_json::Value;
use std::time::Duration;

pub const TIMEOUT: Duration = Duration::from_millis(500);

const REPLY_PATH: &str = "/org/dictum/FocusReply";

/// The script KWin runs: it answers on our connection (`@DEST@`). KWin 5 has
/// `activeClient` and byte-array classes, KWin 6 `activeWindow` and strings.
/// The reply object's interface is `org.dictum.FocusReply` (the `#[interface]` below).
const KWIN_SCRIPT: &str = r#"function s(v) {
    if (v === undefined || v === null) return "";
    if (typeof v === "string") return v;
    try { return String.fromCharCode.apply(null, new Uint8Array(v)); } catch (e) { return String(v); }
}
const w = workspace.activeWindow || workspace.activeClient;
callDBus("@DEST@", "/org/dictum/FocusReply", "org.dictum.FocusReply", "Focused",
    w ? s(w.resourceClass) : "", w ? s(w.resourceName) : "", w ? s(w.caption) : "",
    w && w.pid > 0 ? String(w.pid) : "");
"#;

async fn connect(bus: &Bus) -> Result<zbus::Connection, String> {
    let builder = match bus {
        Bus::Session => zbus::connection::Builder::session(),
        Bus::Address(a) => zbus::connection::Builder::address(a.as_str()),
    }
    .map_err(|e| format!("no session bus: {e}"))?;
    builder
        .build()
        .await
        .map_err(|e| format!("no session bus: {e}"))
}

/// What the script tells: class, instance, caption and pid (as text; "" when unknown).
type Told = (String, String, String, String);

struct Reply(tokio::sync::mpsc::UnboundedSender<Told>);

#[zbus::interface(name = "org.dictum.FocusReply")]
impl Reply {
    async fn focused(&self, class: String, instance: String, caption: String, pid: String) {
        let _ = self.0.send((class, instance, caption, pid));
    }
}

fn info(class: &str, instance: &str, title: &str, pid: &str) -> WindowInfo {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    WindowInfo {
        id: None,
        instance: some(instance),
        class: some(class),
        title: some(title),
        pid: pid.trim().parse::<u32>().ok().filter(|&p| p > 0),
    }
}

/// The active window as KWin sees it.
pub fn kde_focused(bus: &Bus) -> Result<WindowInfo, String> {
    crate::portal::rt::run_result(TIMEOUT, "KWin's active window", kde_query(bus.clone()))
}

async fn kde_query(bus: Bus) -> Result<WindowInfo, String> {
    let conn = connect(&bus).await?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    conn.object_server()
        .at(REPLY_PATH, Reply(tx))
        .await
        .map_err(|e| format!("cannot serve the reply: {e}"))?;
    let dest = conn
        .unique_name()
        .map(|n| n.to_string())
        .ok_or("no unique name on the bus")?;
    let name = format!("dictum-focus-{}", dest.replace([':', '.'], "_"));
    // The session's private runtime folder; without one (no session manager), a new 0700
    // folder of our own made with mkdtemp (a random name nobody else can have made first),
    // removed after the script (declared first: dropped last).
    let fallback;
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        // Dictum's own folder in it (the systemd unit makes only that one writable).
        Some(d) => own_runtime_folder(std::path::Path::new(&d))?,
        None => {
            fallback = PrivateTempDir::new()?;
            fallback.0.clone()
        }
    };
    let script = ScriptFile::create(&dir, &name, &KWIN_SCRIPT.replace("@DEST@", &dest))?;
    let file = script.path.clone();
    let result = async {
        let reply = conn
            .call_method(
                Some("org.kde.KWin"),
                "/Scripting",
                Some("org.kde.kwin.Scripting"),
                "loadScript",
                &(file.display().to_string(), name.as_str()),
            )
            .await
            .map_err(|e| format!("KWin did not load the script: {e}"))?;
        let id: i32 = reply
            .body()
            .deserialize()
            .map_err(|e| format!("KWin's loadScript answer: {e}"))?;
        if id < 0 {
            return Err("KWin refused the script".to_string());
        }
        // KWin 6 and late 5.x: /Scripting/Script<id>; earlier 5.x: /<id>.
        let mut ran = Err(String::new());
        for path in [format!("/Scripting/Script{id}"), format!("/{id}")] {
            ran = conn
                .call_method(
                    Some("org.kde.KWin"),
                    path.as_str(),
                    Some("org.kde.kwin.Script"),
                    "run",
                    &(),
                )
                .await
                .map(drop)
                .map_err(|e| format!("KWin did not run the script: {e}"));
            if ran.is_ok() {
                break;
            }
        }
        ran?;
        rx.recv()
            .await
            .ok_or_else(|| "KWin's script did not answer".to_string())
    }
    .await;
    let _ = conn
        .call_method(
            Some("org.kde.KWin"),
            "/Scripting",
            Some("org.kde.kwin.Scripting"),
            "unloadScript",
            &(name.as_str()),
        )
        .await;
    // KWin read the file when it ran the script; it is not needed past this point.
    drop(script);
    let (class, instance, caption, pid) = result?;
    Ok(info(&class, &instance, &caption, &pid))
}

/// The script file KWin loads: created new (never an existing file or link followed) with
/// mode 0600 under a unique name in the user's private runtime folder, removed when dropped.
/// A predictable name in the shared `/tmp` let another local user plant a file there for
/// KWin to run as the user (or, with `fs.protected_regular`, make the write fail).
struct ScriptFile {
    path: std::path::PathBuf,
}

impl ScriptFile {
    fn create(dir: &std::path::Path, stem: &str, text: &str) -> Result<ScriptFile, String> {
        use std::io::Write;
        private_runtime_dir(dir)?;
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut last = String::new();
        for _ in 0..8 {
            let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = dir.join(format!(
                "{stem}-{}-{seq}-{:016x}.js",
                std::process::id(),
                unique_bits()
            ));
            match open_new(&path) {
                Ok(mut f) => {
                    let file = ScriptFile { path };
                    f.write_all(text.as_bytes())
                        .map_err(|e| format!("cannot write the KWin script: {e}"))?;
                    return Ok(file);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    last = format!("{} already exists", path.display());
                }
                Err(e) => {
                    return Err(format!(
                        "cannot create the KWin script in {}: {e}",
                        dir.display()
                    ))
                }
            }
        }
        Err(format!("cannot create the KWin script: {last}"))
    }
}

impl Drop for ScriptFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Creates `path` for writing, mode 0600; an existing path (a file, or a link to anything)
/// fails with `AlreadyExists` and is never opened or followed.
fn open_new(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true) // O_CREAT | O_EXCL
        .mode(crate::paths::PRIVATE_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// 64 bits from the kernel's random source, or the clock where it cannot be read (the
/// folder is private, so the name only has to be unique; `create_new` refuses a clash).
fn unique_bits() -> u64 {
    use std::io::Read;
    let mut b = [0u8; 8];
    match std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)) {
        Ok(()) => u64::from_ne_bytes(b),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default(),
    }
}

/// A new folder only this user can enter (`mkdtemp`: mode 0700, a random name created
/// atomically), removed on drop (empty by then: the script inside is removed first).
struct PrivateTempDir(std::path::PathBuf);

impl PrivateTempDir {
    fn new() -> Result<PrivateTempDir, String> {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        let base = std::env::temp_dir();
        let mut template = base
            .join("dictum-kwin-XXXXXX")
            .as_os_str()
            .as_bytes()
            .to_vec();
        template.push(0);
        // SAFETY: `template` is a writable NUL-terminated buffer ending in "XXXXXX", which
        // mkdtemp fills in place; it returns null on failure and touches nothing else.
        let made = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(format!(
                "cannot make a private folder for the KWin script in {} ({}); set \
                 XDG_RUNTIME_DIR to a 0700 folder of your own",
                base.display(),
                std::io::Error::last_os_error()
            ));
        }
        template.pop();
        Ok(PrivateTempDir(
            std::ffi::OsString::from_vec(template).into(),
        ))
    }
}

impl Drop for PrivateTempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// `<runtime>/dictum` (where the control socket lives too), created 0700 when missing; the
/// runtime folder itself must pass [`private_runtime_dir`] first.
fn own_runtime_folder(runtime: &std::path::Path) -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    private_runtime_dir(runtime)?;
    let dir = runtime.join("dictum");
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => Ok(dir),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(dir),
        Err(e) => Err(format!(
            "cannot make {} for the KWin script: {e}",
            dir.display()
        )),
    }
}

/// `dir` must be a real folder (not a link) of this user with no access for anyone else:
/// the runtime folder systemd-logind makes (`/run/user/<uid>`, 0700). Anything else is
/// refused, never changed.
fn private_runtime_dir(dir: &std::path::Path) -> Result<(), String> {
    crate::paths::check_private_dir(dir).map_err(|why| {
        format!(
            "will not write the KWin script in {}: {why}; XDG_RUNTIME_DIR must be a 0700 \
             folder of your own (`chmod 700 {}` if it is yours)",
            dir.display(),
            dir.display()
        )
    })
}

/// The focused window as a GNOME Shell extension tells it.
pub fn gnome_focused(bus: &Bus) -> Result<WindowInfo, String> {
    crate::portal::rt::run_result(TIMEOUT, "the focused window", gnome_query(bus.clone()))
}

async fn gnome_query(bus: Bus) -> Result<WindowInfo, String> {
    let conn = connect(&bus).await?;
    let call = |path: &'static str, iface: &'static str, method: &'static str| {
        let conn = conn.clone();
        async move {
            let reply = conn
                .call_method(Some("org.gnome.Shell"), path, Some(iface), method, &())
                .await
                .map_err(|e| e.to_string())?;
            let json: String = reply.body().deserialize().map_err(|e| e.to_string())?;
            serde_json::from_str::<Value>(&json).map_err(|e| e.to_string())
        }
    };
    let focused = call(
        "/org/gnome/shell/extensions/FocusedWindow",
        "org.gnome.shell.extensions.FocusedWindow",
        "Get",
    )
    .await;
    if let Ok(w) = focused {
        return Ok(gnome_window(&w));
    }
    let list = call(
        "/org/gnome/Shell/Extensions/Windows",
        "org.gnome.Shell.Extensions.Windows",
        "List",
    )
    .await
    .map_err(|e| {
        format!(
            "no GNOME Shell extension tells the focused window (install \"Focused Window D-Bus\" \
             or \"Window Calls\" for per-app profiles): {e}"
        )
    })?;
    Ok(list
        .as_array()
        .and_then(|a| a.iter().find(|w| w["focus"] == true))
        .map(gnome_window)
        .unwrap_or_default())
}

fn gnome_window(w: &Value) -> WindowInfo {
    let s = |k: &str| w[k].as_str().unwrap_or_default().to_string();
    info(&s("wm_class"), &s("wm_class_instance"), &s("title"), "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn private_dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().expect("tempdir");
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
        d
    }

    #[test]
    fn without_a_runtime_dir_a_new_private_folder_holds_the_script_and_goes_with_it() {
        let dir = PrivateTempDir::new().expect("made");
        let mode = std::fs::symlink_metadata(&dir.0)
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        private_runtime_dir(&dir.0).expect("passes the runtime folder's checks");
        let other = PrivateTempDir::new().expect("made");
        assert_ne!(dir.0, other.0, "a new name each time");
        let path = dir.0.clone();
        {
            let f = ScriptFile::create(&path, "dictum-focus-y", "script").expect("created");
            assert!(f.path.starts_with(&path));
        }
        drop(dir);
        assert!(!path.exists(), "removed with the script");
    }

    #[test]
    fn the_kwin_script_is_a_new_private_file_removed_after_use() {
        let d = private_dir();
        let f = ScriptFile::create(d.path(), "dictum-focus-x", "script text").expect("created");
        assert!(f.path.starts_with(d.path()), "{}", f.path.display());
        let meta = std::fs::symlink_metadata(&f.path).expect("stat");
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
        assert_eq!(
            std::fs::read_to_string(&f.path).expect("read"),
            "script text"
        );
        // Two scripts never share a name.
        let g = ScriptFile::create(d.path(), "dictum-focus-x", "other").expect("second");
        assert_ne!(f.path, g.path);
        let path = f.path.clone();
        drop(f);
        assert!(!path.exists(), "removed when dropped");
        drop(g);
        assert_eq!(std::fs::read_dir(d.path()).expect("ls").count(), 0);
    }

    #[test]
    fn folders_that_are_not_private_and_ours_are_refused_and_left_alone() {
        let d = tempfile::tempdir().expect("tempdir");
        let open = d.path().join("open");
        std::fs::create_dir(&open).expect("mkdir");
        for mode in [0o755, 0o750, 0o1777, 0o707] {
            std::fs::set_permissions(&open, std::fs::Permissions::from_mode(mode)).expect("chmod");
            let err = ScriptFile::create(&open, "s", "x").err().expect("refused");
            assert!(
                err.contains("open to others") && err.contains("chmod 700"),
                "{err}"
            );
            let now = std::fs::metadata(&open).expect("stat").permissions().mode() & 0o7777;
            assert_eq!(now, mode, "never changed");
            assert_eq!(
                std::fs::read_dir(&open).expect("ls").count(),
                0,
                "nothing written"
            );
        }
        let link = d.path().join("link");
        let target = private_dir();
        std::os::unix::fs::symlink(target.path(), &link).expect("symlink");
        let err = ScriptFile::create(&link, "s", "x").err().expect("refused");
        assert!(err.contains("symbolic link"), "{err}");
        let missing = d.path().join("missing");
        assert!(ScriptFile::create(&missing, "s", "x").is_err());
        assert!(!missing.exists());
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let theirs = d.path().join("theirs");
            std::fs::create_dir(&theirs).expect("mkdir");
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700))
                .expect("chmod");
            std::os::unix::fs::chown(&theirs, Some(4242), Some(4242)).expect("chown");
            let err = ScriptFile::create(&theirs, "s", "x")
                .err()
                .expect("refused");
            assert!(err.contains("belongs to another user"), "{err}");
        }
    }

    /// A file (or a link to one) already at the path the script would take is never opened,
    /// followed or overwritten.
    #[test]
    fn an_existing_file_or_link_at_the_path_is_never_followed() {
        let d = private_dir();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").expect("victim");
        let planted = d.path().join("planted.js");
        std::os::unix::fs::symlink(&victim, &planted).expect("symlink");
        let err = open_new(&planted).expect_err("a link is not followed");
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists, "{err}");
        let err = open_new(&victim).expect_err("a file is not reopened");
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists, "{err}");
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
    }

    #[test]
    fn reads_the_extensions_json() {
        let w = gnome_window(&serde_json::json!({
            "title": "Inbox — Mail", "wm_class": "org.gnome.Evolution",
            "wm_class_instance": "evolution", "focus": true
        }));
        assert_eq!(w.class.as_deref(), Some("org.gnome.Evolution"));
        assert_eq!(w.instance.as_deref(), Some("evolution"));
        assert_eq!(w.title.as_deref(), Some("Inbox — Mail"));
        assert_eq!(gnome_window(&serde_json::json!({})), WindowInfo::default());
    }
}
