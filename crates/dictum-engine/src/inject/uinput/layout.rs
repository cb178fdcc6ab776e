//! The user's keyboard layout, and the key and modifiers that type each character on it.
//!
//! A uinput keyboard sends key *codes*; the compositor turns them into characters with the
//! user's XKB keymap. So Dictum compiles that same keymap with libxkbcommon and looks each
//! character up in reverse: which key, on which level, with which modifiers held (Shift,
//! AltGr = ISO_Level3_Shift, ...). Every entry is checked by replaying it on an XKB state
//! machine (the modifiers pressed, then the key): only strokes that produce exactly the
//! character are kept. A character the layout cannot produce (`é` on a German layout: only
//! through a dead key) has no stroke: the caller pastes the text instead, never a wrong
//! character.
//!
//! Where the keymap comes from, best first ([`LayoutSource`]): the compositor's own keymap
//! (sent to every Wayland client's `wl_keyboard`), `XKB_DEFAULT_LAYOUT` (and its siblings),
//! `localectl status`, `/etc/default/keyboard`, else the US layout (said in `describe`).
//!
//! Known limits: the first layout (group) of a multi-layout keymap is assumed active, and
//! Caps Lock is assumed off (the compositor does not tell a client without a window).

use std::collections::HashMap;
use xkbcommon::xkb;

/// RMLVO names that select a keymap (`setxkbmap`'s vocabulary); empty means the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    pub rules: String,
    pub model: String,
    pub layout: String,
    pub variant: String,
    pub options: String,
}

impl Names {
    pub fn layout(layout: &str, variant: &str) -> Names {
        Names {
            layout: layout.into(),
            variant: variant.into(),
            ..Names::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.layout.trim().is_empty()
    }

    /// "de (nodeadkeys)".
    pub fn describe(&self) -> String {
        if self.variant.is_empty() {
            self.layout.clone()
        } else {
            format!("{} ({})", self.layout, self.variant)
        }
    }
}

/// Where the layout was learnt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayoutSource {
    /// The keymap the Wayland compositor sends its clients: exactly what it applies.
    Compositor,
    /// `XKB_DEFAULT_LAYOUT` and friends.
    Environment,
    /// `localectl status` (systemd-localed).
    Localectl,
    /// `/etc/default/keyboard` (Debian, Ubuntu).
    EtcDefaultKeyboard,
    /// Nothing said: the US layout.
    Default,
    /// Given by the caller.
    Given,
}

/// The `X11 Layout:` etc. lines of `localectl status`.
pub fn parse_localectl(out: &str) -> Option<Names> {
    let mut names = Names::default();
    for line in out.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().to_string();
        match key.trim() {
            "X11 Layout" => names.layout = value,
            "X11 Model" => names.model = value,
            "X11 Variant" => names.variant = value,
            "X11 Options" => names.options = value,
            _ => {}
        }
    }
    (!names.is_empty()).then_some(names)
}

/// `XKBLAYOUT="de"` etc. from `/etc/default/keyboard` (a shell fragment).
pub fn parse_etc_default_keyboard(text: &str) -> Option<Names> {
    let mut names = Names::default();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value
            .trim()
            .trim_matches(|c| c == '"' || c == '\'')
            .to_string();
        match key.trim() {
            "XKBLAYOUT" => names.layout = value,
            "XKBMODEL" => names.model = value,
            "XKBVARIANT" => names.variant = value,
            "XKBOPTIONS" => names.options = value,
            _ => {}
        }
    }
    (!names.is_empty()).then_some(names)
}

/// The layout names the system configuration gives, with where they came from; looked up
/// in the documented order (environment, localectl, /etc/default/keyboard, US).
pub fn configured_names(get: impl Fn(&str) -> Option<String>) -> (Names, LayoutSource) {
    let var = |k: &str| get(k).map(|v| v.trim().to_string()).unwrap_or_default();
    let env = Names {
        rules: var("XKB_DEFAULT_RULES"),
        model: var("XKB_DEFAULT_MODEL"),
        layout: var("XKB_DEFAULT_LAYOUT"),
        variant: var("XKB_DEFAULT_VARIANT"),
        options: var("XKB_DEFAULT_OPTIONS"),
    };
    if !env.is_empty() {
        return (env, LayoutSource::Environment);
    }
    let localectl = std::process::Command::new("localectl")
        .arg("status")
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| parse_localectl(&String::from_utf8_lossy(&o.stdout)));
    if let Some(names) = localectl {
        return (names, LayoutSource::Localectl);
    }
    if let Some(names) = std::fs::read_to_string("/etc/default/keyboard")
        .ok()
        .and_then(|t| parse_etc_default_keyboard(&t))
    {
        return (names, LayoutSource::EtcDefaultKeyboard);
    }
    (Names::layout("us", ""), LayoutSource::Default)
}

/// One character's keystroke: evdev key codes (the `KEY_*` of linux/input-event-codes.h).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stroke {
    /// The key that produces the character.
    pub key: u16,
    /// Modifier keys held around it, pressed in this order.
    pub mods: Vec<u16>,
}

/// evdev codes of keys named in tests and errors.
pub mod keys {
    pub const KEY_LEFTCTRL: u16 = 29;
    pub const KEY_LEFTSHIFT: u16 = 42;
    pub const KEY_RIGHTALT: u16 = 100;
}

/// XKB keycodes are evdev codes plus 8.
const EVDEV_OFFSET: u32 = 8;

/// A modifier key: pressing it alone sets `mask` (depressed modifiers).
#[derive(Debug, Clone, Copy)]
struct ModKey {
    keycode: u32,
    mask: u32,
}

/// Modifier keys in order of preference: left Shift, right Alt (AltGr), left Ctrl, right
/// Shift, left Alt; others after, by keycode.
const MOD_PREFERENCE: [u32; 5] = [50, 108, 37, 62, 64];

fn preference(keycode: u32) -> (usize, u32) {
    let rank = MOD_PREFERENCE
        .iter()
        .position(|k| *k == keycode)
        .unwrap_or(MOD_PREFERENCE.len());
    (rank, keycode)
}

/// How good a stroke is, lower first: on the keypad, modifier count, level, keycode.
type Rank = (bool, usize, u32, u32);

/// Reverse lookup table of one layout: character → stroke.
#[derive(Debug, Clone)]
pub struct LayoutMap {
    strokes: HashMap<char, Stroke>,
    ctrl: Option<u16>,
    /// "de (nodeadkeys), from the compositor".
    description: String,
    source: LayoutSource,
    /// Keys with a symbol on their first level (a real keyboard has ~50 or more).
    keys_with_syms: usize,
}

impl LayoutMap {
    /// The table for the keymap that `names` selects (compiled from the system's XKB data).
    pub fn from_names(names: &Names, source: LayoutSource) -> Result<LayoutMap, String> {
        let clean = |s: &str| s.replace('\0', "");
        let ctx = xkb::Context::new(xkb::CONTEXT_NO_ENVIRONMENT_NAMES);
        let options = (!names.options.is_empty()).then(|| clean(&names.options));
        let keymap = xkb::Keymap::new_from_names(
            &ctx,
            &clean(&names.rules),
            &clean(&names.model),
            &clean(&names.layout),
            &clean(&names.variant),
            options,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .ok_or_else(|| {
            format!(
                "the keyboard layout \"{}\" is not known to XKB (is xkb-data installed?)",
                names.describe()
            )
        })?;
        Ok(LayoutMap::from_keymap(
            &keymap,
            format!("{}, {}", names.describe(), source_words(source)),
            source,
        ))
    }

    /// The table for a keymap in XKB text format (what the compositor sends).
    pub fn from_keymap_text(text: &str, source: LayoutSource) -> Result<LayoutMap, String> {
        let ctx = xkb::Context::new(xkb::CONTEXT_NO_ENVIRONMENT_NAMES);
        let text = text.trim_end_matches('\0').to_string();
        let keymap = xkb::Keymap::new_from_string(
            &ctx,
            text,
            xkb::KEYMAP_FORMAT_TEXT_V1,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .ok_or("the compositor's keymap does not compile")?;
        let layouts: Vec<String> = (0..keymap.num_layouts())
            .map(|i| keymap.layout_get_name(i).to_string())
            .filter(|n| !n.is_empty())
            .collect();
        let description = format!(
            "{}, {}",
            if layouts.is_empty() {
                "unnamed layout".to_string()
            } else {
                layouts.join(" / ")
            },
            source_words(source)
        );
        Ok(LayoutMap::from_keymap(&keymap, description, source))
    }

    fn from_keymap(keymap: &xkb::Keymap, description: String, source: LayoutSource) -> LayoutMap {
        let bit = |name: &str| {
            let i = keymap.mod_get_index(name);
            if i == xkb::MOD_INVALID {
                0
            } else {
                1u32 << i
            }
        };
        let control = bit(xkb::MOD_NAME_CTRL);
        // Modifiers that turn keys into shortcuts (or lock) are never used to type.
        let forbidden = control
            | bit(xkb::MOD_NAME_ALT)
            | bit(xkb::MOD_NAME_LOGO)
            | bit(xkb::MOD_NAME_CAPS)
            | bit(xkb::MOD_NAME_NUM);

        let mut codes = Vec::new();
        keymap.key_for_each(|_, k| codes.push(k.raw()));
        // Modifier keys, found by pressing each key on a fresh state.
        let mut modkeys: Vec<ModKey> = Vec::new();
        for &code in &codes {
            let mut state = xkb::State::new(keymap);
            state.update_key(xkb::Keycode::new(code), xkb::KeyDirection::Down);
            let mask = state.serialize_mods(xkb::STATE_MODS_DEPRESSED);
            if mask != 0 {
                modkeys.push(ModKey {
                    keycode: code,
                    mask,
                });
            }
        }
        modkeys.sort_by_key(|m| preference(m.keycode));
        let ctrl = modkeys
            .iter()
            .find(|m| m.mask == control)
            .map(|m| (m.keycode - EVDEV_OFFSET) as u16);

        // Best stroke per character: not on the keypad, fewest modifiers, lowest level.
        let mut best: HashMap<char, (Rank, Stroke)> = HashMap::new();
        let mut keys_with_syms = 0;
        for &code in &codes {
            if !(EVDEV_OFFSET + 1..=EVDEV_OFFSET + 247).contains(&code) {
                continue;
            }
            let key = xkb::Keycode::new(code);
            if !keymap.key_get_syms_by_level(key, 0, 0).is_empty() {
                keys_with_syms += 1;
            }
            for level in 0..keymap.num_levels_for_key(key, 0) {
                let syms = keymap.key_get_syms_by_level(key, 0, level);
                let [sym] = syms else { continue };
                let Some(c) = char_of(*sym) else { continue };
                let mut masks = [0u32; 16];
                let n = keymap.key_get_mods_for_level(key, 0, level, &mut masks);
                for &mask in &masks[..n.min(masks.len())] {
                    if mask & forbidden != 0 {
                        continue;
                    }
                    let Some(mods) = cover(mask, &modkeys) else {
                        continue;
                    };
                    if !produces(keymap, &mods, code, *sym) {
                        continue;
                    }
                    let rank = (is_keypad(*sym), mods.len(), level, code);
                    let stroke = Stroke {
                        key: (code - EVDEV_OFFSET) as u16,
                        mods: mods.iter().map(|m| (m - EVDEV_OFFSET) as u16).collect(),
                    };
                    match best.get(&c) {
                        Some((r, _)) if *r <= rank => {}
                        _ => {
                            best.insert(c, (rank, stroke));
                        }
                    }
                }
            }
        }
        LayoutMap {
            strokes: best.into_iter().map(|(c, (_, s))| (c, s)).collect(),
            ctrl,
            description,
            source,
            keys_with_syms,
        }
    }

    /// "de, from the compositor" — for `doctor` and errors.
    pub fn describe(&self) -> &str {
        &self.description
    }

    pub fn source(&self) -> LayoutSource {
        self.source
    }

    /// A keymap of a real keyboard (letters, Return, BackSpace and dozens of keys), not the
    /// few-key keymap a virtual keyboard (wtype, Dictum's own) uploaded to the compositor.
    pub fn is_full_keyboard(&self) -> bool {
        self.keys_with_syms >= 40 && self.strokes.contains_key(&'\n')
    }

    /// The stroke for `c` (`'\n'` is Return, `'\t'` Tab); None when this layout has no key
    /// that produces it without a dead key or a compose sequence.
    pub fn stroke(&self, c: char) -> Option<&Stroke> {
        self.strokes.get(&if c == '\r' { '\n' } else { c })
    }

    /// The characters of `text` this layout cannot type, each once, in order.
    pub fn missing(&self, text: &str) -> Vec<char> {
        let mut out: Vec<char> = Vec::new();
        for c in text.chars() {
            if self.stroke(c).is_none() && !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    /// The strokes that type `text`, or the one-line reason naming what cannot be typed.
    pub fn plan(&self, text: &str) -> Result<Vec<&Stroke>, String> {
        let missing = self.missing(text);
        if !missing.is_empty() {
            let list: String = missing
                .iter()
                .take(8)
                .map(|c| format!("{c:?}"))
                .collect::<Vec<_>>()
                .join(" ");
            return Err(format!(
                "the keyboard layout ({}) has no key for {list}: use paste mode ([inject] \
                 method = \"paste\") or the portal / virtual-keyboard path",
                self.description
            ));
        }
        Ok(text.chars().filter_map(|c| self.stroke(c)).collect())
    }

    /// Ctrl+V, or Ctrl+Shift+V for a terminal, with this layout's V key.
    pub fn paste_chord(&self, terminal: bool) -> Result<Stroke, String> {
        let ctrl = self
            .ctrl
            .ok_or_else(|| format!("the keyboard layout ({}) has no Ctrl key", self.description))?;
        let v = self
            .stroke(if terminal { 'V' } else { 'v' })
            .ok_or_else(|| {
                format!(
                    "the keyboard layout ({}) has no V key for the paste chord",
                    self.description
                )
            })?;
        let mut mods = vec![ctrl];
        mods.extend(v.mods.iter().copied());
        Ok(Stroke { key: v.key, mods })
    }
}

fn source_words(source: LayoutSource) -> &'static str {
    match source {
        LayoutSource::Compositor => "from the compositor",
        LayoutSource::Environment => "from XKB_DEFAULT_LAYOUT",
        LayoutSource::Localectl => "from localectl",
        LayoutSource::EtcDefaultKeyboard => "from /etc/default/keyboard",
        LayoutSource::Default => "assumed: no layout configured",
        LayoutSource::Given => "given",
    }
}

/// The character a keysym types (Return → `'\n'`, Tab → `'\t'`); None for keysyms that type
/// nothing (modifiers, dead keys, function keys) or control characters.
fn char_of(sym: xkb::Keysym) -> Option<char> {
    match sym.raw() {
        0xff0d | 0xff8d => return Some('\n'), // Return, KP_Enter
        0xff09 => return Some('\t'),          // Tab
        _ => {}
    }
    let c = char::from_u32(xkb::keysym_to_utf32(sym))?;
    (c != '\0' && !c.is_control()).then_some(c)
}

fn is_keypad(sym: xkb::Keysym) -> bool {
    (0xff80..=0xffbd).contains(&sym.raw())
}

/// Modifier keys (XKB keycodes) whose masks add up to exactly `mask`; None if impossible.
fn cover(mask: u32, modkeys: &[ModKey]) -> Option<Vec<u32>> {
    let mut left = mask;
    let mut keys = Vec::new();
    for m in modkeys {
        if left == 0 {
            break;
        }
        if m.mask & !mask == 0 && m.mask & left != 0 {
            keys.push(m.keycode);
            left &= !m.mask;
        }
    }
    (left == 0).then_some(keys)
}

/// Replays the stroke on a fresh XKB state: true when it yields exactly `sym`.
fn produces(keymap: &xkb::Keymap, mods: &[u32], code: u32, sym: xkb::Keysym) -> bool {
    let mut state = xkb::State::new(keymap);
    for &m in mods {
        state.update_key(xkb::Keycode::new(m), xkb::KeyDirection::Down);
    }
    state.key_get_one_sym(xkb::Keycode::new(code)) == sym
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localectl_output_is_read() {
        let out = "   System Locale: LANG=de_DE.UTF-8\n       VC Keymap: de-latin1-nodeadkeys\n      X11 Layout: de\n       X11 Model: pc105\n     X11 Variant: nodeadkeys\n";
        assert_eq!(
            parse_localectl(out),
            Some(Names {
                model: "pc105".into(),
                layout: "de".into(),
                variant: "nodeadkeys".into(),
                ..Names::default()
            })
        );
        assert_eq!(
            parse_localectl("System Locale: LANG=C\nVC Keymap: n/a\n"),
            None
        );
    }

    #[test]
    fn etc_default_keyboard_is_read() {
        let text = "# KEYBOARD CONFIGURATION FILE\nXKBMODEL=\"pc105\"\nXKBLAYOUT=\"fr\"\nXKBVARIANT=\"\"\nXKBOPTIONS=\"compose:ralt\"\n\nBACKSPACE=\"guess\"\n";
        assert_eq!(
            parse_etc_default_keyboard(text),
            Some(Names {
                model: "pc105".into(),
                layout: "fr".into(),
                options: "compose:ralt".into(),
                ..Names::default()
            })
        );
        assert_eq!(parse_etc_default_keyboard("XKBLAYOUT=\"\"\n"), None);
    }

    #[test]
    fn the_environment_comes_first() {
        let (names, source) = configured_names(|k| match k {
            "XKB_DEFAULT_LAYOUT" => Some("cz".into()),
            "XKB_DEFAULT_VARIANT" => Some("qwerty".into()),
            _ => None,
        });
        assert_eq!(source, LayoutSource::Environment);
        assert_eq!(names.describe(), "cz (qwerty)");
    }
}
