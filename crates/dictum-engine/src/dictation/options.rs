//! How a dictation is started ([`StartOptions`]) and how long it may take to stop.

use crate::config::Config;
use crate::dictation::sink::{SinkFactory, WindowProbe};
use std::path::PathBuf;
use std::time::Duration;

/// How long quit waits for the utterance under way (transcribed, cleaned, typed) before it
/// marks what is left `interrupted` (audio kept) and stops.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(4);
/// The longest [`super::Dictation::shutdown`] takes, whatever a stage is doing.
pub const SHUTDOWN_BOUND: Duration = Duration::from_secs(5);

/// Re-applies command-line overrides to a re-read config file.
pub type ConfigOverrides = Box<dyn Fn(&mut Config) + Send>;

pub struct StartOptions {
    pub config: Config,
    /// Watched: a change is applied without a restart.
    pub config_path: Option<PathBuf>,
    pub history_path: PathBuf,
    pub model_dirs: Vec<PathBuf>,
    pub audio_dir: Option<PathBuf>,
    /// Register the global hotkey (off: only [`Command`]s drive it).
    pub hotkeys: bool,
    /// Builds the text sink on the injector thread, from the config (called again when the
    /// config changes).
    pub sink: SinkFactory,
    pub window_probe: Option<WindowProbe>,
    /// Applied to the config file each time it is re-read (command-line overrides stay in
    /// force when the file changes).
    pub overrides: Option<ConfigOverrides>,
}
