//! The reader's public shapes: what the caller says ([`Target`]), what it gets ([`Read`],
//! [`Caret`]) and what `dictum doctor` shows ([`Probe`]).

use crate::context::join::Around;
use std::time::Duration;

/// The time a read may take, connections included.
pub const DEFAULT_BUDGET: Duration = Duration::from_millis(150);
/// The most accessible objects one read looks at.
pub const NODE_BUDGET: u32 = 3000;

/// [`Read::Refused`]: the focused object has the password role (or sits inside one).
pub const REFUSED_PASSWORD: &str = "a password field";
/// [`Read::Refused`]: the app is on the opt-out list.
pub const REFUSED_OPT_OUT: &str = "an app on the opt-out list";
/// [`Read::Refused`]: the field shows only bullets (a hidden entry without the password role).
pub const REFUSED_MASKED: &str = "a field that hides its text";

/// The focused window, as the caller knows it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Target<'a> {
    /// Its process (X11 `_NET_WM_PID`, the compositor's answer); None: unknown.
    pub pid: Option<u32>,
    /// Its window class or app id, for the opt-out list.
    pub class: Option<&'a str>,
}

/// The text around the caret of the focused field.
#[derive(Clone, PartialEq, Eq)]
pub struct Caret {
    /// Up to [`BEFORE_CHARS`](super::BEFORE_CHARS) characters before the caret.
    pub before: String,
    /// Up to [`AFTER_CHARS`](super::AFTER_CHARS) characters after it.
    pub after: String,
    /// The application's accessible name (GTK: its program name).
    pub app: Option<String>,
    /// The field's AT-SPI role name ("text", "entry", "paragraph" …).
    pub role: String,
    /// Accessible objects looked at to find it.
    pub nodes: u32,
    /// How long the read took, connections included.
    pub took: Duration,
}

impl Caret {
    /// The shape [`join`](crate::context::join::join) takes.
    pub fn around(&self) -> Around<'_> {
        Around::new(&self.before, &self.after)
    }
}

/// Lengths only: the text never reaches a log through `{:?}`.
impl std::fmt::Debug for Caret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caret")
            .field("before_chars", &self.before.chars().count())
            .field("after_chars", &self.after.chars().count())
            .field("app", &self.app)
            .field("role", &self.role)
            .field("nodes", &self.nodes)
            .field("took", &self.took)
            .finish()
    }
}

/// What [`read_around_caret`](super::read_around_caret) found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    Known(Caret),
    /// Not read on purpose: [`REFUSED_PASSWORD`], [`REFUSED_OPT_OUT`] or [`REFUSED_MASKED`].
    Refused(&'static str),
    /// Could not be read, and why (no accessibility bus, no focused text, budget spent …).
    Unavailable(String),
}

impl Read {
    /// The text around the caret for [`join`](crate::context::join::join); unknown unless `Known`.
    pub fn around(&self) -> Around<'_> {
        match self {
            Read::Known(c) => c.around(),
            _ => Around::default(),
        }
    }
}

/// Whether the text around the cursor can be read in this session (`dictum doctor`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Probe {
    /// The accessibility bus answers.
    pub bus: bool,
    /// Applications registered on it (None without a bus).
    pub apps: Option<usize>,
    /// `org.a11y.Status.IsEnabled`: Qt and Chromium/Electron apps expose their text only when
    /// it is true (GTK always does). None when it cannot be read.
    pub toolkit_accessibility: Option<bool>,
    /// Why there is no bus.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
