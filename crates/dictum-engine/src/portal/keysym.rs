//! Characters to X keysyms for `NotifyKeyboardKeysym`: the named keysym where X11 has one
//! (what keyboard layouts are written in, so the compositor finds the key: `é` = `eacute`
//! 0xe9, `ł` = `lstroke` 0x1b3, `€` = `EuroSign` 0x20ac), else the Unicode keysym
//! 0x01000000 + code point. Newline is Return, tab is Tab.

/// `Return`.
pub const KEYSYM_RETURN: u32 = 0xff0d;
const KEYSYM_TAB: u32 = 0xff09;

/// The keysym that types `c`, None for control characters that have no key.
pub fn keysym_for(c: char) -> Option<u32> {
    match c {
        '\n' | '\r' => Some(KEYSYM_RETURN),
        '\t' => Some(KEYSYM_TAB),
        c if c.is_control() => None,
        c => {
            let k = xkeysym::Keysym::from_char(c);
            (k != xkeysym::Keysym::NoSymbol).then_some(k.raw())
        }
    }
}

/// The keysyms that type `text`, in order: "\r\n" is one Return, characters with no key
/// (other control characters) are left out.
pub fn keysyms_for_text(text: &str) -> Vec<u32> {
    let mut out = Vec::with_capacity(text.len());
    let mut after_cr = false;
    for c in text.chars() {
        if c == '\n' && after_cr {
            after_cr = false;
            continue;
        }
        after_cr = c == '\r';
        if let Some(k) = keysym_for(c) {
            out.push(k);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_keysyms_first_then_unicode() {
        assert_eq!(keysym_for('a'), Some(0x61));
        assert_eq!(keysym_for('Z'), Some(0x5a));
        assert_eq!(keysym_for(' '), Some(0x20));
        assert_eq!(keysym_for('é'), Some(0xe9));
        assert_eq!(keysym_for('ł'), Some(0x1b3));
        assert_eq!(keysym_for('€'), Some(0x20ac));
        assert_eq!(keysym_for('✓'), Some(0xaf3), "checkmark");
        assert_eq!(keysym_for('✔'), Some(0x0100_2714));
        assert_eq!(keysym_for('😀'), Some(0x0101_f600));
        assert_eq!(keysym_for('\n'), Some(KEYSYM_RETURN));
        assert_eq!(keysym_for('\t'), Some(KEYSYM_TAB));
        assert_eq!(keysym_for('\u{7}'), None);
    }

    #[test]
    fn text_round_trips_through_keysyms() {
        let text = "Grüße, naïve café — 10 € ✓ 😀\tend\r\nnext\nlast";
        let back: String = keysyms_for_text(text)
            .into_iter()
            .map(|k| match k {
                KEYSYM_RETURN => '\n',
                k => xkeysym::Keysym::new(k).key_char().expect("printable"),
            })
            .collect();
        assert_eq!(back, text.replace("\r\n", "\n"));
    }
}
