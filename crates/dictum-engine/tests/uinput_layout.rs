//! The uinput keyboard types with the *user's* layout: each character becomes the key and
//! modifiers that the user's XKB keymap needs, checked here against real keymaps compiled by
//! libxkbcommon from the system's xkb-data (us, de, fr, gb, es, cz, us dvorak), and the
//! `input_event` stream it writes is decoded from a pipe and replayed through an XKB state
//! machine of the same layout (what the compositor does with a real device's events).
//!
//! Not exercised: a real `/dev/uinput` (the machine this was written on has no uinput in its
//! kernel). What reaches the kernel is the stream checked here, written with the ioctls
//! checked in `inject/uinput/device.rs` against linux/uinput.h.
//!
//! The last test takes the layout from a real compositor (headless sway, `common/sway.rs`):
//! a keyboard with a German keymap is plugged in and the keymap the compositor then sends
//! its clients is the one used. Skipped when sway is missing, failing under
//! `DICTUM_REQUIRE_E2E=1`.

mod common;

use dictum_engine::inject::backends::uinput::events::{
    self, Event, EV_KEY, EV_SYN, PRESS, RELEASE,
};
use dictum_engine::inject::backends::uinput::{
    LayoutMap, LayoutSource, Names, Stroke, UinputKeyboard,
};
use std::io::Read;
use std::time::Duration;
use xkbcommon::xkb;

// evdev codes (linux/input-event-codes.h).
const KEY_1: u16 = 2;
const KEY_2: u16 = 3;
const KEY_3: u16 = 4;
const KEY_7: u16 = 8;
const KEY_MINUS: u16 = 12;
const KEY_Q: u16 = 16;
const KEY_E: u16 = 18;
const KEY_Y: u16 = 21;
const KEY_A: u16 = 30;
const KEY_SEMICOLON: u16 = 39;
const KEY_APOSTROPHE: u16 = 40;
const KEY_BACKSLASH: u16 = 43;
const KEY_Z: u16 = 44;
const KEY_V: u16 = 47;
const KEY_COMMA: u16 = 51;
const KEY_DOT: u16 = 52;
const KEY_ENTER: u16 = 28;
const LSHIFT: u16 = 42;
const LCTRL: u16 = 29;
const ALTGR: u16 = 100;

fn layout(name: &str, variant: &str) -> LayoutMap {
    LayoutMap::from_names(&Names::layout(name, variant), LayoutSource::Given)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn stroke(key: u16, mods: &[u16]) -> Option<Stroke> {
    Some(Stroke {
        key,
        mods: mods.to_vec(),
    })
}

fn check(map: &LayoutMap, expected: &[(char, Option<Stroke>)]) {
    for (c, want) in expected {
        assert_eq!(
            map.stroke(*c).cloned(),
            *want,
            "{c:?} on {}",
            map.describe()
        );
    }
}

#[test]
fn us() {
    let us = layout("us", "");
    check(
        &us,
        &[
            ('a', stroke(KEY_A, &[])),
            ('A', stroke(KEY_A, &[LSHIFT])),
            ('z', stroke(KEY_Z, &[])),
            ('@', stroke(KEY_2, &[LSHIFT])),
            ('1', stroke(KEY_1, &[])), // the number row, not the keypad
            ('\n', stroke(KEY_ENTER, &[])),
            ('é', None),
            ('€', None),
        ],
    );
    assert!(us.is_full_keyboard());
}

#[test]
fn german_swaps_y_and_z_and_uses_altgr() {
    let de = layout("de", "");
    check(
        &de,
        &[
            ('z', stroke(KEY_Y, &[])),
            ('y', stroke(KEY_Z, &[])),
            ('Z', stroke(KEY_Y, &[LSHIFT])),
            ('@', stroke(KEY_Q, &[ALTGR])),
            ('€', stroke(KEY_E, &[ALTGR])),
            ('ß', stroke(KEY_MINUS, &[])),
            ('ä', stroke(KEY_APOSTROPHE, &[])),
            ('/', stroke(KEY_7, &[LSHIFT])),
            // Only through a dead key: not typed (pasted instead).
            ('é', None),
        ],
    );
}

#[test]
fn french_azerty() {
    let fr = layout("fr", "");
    check(
        &fr,
        &[
            ('é', stroke(KEY_2, &[])),
            ('2', stroke(KEY_2, &[LSHIFT])),
            ('a', stroke(KEY_Q, &[])),
            ('q', stroke(KEY_A, &[])),
            ('€', stroke(KEY_E, &[ALTGR])),
            (';', stroke(KEY_COMMA, &[])),
            ('.', stroke(KEY_COMMA, &[LSHIFT])),
        ],
    );
}

#[test]
fn british_spanish_czech() {
    check(
        &layout("gb", ""),
        &[
            ('£', stroke(KEY_3, &[LSHIFT])),
            ('"', stroke(KEY_2, &[LSHIFT])),
            ('@', stroke(KEY_APOSTROPHE, &[LSHIFT])),
            ('#', stroke(KEY_BACKSLASH, &[])),
        ],
    );
    check(
        &layout("es", ""),
        &[
            ('ñ', stroke(KEY_SEMICOLON, &[])),
            ('@', stroke(KEY_2, &[ALTGR])),
        ],
    );
    check(
        &layout("cz", ""),
        &[('ě', stroke(KEY_2, &[])), ('z', stroke(KEY_Y, &[]))],
    );
}

#[test]
fn the_paste_chord_follows_the_layout() {
    let us = layout("us", "");
    assert_eq!(
        us.paste_chord(false),
        Ok(Stroke {
            key: KEY_V,
            mods: vec![LCTRL]
        })
    );
    assert_eq!(
        us.paste_chord(true),
        Ok(Stroke {
            key: KEY_V,
            mods: vec![LCTRL, LSHIFT]
        })
    );
    // Dvorak: V is where a US keyboard has the period.
    let dvorak = layout("us", "dvorak");
    assert_eq!(
        dvorak.paste_chord(false),
        Ok(Stroke {
            key: KEY_DOT,
            mods: vec![LCTRL]
        })
    );
}

/// A compositor of its own: the decoded events replayed on an XKB state of `layout`, the
/// characters of each key press collected. Also checks the stream's shape: a SYN_REPORT
/// after every key change, every key released at the end.
fn replay(layout: (&str, &str), events: &[Event]) -> String {
    let ctx = xkb::Context::new(xkb::CONTEXT_NO_ENVIRONMENT_NAMES);
    let keymap = xkb::Keymap::new_from_names(
        &ctx,
        "",
        "",
        layout.0,
        layout.1,
        None,
        xkb::KEYMAP_COMPILE_NO_FLAGS,
    )
    .expect("keymap");
    let mut state = xkb::State::new(&keymap);
    let mut out = String::new();
    let mut down: Vec<u16> = Vec::new();
    for pair in events.chunks(2) {
        assert_eq!(pair[0].kind, EV_KEY, "{pair:?}");
        assert_eq!(pair.get(1).map(|e| e.kind), Some(EV_SYN), "{pair:?}");
        let (code, value) = (pair[0].code, pair[0].value);
        let key = xkb::Keycode::new(u32::from(code) + 8);
        match value {
            PRESS => {
                assert!(!down.contains(&code), "key {code} pressed twice");
                down.push(code);
                let sym = state.key_get_one_sym(key);
                if sym.raw() == 0xff0d {
                    out.push('\n');
                } else {
                    out.push_str(&state.key_get_utf8(key));
                }
                state.update_key(key, xkb::KeyDirection::Down);
            }
            RELEASE => {
                down.retain(|k| *k != code);
                state.update_key(key, xkb::KeyDirection::Up);
            }
            v => panic!("value {v}"),
        }
    }
    assert!(down.is_empty(), "keys left down: {down:?}");
    out
}

/// Types into a pipe and returns the decoded events.
fn typed_events(map: LayoutMap, text: &str) -> (Result<(), String>, Vec<Event>) {
    let (mut reader, writer) = std::io::pipe().expect("pipe");
    let mut kbd = UinputKeyboard::with_output(map, writer);
    kbd.set_key_delay(Duration::ZERO);
    let reading = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).map(|_| bytes)
    });
    let result = kbd.type_text(text);
    drop(kbd); // closes the pipe's write end
    let bytes = reading.join().expect("reader").expect("read");
    (result, events::decode(&bytes).expect("whole records"))
}

#[test]
fn the_event_stream_types_exactly_the_text_on_each_layout() {
    let cases = [
        (
            ("us", ""),
            "Hello, World! It's 10:45 \"quoted\" {x} ~/a_b|c\n",
        ),
        (("de", ""), "Zürich: Größe 5 € @ yxz {ok} [1] \\ ~ | µ\n"),
        (("fr", ""), "Où est le café ? à 5 € : déjà ; ç@ 1234\n"),
        (("gb", ""), "£10 \"quoted\" # @home ¬\n"),
        (("es", ""), "¿Tal, niño? ¡Ole! @ € ñÑ ç º ª\n"),
        (("cz", ""), "Příliš žlučí kůl úpěl: ěščřžýáíé\n"),
    ];
    for (names, text) in cases {
        let (result, events) = typed_events(layout(names.0, names.1), text);
        assert_eq!(result, Ok(()), "{names:?}");
        assert_eq!(replay(names, &events), text, "{names:?}");
    }
}

/// Never a wrong character: text with a character the layout lacks sends nothing at all,
/// and the error names it (the injector then pastes).
#[test]
fn a_character_the_layout_lacks_sends_nothing() {
    let (result, events) = typed_events(layout("de", ""), "Café olé");
    let err = result.expect_err("é has no key on de");
    assert!(err.contains("'é'") && err.contains("paste"), "{err}");
    assert!(events.is_empty(), "{events:?}");
    // The same text on French is typed.
    let (result, events) = typed_events(layout("fr", ""), "Café olé");
    assert_eq!(result, Ok(()));
    assert_eq!(replay(("fr", ""), &events), "Café olé");
}

/// The US reading of the German stream is wrong: the test above would catch a keyboard that
/// ignored the layout (what ydotool does).
#[test]
fn ignoring_the_layout_would_be_caught() {
    let (_, events) = typed_events(layout("us", ""), "yz@");
    assert_eq!(replay(("us", ""), &events), "yz@");
    assert_ne!(replay(("de", ""), &events), "yz@");
}

mod compositor {
    //! A keyboard with a German keymap plugged into headless sway: the keymap sway then
    //! sends to its clients is the user's layout.
    use super::common::sway::{tools_present, Sway};
    use super::*;
    use std::io::Write as _;
    use std::os::fd::AsFd;
    use wayland_client::globals::{registry_queue_init, GlobalListContents};
    use wayland_client::protocol::{wl_registry, wl_seat};
    use wayland_client::{Connection, Dispatch, QueueHandle};
    use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
        zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
        zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
    };

    struct S;
    impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for S {
        fn event(
            _: &mut S,
            _: &wl_registry::WlRegistry,
            _: wl_registry::Event,
            _: &GlobalListContents,
            _: &Connection,
            _: &QueueHandle<S>,
        ) {
        }
    }
    wayland_client::delegate_noop!(S: ignore wl_seat::WlSeat);
    wayland_client::delegate_noop!(S: ZwpVirtualKeyboardManagerV1);
    wayland_client::delegate_noop!(S: ZwpVirtualKeyboardV1);

    /// A full German keyboard's keymap, as a desktop compiles it.
    fn german_keymap_text() -> String {
        let ctx = xkb::Context::new(xkb::CONTEXT_NO_ENVIRONMENT_NAMES);
        xkb::Keymap::new_from_names(&ctx, "", "pc105", "de", "", None, 0)
            .expect("de keymap")
            .get_as_string(xkb::KEYMAP_FORMAT_TEXT_V1)
    }

    #[test]
    fn the_layout_comes_from_the_compositor() {
        if !tools_present() {
            return;
        }
        let sway = Sway::start();
        let stream = std::os::unix::net::UnixStream::connect(sway.socket()).expect("socket");
        let conn = Connection::from_socket(stream).expect("connection");
        let (globals, mut queue) = registry_queue_init::<S>(&conn).expect("registry");
        let qh = queue.handle();
        let seat: wl_seat::WlSeat = globals.bind(&qh, 1..=7, ()).expect("seat");
        let manager: ZwpVirtualKeyboardManagerV1 =
            globals.bind(&qh, 1..=1, ()).expect("virtual keyboard");
        let kb = manager.create_virtual_keyboard(&seat, &qh, ());
        let text = german_keymap_text();
        let mut file = tempfile::tempfile().expect("keymap file");
        file.write_all(text.as_bytes()).expect("write");
        file.write_all(b"\0").expect("write");
        kb.keymap(1, file.as_fd(), text.len() as u32 + 1);
        // A key makes it the seat's keyboard (Shift: types nothing).
        kb.key(1, u32::from(LSHIFT), 1);
        kb.key(2, u32::from(LSHIFT), 0);
        queue.roundtrip(&mut S).expect("roundtrip");

        let got =
            dictum_engine::inject::backends::vkbd::seat_keymap().expect("the compositor's keymap");
        let map = LayoutMap::from_keymap_text(&got, LayoutSource::Compositor).expect("compiles");
        assert!(map.is_full_keyboard(), "{}", map.describe());
        assert_eq!(
            map.stroke('z').map(|s| s.key),
            Some(KEY_Y),
            "{}",
            map.describe()
        );
        assert_eq!(map.stroke('@').cloned(), stroke(KEY_Q, &[ALTGR]));
        // What the uinput path picks on its own, environment aside.
        let user = dictum_engine::inject::backends::uinput::user_layout().expect("layout");
        assert_eq!(
            user.source(),
            LayoutSource::Compositor,
            "{}",
            user.describe()
        );
        assert!(user.describe().contains("German"), "{}", user.describe());
        kb.destroy();
        let _ = queue.flush();
    }
}
