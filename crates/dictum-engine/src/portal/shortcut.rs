//! Push-to-talk through the GlobalShortcuts portal: one session with the shortcut `dictate`
//! (and optionally `cancel`); `Activated` is the key going down, `Deactivated` the key coming
//! up. The desktop keeps the binding per application; a later start finds it with
//! ListShortcuts and does not ask again (BindShortcuts is only called for missing shortcuts and
//! by [`PortalShortcut::rebind`]).
//!
//! KDE Plasma 5.27 registers shortcuts only from `CreateSession`'s `shortcuts` option and files
//! them under "app id + session token" (a host app's id is empty), so the session token is
//! fixed (`dictum`) and the shortcuts are also passed there; other desktops ignore the option.

use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};
use zbus::{MatchRule, MessageStream};

use super::dbus::{self, Portal, Results, DESTINATION, GLOBAL_SHORTCUTS, PATH};
use super::{rt, Bus};

/// The session token: KDE 5.27 remembers bindings under it.
const SESSION_TOKEN: &str = "dictum";
const SETUP_LIMIT: Duration = Duration::from_secs(10);
/// BindShortcuts may show a dialog.
const CONSENT_LIMIT: Duration = Duration::from_secs(180);

/// One shortcut to ask the portal for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortcutRequest {
    /// Stable id (`dictate`, `cancel`): the portal remembers the binding under it.
    pub id: String,
    /// What the desktop shows the user.
    pub description: String,
    /// Dictum's hotkey spelling ("ctrl+alt+space"); sent as the preferred trigger.
    pub hotkey_spec: String,
}

impl ShortcutRequest {
    pub fn dictate(hotkey_spec: &str) -> ShortcutRequest {
        ShortcutRequest {
            id: "dictate".into(),
            description: "Dictate (hold to talk)".into(),
            hotkey_spec: hotkey_spec.into(),
        }
    }

    pub fn cancel(hotkey_spec: &str) -> ShortcutRequest {
        ShortcutRequest {
            id: "cancel".into(),
            description: "Cancel the dictation".into(),
            hotkey_spec: hotkey_spec.into(),
        }
    }
}

/// A press or release the portal reported (what the callback gets, plus the portal's
/// timestamp in ms, for tests and latency numbers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortcutEvent {
    pub id: String,
    pub pressed: bool,
    pub timestamp_ms: u64,
}

struct State {
    session: OwnedObjectPath,
    /// id → trigger description, as the portal last reported.
    triggers: HashMap<String, String>,
}

/// A live GlobalShortcuts session; events stop when it is dropped.
pub struct PortalShortcut {
    portal: Portal,
    requests: Vec<ShortcutRequest>,
    state: Arc<Mutex<State>>,
    listener: tokio::task::JoinHandle<()>,
    bound_now: bool,
}

impl std::fmt::Debug for PortalShortcut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortalShortcut")
            .field("requests", &self.requests)
            .field("bound_now", &self.bound_now)
            .finish()
    }
}

impl PortalShortcut {
    /// Binds `dictate` with `hotkey_spec` as the preferred trigger (or finds the binding made
    /// before) on the session bus; `on_event(id, pressed)` runs on a thread of its own.
    pub fn start(
        hotkey_spec: &str,
        on_event: impl Fn(&str, bool) + Send + Sync + 'static,
    ) -> Result<PortalShortcut, String> {
        PortalShortcut::start_on(
            &Bus::Session,
            vec![ShortcutRequest::dictate(hotkey_spec)],
            move |e: &ShortcutEvent| on_event(&e.id, e.pressed),
        )
    }

    /// [`start`](Self::start) on a given bus, for any set of shortcuts.
    pub fn start_on(
        bus: &Bus,
        requests: Vec<ShortcutRequest>,
        on_event: impl Fn(&ShortcutEvent) + Send + 'static,
    ) -> Result<PortalShortcut, String> {
        if requests.is_empty() {
            return Err("no shortcut to bind".into());
        }
        let (tx, rx) = mpsc::channel::<ShortcutEvent>();
        std::thread::Builder::new()
            .name("portal-shortcut".into())
            .spawn(move || {
                for e in rx {
                    on_event(&e);
                }
            })
            .map_err(|e| format!("cannot start the shortcut thread ({e})"))?;

        let bus = bus.clone();
        let reqs = requests.clone();
        let (portal, state, listener, bound_now) = rt::run_result(
            CONSENT_LIMIT,
            "the global-shortcut setup",
            async move {
                let portal = within(SETUP_LIMIT, "connecting", Portal::connect(&bus)).await?;
                within(SETUP_LIMIT, "the version check", async {
                    portal.version(GLOBAL_SHORTCUTS).await.ok_or_else(|| {
                        "the desktop portal offers no GlobalShortcuts; use `dictum shortcut install` or your desktop's keyboard settings instead".to_string()
                    })
                })
                .await?;
                // Listen before the session exists so that no press is missed.
                let signals = signal_stream(&portal).await?;
                let session =
                    within(SETUP_LIMIT, "CreateSession", create_session(&portal, &reqs)).await?;
                let listed = within(SETUP_LIMIT, "ListShortcuts", list(&portal, &session)).await?;
                let missing = reqs.iter().any(|r| !listed.contains_key(&r.id));
                let triggers = if missing {
                    bind(&portal, &session, &reqs).await?
                } else {
                    listed
                };
                let state = Arc::new(Mutex::new(State { session, triggers }));
                let listener = tokio::spawn(listen(signals, state.clone(), tx));
                Ok((portal, state, listener, missing))
            },
        )?;
        Ok(PortalShortcut {
            portal,
            requests,
            state,
            listener,
            bound_now,
        })
    }

    /// What the user actually bound to `dictate` (the desktop's wording, e.g. "Ctrl+Alt+Space");
    /// None while unbound.
    pub fn trigger_description(&self) -> Option<String> {
        self.trigger_of("dictate")
    }

    /// The trigger description of any requested shortcut id.
    pub fn trigger_of(&self, id: &str) -> Option<String> {
        let state = self.state.lock().ok()?;
        state.triggers.get(id).filter(|t| !t.is_empty()).cloned()
    }

    /// Whether this start had to call BindShortcuts (the desktop may have asked the user);
    /// false when the binding from an earlier run was found.
    pub fn asked_to_bind(&self) -> bool {
        self.bound_now
    }

    /// Asks the desktop to bind `dictate` to `hotkey_spec` (settings panel). The desktop may
    /// show its own dialog and has the last word: read [`trigger_description`](Self::trigger_description)
    /// afterwards. Done in a fresh session (some portals refuse a second BindShortcuts).
    pub fn rebind(&mut self, hotkey_spec: &str) -> Result<(), String> {
        for r in &mut self.requests {
            if r.id == "dictate" {
                r.hotkey_spec = hotkey_spec.to_string();
            }
        }
        let portal = self.portal.clone();
        let reqs = self.requests.clone();
        let state = self.state.clone();
        rt::run_result(CONSENT_LIMIT, "the shortcut change", async move {
            let old = state
                .lock()
                .map_err(|_| "shortcut state poisoned".to_string())?
                .session
                .clone();
            // Best effort: a session the portal already dropped cannot be closed.
            let _ = within(SETUP_LIMIT, "Close", portal.close_session(&old)).await;
            let session =
                within(SETUP_LIMIT, "CreateSession", create_session(&portal, &reqs)).await?;
            if let Ok(mut s) = state.lock() {
                s.session = session.clone();
            }
            let triggers = bind(&portal, &session, &reqs).await?;
            if let Ok(mut s) = state.lock() {
                s.triggers = triggers;
            }
            Ok(())
        })?;
        self.bound_now = true;
        Ok(())
    }
}

impl Drop for PortalShortcut {
    fn drop(&mut self) {
        self.listener.abort();
        let session = self.state.lock().map(|s| s.session.clone()).ok();
        if let Some(session) = session {
            let portal = self.portal.clone();
            let _ = rt::run(Duration::from_secs(1), async move {
                portal.close_session(&session).await
            });
        }
    }
}

async fn within<T>(
    limit: Duration,
    what: &str,
    fut: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(limit, fut).await.unwrap_or_else(|_| {
        Err(format!(
            "the desktop portal did not answer {what} within {} s; check that xdg-desktop-portal is running",
            limit.as_secs()
        ))
    })
}

fn shortcuts_arg(reqs: &[ShortcutRequest]) -> Vec<(String, HashMap<String, Value<'static>>)> {
    reqs.iter()
        .map(|r| {
            let mut info = HashMap::from([(
                "description".to_string(),
                Value::from(r.description.clone()),
            )]);
            let trigger = portal_trigger(&r.hotkey_spec);
            if !trigger.is_empty() {
                info.insert("preferred_trigger".into(), Value::from(trigger));
            }
            (r.id.clone(), info)
        })
        .collect()
}

async fn create_session(
    portal: &Portal,
    reqs: &[ShortcutRequest],
) -> Result<OwnedObjectPath, String> {
    let token = Portal::token("dictum");
    let options = HashMap::from([
        ("handle_token", Value::from(token.as_str())),
        ("session_handle_token", Value::from(SESSION_TOKEN)),
        ("shortcuts", Value::from(shortcuts_arg(reqs))),
    ]);
    let results = portal
        .request(GLOBAL_SHORTCUTS, "CreateSession", &(options,), &token)
        .await?;
    match dbus::session_handle(&results) {
        Some(p) => Ok(p),
        None => portal.session_path(SESSION_TOKEN),
    }
}

async fn list(
    portal: &Portal,
    session: &OwnedObjectPath,
) -> Result<HashMap<String, String>, String> {
    let token = Portal::token("dictum");
    let options = HashMap::from([("handle_token", Value::from(token.as_str()))]);
    let results = portal
        .request(
            GLOBAL_SHORTCUTS,
            "ListShortcuts",
            &(session, options),
            &token,
        )
        .await?;
    Ok(triggers_from(&results))
}

async fn bind(
    portal: &Portal,
    session: &OwnedObjectPath,
    reqs: &[ShortcutRequest],
) -> Result<HashMap<String, String>, String> {
    let token = Portal::token("dictum");
    let options = HashMap::from([("handle_token", Value::from(token.as_str()))]);
    let results = portal
        .request(
            GLOBAL_SHORTCUTS,
            "BindShortcuts",
            &(session, shortcuts_arg(reqs), "", options),
            &token,
        )
        .await?;
    Ok(triggers_from(&results))
}

fn unvariant<'a>(v: &'a Value<'a>) -> &'a Value<'a> {
    match v {
        Value::Value(inner) => unvariant(inner),
        v => v,
    }
}

/// id → trigger_description from a results map's `shortcuts` (a(sa{sv})).
fn triggers_from(results: &Results) -> HashMap<String, String> {
    results
        .get("shortcuts")
        .map(|v| triggers_from_value(v))
        .unwrap_or_default()
}

fn triggers_from_value(v: &Value<'_>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Value::Array(items) = unvariant(v) else {
        return out;
    };
    for item in items.inner() {
        let Value::Structure(s) = unvariant(item) else {
            continue;
        };
        let [Value::Str(id), info] = s.fields() else {
            continue;
        };
        let mut trigger = String::new();
        if let Value::Dict(d) = unvariant(info) {
            for (k, v) in d.iter() {
                if let (Value::Str(k), Value::Str(t)) = (unvariant(k), unvariant(v)) {
                    if k.as_str() == "trigger_description" {
                        trigger = t.to_string();
                    }
                }
            }
        }
        out.insert(id.to_string(), trigger);
    }
    out
}

async fn signal_stream(portal: &Portal) -> Result<MessageStream, String> {
    let rule = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .sender(DESTINATION)
        .and_then(|b| b.interface(GLOBAL_SHORTCUTS))
        .and_then(|b| b.path(PATH))
        .map_err(|e| format!("bad portal match rule ({e})"))?
        .build();
    MessageStream::for_match_rule(rule, &portal.conn, Some(256))
        .await
        .map_err(|e| {
            format!("cannot listen for shortcut events ({e}); check the D-Bus session bus")
        })
}

async fn listen(
    mut signals: MessageStream,
    state: Arc<Mutex<State>>,
    tx: mpsc::Sender<ShortcutEvent>,
) {
    while let Some(Ok(msg)) = signals.next().await {
        let header = msg.header();
        let Some(member) = header.member() else {
            continue;
        };
        let pressed = match member.as_str() {
            "Activated" => true,
            "Deactivated" => false,
            "ShortcutsChanged" => {
                if let Ok((session, shortcuts)) =
                    msg.body().deserialize::<(OwnedObjectPath, Value)>()
                {
                    if let Ok(mut s) = state.lock() {
                        if s.session == session {
                            s.triggers = triggers_from_value(&shortcuts);
                        }
                    }
                }
                continue;
            }
            _ => continue,
        };
        let Ok((session, id, timestamp_ms, _)) =
            msg.body()
                .deserialize::<(OwnedObjectPath, String, u64, HashMap<String, OwnedValue>)>()
        else {
            continue;
        };
        let ours = state.lock().map(|s| s.session == session).unwrap_or(false);
        if ours
            && tx
                .send(ShortcutEvent {
                    id,
                    pressed,
                    timestamp_ms,
                })
                .is_err()
        {
            return;
        }
    }
}

/// Dictum's hotkey spelling ("ctrl+alt+space", case-insensitive, modifiers ctrl, alt, shift,
/// super) in the shortcuts format of the XDG specification that `preferred_trigger` uses:
/// modifiers `CTRL`, `ALT`, `SHIFT`, `LOGO` in that order, then the key's XKB keysym name
/// ("CTRL+ALT+space", "LOGO+SHIFT+d", "F9"). Unknown key names pass through unchanged;
/// an empty spec gives "".
pub fn portal_trigger(spec: &str) -> String {
    let mut ctrl = false;
    let mut alt = false;
    let mut shift = false;
    let mut logo = false;
    let mut key = String::new();
    for part in spec.split('+').map(str::trim).filter(|p| !p.is_empty()) {
        match part.to_ascii_lowercase().as_str() {
            "ctrl" | "control" | "controlleft" | "controlright" => ctrl = true,
            "alt" | "option" | "altleft" | "altright" => alt = true,
            "shift" | "shiftleft" | "shiftright" => shift = true,
            "super" | "meta" | "cmd" | "command" | "win" | "logo" | "metaleft" | "metaright" => {
                logo = true
            }
            _ => key = keysym_name(part),
        }
    }
    let mut out: Vec<String> = Vec::new();
    for (on, name) in [
        (ctrl, "CTRL"),
        (alt, "ALT"),
        (shift, "SHIFT"),
        (logo, "LOGO"),
    ] {
        if on {
            out.push(name.to_string());
        }
    }
    if !key.is_empty() {
        out.push(key);
    }
    out.join("+")
}

/// A key of Dictum's spelling (global-hotkey's names: "space", "d"/"KeyD", "1"/"Digit1",
/// "f9", "Backquote", "ArrowUp"…) as an XKB keysym name.
fn keysym_name(key: &str) -> String {
    let lower = key.to_ascii_lowercase();
    let letter_or_digit = |s: &str| {
        let mut c = s.chars();
        match (c.next(), c.next()) {
            (Some(ch), None) if ch.is_ascii_alphanumeric() => Some(ch.to_ascii_lowercase()),
            _ => None,
        }
    };
    if let Some(c) = letter_or_digit(&lower) {
        return c.to_string();
    }
    if let Some(rest) = lower.strip_prefix("key").or(lower.strip_prefix("digit")) {
        if let Some(c) = letter_or_digit(rest) {
            return c.to_string();
        }
    }
    if let Some(n) = lower.strip_prefix('f') {
        if let Ok(n) = n.parse::<u8>() {
            if (1..=35).contains(&n) {
                return format!("F{n}");
            }
        }
    }
    if let Some(rest) = lower.strip_prefix("numpad") {
        if let Some(c) = letter_or_digit(rest).filter(char::is_ascii_digit) {
            return format!("KP_{c}");
        }
        let kp = match rest {
            "add" => "KP_Add",
            "subtract" => "KP_Subtract",
            "multiply" => "KP_Multiply",
            "divide" => "KP_Divide",
            "decimal" => "KP_Decimal",
            "enter" => "KP_Enter",
            "equal" => "KP_Equal",
            _ => "",
        };
        if !kp.is_empty() {
            return kp.to_string();
        }
    }
    let named = match lower.as_str() {
        "space" => "space",
        "escape" | "esc" => "Escape",
        "enter" | "return" => "Return",
        "tab" => "Tab",
        "backspace" => "BackSpace",
        "delete" | "del" => "Delete",
        "insert" | "ins" => "Insert",
        "home" => "Home",
        "end" => "End",
        "pageup" => "Page_Up",
        "pagedown" => "Page_Down",
        "up" | "arrowup" => "Up",
        "down" | "arrowdown" => "Down",
        "left" | "arrowleft" => "Left",
        "right" | "arrowright" => "Right",
        "backquote" | "grave" | "`" => "grave",
        "minus" | "-" => "minus",
        "equal" | "=" => "equal",
        "bracketleft" | "[" => "bracketleft",
        "bracketright" | "]" => "bracketright",
        "backslash" | "\\" => "backslash",
        "semicolon" | ";" => "semicolon",
        "quote" | "apostrophe" | "'" => "apostrophe",
        "comma" | "," => "comma",
        "period" | "." => "period",
        "slash" | "/" => "slash",
        "pause" => "Pause",
        "printscreen" | "print" => "Print",
        "scrolllock" => "Scroll_Lock",
        "capslock" => "Caps_Lock",
        "numlock" => "Num_Lock",
        "contextmenu" | "menu" => "Menu",
        _ => "",
    };
    if named.is_empty() {
        key.to_string()
    } else {
        named.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portal_trigger_spells_the_xdg_shortcuts_format() {
        assert_eq!(portal_trigger("ctrl+alt+space"), "CTRL+ALT+space");
        assert_eq!(portal_trigger("Ctrl+Alt+Space"), "CTRL+ALT+space");
        assert_eq!(portal_trigger("super+shift+d"), "SHIFT+LOGO+d");
        assert_eq!(portal_trigger("shift+super+KeyD"), "SHIFT+LOGO+d");
        assert_eq!(portal_trigger("f9"), "F9");
        assert_eq!(portal_trigger("ctrl+F12"), "CTRL+F12");
        assert_eq!(portal_trigger("alt+Digit1"), "ALT+1");
        assert_eq!(portal_trigger("ctrl+backquote"), "CTRL+grave");
        assert_eq!(portal_trigger("ctrl+shift+ArrowUp"), "CTRL+SHIFT+Up");
        assert_eq!(portal_trigger("escape"), "Escape");
        assert_eq!(portal_trigger("pageup"), "Page_Up");
        assert_eq!(portal_trigger("ctrl+numpad5"), "CTRL+KP_5");
        assert_eq!(portal_trigger(" ctrl + alt + space "), "CTRL+ALT+space");
        assert_eq!(portal_trigger("ctrl+XF86AudioPlay"), "CTRL+XF86AudioPlay");
        assert_eq!(portal_trigger(""), "");
    }

    #[test]
    fn trigger_descriptions_are_read_from_nested_variants() {
        let shortcuts = shortcuts_arg(&[ShortcutRequest::dictate("ctrl+alt+space")]);
        // What a portal answers: the same shape, with trigger_description added.
        let answered: Vec<(String, HashMap<String, Value>)> = shortcuts
            .into_iter()
            .map(|(id, mut info)| {
                info.insert("trigger_description".into(), Value::from("Ctrl+Alt+Space"));
                (id, info)
            })
            .collect();
        let v = Value::Value(Box::new(Value::from(answered)));
        let t = triggers_from_value(&v);
        assert_eq!(t.get("dictate").map(String::as_str), Some("Ctrl+Alt+Space"));
        assert_eq!(t.len(), 1);
    }
}
