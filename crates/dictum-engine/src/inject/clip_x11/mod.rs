//! The X11 CLIPBOARD kept whole across a paste: every format it holds saved, the dictated
//! text offered for the paste, and what was there served back byte for byte afterwards.
//!
//! | file | does |
//! |---|---|
//! | `targets.rs` | pure: which targets are data, the size bound, INCR pieces |
//! | `read.rs` | [`Reader`]: a snapshot of every data target (INCR for large ones) |
//! | `serve.rs` | [`Owner`]: a thread of its own owning CLIPBOARD, serving what it is given, and the log of who fetched what |
//!
//! Each has its own X connection: the owner's thread answers requests while the reader
//! (on the injector's thread) waits for another owner's answers.

mod read;
mod serve;
pub(crate) mod targets;

pub(crate) use read::SnapError;
pub(crate) use serve::Fetch;

use std::sync::Arc;
use std::time::Duration;
use x11rb::protocol::xproto::{Atom, AtomEnum, Window};

x11rb::atom_manager! {
    pub(crate) Atoms: AtomsCookie {
        CLIPBOARD,
        TARGETS,
        INCR,
        UTF8_STRING,
        TEXT,
        TEXT_PLAIN_UTF8: b"text/plain;charset=utf-8",
        DICTUM_CLIP,
        DICTUM_WAKE,
    }
}

/// One target's value as its owner sent it: the target asked for, the type and format the
/// answer carried, and the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    pub target: Atom,
    pub kind: Atom,
    pub format: u8,
    pub data: Vec<u8>,
}

/// What CLIPBOARD held: None when nobody owned it.
pub(crate) type Saved = Option<Arc<Vec<Item>>>;

/// The dictated text in the forms text readers ask for: UTF8_STRING, TEXT (answered as
/// UTF-8), text/plain;charset=utf-8 and STRING (Latin-1; other characters become '?').
pub(crate) fn text_items(atoms: &Atoms, text: &str) -> Vec<Item> {
    let utf8 = text.as_bytes().to_vec();
    let latin1 = text
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect();
    let item = |target, kind, data| Item {
        target,
        kind,
        format: 8,
        data,
    };
    vec![
        item(atoms.UTF8_STRING, atoms.UTF8_STRING, utf8.clone()),
        item(atoms.TEXT, atoms.UTF8_STRING, utf8.clone()),
        item(atoms.TEXT_PLAIN_UTF8, atoms.TEXT_PLAIN_UTF8, utf8),
        item(AtomEnum::STRING.into(), AtomEnum::STRING.into(), latin1),
    ]
}

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
