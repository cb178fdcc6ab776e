//! The few AT-SPI D-Bus calls the reader makes, by hand on plain `zbus` (the `atspi` crate would
//! bring a second zbus): the accessibility bus's address from the session bus, the registry's
//! applications, and per object its children, state, role, interfaces and text. Signatures from
//! at-spi2-core's published XML (`Accessible.xml`, `Text.xml`, `Bus.xml`).

use tokio::task::JoinSet;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};
use zbus::Connection;

use super::rules::{state, Seen, States};
use crate::portal::Bus;

const DBUS: &str = "org.freedesktop.DBus";
const DBUS_PATH: &str = "/org/freedesktop/DBus";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";
const A11Y_BUS: &str = "org.a11y.Bus";
const A11Y_BUS_PATH: &str = "/org/a11y/bus";
const A11Y_STATUS: &str = "org.a11y.Status";
const REGISTRY: &str = "org.a11y.atspi.Registry";
const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";
const ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
pub(super) const TEXT: &str = "org.a11y.atspi.Text";

/// An accessible object: the bus name of the app that serves it and its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Node {
    pub bus: String,
    pub path: OwnedObjectPath,
}

/// A connection to the session bus, kept for `org.a11y.Status`.
pub(super) async fn session(bus: &Bus) -> Result<Connection, String> {
    match bus {
        Bus::Session => zbus::connection::Builder::session(),
        Bus::Address(a) => zbus::connection::Builder::address(a.as_str()),
    }
    .map_err(|e| no_session(&e))?
    .build()
    .await
    .map_err(|e| no_session(&e))
}

/// The accessibility bus's address, asked of `org.a11y.Bus` on the session bus. Only when its
/// launcher already runs: the name is D-Bus-activatable, and Dictum must not start it.
pub(super) async fn a11y_address(session: &Connection) -> Result<String, String> {
    let reply = session
        .call_method(Some(DBUS), DBUS_PATH, Some(DBUS), "NameHasOwner", &A11Y_BUS)
        .await
        .map_err(|e| format!("the session bus did not answer NameHasOwner ({e})"))?;
    let running: bool = reply.body().deserialize().map_err(|e| e.to_string())?;
    if !running {
        return Err(
            "no accessibility bus: org.a11y.Bus is not running on the session bus (it comes with \
             at-spi2-core and starts with the desktop; install at-spi2-core and log in again)"
                .into(),
        );
    }
    let reply = session
        .call_method(
            Some(A11Y_BUS),
            A11Y_BUS_PATH,
            Some(A11Y_BUS),
            "GetAddress",
            &(),
        )
        .await
        .map_err(|e| {
            format!("org.a11y.Bus.GetAddress failed ({e}); restart the desktop session")
        })?;
    reply
        .body()
        .deserialize::<String>()
        .map_err(|e| format!("org.a11y.Bus.GetAddress: unreadable answer ({e})"))
}

/// `org.a11y.Status.IsEnabled`: whether toolkits are asked to expose accessibility (Qt and
/// Chromium read it; GTK exposes it always). None when it cannot be read.
pub(super) async fn toolkit_accessibility(session: &Connection) -> Option<bool> {
    let reply = session
        .call_method(
            Some(A11Y_BUS),
            A11Y_BUS_PATH,
            Some(PROPERTIES),
            "Get",
            &(A11Y_STATUS, "IsEnabled"),
        )
        .await
        .ok()?;
    bool::try_from(reply.body().deserialize::<OwnedValue>().ok()?).ok()
}

/// Sets `org.a11y.Status.IsEnabled`: Qt and Chromium/Electron apps started afterwards expose
/// their text (some already running ones too). Starts the accessibility bus's launcher when
/// it is not running: only ever called because the user asked for it
/// (`[context] switch_on_accessibility`).
pub(super) async fn set_toolkit_accessibility(
    session: &Connection,
    on: bool,
) -> Result<(), String> {
    session
        .call_method(
            Some(A11Y_BUS),
            A11Y_BUS_PATH,
            Some(PROPERTIES),
            "Set",
            &(A11Y_STATUS, "IsEnabled", zbus::zvariant::Value::from(on)),
        )
        .await
        .map(drop)
        .map_err(|e| {
            format!(
                "the desktop's accessibility switch (org.a11y.Status.IsEnabled) could not be set \
                 ({e}); is at-spi2-core installed?"
            )
        })
}

/// One connection to the accessibility bus.
#[derive(Clone)]
pub(super) struct A11y {
    conn: Connection,
}

impl A11y {
    pub(super) async fn connect(address: &str) -> Result<A11y, String> {
        let conn = zbus::connection::Builder::address(address)
            .map_err(|e| format!("bad accessibility bus address {address:?} ({e})"))?
            .build()
            .await
            .map_err(|e| {
                format!("cannot connect to the accessibility bus ({e}); restart at-spi-bus-launcher (log in again)")
            })?;
        Ok(A11y { conn })
    }

    /// The applications the registry knows (their root objects).
    pub(super) async fn apps(&self) -> Result<Vec<Node>, String> {
        let root = Node {
            bus: REGISTRY.into(),
            path: OwnedObjectPath::try_from(ROOT_PATH).map_err(|e| e.to_string())?,
        };
        self.children(&root).await.map_err(|e| {
            format!("the accessibility registry did not answer ({e}); check that at-spi2-registryd runs")
        })
    }

    /// The process behind an app's bus name, as the bus daemon knows it.
    pub(super) async fn pid_of(&self, bus: &str) -> Option<u32> {
        let reply = self
            .conn
            .call_method(
                Some(DBUS),
                DBUS_PATH,
                Some(DBUS),
                "GetConnectionUnixProcessID",
                &bus,
            )
            .await
            .ok()?;
        reply.body().deserialize::<u32>().ok()
    }

    async fn call<B, R>(&self, n: &Node, iface: &str, method: &str, body: &B) -> Result<R, String>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
        R: for<'d> zbus::zvariant::DynamicDeserialize<'d>,
    {
        let reply = self
            .conn
            .call_method(
                Some(n.bus.as_str()),
                n.path.as_str(),
                Some(iface),
                method,
                body,
            )
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        reply
            .body()
            .deserialize::<R>()
            .map_err(|e| format!("{method}: unreadable answer ({e})"))
    }

    async fn property(&self, n: &Node, iface: &str, name: &str) -> Result<OwnedValue, String> {
        self.call(n, PROPERTIES, "Get", &(iface, name)).await
    }

    pub(super) async fn children(&self, n: &Node) -> Result<Vec<Node>, String> {
        let refs: Vec<(String, OwnedObjectPath)> =
            self.call(n, ACCESSIBLE, "GetChildren", &()).await?;
        Ok(refs
            .into_iter()
            .map(|(bus, path)| Node { bus, path })
            .collect())
    }

    pub(super) async fn states(&self, n: &Node) -> Result<States, String> {
        let words: Vec<u32> = self.call(n, ACCESSIBLE, "GetState", &()).await?;
        Ok(States::from_words(&words))
    }

    pub(super) async fn role(&self, n: &Node) -> Result<u32, String> {
        self.call(n, ACCESSIBLE, "GetRole", &()).await
    }

    pub(super) async fn role_name(&self, n: &Node) -> Result<String, String> {
        self.call(n, ACCESSIBLE, "GetRoleName", &()).await
    }

    pub(super) async fn interfaces(&self, n: &Node) -> Result<Vec<String>, String> {
        self.call(n, ACCESSIBLE, "GetInterfaces", &()).await
    }

    /// The accessible `Name` (for an app's root: the application's name).
    pub(super) async fn name(&self, n: &Node) -> Result<String, String> {
        String::try_from(self.property(n, ACCESSIBLE, "Name").await?).map_err(|e| e.to_string())
    }

    /// A `Text` integer property: `CaretOffset` or `CharacterCount` (characters).
    pub(super) async fn text_int(&self, n: &Node, name: &str) -> Result<i32, String> {
        i32::try_from(self.property(n, TEXT, name).await?).map_err(|e| format!("{name}: {e}"))
    }

    /// `Text.GetText(start, end)`, offsets in characters.
    pub(super) async fn text(&self, n: &Node, start: i32, end: i32) -> Result<String, String> {
        self.call(n, TEXT, "GetText", &(start, end)).await
    }

    /// State and role of each node, asked all at once; a node that does not answer reads as
    /// defunct (never walked, never chosen).
    pub(super) async fn seen_all(&self, nodes: &[Node]) -> Vec<Seen> {
        let mut set = JoinSet::new();
        for (i, n) in nodes.iter().enumerate() {
            let (me, n) = (self.clone(), n.clone());
            set.spawn(async move {
                let (s, r) = tokio::join!(me.states(&n), me.role(&n));
                (i, s.ok().zip(r.ok()))
            });
        }
        let defunct = Seen {
            states: States(1 << state::DEFUNCT),
            role: 0,
        };
        let mut out = vec![defunct; nodes.len()];
        while let Some(done) = set.join_next().await {
            if let Ok((i, Some((states, role)))) = done {
                out[i] = Seen { states, role };
            }
        }
        out
    }
}

fn no_session(e: &zbus::Error) -> String {
    format!("cannot reach the D-Bus session bus ({e}); run inside a desktop session (DBUS_SESSION_BUS_ADDRESS)")
}
