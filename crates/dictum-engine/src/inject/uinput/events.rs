//! The event stream a uinput keyboard writes: kernel `struct input_event` records, each key
//! change followed by a `SYN_REPORT` so the compositor handles it as its own frame.
//!
//! The records are the kernel's own layout (`libc::input_event`: 24 bytes on 64-bit Linux);
//! their time field is left zero (uinput stamps events itself). [`decode`] reads such a
//! stream back, for tests and for anyone checking what was sent.

use super::layout::Stroke;

pub const EV_SYN: u16 = 0x00;
pub const EV_KEY: u16 = 0x01;
pub const SYN_REPORT: u16 = 0;
pub const PRESS: i32 = 1;
pub const RELEASE: i32 = 0;

/// One input event, without its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub kind: u16,
    pub code: u16,
    pub value: i32,
}

impl Event {
    pub fn key(code: u16, value: i32) -> Event {
        Event {
            kind: EV_KEY,
            code,
            value,
        }
    }

    pub fn syn() -> Event {
        Event {
            kind: EV_SYN,
            code: SYN_REPORT,
            value: 0,
        }
    }
}

/// Size of one record as the kernel reads it.
pub const RECORD: usize = std::mem::size_of::<libc::input_event>();

/// The events that type one stroke: each modifier pressed (in order), the key pressed and
/// released, the modifiers released (reverse order), a `SYN_REPORT` after every change.
pub fn stroke_events(stroke: &Stroke, out: &mut Vec<Event>) {
    for &m in &stroke.mods {
        out.extend([Event::key(m, PRESS), Event::syn()]);
    }
    out.extend([
        Event::key(stroke.key, PRESS),
        Event::syn(),
        Event::key(stroke.key, RELEASE),
        Event::syn(),
    ]);
    for &m in stroke.mods.iter().rev() {
        out.extend([Event::key(m, RELEASE), Event::syn()]);
    }
}

/// The records for `events`, back to back, as written to `/dev/uinput`.
pub fn encode(events: &[Event]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(events.len() * RECORD);
    for e in events {
        // SAFETY: input_event is plain data (integers); all-zero is a valid value.
        let mut raw: libc::input_event = unsafe { std::mem::zeroed() };
        raw.type_ = e.kind;
        raw.code = e.code;
        raw.value = e.value;
        // SAFETY: reading the bytes of a plain-data struct that lives for this scope.
        let slice = unsafe {
            std::slice::from_raw_parts((&raw as *const libc::input_event).cast::<u8>(), RECORD)
        };
        bytes.extend_from_slice(slice);
    }
    bytes
}

/// Reads records back; an error when the length is not a whole number of records.
pub fn decode(bytes: &[u8]) -> Result<Vec<Event>, String> {
    if !bytes.len().is_multiple_of(RECORD) {
        return Err(format!(
            "{} bytes is not a whole number of {RECORD}-byte input events",
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(RECORD)
        .map(|chunk| {
            // SAFETY: the chunk holds RECORD bytes; any bit pattern is a valid input_event.
            let raw: libc::input_event =
                unsafe { std::ptr::read_unaligned(chunk.as_ptr().cast::<libc::input_event>()) };
            Event {
                kind: raw.type_,
                code: raw.code,
                value: raw.value,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_have_the_kernel_layout() {
        // x86_64 / aarch64: struct timeval (16 bytes), then type, code, value.
        #[cfg(target_pointer_width = "64")]
        {
            assert_eq!(RECORD, 24);
            let bytes = encode(&[Event::key(30, PRESS)]);
            assert_eq!(&bytes[..16], &[0u8; 16], "time left zero");
            assert_eq!(&bytes[16..18], &EV_KEY.to_ne_bytes());
            assert_eq!(&bytes[18..20], &30u16.to_ne_bytes());
            assert_eq!(&bytes[20..24], &1i32.to_ne_bytes());
        }
        let events = [Event::key(42, PRESS), Event::syn(), Event::key(42, RELEASE)];
        assert_eq!(decode(&encode(&events)), Ok(events.to_vec()));
        assert!(decode(&[0u8; 5]).is_err());
    }

    #[test]
    fn a_stroke_presses_modifiers_around_the_key() {
        let mut out = Vec::new();
        stroke_events(
            &Stroke {
                key: 16,
                mods: vec![100, 42],
            },
            &mut out,
        );
        let keys: Vec<(u16, i32)> = out
            .iter()
            .filter(|e| e.kind == EV_KEY)
            .map(|e| (e.code, e.value))
            .collect();
        assert_eq!(
            keys,
            [(100, 1), (42, 1), (16, 1), (16, 0), (42, 0), (100, 0)]
        );
        // Every key change is its own frame.
        assert_eq!(out.len(), keys.len() * 2);
        assert!(out.chunks(2).all(|p| p[1] == Event::syn()));
    }
}
