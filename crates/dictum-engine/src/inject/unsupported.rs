//! Stand-ins for the Linux-only typing paths (`vkbd`, `wlclip`, `uinput`) on other systems,
//! so the injector builds everywhere: each says it is not available, and the session probe
//! never reports them (`probe_abilities`), so the decision table never routes to them.

const NOT_HERE: &str = "Wayland and uinput typing exist on Linux only";

pub mod vkbd {
    use super::NOT_HERE;

    /// What the compositor offers: nothing, off Linux.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct WaylandGlobals {
        pub virtual_keyboard: bool,
        pub data_control: bool,
        pub seat: bool,
        pub names: Vec<String>,
    }

    pub fn probe_globals() -> Result<WaylandGlobals, String> {
        Err(NOT_HERE.into())
    }

    pub fn seat_keymap() -> Result<String, String> {
        Err(NOT_HERE.into())
    }

    pub struct VirtualKeyboard;

    impl VirtualKeyboard {
        pub fn connect() -> Result<VirtualKeyboard, String> {
            Err(NOT_HERE.into())
        }

        pub fn type_text(&mut self, _text: &str) -> Result<(), String> {
            Err(NOT_HERE.into())
        }

        pub fn paste_chord(&mut self, _terminal: bool) -> Result<(), String> {
            Err(NOT_HERE.into())
        }
    }
}

pub mod wlclip {
    use super::NOT_HERE;

    /// A Wayland clipboard snapshot: never made off Linux.
    pub struct WlSaved;

    impl WlSaved {
        pub fn dropped_note(&self) -> Option<String> {
            None
        }
    }

    pub struct WlClipboard;

    impl WlClipboard {
        pub fn connect() -> Result<WlClipboard, String> {
            Err(NOT_HERE.into())
        }

        pub fn text(&mut self) -> Option<String> {
            None
        }

        pub fn set_text(&mut self, _text: &str) -> Result<(), String> {
            Err(NOT_HERE.into())
        }

        pub fn holds(&mut self, _text: &str) -> bool {
            false
        }

        pub fn snapshot(&mut self) -> Result<Option<WlSaved>, String> {
            Err(NOT_HERE.into())
        }

        pub fn restore(&mut self, _saved: WlSaved) -> Result<(), String> {
            Err(NOT_HERE.into())
        }
    }
}

pub mod uinput {
    use super::NOT_HERE;

    /// `/dev/uinput` exists on Linux only.
    pub fn available() -> bool {
        false
    }

    pub struct UinputKeyboard;

    impl UinputKeyboard {
        pub fn connect() -> Result<UinputKeyboard, String> {
            Err(NOT_HERE.into())
        }

        pub fn can_type(&self, _text: &str) -> Result<(), String> {
            Err(NOT_HERE.into())
        }

        pub fn type_text(&mut self, _text: &str) -> Result<(), String> {
            Err(NOT_HERE.into())
        }

        pub fn paste_chord(&mut self, _terminal: bool) -> Result<(), String> {
            Err(NOT_HERE.into())
        }
    }
}
