//! The XKB keymaps the virtual keyboard uploads: one key per character to type, so the
//! characters that arrive do not depend on the user's layout.
//!
//! A keymap holds at most [`MAX_KEYS`] keys (XKB keycodes 9..=255: X11, hence XWayland,
//! cannot go past 255). Each key has one level with one keysym: `U00E9` for `é`, `Return`
//! for a newline. Keysym names of the `U<hex>` form are understood by libxkbcommon and by
//! xkbcomp (which XWayland runs); for Latin-1 they give the Latin-1 keysym (`U0061` is `a`).
//!
//! [`plan`] splits a text into chunks, each typed with one keymap: the current keymap is
//! extended while it has room (its keycodes stay valid), and a text with more distinct
//! characters than fit is typed in several chunks, each with a fresh keymap.

use std::collections::HashSet;
use std::fmt::Write as _;

/// Keys in one keymap: XKB keycodes 9..=255.
pub const MAX_KEYS: usize = 247;
/// The lowest XKB keycode used; the protocol's `key` request takes `xkb keycode - 8`
/// (the evdev code), so key `i` of a keymap is sent as `i + 1`.
const FIRST_XKB_KEYCODE: usize = 9;

/// One key: a character or a named key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sym {
    Char(char),
    Return,
    Tab,
    BackSpace,
    Escape,
}

impl Sym {
    /// The keysyms written into the keymap for this key.
    fn keysyms(self) -> String {
        match self {
            Sym::Return => "Return".to_string(),
            Sym::Tab => "Tab".to_string(),
            Sym::BackSpace => "BackSpace".to_string(),
            Sym::Escape => "Escape".to_string(),
            // `v` gets `V` on its Shift level (the keymap compiler makes it an ALPHABETIC key):
            // X clients match Ctrl+Shift+V bindings (xterm's translations) against `V`.
            Sym::Char('v') => "U0076, U0056".to_string(),
            Sym::Char(c) => format!("U{:04X}", c as u32),
        }
    }
}

/// The keys `text` is typed with: `\n`, `\r\n` and `\r` are Return, `\t` is Tab, other
/// control characters (C0, DEL, C1) have no key and are left out.
pub fn tokens(text: &str) -> Vec<Sym> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(Sym::Return);
            }
            '\n' => out.push(Sym::Return),
            '\t' => out.push(Sym::Tab),
            c if c.is_control() => {}
            c => out.push(Sym::Char(c)),
        }
    }
    out
}

/// The keys of one uploaded (or to-be-uploaded) keymap, in keycode order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    syms: Vec<Sym>,
}

/// Every keymap starts with `v`, so the paste chord never needs a keymap of its own.
const BASE: &[Sym] = &[Sym::Char('v')];

impl Default for Keymap {
    fn default() -> Self {
        Keymap {
            syms: BASE.to_vec(),
        }
    }
}

impl Keymap {
    /// The code to send in the protocol's `key` request for `sym`, if this keymap has it.
    pub fn code(&self, sym: Sym) -> Option<u32> {
        self.syms
            .iter()
            .position(|s| *s == sym)
            .map(|i| (i + FIRST_XKB_KEYCODE - 8) as u32)
    }

    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// Adds `sym` (not yet present) and returns its code; None when full.
    fn push(&mut self, sym: Sym) -> Option<u32> {
        if self.syms.len() >= MAX_KEYS {
            return None;
        }
        self.syms.push(sym);
        Some((self.syms.len() - 1 + FIRST_XKB_KEYCODE - 8) as u32)
    }

    /// The keymap in XKB text format, NUL-terminated as `wl_keyboard.keymap` wants it.
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(64 + self.syms.len() * 40);
        s.push_str("xkb_keymap {\nxkb_keycodes \"dictum\" {\nminimum = 8;\n");
        let _ = writeln!(s, "maximum = {};", FIRST_XKB_KEYCODE + self.syms.len() - 1);
        for i in 0..self.syms.len() {
            let _ = writeln!(s, "<K{i}> = {};", i + FIRST_XKB_KEYCODE);
        }
        s.push_str("};\n");
        s.push_str("xkb_types \"dictum\" { include \"complete\" };\n");
        s.push_str("xkb_compatibility \"dictum\" { include \"complete\" };\n");
        s.push_str("xkb_symbols \"dictum\" {\n");
        for (i, sym) in self.syms.iter().enumerate() {
            let _ = writeln!(s, "key <K{i}> {{[ {} ]}};", sym.keysyms());
        }
        s.push_str("};\n};\n\0");
        s
    }
}

/// Keys typed with one keymap; `upload` is the keymap to upload first (None: the current
/// one already has every key).
#[derive(Debug)]
pub struct Chunk {
    pub upload: Option<Keymap>,
    pub codes: Vec<u32>,
}

/// The keys of a fresh keymap when the text fits beside them: `v` first, Return, Tab and
/// every printable ASCII and Latin-1 character (192 keys). Most later texts then fit in the
/// same keymap, and the keymap seldom changes (each change costs time, see `mod.rs`).
fn rich() -> Keymap {
    let mut syms = BASE.to_vec();
    syms.extend([Sym::Return, Sym::Tab]);
    syms.extend(
        (' '..='~')
            .chain('\u{A1}'..='\u{FF}')
            .map(Sym::Char)
            .filter(|s| !BASE.contains(s)),
    );
    Keymap { syms }
}

/// Splits `syms` into chunks. `current` is the keymap the compositor has now, if any: it is
/// kept (extended when needed) when it can take every new key of the text, so most texts
/// need no upload at all. Otherwise a fresh keymap holds the common characters plus the
/// text's when they fit, and only a text with more distinct characters than one keymap
/// holds is typed in several chunks.
pub fn plan(current: Option<&Keymap>, syms: &[Sym]) -> Vec<Chunk> {
    let fits = |k: &Keymap| {
        let have: HashSet<Sym> = k.syms.iter().copied().collect();
        let new: HashSet<Sym> = syms.iter().filter(|s| !have.contains(s)).copied().collect();
        k.len() + new.len() <= MAX_KEYS
    };
    let mut keymap = match current {
        Some(k) if fits(k) => k.clone(),
        _ if fits(&rich()) => rich(),
        _ => Keymap::default(),
    };
    let mut dirty = current != Some(&keymap);
    let mut chunks = Vec::new();
    let mut codes = Vec::with_capacity(syms.len());
    for &sym in syms {
        let code = match keymap.code(sym) {
            Some(c) => c,
            None => match keymap.push(sym) {
                Some(c) => {
                    dirty = true;
                    c
                }
                None => {
                    chunks.push(Chunk {
                        upload: dirty.then(|| keymap.clone()),
                        codes: std::mem::take(&mut codes),
                    });
                    keymap = Keymap::default();
                    dirty = true;
                    match keymap.code(sym) {
                        Some(c) => c,
                        // A fresh keymap has room: MAX_KEYS > BASE.len().
                        None => keymap.push(sym).unwrap_or(1),
                    }
                }
            },
        };
        codes.push(code);
    }
    if !codes.is_empty() || dirty {
        chunks.push(Chunk {
            upload: dirty.then_some(keymap),
            codes,
        });
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the compositor would see: each chunk's codes decoded with its keymap.
    fn decode(current: Option<&Keymap>, chunks: &[Chunk]) -> (Vec<Sym>, Option<Keymap>) {
        let mut km = current.cloned();
        let mut out = Vec::new();
        for c in chunks {
            if let Some(k) = &c.upload {
                assert!(k.len() <= MAX_KEYS);
                km = Some(k.clone());
            }
            let k = km.as_ref().expect("a keymap before the first key");
            out.extend(c.codes.iter().map(|&code| {
                assert!(code >= 1 && code as usize <= k.len(), "code {code}");
                k.syms[code as usize - 1]
            }));
        }
        (out, km)
    }

    #[test]
    fn tokens_map_newlines_and_tabs_and_drop_controls() {
        assert_eq!(
            tokens("a\r\nb\nc\rd\te\u{7}\u{7f}\u{85}é"),
            vec![
                Sym::Char('a'),
                Sym::Return,
                Sym::Char('b'),
                Sym::Return,
                Sym::Char('c'),
                Sym::Return,
                Sym::Char('d'),
                Sym::Tab,
                Sym::Char('e'),
                Sym::Char('é'),
            ]
        );
    }

    #[test]
    fn keymap_text_names_every_key() {
        let syms = tokens("é✓😀 \n");
        let chunks = plan(None, &syms);
        assert_eq!(chunks.len(), 1);
        let km = chunks[0]
            .upload
            .as_ref()
            .expect("first text uploads a keymap");
        assert_eq!(km.len(), 194, "192 common keys and ✓ 😀");
        let text = km.render();
        assert!(text.ends_with("};\n};\n\0"), "{text}");
        assert!(text.contains("maximum = 202;"), "{text}");
        for name in [
            "<K0> = 9;",
            "<K193> = 202;",
            "key <K0> {[ U0076, U0056 ]};",
            "key <K1> {[ Return ]};",
            "key <K2> {[ Tab ]};",
            "key <K3> {[ U0020 ]};",
            "key <K4> {[ U0021 ]};",
            "key <K192> {[ U2713 ]};",
            "key <K193> {[ U1F600 ]};",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
        assert!(text.contains("{[ U00E9 ]}"), "{text}");
        assert_eq!(decode(None, &chunks).0, syms);
    }

    #[test]
    fn current_keymap_is_reused_and_extended() {
        let first = plan(None, &tokens("abc"));
        let km = first[0].upload.clone().expect("upload");
        // Common characters are all there: no upload.
        let again = plan(Some(&km), &tokens("Grüße, café! 100 %"));
        assert_eq!(again.len(), 1);
        assert!(again[0].upload.is_none());
        assert_eq!(decode(Some(&km), &again).0, tokens("Grüße, café! 100 %"));
        // A new character: the keymap grows, old codes stay.
        let more = plan(Some(&km), &tokens("a—"));
        let grown = more[0].upload.as_ref().expect("grown keymap uploaded");
        assert_eq!(grown.len(), km.len() + 1);
        assert_eq!(grown.code(Sym::Char('a')), km.code(Sym::Char('a')));
        assert_eq!(decode(Some(&km), &more).0, tokens("a—"));
        // The paste chord's `v` is always there.
        assert_eq!(km.code(Sym::Char('v')), Some(1));
    }

    #[test]
    fn long_texts_with_many_characters_are_chunked() {
        // 600 distinct characters: three keymaps, each starting from `v` alone.
        let text: String = (0..600u32)
            .filter_map(|i| char::from_u32(0x4E00 + i))
            .collect();
        let syms = tokens(&text);
        let chunks = plan(None, &syms);
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| c.upload.is_some()));
        let (typed, last) = decode(None, &chunks);
        assert_eq!(typed, syms);
        assert_eq!(last.and_then(|k| k.code(Sym::Char('v'))), Some(1));
    }

    #[test]
    fn a_full_keymap_is_replaced_when_the_new_text_does_not_fit() {
        let big: String = (0..246u32)
            .filter_map(|i| char::from_u32(0x4E00 + i))
            .collect();
        let km = plan(None, &tokens(&big))[0].upload.clone().expect("upload");
        assert_eq!(km.len(), MAX_KEYS);
        let chunks = plan(Some(&km), &tokens("xyz—"));
        assert_eq!(chunks.len(), 1);
        let fresh = chunks[0].upload.as_ref().expect("fresh keymap");
        assert_eq!(fresh, &{
            let mut r = rich();
            r.push(Sym::Char('—'));
            r
        });
    }
}
