//! The keys the controller listens to: the dictation hotkey (an X11 grab, the
//! GlobalShortcuts portal, or none in-process when the compositor's shortcut runs `dictum
//! ctl`), its cancel key, the edit key with the edit being recorded, and the key that types
//! the last dictation again (`[dictation] retype_hotkey`). What a key means is `machine.rs`'s
//! decision; this part only has the keys, rebinds and pauses them.

use super::machine::Trigger;
use crate::config::Config;
use crate::dictation::messages::{Command, Event, Input};
use crate::edit;
use crate::hotkey::{Hotkeys, KeyEvent};
use crate::inject::session::{hotkey_path, Abilities, HotkeyPath, Session, SessionKind};
use std::sync::mpsc;
use std::time::Instant;

/// The dictation hotkey, the edit key, the retype key and the styles' keys.
pub(super) struct Keys {
    pub source: HotkeySource,
    pub edit: EditSide,
    pub retype: RetypeKey,
    pub styles: StyleKeys,
}

impl Keys {
    /// What an X11 grab's key event is (the dictation key, or its cancel key).
    pub(super) fn classify(&self, id: u32, pressed: bool) -> Option<KeyEvent> {
        match &self.source {
            HotkeySource::X11(h) => h.classify(id, pressed),
            _ => None,
        }
    }

    /// What a portal shortcut's activation is; `typing_stored`: a stored text is being
    /// typed, which the cancel shortcut stops too.
    pub(super) fn portal_trigger(
        &self,
        id: &str,
        pressed: bool,
        typing_stored: bool,
    ) -> Option<Trigger> {
        let HotkeySource::Portal { paused: false, .. } = &self.source else {
            return None;
        };
        match (id, pressed) {
            ("dictate", true) => Some(Trigger::Key(KeyEvent::Pressed)),
            ("dictate", false) => Some(Trigger::Key(KeyEvent::Released)),
            ("cancel", true) if typing_stored => Some(Trigger::Cancel),
            ("cancel", true) => Some(Trigger::PortalCancel),
            _ => None,
        }
    }

    /// Lets go of the keys (true) or takes them again (false); returns what to tell.
    pub(super) fn pause(&mut self, paused: bool, config: &Config) -> Vec<String> {
        let mut told = Vec::new();
        match &mut self.source {
            HotkeySource::X11(h) => {
                if let Err(e) = h.set_paused(paused) {
                    told.push(e);
                }
            }
            HotkeySource::Portal { paused: p, .. } => *p = paused,
            HotkeySource::None => {}
        }
        self.edit.paused = paused;
        told.extend(self.edit.sync(config));
        self.retype.paused = paused;
        told.extend(self.retype.sync(config));
        self.styles.paused = paused;
        told.extend(self.styles.sync(config));
        told
    }

    /// The keys of a changed config (`old` is the one in force); returns the problems.
    pub(super) fn rebind(&mut self, old: &Config, new: &Config) -> Vec<String> {
        let mut problems = Vec::new();
        match &mut self.source {
            HotkeySource::X11(h) => {
                if let Err(e) = h.set_main(&new.dictation.hotkey) {
                    problems.push(format!("hotkey not changed: {e}"));
                }
                if let Err(e) = h.set_cancel(&new.dictation.cancel_key) {
                    problems.push(format!("cancel key not changed: {e}"));
                }
            }
            HotkeySource::Portal { shortcut, .. }
                if new.dictation.hotkey != old.dictation.hotkey =>
            {
                if let Err(e) = shortcut.rebind(&new.dictation.hotkey) {
                    problems.push(format!("hotkey not changed: {e}"));
                }
            }
            _ => {}
        }
        problems.extend(self.edit.sync(new));
        problems.extend(self.retype.sync(new));
        problems.extend(self.styles.sync(new));
        problems
    }

    /// The cancel key is grabbed only while there is something to cancel.
    pub(super) fn arm_cancel(&mut self, armed: bool) {
        if let HotkeySource::X11(h) = &mut self.source {
            h.arm_cancel(armed);
        }
    }
}

/// The edit hotkey and the edit being recorded.
pub(super) struct EditSide {
    inputs: mpsc::Sender<Input>,
    /// The dictation hotkey is an X11 grab, so the edit key is one too.
    grab: bool,
    /// The grabbed edit key and its spec.
    hotkey: Option<(Hotkeys, String)>,
    /// The utterance (sequence number) recording an instruction.
    pub recording: Option<u64>,
    /// The hotkeys are paused (tray: "pause hotkey"): the edit key is let go too.
    paused: bool,
    pub probe: edit::focus::Probe,
}

impl EditSide {
    pub(super) fn new(inputs: mpsc::Sender<Input>, grab: bool) -> EditSide {
        EditSide {
            inputs,
            grab,
            hotkey: None,
            recording: None,
            paused: false,
            probe: edit::focus::Probe::new(),
        }
    }
}

impl EditSide {
    /// Grabs, moves or lets go of the edit key as the config (and the pause) want; returns
    /// the problem to tell, if any.
    pub(super) fn sync(&mut self, config: &Config) -> Option<String> {
        let want = (self.grab && config.edit.enabled && !self.paused)
            .then(|| config.edit.hotkey.trim().to_string());
        if self.hotkey.as_ref().map(|(_, spec)| spec) == want.as_ref() {
            return None;
        }
        self.hotkey = None;
        let spec = want?;
        let grabbed = grab(&self.inputs, &spec, |pressed| {
            Some(if pressed {
                Command::EditPress
            } else {
                Command::EditRelease
            })
        });
        match grabbed {
            Ok(h) => {
                tracing::info!(hotkey = %spec, "edit hotkey grabbed");
                self.hotkey = Some((h, spec));
                None
            }
            Err(e) => Some(format!(
                "edit hotkey not available: {}",
                e.replace("[dictation] hotkey", "[edit] hotkey")
            )),
        }
    }
}

/// Grabs `spec` (X11) as a key of its own, whose presses (`true`) and releases become the
/// commands `command` gives.
fn grab(
    inputs: &mpsc::Sender<Input>,
    spec: &str,
    command: impl Fn(bool) -> Option<Command> + Send + Sync + 'static,
) -> Result<Hotkeys, String> {
    let tx = inputs.clone();
    let mut h = Hotkeys::new(move |_, pressed| {
        if let Some(cmd) = command(pressed) {
            let _ = tx.send(Input::Command(cmd, Instant::now()));
        }
    })?;
    h.set_main(spec)?;
    Ok(h)
}

/// The key that types the last dictation again (`[dictation] retype_hotkey`, off when
/// empty): grabbed on X11 like the edit key; its release sends what `dictum ctl retype`
/// sends, so the text goes out once the key (and its modifiers) are up.
pub(super) struct RetypeKey {
    inputs: mpsc::Sender<Input>,
    /// The dictation hotkey is an X11 grab, so this key is one too.
    grab: bool,
    /// The grabbed key and its spec.
    hotkey: Option<(Hotkeys, String)>,
    /// The hotkeys are paused (tray: "pause hotkey"): this key is let go too.
    paused: bool,
}

impl RetypeKey {
    pub(super) fn new(inputs: mpsc::Sender<Input>, grab: bool) -> RetypeKey {
        RetypeKey {
            inputs,
            grab,
            hotkey: None,
            paused: false,
        }
    }

    /// Grabs, moves or lets go of the key as the config (and the pause) want; returns the
    /// problem to tell, if any.
    pub(super) fn sync(&mut self, config: &Config) -> Option<String> {
        let spec = config.dictation.retype_hotkey.trim();
        let want = (self.grab && !spec.is_empty() && !self.paused).then(|| spec.to_string());
        if self.hotkey.as_ref().map(|(_, spec)| spec) == want.as_ref() {
            return None;
        }
        self.hotkey = None;
        let spec = want?;
        let grabbed = grab(&self.inputs, &spec, |pressed| {
            (!pressed).then(|| Command::TypeStored(crate::dictation::TypeStored::last_dictation()))
        });
        match grabbed {
            Ok(h) => {
                tracing::info!(hotkey = %spec, "retype hotkey grabbed");
                self.hotkey = Some((h, spec));
                None
            }
            Err(e) => Some(format!(
                "retype hotkey not available: {}",
                e.replace("[dictation] hotkey", "[dictation] retype_hotkey")
            )),
        }
    }
}

/// The keys that dictate in a style (`[[style]]`: the dictation hotkey with a style's
/// modifier, a style's own key), grabbed on X11 like the edit key: a press sends
/// `Command::PressStyle`, a release `Command::Release`, so each works like the dictation
/// hotkey in its mode.
pub(super) struct StyleKeys {
    inputs: mpsc::Sender<Input>,
    /// The dictation hotkey is an X11 grab, so these keys are too.
    grab: bool,
    /// The grabbed keys: each key's grab, its spec and its style.
    held: Vec<(Hotkeys, String, String)>,
    /// The hotkeys are paused (tray: "pause hotkey"): these keys are let go too.
    paused: bool,
}

impl StyleKeys {
    pub(super) fn new(inputs: mpsc::Sender<Input>, grab: bool) -> StyleKeys {
        StyleKeys {
            inputs,
            grab,
            held: Vec::new(),
            paused: false,
        }
    }

    /// Grabs, moves or lets go of the keys as the config (and the pause) want; returns the
    /// problems to tell.
    pub(super) fn sync(&mut self, config: &Config) -> Vec<String> {
        let want = if self.grab && !self.paused {
            crate::config::style::keys(&config.styles, &config.dictation.hotkey)
        } else {
            Vec::new()
        };
        let have: Vec<(String, String)> = self
            .held
            .iter()
            .map(|(_, spec, style)| (spec.clone(), style.clone()))
            .collect();
        if have == want {
            return Vec::new();
        }
        self.held.clear();
        let mut problems = Vec::new();
        for (spec, style) in want {
            let name = style.clone();
            let grabbed = grab(&self.inputs, &spec, move |pressed| {
                Some(if pressed {
                    Command::PressStyle(name.clone())
                } else {
                    Command::Release
                })
            });
            match grabbed {
                Ok(h) => {
                    tracing::info!(hotkey = %spec, style = %style, "style key grabbed");
                    self.held.push((h, spec, style));
                }
                Err(e) => problems.push(format!(
                    "the key of style \"{style}\" ({spec}) is not available: {}",
                    e.replace("[dictation] hotkey", "its [[style]] table")
                )),
            }
        }
        problems
    }
}

/// Where hotkey events come from.
pub(super) enum HotkeySource {
    /// X11 key grabs (X11 sessions).
    X11(Hotkeys),
    /// The GlobalShortcuts portal (Wayland: KDE, GNOME ≥ 48, Hyprland).
    Portal {
        shortcut: crate::portal::PortalShortcut,
        paused: bool,
    },
    /// None in-process: `dictum ctl` from a compositor shortcut, the tray menu, stdin.
    None,
}

/// Takes the hotkey by the session's path (see `inject::session::hotkey_path`). Returns the
/// source and the path's name for the ready event. A Wayland session always starts: without
/// the portal, the compositor's own shortcut drives `dictum ctl` (and the user is told how).
pub(super) fn start_hotkey(
    config: &Config,
    inputs_tx: &mpsc::Sender<Input>,
    events: &mpsc::Sender<Event>,
) -> Result<(HotkeySource, String), String> {
    let session = Session::detect();
    let mut ab = Abilities {
        x11: session.kind == SessionKind::X11 && crate::hotkey::display_problem().is_none(),
        ..Abilities::default()
    };
    if session.kind == SessionKind::Wayland {
        ab.global_shortcuts = crate::portal::probe().global_shortcuts.is_some();
    }
    let notice = |message: String| {
        let _ = events.send(Event::Notice { message });
    };
    let compositor = |release: bool| {
        let how = if release {
            "push-to-talk"
        } else {
            "toggle: this desktop's shortcuts report no key release"
        };
        format!(
            "hotkey: {} has no GlobalShortcuts portal, so your compositor's shortcut drives \
             Dictum ({how}); `dictum shortcut install` sets it up for {}, `dictum shortcut \
             print` shows the lines",
            session.describe(),
            config.dictation.hotkey
        )
    };
    let path = hotkey_path(&session, &ab);
    // A mouse button is grabbed on X11 only; elsewhere the compositor must bind it.
    if let (
        Ok(crate::hotkey::Binding::Button(_)),
        HotkeyPath::Portal | HotkeyPath::Compositor { .. },
    ) = (
        crate::hotkey::parse_binding(&config.dictation.hotkey),
        &path,
    ) {
        notice(format!(
            "hotkey: {} cannot be grabbed in {}; {}",
            config.dictation.hotkey,
            session.describe(),
            crate::hotkey::MOUSE_ON_WAYLAND
        ));
        return Ok((HotkeySource::None, "compositor".into()));
    }
    match path {
        HotkeyPath::X11Grab => {
            let tx = inputs_tx.clone();
            let mut hk = Hotkeys::new(move |id, pressed| {
                let _ = tx.send(Input::Key {
                    id,
                    pressed,
                    at: Instant::now(),
                });
            })?;
            hk.set_main(&config.dictation.hotkey)?;
            hk.set_cancel(&config.dictation.cancel_key)?;
            Ok((HotkeySource::X11(hk), "x11_grab".into()))
        }
        HotkeyPath::Portal => {
            let tx = inputs_tx.clone();
            let started = crate::portal::PortalShortcut::start(
                &config.dictation.hotkey,
                move |id, pressed| {
                    let _ = tx.send(Input::PortalKey {
                        id: id.to_string(),
                        pressed,
                        at: Instant::now(),
                    });
                },
            );
            match started {
                Ok(shortcut) => {
                    let bound = shortcut
                        .trigger_description()
                        .unwrap_or_else(|| config.dictation.hotkey.clone());
                    notice(format!(
                        "hotkey: GlobalShortcuts portal ({bound}); change it in your desktop's                          shortcut settings or Dictum's settings"
                    ));
                    Ok((
                        HotkeySource::Portal {
                            shortcut,
                            paused: false,
                        },
                        "portal".into(),
                    ))
                }
                Err(e) => {
                    notice(format!("hotkey: the GlobalShortcuts portal failed ({e})"));
                    notice(compositor(true));
                    Ok((HotkeySource::None, "compositor".into()))
                }
            }
        }
        HotkeyPath::Compositor { release } => {
            notice(compositor(release));
            Ok((HotkeySource::None, "compositor".into()))
        }
        HotkeyPath::None { reason } => Err(format!(
            "no global hotkey: {reason}; run Dictum inside your desktop session, or start it \
             with --no-hotkey and drive it with `dictum ctl`"
        )),
    }
}
