//! The Wayland connection under [`super::VirtualKeyboard`] and [`super::probe_globals`]:
//! connecting with errors a user can act on, and round trips that give up after a timeout
//! (a hung compositor must not hang the injector thread).

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use wayland_client::backend::WaylandError;
use wayland_client::protocol::{wl_callback, wl_keyboard, wl_registry, wl_seat};
use wayland_client::{Connection, Dispatch, EventQueue, QueueHandle};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
    zwp_virtual_keyboard_manager_v1, zwp_virtual_keyboard_v1,
};

/// How long one round trip may take.
pub const TIMEOUT: Duration = Duration::from_secs(1);

/// A global the compositor announced.
#[derive(Debug, Clone)]
pub struct Global {
    pub name: u32,
    pub interface: String,
    pub version: u32,
}

/// What the event queue collects.
#[derive(Debug, Default)]
pub struct State {
    pub globals: Vec<Global>,
    synced: bool,
    /// The keymap the seat's `wl_keyboard` announced (text format), or why it is unusable.
    pub keymap: Option<Result<String, String>>,
}

impl Dispatch<wl_registry::WlRegistry, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_registry::WlRegistry,
        event: wl_registry::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            wl_registry::Event::Global {
                name,
                interface,
                version,
            } => state.globals.push(Global {
                name,
                interface,
                version,
            }),
            wl_registry::Event::GlobalRemove { name } => state.globals.retain(|g| g.name != name),
            _ => {}
        }
    }
}

impl Dispatch<wl_callback::WlCallback, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_callback::WlCallback,
        event: wl_callback::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wl_callback::Event::Done { .. } = event {
            state.synced = true;
        }
    }
}

impl Dispatch<wl_keyboard::WlKeyboard, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_keyboard::WlKeyboard,
        event: wl_keyboard::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wl_keyboard::Event::Keymap { format, fd, size } = event {
            state.keymap = Some(read_keymap(format, fd, size));
        }
    }
}

/// The keymap text from the fd the compositor sent (read at offset 0: the fd may be shared
/// with other clients, and its file position with them).
fn read_keymap(
    format: wayland_client::WEnum<wl_keyboard::KeymapFormat>,
    fd: std::os::fd::OwnedFd,
    size: u32,
) -> Result<String, String> {
    use std::os::unix::fs::FileExt;
    if format != wayland_client::WEnum::Value(wl_keyboard::KeymapFormat::XkbV1) {
        return Err("the compositor's keymap is not in XKB format".into());
    }
    if size == 0 || size > 4 << 20 {
        return Err(format!(
            "the compositor's keymap has an odd size ({size} bytes)"
        ));
    }
    let file = std::fs::File::from(fd);
    let mut buf = vec![0u8; size as usize];
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read the compositor's keymap: {e}")),
        }
    }
    buf.truncate(done);
    while buf.last() == Some(&0) {
        buf.pop();
    }
    String::from_utf8(buf).map_err(|_| "the compositor's keymap is not UTF-8".to_string())
}

// No events we need from these.
wayland_client::delegate_noop!(State: ignore wl_seat::WlSeat);
wayland_client::delegate_noop!(State: zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1);
wayland_client::delegate_noop!(State: zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1);

/// A connection with its event queue and the globals it saw.
pub struct Wire {
    pub conn: Connection,
    pub queue: EventQueue<State>,
    pub qh: QueueHandle<State>,
    pub state: State,
    pub registry: wl_registry::WlRegistry,
}

/// The socket `$WAYLAND_DISPLAY` names (absolute, or relative to `$XDG_RUNTIME_DIR`).
fn socket_path() -> Result<PathBuf, String> {
    let display = std::env::var_os("WAYLAND_DISPLAY")
        .filter(|d| !d.is_empty())
        .ok_or("WAYLAND_DISPLAY is not set: this is not a Wayland session (or Dictum was started outside it)")?;
    let display = PathBuf::from(display);
    if display.is_absolute() {
        return Ok(display);
    }
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .ok_or("XDG_RUNTIME_DIR is not set: cannot find the Wayland socket")?;
    Ok(PathBuf::from(runtime).join(display))
}

impl Wire {
    /// Connects to `$WAYLAND_DISPLAY` and collects the globals (one bounded round trip).
    pub fn connect() -> Result<Wire, String> {
        let conn = if std::env::var_os("WAYLAND_SOCKET").is_some() {
            Connection::connect_to_env()
                .map_err(|e| format!("cannot use WAYLAND_SOCKET to reach the compositor: {e}"))?
        } else {
            let path = socket_path()?;
            let stream = UnixStream::connect(&path).map_err(|e| {
                format!(
                    "cannot connect to the Wayland compositor at {}: {e}",
                    path.display()
                )
            })?;
            Connection::from_socket(stream)
                .map_err(|e| format!("cannot start a Wayland connection: {e}"))?
        };
        let queue = conn.new_event_queue();
        let qh = queue.handle();
        let registry = conn.display().get_registry(&qh, ());
        let mut wire = Wire {
            conn,
            queue,
            qh,
            state: State::default(),
            registry,
        };
        wire.roundtrip()?;
        Ok(wire)
    }

    pub fn global(&self, interface: &str) -> Option<&Global> {
        self.state.globals.iter().find(|g| g.interface == interface)
    }

    /// Sends everything queued, waiting (bounded) while the socket is full.
    pub fn flush(&self, deadline: Instant) -> Result<(), String> {
        loop {
            match self.conn.flush() {
                Ok(()) => return Ok(()),
                Err(WaylandError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let backend = self.conn.backend();
                    wait(&backend.poll_fd(), rustix::event::PollFlags::OUT, deadline)?;
                }
                Err(e) => return Err(lost(e)),
            }
        }
    }

    /// `wl_display.sync` and wait for its `done`: the compositor has handled every request
    /// sent before, and its events are dispatched. Fails after [`TIMEOUT`].
    pub fn roundtrip(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + TIMEOUT;
        self.state.synced = false;
        let _callback = self.conn.display().sync(&self.qh, ());
        self.flush(deadline)?;
        loop {
            self.queue
                .dispatch_pending(&mut self.state)
                .map_err(|e| format!("the Wayland compositor closed the connection: {e}"))?;
            if self.state.synced {
                return Ok(());
            }
            if let Some(guard) = self.queue.prepare_read() {
                let ready = {
                    let fd = guard.connection_fd();
                    wait(&fd, rustix::event::PollFlags::IN, deadline)?
                };
                if ready {
                    match guard.read() {
                        Ok(_) => {}
                        Err(WaylandError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(lost(e)),
                    }
                }
            }
        }
    }
}

fn lost(e: WaylandError) -> String {
    format!("the Wayland connection failed: {e}")
}

/// Polls `fd` for `flags` until `deadline`; Ok(true) when ready, an error when the time is up.
fn wait(
    fd: &impl std::os::fd::AsFd,
    flags: rustix::event::PollFlags,
    deadline: Instant,
) -> Result<bool, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(format!(
            "the Wayland compositor did not answer within {} ms",
            TIMEOUT.as_millis()
        ));
    }
    let timeout = rustix::event::Timespec {
        tv_sec: left.as_secs() as _,
        tv_nsec: left.subsec_nanos() as _,
    };
    let mut fds = [rustix::event::PollFd::new(fd, flags)];
    match rustix::event::poll(&mut fds, Some(&timeout)) {
        Ok(n) => Ok(n > 0),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(e) => Err(format!("waiting for the Wayland compositor failed: {e}")),
    }
}
