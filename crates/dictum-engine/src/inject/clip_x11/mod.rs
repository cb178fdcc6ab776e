//! The X11 CLIPBOARD kept whole across a paste: every format it holds saved, the dictated
//! text offered for the paste, and what was there served back byte for byte afterwards.
//!
//! | file | does |
//! |---|---|
//! | `item.rs` | what a clipboard holds: the atoms, one target's value ([`Item`]), the text's forms |
//! | `targets.rs` | pure: which targets are data, the size bound, INCR pieces |
//! | `read.rs` | [`Reader`]: a snapshot of every data target (INCR for large ones) |
//! | `serve.rs` | [`Owner`]: a thread of its own owning CLIPBOARD, serving what it is given, and the log of who fetched what |
//!
//! Each has its own X connection: the owner's thread answers requests while the reader
//! (on the injector's thread) waits for another owner's answers.

mod item;
mod read;
mod serve;
pub(crate) mod targets;

pub(crate) use item::{text_items, Item, Saved};
pub(crate) use read::SnapError;
pub(crate) use serve::Fetch;

use std::sync::Arc;
use std::time::Duration;
use x11rb::protocol::xproto::Window;

/// The reader and the owner, kept between dictations (dropped after an error).
pub(crate) struct ClipX11 {
    reader: read::Reader,
    owner: serve::Owner,
}

impl ClipX11 {
    pub(crate) fn connect() -> Result<ClipX11, String> {
        let reader = read::Reader::connect()?;
        let owner = serve::Owner::start(reader.atoms())?;
        Ok(ClipX11 { reader, owner })
    }

    /// Everything CLIPBOARD holds now (what this owner serves itself, without asking).
    pub(crate) fn snapshot(&mut self) -> Result<Saved, SnapError> {
        self.reader.snapshot(&self.owner)
    }

    /// Owns CLIPBOARD with the text (what the paste chord then fetches).
    pub(crate) fn own_text(&self, text: &str) -> Result<(), String> {
        self.owner
            .own(Arc::new(text_items(&self.reader.atoms(), text)))
    }

    /// Owns CLIPBOARD with `items` again (the restore).
    pub(crate) fn own(&self, items: Arc<Vec<Item>>) -> Result<(), String> {
        self.owner.own(items)
    }

    /// Waits for the paste: see [`serve::Owner::wait_fetch`].
    pub(crate) fn wait_fetch(
        &self,
        window: Option<Window>,
        first: Duration,
        rest: Duration,
    ) -> Fetch {
        self.owner.wait_fetch(window, first, rest)
    }

    /// Keeps CLIPBOARD but answers no request (each is refused) until the next own.
    pub(crate) fn refuse(&self) {
        self.owner.refuse();
    }

    /// Something else was copied since the last [`ClipX11::own`].
    pub(crate) fn lost(&self) -> bool {
        self.owner.lost()
    }

    /// Stops offering what it owns and gives CLIPBOARD up (still ours only): the
    /// clipboard is empty again, as it was.
    pub(crate) fn give_up(&self) -> Result<(), String> {
        self.owner.give_up()
    }
}
