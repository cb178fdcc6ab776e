//! The portal's D-Bus conventions (xdg-desktop-portal's published interface XML): one
//! connection, property reads, and the Request/Response flow — a method returns a Request
//! object path at once and the answer arrives later as that object's `Response` signal
//! `(u response, a{sv} results)`, 0 = success, 1 = the user cancelled, 2 = other failure.

use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use zbus::zvariant::{DynamicType, OwnedObjectPath, OwnedValue};
use zbus::{Connection, MatchRule, MessageStream};

use super::Bus;

pub(crate) const DESTINATION: &str = "org.freedesktop.portal.Desktop";
pub(crate) const PATH: &str = "/org/freedesktop/portal/desktop";
pub(crate) const REMOTE_DESKTOP: &str = "org.freedesktop.portal.RemoteDesktop";
pub(crate) const GLOBAL_SHORTCUTS: &str = "org.freedesktop.portal.GlobalShortcuts";
pub(crate) const SESSION: &str = "org.freedesktop.portal.Session";
const REQUEST: &str = "org.freedesktop.portal.Request";

pub(crate) type Results = HashMap<String, OwnedValue>;

/// One private connection to the portal frontend.
#[derive(Clone)]
pub(crate) struct Portal {
    pub(crate) conn: Connection,
    /// Our unique name as the portal writes it into object paths (":1.42" → "1_42").
    sender: String,
}

impl Portal {
    pub(crate) async fn connect(bus: &Bus) -> Result<Portal, String> {
        let builder = match bus {
            Bus::Session => zbus::connection::Builder::session(),
            Bus::Address(a) => zbus::connection::Builder::address(a.as_str()),
        }
        .map_err(|e| no_bus(&e))?;
        let conn = builder.build().await.map_err(|e| no_bus(&e))?;
        let sender = conn
            .unique_name()
            .map(|n| n.trim_start_matches(':').replace('.', "_"))
            .ok_or("the D-Bus session bus gave no unique name; restart the session bus")?;
        Ok(Portal { conn, sender })
    }

    /// A new handle token, unique in this process: `prefix_N_T` (letters, digits, `_` only).
    pub(crate) fn token(prefix: &str) -> String {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        format!("{prefix}_{n}_{t}")
    }

    /// The object path the portal gives a session created with `token` (spec: "…/session/SENDER/TOKEN").
    pub(crate) fn session_path(&self, token: &str) -> Result<OwnedObjectPath, String> {
        owned_path(format!("{PATH}/session/{}/{token}", self.sender))
    }

    pub(crate) async fn property_u32(&self, iface: &str, name: &str) -> Option<u32> {
        let reply = self
            .conn
            .call_method(
                Some(DESTINATION),
                PATH,
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &(iface, name),
            )
            .await
            .ok()?;
        let v: OwnedValue = reply.body().deserialize().ok()?;
        u32::try_from(v).ok()
    }

    /// The interface's `version` property; None when the portal does not offer the interface.
    pub(crate) async fn version(&self, iface: &str) -> Option<u32> {
        self.property_u32(iface, "version").await
    }

    /// Plain method call on the portal object (no Request involved).
    pub(crate) async fn call<B>(&self, iface: &str, method: &str, body: &B) -> Result<(), String>
    where
        B: serde::Serialize + DynamicType,
    {
        self.conn
            .call_method(Some(DESTINATION), PATH, Some(iface), method, body)
            .await
            .map(|_| ())
            .map_err(|e| explain(&e, iface, method))
    }

    /// Calls a Request-returning method and waits for its `Response`. `token` must be the
    /// `handle_token` put into the call's options.
    pub(crate) async fn request<B>(
        &self,
        iface: &str,
        method: &str,
        body: &B,
        token: &str,
    ) -> Result<Results, String>
    where
        B: serde::Serialize + DynamicType,
    {
        let expected = owned_path(format!("{PATH}/request/{}/{token}", self.sender))?;
        // Listen before calling: the answer may come before the call returns.
        let mut responses = self.responses(&expected).await?;
        let reply = self
            .conn
            .call_method(Some(DESTINATION), PATH, Some(iface), method, body)
            .await
            .map_err(|e| explain(&e, iface, method))?;
        let handle: OwnedObjectPath = reply
            .body()
            .deserialize()
            .map_err(|e| format!("{method}: the portal answered with no request handle ({e})"))?;
        if handle != expected {
            // Portals older than the handle_token convention (< 0.9) pick their own path.
            responses = self.responses(&handle).await?;
        }
        let msg = responses
            .next()
            .await
            .ok_or_else(|| format!("{method}: the portal closed the connection"))?
            .map_err(|e| format!("{method}: {e}"))?;
        let (code, results): (u32, Results) = msg
            .body()
            .deserialize()
            .map_err(|e| format!("{method}: unreadable portal response ({e})"))?;
        match code {
            0 => Ok(results),
            1 => Err(format!(
                "{method}: the request was cancelled (the permission dialog was declined or closed); try again and allow it"
            )),
            _ => Err(format!(
                "{method}: the desktop portal refused the request (response {code}); see the portal's log (journalctl --user -u xdg-desktop-portal)"
            )),
        }
    }

    async fn responses(&self, path: &OwnedObjectPath) -> Result<MessageStream, String> {
        let rule = MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .sender(DESTINATION)
            .and_then(|b| b.interface(REQUEST))
            .and_then(|b| b.member("Response"))
            .and_then(|b| b.path(path.as_str().to_owned()))
            .map_err(|e| format!("bad portal match rule ({e})"))?
            .build();
        MessageStream::for_match_rule(rule, &self.conn, Some(8))
            .await
            .map_err(|e| {
                format!("cannot listen for portal answers ({e}); check the D-Bus session bus")
            })
    }

    /// Closes a portal session (`org.freedesktop.portal.Session.Close`).
    pub(crate) async fn close_session(&self, session: &OwnedObjectPath) -> Result<(), String> {
        self.conn
            .call_method(
                Some(DESTINATION),
                session.as_str(),
                Some(SESSION),
                "Close",
                &(),
            )
            .await
            .map(|_| ())
            .map_err(|e| explain(&e, SESSION, "Close"))
    }
}

pub(crate) fn owned_path(p: String) -> Result<OwnedObjectPath, String> {
    OwnedObjectPath::try_from(p.clone()).map_err(|e| format!("bad portal object path {p} ({e})"))
}

/// A session handle from a results map: object path or (KDE 5.27's frontend) string.
pub(crate) fn session_handle(results: &Results) -> Option<OwnedObjectPath> {
    let v = results.get("session_handle")?;
    if let Ok(p) = OwnedObjectPath::try_from(v.try_clone().ok()?) {
        return Some(p);
    }
    let s = String::try_from(v.try_clone().ok()?).ok()?;
    OwnedObjectPath::try_from(s).ok()
}

fn no_bus(e: &zbus::Error) -> String {
    format!("cannot reach the D-Bus session bus ({e}); run inside a desktop session (DBUS_SESSION_BUS_ADDRESS)")
}

fn explain(e: &zbus::Error, iface: &str, method: &str) -> String {
    let missing = match e {
        zbus::Error::MethodError(name, _, _) => matches!(
            name.as_str(),
            "org.freedesktop.DBus.Error.ServiceUnknown"
                | "org.freedesktop.DBus.Error.UnknownInterface"
                | "org.freedesktop.DBus.Error.UnknownMethod"
                | "org.freedesktop.DBus.Error.UnknownObject"
        ),
        _ => false,
    };
    if missing {
        format!(
            "the desktop portal has no {iface} ({e}); install xdg-desktop-portal and your desktop's backend (xdg-desktop-portal-kde or -gnome)"
        )
    } else {
        format!("{iface}.{method} failed: {e}")
    }
}
