//! Reading the text around the caret of the focused text field through AT-SPI, the Linux
//! accessibility interface (issue 41), so that [`join`](super::join) can fit a dictation into
//! it. Blocking, bounded, and fail-closed: anything unexpected reads as "unknown", which is
//! today's behaviour (the text typed as whisper wrote it).
//!
//! **How the focused object is found.** AT-SPI has no "which object has the focus" call that
//! every toolkit answers (GTK 4 and Qt lack the `Collection` interface), and listening to
//! focus events would need a process that runs all the time and sees every focus change. So
//! the reader asks at the moment it is needed:
//! 1. the session bus's `org.a11y.Bus` for the accessibility bus's address (only when its
//!    launcher already runs: Dictum never starts it);
//! 2. the registry (`org.a11y.atspi.Registry`, `/org/a11y/atspi/accessible/root`) for its
//!    applications, and the bus daemon (`GetConnectionUnixProcessID`) for each one's process:
//!    only the application whose process is the focused window's ([`Target::pid`]) is walked
//!    (without a pid: every application, opted-out ones left alone);
//! 3. that app's objects, depth-first, stopping at the first child with the FOCUSED state.
//!    Each level's children are asked state and role at once; only children that are SHOWING
//!    (or VISIBLE, for a toolkit that does not set SHOWING) are entered, active windows first;
//!    minimised windows, defunct objects and containers that manage their descendants (tables
//!    with thousands of cells) are not. A focused object without the Text interface (GTK's
//!    entry around its inner text) is searched further inside.
//!
//! The walk stops at [`NODE_BUDGET`] objects or at the time budget (150 ms,
//! [`DEFAULT_BUDGET`]; the whole read, connections included, is bounded by it), so a huge
//! app never holds up a dictation: a spent budget is [`Read::Unavailable`].
//!
//! **What is never read.** Before any text is asked for: an app on the opt-out list (matched
//! against the window class the caller gives, the app's accessible name, its process name,
//! its executable and its Flatpak id; default [`DEFAULT_OPT_OUT`]: password managers and
//! password prompts) is [`Read::Refused`]; so is a focused object with the password role, or
//! one inside an object with that role. After reading, a text made only of the bullets
//! toolkits show for hidden entries is refused too and dropped. An entry that hides its text
//! some other way cannot be told from any other field (docs/SECURITY.md).
//!
//! **What is read:** at most [`BEFORE_CHARS`] characters before the caret and [`AFTER_CHARS`]
//! after (AT-SPI offsets count characters; the answer is clamped again in characters, since
//! an app may send more). Nothing is kept: the text lives in the returned [`Caret`] only, and
//! is never logged (the log, at debug level, has lengths, the role and the timing; `Caret`'s
//! and `Read`'s `Debug` print lengths only).
//!
//! GTK 3 and 4 apps expose their text by default; Qt and Chromium/Electron apps only with
//! accessibility switched on (`org.a11y.Status.IsEnabled`, see [`probe`]).

mod rules;
mod switch;

#[cfg(target_os = "linux")]
mod bus;
#[cfg(target_os = "linux")]
mod read;
#[cfg(target_os = "linux")]
mod walk;

mod types;

pub use rules::{default_opt_out, opted_out, AFTER_CHARS, BEFORE_CHARS, DEFAULT_OPT_OUT};
pub use switch::Switch;
pub use types::{
    Caret, Probe, Read, Target, DEFAULT_BUDGET, NODE_BUDGET, REFUSED_MASKED, REFUSED_OPT_OUT,
    REFUSED_PASSWORD,
};

use crate::portal::Bus;
use std::time::Duration;

/// The text around the caret of the focused field of `target`, on this session's
/// accessibility bus. Blocks at most `budget` (plus a thread start on the first call). Apps
/// matched by `opt_out` ([`opted_out`]) are never read.
pub fn read_around_caret(target: &Target, opt_out: &[String], budget: Duration) -> Read {
    read_around_caret_on(&Bus::Session, target, opt_out, budget)
}

/// [`read_around_caret`] with the session bus given (tests, another session).
#[cfg(target_os = "linux")]
pub fn read_around_caret_on(
    bus: &Bus,
    target: &Target,
    opt_out: &[String],
    budget: Duration,
) -> Read {
    read::read(bus, target, opt_out, budget)
}

/// [`read_around_caret`] with the session bus given (tests, another session).
#[cfg(not(target_os = "linux"))]
pub fn read_around_caret_on(
    _bus: &Bus,
    _target: &Target,
    _opt_out: &[String],
    _budget: Duration,
) -> Read {
    Read::Unavailable("the text around the cursor is read through AT-SPI, on Linux only".into())
}

/// Turns the desktop's accessibility switch (`org.a11y.Status.IsEnabled`, what Qt and
/// Chromium/Electron apps read before they expose their text) on or off on this session's
/// bus, at most [`PROBE_TIMEOUT`]; Ok(what it was). Only for `[context]
/// switch_on_accessibility`, the user's choice: it may start the accessibility bus.
pub fn switch_accessibility(on: bool) -> Result<Option<bool>, String> {
    switch_accessibility_on(&Bus::Session, on)
}

/// [`switch_accessibility`] on a given session bus.
#[cfg(target_os = "linux")]
pub fn switch_accessibility_on(bus: &Bus, on: bool) -> Result<Option<bool>, String> {
    read::switch(bus, on, PROBE_TIMEOUT)
}

/// [`switch_accessibility`] on a given session bus.
#[cfg(not(target_os = "linux"))]
pub fn switch_accessibility_on(_bus: &Bus, _on: bool) -> Result<Option<bool>, String> {
    Err("AT-SPI is Linux only".into())
}

/// How long [`probe`] may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// [`Probe`] for this session's bus, at most [`PROBE_TIMEOUT`].
pub fn probe() -> Probe {
    probe_on(&Bus::Session)
}

/// [`probe`] on a given session bus.
#[cfg(target_os = "linux")]
pub fn probe_on(bus: &Bus) -> Probe {
    read::probe(bus, PROBE_TIMEOUT)
}

/// [`probe`] on a given session bus.
#[cfg(not(target_os = "linux"))]
pub fn probe_on(_bus: &Bus) -> Probe {
    Probe {
        bus: false,
        apps: None,
        toolkit_accessibility: None,
        error: Some("AT-SPI is Linux only".into()),
    }
}
