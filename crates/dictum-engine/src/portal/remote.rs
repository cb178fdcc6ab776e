//! Typing through the RemoteDesktop portal: CreateSession → SelectDevices (keyboard, persist
//! mode 2 with the saved restore token) → Start (the user consents; with a valid token the
//! portal restores the grant silently) → NotifyKeyboardKeysym press/release per character.
//! The new restore token from Start is saved (mode 0600) for the next connect. The session
//! stays open until the [`RemoteKeyboard`] is dropped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use zbus::zvariant::{OwnedObjectPath, Value};

use super::dbus::{self, Portal, Results, REMOTE_DESKTOP};
use super::keysym::keysyms_for_text;
use super::{rt, Bus, DEVICE_KEYBOARD};

/// CreateSession and SelectDevices need no user: they answer quickly or not at all.
const SETUP_LIMIT: Duration = Duration::from_secs(10);
/// Start may wait for the user to answer the consent dialog.
const CONSENT_LIMIT: Duration = Duration::from_secs(180);
const PERSIST_UNTIL_REVOKED: u32 = 2;
/// After the priming Shift tap, before the first character (see `prime`).
const PRIME_SETTLE: Duration = Duration::from_millis(150);

const CONTROL_L: u32 = 0xffe3;
const SHIFT_L: u32 = 0xffe1;
const KEY_V: u32 = 0x76;

/// An open RemoteDesktop session with keyboard access. Send: it can be handed to the
/// injector thread; one keyboard is meant to live as long as the app.
pub struct RemoteKeyboard {
    portal: Portal,
    session: OwnedObjectPath,
    version: u32,
    restored: bool,
}

impl std::fmt::Debug for RemoteKeyboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteKeyboard")
            .field("session", &self.session.as_str())
            .field("version", &self.version)
            .field("restored", &self.restored)
            .finish()
    }
}

impl RemoteKeyboard {
    /// Opens a keyboard session on the session bus; `token_file` holds the restore token
    /// between runs (read if present, rewritten with the portal's new token).
    pub fn connect(token_file: &Path) -> Result<RemoteKeyboard, String> {
        RemoteKeyboard::connect_on(&Bus::Session, token_file)
    }

    /// [`connect`](Self::connect) on a given bus.
    pub fn connect_on(bus: &Bus, token_file: &Path) -> Result<RemoteKeyboard, String> {
        let token = read_token(token_file);
        let bus = bus.clone();
        let restore = token.clone();
        let (portal, session, version) = rt::run_result(
            SETUP_LIMIT,
            "the remote-desktop setup",
            async move {
                let portal = Portal::connect(&bus).await?;
                let version = portal.version(REMOTE_DESKTOP).await.ok_or_else(|| {
                    "the desktop portal offers no RemoteDesktop (keyboard) access; install xdg-desktop-portal-kde or -gnome, or use another typing method".to_string()
                })?;
                let session = create_session(&portal).await?;
                select_keyboard(&portal, &session, version, restore.as_deref()).await?;
                Ok((portal, session, version))
            },
        )?;
        let start_portal = portal.clone();
        let start_session = session.clone();
        let results = rt::run_result(CONSENT_LIMIT, "the remote-desktop permission", async move {
            start(&start_portal, &start_session).await
        });
        let results = match results {
            Ok(r) => r,
            Err(e) => {
                close(&portal, &session);
                return Err(e);
            }
        };
        if let Some(devices) = results.get("devices").and_then(|v| u32::try_from(v).ok()) {
            if devices & DEVICE_KEYBOARD == 0 {
                close(&portal, &session);
                return Err("the remote-desktop permission was granted without the keyboard; allow keyboard control when asked".into());
            }
        }
        if let Some(new_token) = results
            .get("restore_token")
            .and_then(|v| v.try_clone().ok())
            .and_then(|v| String::try_from(v).ok())
        {
            if let Err(e) = save_token(token_file, &new_token) {
                tracing::warn!("{e}");
            }
        }
        let mut keyboard = RemoteKeyboard {
            portal,
            session,
            version,
            restored: token.is_some(),
        };
        keyboard.prime();
        Ok(keyboard)
    }

    /// GNOME (mutter 43) drops the first key events of a new RemoteDesktop session: measured
    /// on the real stack, the first 1 to 3 characters typed after Start never reached the
    /// window. A lone Shift tap (types nothing) goes first, and the first characters wait
    /// [`PRIME_SETTLE`] (once per session, not per dictation).
    fn prime(&mut self) {
        if let Err(e) = self.keys(vec![(SHIFT_L, true), (SHIFT_L, false)], SETUP_LIMIT) {
            tracing::debug!("portal: priming the keyboard: {e}");
        }
        std::thread::sleep(PRIME_SETTLE);
    }

    /// The RemoteDesktop interface version (restore tokens need ≥ 2).
    pub fn portal_version(&self) -> u32 {
        self.version
    }

    /// Whether a saved restore token was offered to the portal on connect.
    pub fn offered_restore_token(&self) -> bool {
        self.restored
    }

    /// Types `text`: one press and release per character (see [`keysyms_for_text`]). Keys the
    /// desktop's layout lacks may be dropped by the portal (KDE, GNOME map keysyms to keys).
    pub fn type_text(&mut self, text: &str) -> Result<(), String> {
        let keysyms = keysyms_for_text(text);
        let limit = Duration::from_secs(5) + Duration::from_millis(10) * keysyms.len() as u32;
        self.keys(
            keysyms
                .into_iter()
                .flat_map(|k| [(k, true), (k, false)])
                .collect(),
            limit,
        )
    }

    /// Ctrl+V, or Ctrl+Shift+V for terminals.
    pub fn paste_chord(&mut self, terminal: bool) -> Result<(), String> {
        let mut seq = vec![(CONTROL_L, true)];
        if terminal {
            seq.push((SHIFT_L, true));
        }
        seq.extend([(KEY_V, true), (KEY_V, false)]);
        if terminal {
            seq.push((SHIFT_L, false));
        }
        seq.push((CONTROL_L, false));
        self.keys(seq, Duration::from_secs(5))
    }

    /// Presses (`true`) or releases one keysym, e.g. to hold a modifier.
    pub fn key(&mut self, keysym: u32, pressed: bool) -> Result<(), String> {
        self.keys(vec![(keysym, pressed)], Duration::from_secs(5))
    }

    fn keys(&mut self, seq: Vec<(u32, bool)>, limit: Duration) -> Result<(), String> {
        let portal = self.portal.clone();
        let session = self.session.clone();
        rt::run_result(limit, "the typed keys", async move {
            for (keysym, pressed) in seq {
                let options: HashMap<&str, Value> = HashMap::new();
                portal
                    .call(
                        REMOTE_DESKTOP,
                        "NotifyKeyboardKeysym",
                        &(&session, options, keysym as i32, u32::from(pressed)),
                    )
                    .await
                    .map_err(|e| {
                        format!("{e} (the remote-desktop session may have been closed: reconnect)")
                    })?;
            }
            Ok(())
        })
    }
}

impl Drop for RemoteKeyboard {
    fn drop(&mut self) {
        close(&self.portal, &self.session);
    }
}

fn close(portal: &Portal, session: &OwnedObjectPath) {
    let portal = portal.clone();
    let session = session.clone();
    let _ = rt::run(Duration::from_secs(1), async move {
        portal.close_session(&session).await
    });
}

async fn create_session(portal: &Portal) -> Result<OwnedObjectPath, String> {
    let token = Portal::token("dictum");
    let session_token = Portal::token("dictum_rd");
    let options = HashMap::from([
        ("handle_token", Value::from(token.as_str())),
        ("session_handle_token", Value::from(session_token.as_str())),
    ]);
    let results = portal
        .request(REMOTE_DESKTOP, "CreateSession", &(options,), &token)
        .await?;
    match dbus::session_handle(&results) {
        Some(p) => Ok(p),
        None => portal.session_path(&session_token),
    }
}

async fn select_keyboard(
    portal: &Portal,
    session: &OwnedObjectPath,
    version: u32,
    restore_token: Option<&str>,
) -> Result<(), String> {
    let token = Portal::token("dictum");
    let mut options = HashMap::from([
        ("handle_token", Value::from(token.as_str())),
        ("types", Value::from(DEVICE_KEYBOARD)),
    ]);
    if version >= 2 {
        options.insert("persist_mode", Value::from(PERSIST_UNTIL_REVOKED));
        if let Some(t) = restore_token {
            options.insert("restore_token", Value::from(t));
        }
    }
    portal
        .request(REMOTE_DESKTOP, "SelectDevices", &(session, options), &token)
        .await
        .map(|_| ())
}

async fn start(portal: &Portal, session: &OwnedObjectPath) -> Result<Results, String> {
    let token = Portal::token("dictum");
    let options = HashMap::from([("handle_token", Value::from(token.as_str()))]);
    portal
        .request(REMOTE_DESKTOP, "Start", &(session, "", options), &token)
        .await
}

fn read_token(path: &Path) -> Option<String> {
    let t = std::fs::read_to_string(path).ok()?;
    let t = t.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Writes the token atomically, readable only by the user (it grants input control).
fn save_token(path: &Path, token: &str) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let fail = |e: std::io::Error| {
        format!(
            "cannot save the remote-desktop restore token to {} ({e}); the permission will be asked again next time",
            path.display()
        )
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let tmp: PathBuf = path.with_extension("tmp");
    // A leftover file would keep its mode: start afresh.
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(fail)?;
    f.write_all(token.as_bytes()).map_err(fail)?;
    f.sync_all().map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn token_file_is_private_and_round_trips() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/remote-desktop.token");
        assert_eq!(read_token(&path), None);
        save_token(&path, "abc-123").expect("save");
        assert_eq!(read_token(&path).as_deref(), Some("abc-123"));
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        save_token(&path, "def\n").expect("save again");
        assert_eq!(read_token(&path).as_deref(), Some("def"));
        std::fs::write(&path, "  \n").expect("write");
        assert_eq!(read_token(&path), None, "a blank file is no token");
    }
}
