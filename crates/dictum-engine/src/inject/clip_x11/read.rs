//! A snapshot of CLIPBOARD: its owner asked for TARGETS, then for every data target in turn
//! (large values come by INCR, piece by piece), within [`SNAPSHOT_LIMIT`] bytes in all.

use super::item::{Atoms, Item, Saved};
use super::serve::Owner;
use super::targets::{data_targets, Budget, TooLarge, SNAPSHOT_LIMIT};
use std::sync::Arc;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, Property, Window, WindowClass,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::{CURRENT_TIME, NONE};

/// How long the owner may take to answer one request (or to send the next INCR piece).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a whole snapshot may take: an owner that is slow on purpose (or lists many
/// targets it never answers) delays a paste by this much at most; the targets not fetched
/// by then are dropped.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(2);

/// Why there is no snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SnapError {
    /// Over [`SNAPSHOT_LIMIT`]: the clipboard is left alone.
    TooLarge(TooLarge),
    /// The X connection failed, or the owner answered nothing usable.
    Failed(String),
}

impl From<TooLarge> for SnapError {
    fn from(t: TooLarge) -> SnapError {
        SnapError::TooLarge(t)
    }
}

fn failed(e: impl std::fmt::Display) -> SnapError {
    SnapError::Failed(format!("cannot read the clipboard: {e}"))
}

/// The reading side: a connection and an unmapped window whose property receives answers.
pub(crate) struct Reader {
    conn: RustConnection,
    window: Window,
    atoms: Atoms,
}

impl Reader {
    pub(crate) fn connect() -> Result<Reader, String> {
        let (conn, screen) = x11rb::connect(None).map_err(|e| {
            format!("cannot open the X11 clipboard: {e}; is an X display (DISPLAY) available?")
        })?;
        let setup = || -> Result<(Window, Atoms), Box<dyn std::error::Error>> {
            let atoms = Atoms::new(&conn)?.reply()?;
            let root = conn.setup().roots[screen].root;
            let window = conn.generate_id()?;
            conn.create_window(
                0,
                window,
                root,
                -10,
                -10,
                1,
                1,
                0,
                WindowClass::INPUT_ONLY,
                0,
                &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
            )?
            .check()?;
            Ok((window, atoms))
        };
        let (window, atoms) = setup().map_err(|e| format!("cannot open the X11 clipboard: {e}"))?;
        Ok(Reader {
            conn,
            window,
            atoms,
        })
    }

    pub(crate) fn atoms(&self) -> Atoms {
        self.atoms
    }

    /// Every data target CLIPBOARD holds. None: nobody owns it. When `ours` owns it, what
    /// it serves (no round trips).
    pub(crate) fn snapshot(&mut self, ours: &Owner) -> Result<Saved, SnapError> {
        let a = self.atoms;
        let owner = self
            .conn
            .get_selection_owner(a.CLIPBOARD)
            .map_err(failed)?
            .reply()
            .map_err(failed)?
            .owner;
        if owner == NONE {
            return Ok(None);
        }
        if owner == ours.window() {
            return Ok(ours.current());
        }
        // Answers to earlier requests that came too late are stale now.
        while self.conn.poll_for_event().map_err(failed)?.is_some() {}
        let end = Instant::now() + SNAPSHOT_TIMEOUT;
        let mut budget = Budget::new(SNAPSHOT_LIMIT);
        let offered: Vec<Atom> = match self.convert(a.TARGETS, &mut budget, end)? {
            Some(t) if t.format == 32 => t
                .data
                .chunks_exact(4)
                .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            // An owner that does not list its targets: ask for text.
            _ => vec![a.UTF8_STRING, AtomEnum::STRING.into()],
        };
        let cookies = offered
            .iter()
            .map(|&t| self.conn.get_atom_name(t))
            .collect::<Result<Vec<_>, _>>()
            .map_err(failed)?;
        let mut named = Vec::new();
        for (&atom, cookie) in offered.iter().zip(cookies) {
            if let Ok(reply) = cookie.reply() {
                named.push((atom, String::from_utf8_lossy(&reply.name).into_owned()));
            }
        }
        // The TARGETS list is not kept: the restore lists what it serves.
        let mut budget = Budget::new(SNAPSHOT_LIMIT);
        let mut items = Vec::new();
        let mut missed = Vec::new();
        for (target, name) in data_targets(&named) {
            match self.convert(target, &mut budget, end)? {
                Some(item) => items.push(item),
                None => missed.push(name),
            }
        }
        if !missed.is_empty() {
            tracing::info!(
                "clipboard: the owner did not send {} of its formats ({}); the rest is kept",
                missed.len(),
                missed.join(", ")
            );
        }
        if items.is_empty() {
            return Err(SnapError::Failed(format!(
                "the program that owns the clipboard sent none of its {} formats",
                named.len()
            )));
        }
        tracing::debug!(
            formats = items.len(),
            bytes = budget.used(),
            "clipboard: snapshot"
        );
        Ok(Some(Arc::new(items)))
    }

    /// Asks the owner for `target`; None when it refuses or does not answer in time (nor
    /// by `end`, the snapshot's own deadline).
    fn convert(
        &mut self,
        target: Atom,
        budget: &mut Budget,
        end: Instant,
    ) -> Result<Option<Item>, SnapError> {
        let (conn, win, a) = (&self.conn, self.window, self.atoms);
        conn.delete_property(win, a.DICTUM_CLIP).map_err(failed)?;
        conn.convert_selection(win, a.CLIPBOARD, target, a.DICTUM_CLIP, CURRENT_TIME)
            .map_err(failed)?;
        let deadline = (Instant::now() + ANSWER_TIMEOUT).min(end);
        let property = loop {
            match next_event(conn, deadline)? {
                None => return Ok(None),
                Some(Event::SelectionNotify(e))
                    if e.requestor == win && e.selection == a.CLIPBOARD && e.target == target =>
                {
                    break e.property;
                }
                Some(_) => {}
            }
        };
        if property == NONE {
            return Ok(None);
        }
        let head = conn
            .get_property(false, win, property, AtomEnum::ANY, 0, 0)
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        if head.type_ == a.INCR {
            return self.read_incr(target, property, budget, end);
        }
        let size = head.bytes_after as usize;
        budget.check(size)?;
        let value = conn
            .get_property(true, win, property, AtomEnum::ANY, 0, words(size))
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        budget.take(value.value.len())?;
        Ok(Some(Item {
            target,
            kind: value.type_,
            format: value.format,
            data: value.value,
        }))
    }

    /// An INCR transfer: the announced size checked, then each piece taken (deleting the
    /// property asks for the next) until the empty one.
    fn read_incr(
        &mut self,
        target: Atom,
        property: Atom,
        budget: &mut Budget,
        end: Instant,
    ) -> Result<Option<Item>, SnapError> {
        let (conn, win) = (&self.conn, self.window);
        let announce = conn
            .get_property(true, win, property, AtomEnum::ANY, 0, 1)
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        let hint = announce
            .value
            .get(..4)
            .map_or(0, |b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize);
        budget.check(hint)?;
        let mut item = Item {
            target,
            kind: NONE,
            format: 8,
            data: Vec::with_capacity(hint.min(SNAPSHOT_LIMIT)),
        };
        let mut deadline = (Instant::now() + ANSWER_TIMEOUT).min(end);
        loop {
            match next_event(conn, deadline)? {
                None => {
                    tracing::info!("clipboard: an INCR transfer stalled; that format is dropped");
                    return Ok(None);
                }
                Some(Event::PropertyNotify(p))
                    if p.window == win && p.atom == property && p.state == Property::NEW_VALUE =>
                {
                    let room = SNAPSHOT_LIMIT.saturating_sub(budget.used() + item.data.len());
                    let piece = conn
                        .get_property(true, win, property, AtomEnum::ANY, 0, words(room + 1))
                        .map_err(failed)?
                        .reply()
                        .map_err(failed)?;
                    if piece.type_ == NONE {
                        continue; // deleted already: a stale notice
                    }
                    if piece.value.is_empty() {
                        budget.take(item.data.len())?;
                        return Ok(Some(item));
                    }
                    budget
                        .check(item.data.len() + piece.value.len() + piece.bytes_after as usize)?;
                    item.kind = piece.type_;
                    item.format = piece.format;
                    item.data.extend_from_slice(&piece.value);
                    deadline = (Instant::now() + ANSWER_TIMEOUT).min(end);
                }
                Some(_) => {}
            }
        }
    }
}

/// `bytes` as a GetProperty length (4-byte units, rounded up).
fn words(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(4)).unwrap_or(u32::MAX)
}

/// The next event, or None at `deadline`.
fn next_event(conn: &RustConnection, deadline: Instant) -> Result<Option<Event>, SnapError> {
    conn.flush().map_err(failed)?;
    loop {
        if let Some(e) = conn.poll_for_event().map_err(failed)? {
            return Ok(Some(e));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        let timeout = rustix::event::Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let mut fds = [rustix::event::PollFd::new(
            conn.stream(),
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(failed(e)),
        }
    }
}
