//! API keys for the servers Dictum talks to (the shared speech server, the LLM server): from an
//! environment variable the config names, or from the desktop keyring (the freedesktop Secret
//! Service: GNOME Keyring, KWallet ≥ 5.97, KeePassXC). A key is never written in the config,
//! never logged, and never stored in history; this module only hands it to the HTTP client,
//! which marks the header sensitive.
//!
//! Keyring entries carry the attributes `service = "dictum"`, `username = <slot>` (the
//! convention the `keyring` crate and `secret-tool` use) and `origin` (below), so
//! `secret-tool store --label="Dictum stt key" service dictum username stt origin
//! https://host:8443` sets the same entry `dictum key set stt` does for that server. The Secret Service is spoken directly over D-Bus (zbus,
//! already used for the portals) with the spec's `plain` transfer algorithm: the secret only
//! crosses the user's own session bus. A missing bus, service or entry means "no key"; a call
//! never takes longer than [`KEYRING_TIMEOUT`].
//!
//! A keyring key belongs to the server it was entered for: [`keyring_set_for`] stores it with
//! a third attribute, `origin = scheme://host[:port]` of the server URL saved at that moment,
//! and [`key_for`] takes only the entry whose origin is the saved URL's. Changing the URL
//! (the config file, the settings page) never carries the key to the new server; the user
//! enters it again (`dictum key set SLOT`, or the settings' password field), which binds it to
//! the new origin. An entry without an origin (made with `secret-tool` without one, or by an
//! older Dictum) is not sent anywhere, and the report says to enter the key again.

use std::time::Duration;

/// Longest wait for the keyring (a locked one may be waiting for a prompt).
pub const KEYRING_TIMEOUT: Duration = Duration::from_secs(3);

/// Where a key comes from, for `doctor` (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// No key configured: requests go out without `Authorization`.
    None,
    /// The environment variable of that name.
    Env(String),
    /// The desktop keyring's entry for that slot.
    Keyring(String),
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::None => write!(f, "no API key"),
            KeySource::Env(name) => write!(f, "API key from ${name}"),
            KeySource::Keyring(slot) => write!(f, "API key from the keyring (dictum/{slot})"),
        }
    }
}

/// A resolved key; `Debug` never shows it.
#[derive(Clone)]
pub struct ApiKey {
    secret: String,
    pub source: KeySource,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey({}, ****)", self.source)
    }
}

impl ApiKey {
    pub fn secret(&self) -> &str {
        &self.secret
    }
}

/// Checks an `api_key_env` setting: a variable name (letters, digits, `_`) or empty, never a
/// key. Err is the reason.
pub fn check_env_name(name: &str) -> Result<(), String> {
    let name = name.trim();
    let valid = name.chars().enumerate().all(|(i, c)| {
        c == '_'
            || c.is_ascii_uppercase()
            || c.is_ascii_lowercase()
            || (i > 0 && c.is_ascii_digit())
    });
    if !valid || name.len() > 128 {
        return Err("must be the name of an environment variable (letters, digits, _), e.g. \"OPENAI_API_KEY\", or empty; not the key itself".into());
    }
    Ok(())
}

/// The key for `slot` ("stt", "llm"): from the variable `env_name` when one is named (`setting`
/// is its config key, for the message), else from the keyring (when `use_keyring`), else
/// none. Err (one line, the key never in it) when a named variable is unset or empty.
pub fn api_key(
    slot: &str,
    env_name: &str,
    setting: &str,
    use_keyring: bool,
) -> Result<Option<ApiKey>, String> {
    let name = env_name.trim();
    if !name.is_empty() {
        return match std::env::var(name) {
            Ok(v) if !v.trim().is_empty() => Ok(Some(ApiKey {
                secret: v.trim().to_string(),
                source: KeySource::Env(name.to_string()),
            })),
            _ => Err(format!(
                "{setting} names {name}, but {name} is not set in Dictum's environment; export it where Dictum starts (e.g. ~/.config/environment.d/) or empty {setting}"
            )),
        };
    }
    if !use_keyring {
        return Ok(None);
    }
    match keyring_get(slot) {
        Ok(Some(secret)) => Ok(Some(ApiKey {
            secret,
            source: KeySource::Keyring(slot.to_string()),
        })),
        Ok(None) => Ok(None),
        Err(e) => {
            tracing::debug!("no API key from the keyring for {slot}: {e}");
            Ok(None)
        }
    }
}

/// The origin a key is bound to: `scheme://host[:port]` of `url` (the default port left out).
pub fn origin_of(url: &str) -> Result<String, String> {
    let u = reqwest::Url::parse(url.trim())
        .map_err(|e| format!("`{}` is not a URL ({e})", crate::net::snippet(url, 100)))?;
    if !u.origin().is_tuple() {
        return Err(format!(
            "`{}` has no server origin",
            crate::net::snippet(url, 100)
        ));
    }
    Ok(u.origin().ascii_serialization())
}

/// The keyring's key for `slot` bound to `origin`: Ok(Some) when an entry for that very origin
/// exists; Err(why) when the keyring holds `slot` keys only for other origins or for none
/// (the key stays home; why says to enter it again); Ok(None) when it holds none at all or
/// cannot be asked.
fn keyring_key_for_origin(slot: &str, origin: &str) -> Result<Option<ApiKey>, String> {
    match imp::get(slot, Some(origin)) {
        Ok(Some(secret)) => Ok(Some(ApiKey {
            secret,
            source: KeySource::Keyring(slot.to_string()),
        })),
        Ok(None) => match imp::get(slot, None) {
            Ok(Some(_)) => Err(format!(
                "the keyring's {slot} key was entered for another server, not {origin}; a key never follows a changed URL: enter it again for this server (`dictum key set {slot}` or the settings' key field)"
            )),
            _ => Ok(None),
        },
        Err(e) => {
            tracing::debug!("no API key from the keyring for {slot}: {e}");
            Ok(None)
        }
    }
}

/// The key one request carries, and why a configured key stayed home. `Debug` never shows it.
#[derive(Debug, Clone, Default)]
pub struct KeyChoice {
    pub key: Option<ApiKey>,
    /// The saved settings hold a key, but [`crate::net::key_allowed`] refused it for this URL:
    /// why (the request goes without it).
    pub withheld: Option<String>,
}

impl KeyChoice {
    /// The bearer token to send, if any.
    pub fn secret(&self) -> Option<String> {
        self.key.as_ref().map(|k| k.secret().to_string())
    }

    /// Where the key comes from, for reports (never the key): "no API key", "API key from $X",
    /// "…keyring…", or "tested without the API key (why)".
    pub fn describe(&self) -> String {
        match (&self.key, &self.withheld) {
            (Some(k), _) => k.source.to_string(),
            (None, Some(why)) => format!("tested without the API key ({why})"),
            (None, None) => KeySource::None.to_string(),
        }
    }
}

/// The key for a request to `target`, from the key source of the SAVED settings only: the
/// server URL the config file holds (`saved_url`) and its `api_key_env` (`env_name`, the
/// setting `setting`), the keyring's `slot` entry when no variable is named and `use_keyring`.
/// A settings form may name any URL, never where the key comes from. The key goes along only
/// where [`crate::net::key_allowed`] says so (the saved origin, over https or to this machine);
/// elsewhere the request goes without it, and `withheld` says why when there was a key.
/// Err (one line, never the key) when the saved settings name an unset variable for this very
/// server.
pub fn key_for(
    slot: &str,
    env_name: &str,
    setting: &str,
    use_keyring: bool,
    saved_url: &str,
    target: &str,
) -> Result<KeyChoice, String> {
    let allowed = match (
        reqwest::Url::parse(saved_url.trim()),
        reqwest::Url::parse(target.trim()),
    ) {
        (Ok(saved), Ok(target)) => crate::net::key_allowed(&saved, &target),
        (Err(_), _) => Err(format!(
            "the saved {slot} server URL is not valid; save a valid URL first"
        )),
        (_, Err(_)) => Err("the URL is not valid".into()),
    };
    match allowed {
        // A keyring key only for the origin it was entered for.
        Ok(()) if env_name.trim().is_empty() && use_keyring => {
            let origin = origin_of(saved_url)?;
            match keyring_key_for_origin(slot, &origin) {
                Ok(key) => Ok(KeyChoice {
                    key,
                    withheld: None,
                }),
                Err(why) => {
                    tracing::info!("API key ({slot}) not sent: {why}");
                    Ok(KeyChoice {
                        key: None,
                        withheld: Some(why),
                    })
                }
            }
        }
        Ok(()) => Ok(KeyChoice {
            key: api_key(slot, env_name, setting, use_keyring)?,
            withheld: None,
        }),
        Err(why) => {
            // Only to say so: the key itself is dropped here.
            let had_key = api_key(slot, env_name, setting, use_keyring)
                .ok()
                .flatten()
                .is_some();
            if had_key {
                tracing::info!("API key ({slot}) not sent: {why}");
            }
            Ok(KeyChoice {
                key: None,
                withheld: had_key.then_some(why),
            })
        }
    }
}

/// Whether a D-Bus session bus is there to ask (a keyring lookup without one would only fail).
pub fn session_bus_present() -> bool {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty()) {
        return true;
    }
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(std::path::PathBuf::from)
        .is_some_and(|d| d.join("bus").exists())
}

/// The keyring's secret for `slot`, whatever server it was entered for (`dictum key status`);
/// Ok(None) when there is no entry, Err when the keyring cannot be asked (no session bus, no
/// Secret Service, locked). Requests use [`key_for`], which asks for the saved origin's entry.
pub fn keyring_get(slot: &str) -> Result<Option<String>, String> {
    imp::get(slot, None)
}

/// Stores `secret` as `slot`'s entry in the default collection, bound to the origin of
/// `server_url` (the URL saved in the config for that slot), replacing every older `slot` entry
/// (for any origin): entering a key again is what moves it to a new server.
pub fn keyring_set_for(slot: &str, secret: &str, server_url: &str) -> Result<(), String> {
    if secret.trim().is_empty() {
        return Err("the key is empty; nothing was stored".into());
    }
    let origin = origin_of(server_url).map_err(|e| {
        format!("the {slot} server URL is not valid ({e}); save the server's URL first, then enter its key")
    })?;
    imp::delete(slot)?;
    imp::set(slot, secret.trim(), &origin)
}

/// Deletes `slot`'s entry; Ok(false) when there was none.
pub fn keyring_delete(slot: &str) -> Result<bool, String> {
    imp::delete(slot)
}

#[cfg(all(unix, not(target_os = "macos"), not(test)))]
mod imp {
    use super::KEYRING_TIMEOUT;
    use std::collections::HashMap;
    use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};
    use zbus::Connection;

    const DEST: &str = "org.freedesktop.secrets";
    const SERVICE_PATH: &str = "/org/freedesktop/secrets";
    const SERVICE: &str = "org.freedesktop.Secret.Service";
    const COLLECTION: &str = "org.freedesktop.Secret.Collection";
    const ITEM: &str = "org.freedesktop.Secret.Item";
    const DEFAULT_ALIAS: &str = "/org/freedesktop/secrets/aliases/default";

    /// The spec's Secret struct `(oayays)`: session, parameters, value, content type.
    type Secret = (OwnedObjectPath, Vec<u8>, Vec<u8>, String);

    fn block<T: Send>(
        fut: impl std::future::Future<Output = Result<T, String>> + Send,
    ) -> Result<T, String> {
        if !super::session_bus_present() {
            return Err("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset), so no keyring; use an environment variable instead".into());
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the keyring runtime: {e}"))?;
        let run = || {
            rt.block_on(async { tokio::time::timeout(KEYRING_TIMEOUT, fut).await })
                .map_err(|_| {
                    format!(
                        "the keyring did not answer within {} s; is it locked and waiting for a password?",
                        KEYRING_TIMEOUT.as_secs()
                    )
                })?
        };
        // Inside another runtime (the tray app), wait on a helper thread instead.
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(run).join())
                .map_err(|_| "the keyring lookup crashed".to_string())?
        } else {
            run()
        }
    }

    fn dbus_err(e: zbus::Error) -> String {
        match &e {
            zbus::Error::MethodError(name, _, _)
                if name.as_str() == "org.freedesktop.DBus.Error.ServiceUnknown" =>
            {
                "no Secret Service on the session bus (GNOME Keyring, KWallet or KeePassXC); use an environment variable instead".into()
            }
            _ => format!("the keyring failed: {e}"),
        }
    }

    struct Keyring {
        conn: Connection,
        session: OwnedObjectPath,
    }

    fn attributes<'a>(slot: &'a str, origin: Option<&'a str>) -> HashMap<&'a str, &'a str> {
        let mut a = HashMap::from([("service", "dictum"), ("username", slot)]);
        if let Some(origin) = origin {
            a.insert("origin", origin);
        }
        a
    }

    impl Keyring {
        async fn open() -> Result<Keyring, String> {
            let conn = Connection::session()
                .await
                .map_err(|e| format!("cannot reach the D-Bus session bus: {e}"))?;
            let reply = conn
                .call_method(
                    Some(DEST),
                    SERVICE_PATH,
                    Some(SERVICE),
                    "OpenSession",
                    &("plain", Value::from("")),
                )
                .await
                .map_err(dbus_err)?;
            let (_, session): (OwnedValue, OwnedObjectPath) =
                reply.body().deserialize().map_err(|e| e.to_string())?;
            Ok(Keyring { conn, session })
        }

        async fn call<B, R>(
            &self,
            path: &str,
            iface: &str,
            method: &str,
            body: &B,
        ) -> Result<R, String>
        where
            B: serde::Serialize + zbus::zvariant::DynamicType,
            R: for<'d> zbus::zvariant::DynamicDeserialize<'d>,
        {
            let reply = self
                .conn
                .call_method(Some(DEST), path, Some(iface), method, body)
                .await
                .map_err(dbus_err)?;
            reply.body().deserialize().map_err(|e| e.to_string())
        }

        /// Unlocked items for `slot`; Err when only locked ones exist (Dictum never prompts).
        async fn find(
            &self,
            slot: &str,
            origin: Option<&str>,
        ) -> Result<Vec<OwnedObjectPath>, String> {
            let (unlocked, locked): (Vec<OwnedObjectPath>, Vec<OwnedObjectPath>) = self
                .call(
                    SERVICE_PATH,
                    SERVICE,
                    "SearchItems",
                    &(attributes(slot, origin),),
                )
                .await?;
            if unlocked.is_empty() && !locked.is_empty() {
                // Unlocking without a prompt works when the collection is already open.
                let (done, _prompt): (Vec<OwnedObjectPath>, OwnedObjectPath) = self
                    .call(SERVICE_PATH, SERVICE, "Unlock", &(locked,))
                    .await?;
                if done.is_empty() {
                    return Err("the keyring is locked; unlock it (log in to the desktop) or use an environment variable".into());
                }
                return Ok(done);
            }
            Ok(unlocked)
        }

        async fn close(self) {
            let _ = self
                .conn
                .call_method(
                    Some(DEST),
                    self.session.as_str(),
                    Some("org.freedesktop.Secret.Session"),
                    "Close",
                    &(),
                )
                .await;
        }
    }

    pub(super) fn get(slot: &str, origin: Option<&str>) -> Result<Option<String>, String> {
        block(async {
            let k = Keyring::open().await?;
            let found = k.find(slot, origin).await;
            let result = match found {
                Ok(items) if items.is_empty() => Ok(None),
                Ok(items) => {
                    let secret: Result<(Secret,), String> = k
                        .call(items[0].as_str(), ITEM, "GetSecret", &(&k.session,))
                        .await;
                    secret.and_then(|((_, _, value, _),)| {
                        String::from_utf8(value)
                            .map(Some)
                            .map_err(|_| "the keyring entry is not text".to_string())
                    })
                }
                Err(e) => Err(e),
            };
            k.close().await;
            result
        })
    }

    pub(super) fn set(slot: &str, secret: &str, origin: &str) -> Result<(), String> {
        let label = format!("Dictum: {slot} server API key");
        block(async {
            let k = Keyring::open().await?;
            let mut props: HashMap<&str, Value> = HashMap::new();
            props.insert(
                "org.freedesktop.Secret.Item.Label",
                Value::from(label.as_str()),
            );
            props.insert(
                "org.freedesktop.Secret.Item.Attributes",
                Value::from(attributes(slot, Some(origin))),
            );
            let value: Secret = (
                k.session.clone(),
                Vec::new(),
                secret.as_bytes().to_vec(),
                "text/plain".into(),
            );
            let r: Result<(OwnedObjectPath, OwnedObjectPath), String> = k
                .call(
                    DEFAULT_ALIAS,
                    COLLECTION,
                    "CreateItem",
                    &(props, value, true),
                )
                .await;
            k.close().await;
            let (item, prompt) = r?;
            if item.as_str() == "/" && prompt.as_str() != "/" {
                return Err("the keyring is locked and wants a password prompt; unlock it (log in to the desktop) and try again".into());
            }
            Ok(())
        })
    }

    pub(super) fn delete(slot: &str) -> Result<bool, String> {
        block(async {
            let k = Keyring::open().await?;
            let items = k.find(slot, None).await;
            let mut any = false;
            let mut result = Ok(());
            for item in items.unwrap_or_default() {
                let r: Result<(OwnedObjectPath,), String> =
                    k.call(item.as_str(), ITEM, "Delete", &()).await;
                match r {
                    Ok(_) => any = true,
                    Err(e) => result = Err(e),
                }
            }
            k.close().await;
            result.map(|()| any)
        })
    }
}

#[cfg(all(not(all(unix, not(target_os = "macos"))), not(test)))]
mod imp {
    const NONE: &str = "no keyring support on this system; use an environment variable";
    pub(super) fn get(_: &str, _: Option<&str>) -> Result<Option<String>, String> {
        Err(NONE.into())
    }
    pub(super) fn set(_: &str, _: &str, _: &str) -> Result<(), String> {
        Err(NONE.into())
    }
    pub(super) fn delete(_: &str) -> Result<bool, String> {
        Err(NONE.into())
    }
}

/// Unit tests' keyring: the Secret Service's attribute matching over an in-memory list, one
/// per test thread. (The real one is exercised by the CLI's `remote_stt` test.)
#[cfg(test)]
mod imp {
    use std::cell::RefCell;

    thread_local! {
        /// (slot, origin, secret)
        static ITEMS: RefCell<Vec<(String, Option<String>, String)>> = const { RefCell::new(Vec::new()) };
    }

    /// An entry as `secret-tool store service dictum username SLOT` makes it: no origin.
    pub(super) fn put_unbound(slot: &str, secret: &str) {
        ITEMS.with(|i| i.borrow_mut().push((slot.into(), None, secret.into())));
    }

    pub(super) fn get(slot: &str, origin: Option<&str>) -> Result<Option<String>, String> {
        Ok(ITEMS.with(|i| {
            i.borrow()
                .iter()
                .find(|(s, o, _)| s == slot && origin.is_none_or(|want| o.as_deref() == Some(want)))
                .map(|(_, _, secret)| secret.clone())
        }))
    }
    pub(super) fn set(slot: &str, secret: &str, origin: &str) -> Result<(), String> {
        ITEMS.with(|i| {
            let mut items = i.borrow_mut();
            items.retain(|(s, o, _)| !(s == slot && o.as_deref() == Some(origin)));
            items.push((slot.into(), Some(origin.into()), secret.into()));
        });
        Ok(())
    }
    pub(super) fn delete(slot: &str) -> Result<bool, String> {
        Ok(ITEMS.with(|i| {
            let mut items = i.borrow_mut();
            let before = items.len();
            items.retain(|(s, _, _)| s != slot);
            items.len() != before
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_not_keys() {
        assert!(check_env_name("").is_ok());
        assert!(check_env_name("OPENAI_API_KEY").is_ok());
        assert!(check_env_name("sk-123 secret").is_err());
        assert!(check_env_name("1ABC").is_err());
    }

    #[test]
    fn a_named_unset_variable_is_an_error_that_says_what_to_do() {
        let e = api_key(
            "stt",
            "DICTUM_TEST_SECRETS_UNSET_VAR",
            "stt.api_key_env",
            false,
        )
        .expect_err("unset");
        assert!(
            e.contains("stt.api_key_env") && e.contains("not set"),
            "{e}"
        );
        assert!(api_key("stt", "", "stt.api_key_env", false)
            .expect("none")
            .is_none());
    }

    #[test]
    fn the_saved_key_goes_to_the_saved_origin_only() {
        const VAR: &str = "DICTUM_TEST_SECRETS_KEY_FOR";
        std::env::set_var(VAR, "sk-hunter2-saved");
        let saved = "https://api.example.com/v1";
        let k = key_for("llm", VAR, "llm.api_key_env", false, saved, saved).expect("same");
        assert_eq!(k.secret().as_deref(), Some("sk-hunter2-saved"));
        assert_eq!(k.describe(), format!("API key from ${VAR}"));
        // A typed-in URL of another host: no key, and the report says to save first.
        for other in [
            "https://evil.example.net/v1",
            "https://api.example.com:8443/v1",
            "http://127.0.0.1:8080",
        ] {
            let k = key_for("llm", VAR, "llm.api_key_env", false, saved, other).expect("other");
            assert!(k.secret().is_none(), "{other}");
            let said = k.describe();
            assert!(
                said.contains("tested without the API key") && said.contains("save the URL first"),
                "{said}"
            );
            assert!(!format!("{said} {k:?}").contains("hunter2"));
        }
        // Plain http to another machine, even the saved one: no key.
        let http = "http://gpu-box.lan:8000";
        let k = key_for("stt", VAR, "stt.api_key_env", false, http, http).expect("http");
        assert!(k.secret().is_none() && k.describe().contains("plain http"));
        // No key configured: nothing withheld, nothing said.
        let k = key_for(
            "llm",
            "",
            "llm.api_key_env",
            false,
            saved,
            "https://x.example",
        )
        .expect("");
        assert!(k.secret().is_none() && k.withheld.is_none());
        assert_eq!(k.describe(), "no API key");
        // The saved server's variable unset: its error; another URL: just no key.
        let unset = "DICTUM_TEST_SECRETS_KEY_FOR_UNSET";
        assert!(key_for("llm", unset, "llm.api_key_env", false, saved, saved).is_err());
        assert!(key_for(
            "llm",
            unset,
            "llm.api_key_env",
            false,
            saved,
            "https://x.example"
        )
        .expect("other")
        .withheld
        .is_none());
    }

    #[test]
    fn a_keyring_key_goes_only_to_the_origin_it_was_entered_for() {
        let key = |saved: &str, target: &str| {
            key_for("stt", "", "stt.api_key_env", true, saved, target).expect("key_for")
        };
        let a = "https://speech-a.example/v1";
        keyring_set_for("stt", "sk-hunter2-for-a", a).expect("set");
        // The saved server, any path of it: the key.
        assert_eq!(key(a, a).secret().as_deref(), Some("sk-hunter2-for-a"));
        assert_eq!(
            key(a, "https://speech-a.example:443/other")
                .secret()
                .as_deref(),
            Some("sk-hunter2-for-a")
        );
        // The URL changed and was saved (config file or settings page): the key stays home,
        // and the report says to enter it again.
        for b in [
            "https://speech-b.example/v1",
            "https://speech-a.example:8443/v1",
            "http://127.0.0.1:8080",
        ] {
            let k = key(b, b);
            assert!(k.secret().is_none(), "{b}");
            let why = k.describe();
            assert!(
                why.contains("enter it again") && why.contains("dictum key set stt"),
                "{why}"
            );
            assert!(!format!("{why} {k:?}").contains("hunter2"));
        }
        // `dictum key set stt` with the new URL saved: bound there, and no longer to the old.
        let b = "https://speech-b.example/v1";
        keyring_set_for("stt", "sk-hunter2-for-b", b).expect("set again");
        assert_eq!(key(b, b).secret().as_deref(), Some("sk-hunter2-for-b"));
        assert!(key(a, a).secret().is_none(), "the old origin lost its key");
        // The other slot is another key.
        assert!(key_for("llm", "", "llm.api_key_env", true, b, b)
            .expect("llm")
            .secret()
            .is_none());
        // An invalid saved URL stores nothing.
        assert!(keyring_set_for("stt", "sk-x", "not a url").is_err());
        assert!(keyring_set_for("stt", "  ", b).is_err());
    }

    #[test]
    fn a_keyring_entry_without_an_origin_is_sent_nowhere() {
        // As `secret-tool store service dictum username llm` (or an older Dictum) made it.
        imp::put_unbound("llm", "sk-hunter2-unbound");
        let url = "https://api.example.com/v1";
        let k = key_for("llm", "", "llm.api_key_env", true, url, url).expect("key_for");
        assert!(k.secret().is_none());
        assert!(k.describe().contains("enter it again"), "{}", k.describe());
        // `dictum key status` still sees it.
        assert_eq!(
            keyring_get("llm").expect("get").as_deref(),
            Some("sk-hunter2-unbound")
        );
        keyring_set_for("llm", "sk-hunter2-bound", url).expect("set");
        let k = key_for("llm", "", "llm.api_key_env", true, url, url).expect("key_for");
        assert_eq!(k.secret().as_deref(), Some("sk-hunter2-bound"));
        assert_eq!(
            keyring_get("llm").expect("get").as_deref(),
            Some("sk-hunter2-bound")
        );
    }

    #[test]
    fn debug_never_shows_the_key() {
        let k = ApiKey {
            secret: "hunter2-secret".into(),
            source: KeySource::Env("X".into()),
        };
        assert!(!format!("{k:?}").contains("hunter2"));
    }
}
