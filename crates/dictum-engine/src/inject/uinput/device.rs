//! The kernel side: `/dev/uinput` opened, a keyboard device set up and created with raw
//! ioctls, destroyed when dropped. Writes go straight to the device.
//!
//! Needs write access to `/dev/uinput` (the udev rule in the user guide). This was written
//! from `linux/uinput.h` and checked against it (the request numbers in the tests are the
//! header's, printed by a C program); the device itself could not be created in the sandbox
//! it was built in (no uinput in that kernel).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

pub const PATH: &str = "/dev/uinput";

/// `_IOC(dir, 'U', nr, size)` as in `asm-generic/ioctl.h`.
const fn ioc(dir: u64, nr: u64, size: u64) -> u64 {
    (dir << 30) | (size << 16) | ((b'U' as u64) << 8) | nr
}
const WRITE: u64 = 1;
pub const UI_DEV_CREATE: u64 = ioc(0, 1, 0);
pub const UI_DEV_DESTROY: u64 = ioc(0, 2, 0);
pub const UI_DEV_SETUP: u64 = ioc(WRITE, 3, std::mem::size_of::<libc::uinput_setup>() as u64);
pub const UI_SET_EVBIT: u64 = ioc(WRITE, 100, std::mem::size_of::<libc::c_int>() as u64);
pub const UI_SET_KEYBIT: u64 = ioc(WRITE, 101, std::mem::size_of::<libc::c_int>() as u64);
const BUS_VIRTUAL: u16 = 0x06;

/// The device's name, as the compositor and `libinput list-devices` show it.
pub const NAME: &str = "Dictum virtual keyboard";

/// Key codes the device declares: every keyboard key of the XKB range (evdev 1..=247),
/// so udev classes it as a keyboard and any key of the user's layout can be sent.
pub const KEYS: std::ops::RangeInclusive<u16> = 1..=247;

/// How long the compositor is given to find and open a new device before the first key
/// (udev, then libinput, then the compositor's own setup).
pub const SETTLE: Duration = Duration::from_millis(400);

/// The setup record `UI_DEV_SETUP` takes.
pub fn setup_record() -> libc::uinput_setup {
    // SAFETY: plain data; all-zero is valid.
    let mut setup: libc::uinput_setup = unsafe { std::mem::zeroed() };
    setup.id.bustype = BUS_VIRTUAL;
    setup.id.vendor = 0x1209; // pid.codes' test vendor: no real device claims it
    setup.id.product = 0xd1c7;
    setup.id.version = 1;
    for (dst, src) in setup.name.iter_mut().zip(NAME.bytes()) {
        *dst = src as libc::c_char;
    }
    setup
}

/// Whether this process may write `/dev/uinput` (it exists and the permission is there).
pub fn writable() -> bool {
    let Ok(path) = std::ffi::CString::new(PATH) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}

/// What to do when `/dev/uinput` cannot be opened.
pub fn open_error(e: &std::io::Error) -> String {
    if !Path::new(PATH).exists() {
        return format!(
            "{PATH} does not exist: load the module (`sudo modprobe uinput`, and add `uinput` \
             to /etc/modules-load.d/uinput.conf) and install the udev rule from the user guide"
        );
    }
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => format!(
            "no permission to write {PATH}: install the udev rule from the user guide \
             (`KERNEL==\"uinput\", SUBSYSTEM==\"misc\", TAG+=\"uaccess\", \
             OPTIONS+=\"static_node=uinput\"`) and log in again"
        ),
        _ => format!("cannot open {PATH}: {e}"),
    }
}

/// A created uinput keyboard; destroyed when dropped.
pub struct Device {
    file: File,
}

fn ioctl(file: &File, request: u64, arg: libc::c_ulong, what: &str) -> Result<(), String> {
    // SAFETY: `file` is an open uinput fd; each request takes an integer or the pointer
    // passed by `setup` below, as linux/uinput.h declares.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), request as libc::Ioctl, arg) };
    if rc < 0 {
        Err(format!(
            "{PATH}: {what} failed: {}",
            std::io::Error::last_os_error()
        ))
    } else {
        Ok(())
    }
}

impl Device {
    /// Opens `/dev/uinput`, declares a keyboard and creates it, then gives the compositor
    /// [`SETTLE`] to pick it up.
    pub fn create() -> Result<Device, String> {
        let file = OpenOptions::new()
            .write(true)
            .open(PATH)
            .map_err(|e| open_error(&e))?;
        ioctl(
            &file,
            UI_SET_EVBIT,
            super::events::EV_KEY as _,
            "UI_SET_EVBIT",
        )?;
        for key in KEYS {
            ioctl(&file, UI_SET_KEYBIT, key as _, "UI_SET_KEYBIT")?;
        }
        let setup = setup_record();
        ioctl(
            &file,
            UI_DEV_SETUP,
            (&setup as *const libc::uinput_setup) as libc::c_ulong,
            "UI_DEV_SETUP (kernel older than 4.5?)",
        )?;
        ioctl(&file, UI_DEV_CREATE, 0, "UI_DEV_CREATE")?;
        std::thread::sleep(SETTLE);
        Ok(Device { file })
    }
}

impl Write for Device {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        if let Err(e) = ioctl(&self.file, UI_DEV_DESTROY, 0, "UI_DEV_DESTROY") {
            tracing::debug!("uinput: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values linux/uinput.h gives (printed by a C program including it, x86_64).
    #[test]
    fn request_numbers_match_the_kernel_header() {
        assert_eq!(UI_DEV_CREATE, 0x5501);
        assert_eq!(UI_DEV_DESTROY, 0x5502);
        assert_eq!(UI_SET_EVBIT, 0x4004_5564);
        assert_eq!(UI_SET_KEYBIT, 0x4004_5565);
        assert_eq!(std::mem::size_of::<libc::uinput_setup>(), 92);
        assert_eq!(UI_DEV_SETUP, 0x405c_5503);
    }

    #[test]
    fn the_setup_record_names_a_virtual_keyboard() {
        let s = setup_record();
        assert_eq!(s.id.bustype, 6);
        let name: Vec<u8> = s
            .name
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        assert_eq!(name, NAME.as_bytes());
        assert!(NAME.len() < libc::UINPUT_MAX_NAME_SIZE);
    }

    #[test]
    fn errors_say_what_to_do() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let msg = open_error(&denied);
        if Path::new(PATH).exists() {
            assert!(msg.contains("udev rule"), "{msg}");
        } else {
            assert!(msg.contains("modprobe uinput"), "{msg}");
        }
    }
}
