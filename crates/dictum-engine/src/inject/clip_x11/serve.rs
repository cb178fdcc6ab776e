//! The owning side: a thread with its own X connection and window that owns CLIPBOARD and
//! answers every request for what it was given (TARGETS, each item as it was saved, INCR
//! for values above one request), and logs who fetched what so paste mode knows whether
//! the focused window took the text.

use super::item::{Atoms, Item, Saved};
use super::targets::{incr_pieces, needs_incr, piece_size};
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ChangeWindowAttributesAux, ClientMessageEvent, ConnectionExt as _,
    CreateWindowAux, EventMask, PropMode, Property, SelectionNotifyEvent, SelectionRequestEvent,
    Window, WindowClass, SELECTION_NOTIFY_EVENT,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use x11rb::{CURRENT_TIME, NONE};

/// An INCR transfer nobody moved on for this long is dropped.
const STALE_TRANSFER: Duration = Duration::from_secs(10);

/// One request answered while owning.
#[derive(Debug, Clone, Copy)]
struct Served {
    requestor: Window,
    target: Atom,
    /// A data target (not TARGETS), answered with data.
    data: bool,
    /// The value is all with the requestor (an INCR transfer: its empty closing piece sent).
    done: bool,
}

#[derive(Default)]
struct State {
    items: Arc<Vec<Item>>,
    /// Answering requests (false: refusing them, e.g. after a paste nobody fetched).
    serving: bool,
    /// Another client took CLIPBOARD since the last `own`.
    lost: bool,
    log: Vec<Served>,
    /// The thread ended: why.
    dead: Option<String>,
    quit: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What the paste's wait saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// The window's client took a data target (all of it).
    Fetched,
    /// It asked (TARGETS) but took no data within the wait.
    AskedOnly,
    /// No request from it within the first wait.
    NotFetched,
}

pub(crate) struct Owner {
    conn: Arc<RustConnection>,
    window: Window,
    atoms: Atoms,
    /// The server's resource-id mask: two windows with the same bits outside it belong
    /// to the same client.
    client_mask: u32,
    shared: Arc<Shared>,
}

fn x_err(e: impl std::fmt::Display) -> String {
    format!("the X11 clipboard: {e}")
}

impl Owner {
    pub(crate) fn start(atoms: Atoms) -> Result<Owner, String> {
        let (conn, screen) = x11rb::connect(None).map_err(|e| {
            format!("cannot open the X11 clipboard: {e}; is an X display (DISPLAY) available?")
        })?;
        let root = conn.setup().roots[screen].root;
        let client_mask = conn.setup().resource_id_mask;
        let window = conn.generate_id().map_err(x_err)?;
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
            &CreateWindowAux::new(),
        )
        .map_err(x_err)?
        .check()
        .map_err(x_err)?;
        let conn = Arc::new(conn);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let (c, s) = (Arc::clone(&conn), Arc::clone(&shared));
        std::thread::Builder::new()
            .name("clipboard-x11".into())
            .spawn(move || {
                let why = serve(&c, window, atoms, &s);
                let mut state = s.lock();
                state.dead = Some(why);
                state.serving = false;
                s.changed.notify_all();
            })
            .map_err(|e| format!("cannot start the clipboard thread: {e}"))?;
        Ok(Owner {
            conn,
            window,
            atoms,
            client_mask,
            shared,
        })
    }

    pub(crate) fn window(&self) -> Window {
        self.window
    }

    /// What it serves now, when it still owns CLIPBOARD.
    pub(crate) fn current(&self) -> Saved {
        let s = self.shared.lock();
        (s.serving && !s.lost && !s.items.is_empty()).then(|| Arc::clone(&s.items))
    }

    pub(crate) fn lost(&self) -> bool {
        self.shared.lock().lost
    }

    /// Owns CLIPBOARD, serving `items` from now on; the log starts again.
    pub(crate) fn own(&self, items: Arc<Vec<Item>>) -> Result<(), String> {
        {
            let mut s = self.shared.lock();
            if let Some(why) = &s.dead {
                return Err(format!("the clipboard thread has ended: {why}"));
            }
            s.items = items;
            s.serving = true;
            s.lost = false;
            s.log.clear();
        }
        self.conn
            .set_selection_owner(self.window, self.atoms.CLIPBOARD, CURRENT_TIME)
            .map_err(x_err)?;
        let owner = self
            .conn
            .get_selection_owner(self.atoms.CLIPBOARD)
            .map_err(x_err)?
            .reply()
            .map_err(x_err)?
            .owner;
        if owner != self.window {
            self.shared.lock().serving = false;
            return Err("another program took the clipboard at once; try again".into());
        }
        Ok(())
    }

    /// Refuses every request from now on (still owning CLIPBOARD) until the next `own`.
    pub(crate) fn refuse(&self) {
        self.shared.lock().serving = false;
    }

    /// Stops serving and leaves CLIPBOARD unowned, unless another client owns it now.
    pub(crate) fn give_up(&self) -> Result<(), String> {
        self.shared.lock().serving = false;
        let owner = self
            .conn
            .get_selection_owner(self.atoms.CLIPBOARD)
            .map_err(x_err)?
            .reply()
            .map_err(x_err)?
            .owner;
        if owner == self.window {
            self.conn
                .set_selection_owner(NONE, self.atoms.CLIPBOARD, CURRENT_TIME)
                .map_err(x_err)?;
            self.conn.flush().map_err(x_err)?;
        }
        Ok(())
    }

    /// Waits for the focused window's client (the owner of `window`; any client when it is
    /// not known) to fetch what is owned: up to `first` for its first request, then up to
    /// `rest` more for a data target to be all delivered.
    pub(crate) fn wait_fetch(
        &self,
        window: Option<Window>,
        first: Duration,
        rest: Duration,
    ) -> Fetch {
        let mask = self.client_mask;
        let ours = self.window & !mask;
        let from_it = |r: &Served| match window {
            Some(w) => r.requestor & !mask == w & !mask,
            None => r.requestor & !mask != ours,
        };
        let start = Instant::now();
        let mut asked_at: Option<Instant> = None;
        let mut s = self.shared.lock();
        loop {
            if s.log.iter().any(|r| from_it(r) && r.data && r.done) {
                return Fetch::Fetched;
            }
            if asked_at.is_none() && s.log.iter().any(from_it) {
                asked_at = Some(Instant::now());
            }
            let deadline = match asked_at {
                Some(at) => at + rest,
                None => start + first,
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || s.dead.is_some() {
                return if asked_at.is_some() {
                    Fetch::AskedOnly
                } else {
                    Fetch::NotFetched
                };
            }
            s = self
                .shared
                .changed
                .wait_timeout(s, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.shared.lock().quit = true;
        // Wakes the thread (an event sent with no mask goes to the window's creator).
        let wake = ClientMessageEvent::new(32, self.window, self.atoms.DICTUM_WAKE, [0u32; 5]);
        let _ = self
            .conn
            .send_event(false, self.window, EventMask::NO_EVENT, wake);
        let _ = self.conn.flush();
    }
}

/// An INCR transfer under way.
struct Transfer {
    requestor: Window,
    property: Atom,
    target: Atom,
    items: Arc<Vec<Item>>,
    index: usize,
    pieces: Vec<Range<usize>>,
    next: usize,
    moved: Instant,
}

/// The thread: answers requests until the connection fails or the owner is dropped.
fn serve(conn: &RustConnection, window: Window, atoms: Atoms, shared: &Shared) -> String {
    let piece = piece_size(conn.maximum_request_bytes());
    let mut transfers: Vec<Transfer> = Vec::new();
    loop {
        let event = match conn.wait_for_event() {
            Ok(e) => e,
            Err(e) => return x_err(e),
        };
        let result = match event {
            Event::SelectionRequest(r) => {
                answer(conn, window, atoms, shared, &r, piece, &mut transfers)
            }
            Event::SelectionClear(c) if c.selection == atoms.CLIPBOARD => {
                // Ours again already (a new `own`)? Then this notice is stale.
                match conn
                    .get_selection_owner(atoms.CLIPBOARD)
                    .map_err(x_err)
                    .and_then(|c| c.reply().map_err(x_err))
                {
                    Ok(o) if o.owner == window => Ok(()),
                    Ok(_) => {
                        let mut s = shared.lock();
                        s.lost = true;
                        s.serving = false;
                        shared.changed.notify_all();
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            Event::PropertyNotify(p) if p.state == Property::DELETE => {
                next_piece(conn, shared, &mut transfers, p.window, p.atom)
            }
            Event::ClientMessage(m) if m.window == window && m.type_ == atoms.DICTUM_WAKE => {
                if shared.lock().quit {
                    return "closed".into();
                }
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = result {
            return e;
        }
        transfers.retain(|t| t.moved.elapsed() < STALE_TRANSFER);
    }
}

/// Answers one SelectionRequest: TARGETS, an item (directly or by INCR), or a refusal.
fn answer(
    conn: &RustConnection,
    window: Window,
    atoms: Atoms,
    shared: &Shared,
    r: &SelectionRequestEvent,
    piece: usize,
    transfers: &mut Vec<Transfer>,
) -> Result<(), String> {
    // Obsolete clients leave the property out: the target names it then.
    let property = if r.property == NONE {
        r.target
    } else {
        r.property
    };
    let mut s = shared.lock();
    let mut answered = NONE;
    let mut data = false;
    let mut done = true;
    if r.selection == atoms.CLIPBOARD && r.owner == window && s.serving && !s.lost {
        if r.target == atoms.TARGETS {
            let mut list = vec![atoms.TARGETS];
            for item in s.items.iter() {
                if !list.contains(&item.target) {
                    list.push(item.target);
                }
            }
            conn.change_property32(
                PropMode::REPLACE,
                r.requestor,
                property,
                AtomEnum::ATOM,
                &list,
            )
            .map_err(x_err)?;
            answered = property;
        } else if let Some(index) = s.items.iter().position(|i| i.target == r.target) {
            let item = &s.items[index];
            data = true;
            if needs_incr(item.data.len(), conn.maximum_request_bytes()) {
                // Told when the requestor deletes each piece.
                conn.change_window_attributes(
                    r.requestor,
                    &ChangeWindowAttributesAux::new().event_mask(EventMask::PROPERTY_CHANGE),
                )
                .map_err(x_err)?;
                let len = u32::try_from(item.data.len()).unwrap_or(u32::MAX);
                conn.change_property32(
                    PropMode::REPLACE,
                    r.requestor,
                    property,
                    atoms.INCR,
                    &[len],
                )
                .map_err(x_err)?;
                transfers.retain(|t| (t.requestor, t.property) != (r.requestor, property));
                transfers.push(Transfer {
                    requestor: r.requestor,
                    property,
                    target: r.target,
                    items: Arc::clone(&s.items),
                    index,
                    pieces: incr_pieces(item.data.len(), piece),
                    next: 0,
                    moved: Instant::now(),
                });
                done = false;
            } else {
                put(conn, r.requestor, property, item, &item.data)?;
            }
            answered = property;
        }
    }
    let notify = SelectionNotifyEvent {
        response_type: SELECTION_NOTIFY_EVENT,
        sequence: 0,
        time: r.time,
        requestor: r.requestor,
        selection: r.selection,
        target: r.target,
        property: answered,
    };
    conn.send_event(false, r.requestor, EventMask::NO_EVENT, notify)
        .map_err(x_err)?;
    conn.flush().map_err(x_err)?;
    if s.serving {
        s.log.push(Served {
            requestor: r.requestor,
            target: r.target,
            data,
            done: done && data,
        });
        shared.changed.notify_all();
    }
    Ok(())
}

/// Writes `bytes` (all or a piece of `item`) as `item`'s type and format.
fn put(
    conn: &RustConnection,
    requestor: Window,
    property: Atom,
    item: &Item,
    bytes: &[u8],
) -> Result<(), String> {
    let format = match item.format {
        16 | 32 => item.format,
        _ => 8,
    };
    let len = u32::try_from(bytes.len() / usize::from(format / 8)).unwrap_or(u32::MAX);
    conn.change_property(
        PropMode::REPLACE,
        requestor,
        property,
        item.kind,
        format,
        len,
        bytes,
    )
    .map_err(x_err)?;
    Ok(())
}

/// The requestor deleted a property: the next piece of the transfer into it, if any.
fn next_piece(
    conn: &RustConnection,
    shared: &Shared,
    transfers: &mut Vec<Transfer>,
    requestor: Window,
    property: Atom,
) -> Result<(), String> {
    let Some(at) = transfers
        .iter()
        .position(|t| t.requestor == requestor && t.property == property)
    else {
        return Ok(());
    };
    let t = &mut transfers[at];
    let Some(range) = t.pieces.get(t.next).cloned() else {
        transfers.remove(at);
        return Ok(());
    };
    let item = &t.items[t.index];
    put(conn, requestor, property, item, &item.data[range.clone()])?;
    conn.flush().map_err(x_err)?;
    t.next += 1;
    t.moved = Instant::now();
    if range.is_empty() {
        // The closing empty piece: the requestor has it all.
        let target = t.target;
        transfers.remove(at);
        let mut s = shared.lock();
        if let Some(r) = s
            .log
            .iter_mut()
            .rev()
            .find(|r| r.requestor == requestor && r.target == target && !r.done)
        {
            r.done = true;
        }
        shared.changed.notify_all();
    }
    Ok(())
}
