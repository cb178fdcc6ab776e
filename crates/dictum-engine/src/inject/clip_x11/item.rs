//! What a clipboard holds, as the reader saves it and the owner serves it: the atoms both
//! use, one target's value ([`Item`]), and the dictated text in the forms text readers ask
//! for. A leaf: `read.rs` and `serve.rs` share it without importing their parent.

use std::sync::Arc;
use x11rb::protocol::xproto::{Atom, AtomEnum};

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
