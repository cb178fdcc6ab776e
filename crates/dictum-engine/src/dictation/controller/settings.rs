//! What the controller knows about the user's settings besides the config in force: the
//! config file it watches (and the command-line overrides re-applied to it), and the
//! per-app profiles with the window probe that picks one for each dictation.

use crate::config::Config;
use crate::dictation::messages::Event;
use crate::dictation::options::ConfigOverrides;
use crate::dictation::sink::WindowProbe;
use crate::profile::{Profile, Profiles};
use crate::store::Entry;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};

pub(super) fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The config file, watched: a change is applied without a restart.
pub(super) struct Watch {
    path: Option<PathBuf>,
    mtime: Option<SystemTime>,
    overrides: Option<ConfigOverrides>,
    /// Housekeeping's last round (once a second).
    last_round: Instant,
}

impl Watch {
    pub(super) fn new(path: Option<PathBuf>, overrides: Option<ConfigOverrides>) -> Watch {
        Watch {
            mtime: path.as_deref().and_then(mtime),
            path,
            overrides,
            last_round: Instant::now(),
        }
    }

    /// True at most once a second: housekeeping's turn.
    pub(super) fn round_due(&mut self) -> bool {
        if self.last_round.elapsed() < Duration::from_secs(1) {
            return false;
        }
        self.last_round = Instant::now();
        true
    }

    /// The config file, re-read when it changed since it was last read (warnings, then the
    /// config with the overrides applied), or why it cannot be used.
    pub(super) fn changed(&mut self) -> Option<Result<(Config, Vec<String>), String>> {
        let path = self.path.clone()?;
        let now = mtime(&path);
        if now == self.mtime {
            return None;
        }
        self.mtime = now;
        Some(match Config::load_from(&path) {
            Ok(loaded) => {
                let mut config = loaded.config;
                if let Some(apply) = &self.overrides {
                    apply(&mut config);
                }
                Ok((config, loaded.warnings))
            }
            Err(e) => Err(format!("config not applied: {e}")),
        })
    }
}

/// The per-app profiles and how the focused window is found.
pub(super) struct Apps {
    profiles: Profiles,
    probe: Option<WindowProbe>,
    /// "unknown app → default profile" has been logged (once per run).
    unknown_told: bool,
    /// The style picked at the key for the press being handled (a style's modifier or key,
    /// `dictum ctl press --style`); taken by the utterance it opens.
    asked_style: Option<String>,
    /// The process of the window focused at the last press (`describe`), for reading the
    /// text around its cursor.
    pid_at_press: Option<u32>,
    /// The desktop's accessibility switch, as `[context] switch_on_accessibility` wants it.
    accessibility: crate::context::atspi::Switch,
}

impl Apps {
    pub(super) fn new(
        config: &Config,
        probe: Option<WindowProbe>,
        events: &mpsc::Sender<Event>,
    ) -> Apps {
        let mut accessibility = crate::context::atspi::Switch::default();
        switch_accessibility(&mut accessibility, config, events);
        Apps {
            accessibility,
            profiles: compile_profiles(config, events),
            probe,
            unknown_told: false,
            asked_style: None,
            pid_at_press: None,
        }
    }

    /// The profiles of a changed config.
    pub(super) fn reconfigure(&mut self, config: &Config, events: &mpsc::Sender<Event>) {
        self.profiles = compile_profiles(config, events);
        switch_accessibility(&mut self.accessibility, config, events);
    }

    /// The style the next press is written in (`None`: as the profile or the config says).
    pub(super) fn ask_style(&mut self, style: Option<String>) {
        self.asked_style = style;
    }

    /// Fills a new utterance's row with the model, the focused window, the profile that
    /// window picks (its language) and the style, and returns that profile with the style
    /// over it.
    pub(super) fn describe(&mut self, entry: &mut Entry, config: &Config) -> Arc<Profile> {
        entry.model = Some(config.stt.model.clone());
        self.pid_at_press = None;
        if let Some(probe) = &self.probe {
            let window = probe();
            entry.app_class = window.class;
            entry.window_title = window.title;
            self.pid_at_press = window.pid;
        }
        let profile = self.pick(entry);
        let profile = self.styled(profile, config);
        entry.language = Some(profile.language(config).to_string());
        entry.profile = Some(profile.name.clone());
        entry.style = profile.style.clone();
        profile
    }

    /// Starts reading the text around the cursor of the window `entry` was opened in, for
    /// the LLM (`dictation/caret.rs`); None when it will not be used.
    pub(super) fn press_read(
        &self,
        entry: &Entry,
        profile: &Profile,
        config: &Config,
    ) -> Option<Arc<crate::dictation::llm_context::PressRead>> {
        crate::dictation::llm_context::PressRead::start(
            config,
            profile,
            entry.app_class.as_deref(),
            entry.window_title.as_deref(),
            self.pid_at_press,
        )
    }

    /// `profile` with its utterance's style over it: the one picked at the key, else the
    /// profile's own, else `[dictation] style`; none of them: the profile as it is. A name
    /// no style has (a config changed since) is told and ignored.
    fn styled(&mut self, profile: Arc<Profile>, config: &Config) -> Arc<Profile> {
        let name = self
            .asked_style
            .take()
            .or_else(|| profile.default_style.clone())
            .or_else(|| Some(config.dictation.style.clone()))
            .filter(|s| !s.trim().is_empty());
        let Some(name) = name else {
            return profile;
        };
        match crate::config::style::find(&config.styles, &name) {
            Some(style) => {
                tracing::info!(style = %style.name, "style picked");
                Arc::new(profile.with_style(&style))
            }
            None => {
                tracing::warn!(
                    "no style is named `{name}`: this dictation is written as [llm] says"
                );
                profile
            }
        }
    }

    /// The profile for the window focused at the press (the row's class and title). An app
    /// that cannot be known (no X11, a Wayland compositor that does not tell) gets the
    /// default profile, said once in the log.
    fn pick(&mut self, entry: &Entry) -> Arc<Profile> {
        let (class, title) = (entry.app_class.as_deref(), entry.window_title.as_deref());
        if class.is_none() && title.is_none() {
            if !std::mem::replace(&mut self.unknown_told, true) {
                tracing::info!("unknown app → default profile");
            }
            return self.profiles.default_profile();
        }
        let profile = self.profiles.pick(class, title);
        // A title can name a document: only at debug level (`dictum --verbose`).
        tracing::info!(profile = %profile.name, class = class.unwrap_or(""), "profile picked");
        tracing::debug!(
            title = title.unwrap_or(""),
            "profile picked for this window"
        );
        profile
    }
}

/// The config's profiles (validated when the config was loaded; a config built in code that
/// slipped through gets no profiles, and the user is told).
/// The desktop's accessibility switch as `[context]` wants it; a failure is told.
fn switch_accessibility(
    switch: &mut crate::context::atspi::Switch,
    config: &Config,
    events: &mpsc::Sender<Event>,
) {
    if let Some(message) =
        switch.apply(&config.context, crate::context::atspi::switch_accessibility)
    {
        tracing::warn!("{message}");
        let _ = events.send(Event::Notice { message });
    }
}

fn compile_profiles(config: &Config, events: &mpsc::Sender<Event>) -> Profiles {
    Profiles::compile(&config.profiles).unwrap_or_else(|(key, reason)| {
        let _ = events.send(Event::Notice {
            message: format!("per-app profiles not used: {key}: {reason}"),
        });
        Profiles::default()
    })
}
