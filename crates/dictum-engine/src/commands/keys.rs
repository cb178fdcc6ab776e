//! Key chords a command presses ("Return", "ctrl+z", "ctrl+shift+t"), parsed from text.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Key {
    Return,
    Tab,
    BackSpace,
    Escape,
    /// A character key (lowercase letter, digit or symbol).
    Char(char),
}

/// One key with the modifiers held while it is pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Chord {
    pub ctrl: bool,
    pub shift: bool,
    pub alt: bool,
    pub key: Key,
}

impl Chord {
    pub const fn key(key: Key) -> Chord {
        Chord {
            ctrl: false,
            shift: false,
            alt: false,
            key,
        }
    }

    pub const fn ctrl(key: Key) -> Chord {
        Chord {
            ctrl: true,
            shift: false,
            alt: false,
            key,
        }
    }

    /// True when the chord is a bare key that typing the character would give (Return,
    /// Tab): every typing path can send those.
    pub fn is_plain(&self) -> bool {
        !self.ctrl && !self.alt
    }
}

impl std::fmt::Display for Chord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.ctrl {
            f.write_str("ctrl+")?;
        }
        if self.alt {
            f.write_str("alt+")?;
        }
        if self.shift {
            f.write_str("shift+")?;
        }
        match self.key {
            Key::Return => f.write_str("Return"),
            Key::Tab => f.write_str("Tab"),
            Key::BackSpace => f.write_str("BackSpace"),
            Key::Escape => f.write_str("Escape"),
            Key::Char(c) => write!(f, "{c}"),
        }
    }
}

/// Parses chords separated by spaces: "ctrl+s", "Return Return", "ctrl+shift+t".
pub fn parse_keys(text: &str) -> Result<Vec<Chord>, String> {
    let chords = text
        .split_whitespace()
        .map(parse_chord)
        .collect::<Result<Vec<_>, _>>()?;
    if chords.is_empty() {
        return Err("no keys given (e.g. \"ctrl+s\" or \"Return\")".into());
    }
    Ok(chords)
}

fn parse_chord(text: &str) -> Result<Chord, String> {
    let mut chord = Chord::key(Key::Return);
    let parts: Vec<&str> = text.split('+').collect();
    let (last, mods) = parts
        .split_last()
        .ok_or_else(|| format!("{text:?} is empty"))?;
    for m in mods {
        match m.to_lowercase().as_str() {
            "ctrl" | "control" => chord.ctrl = true,
            "shift" => chord.shift = true,
            "alt" => chord.alt = true,
            other => {
                return Err(format!(
                    "unknown modifier {other:?} (use ctrl, shift or alt)"
                ))
            }
        }
    }
    chord.key = match last.to_lowercase().as_str() {
        "return" | "enter" => Key::Return,
        "tab" => Key::Tab,
        "backspace" => Key::BackSpace,
        "escape" | "esc" => Key::Escape,
        "space" => Key::Char(' '),
        k if k.chars().count() == 1 => {
            let c = k.chars().next().unwrap_or(' ');
            if c.is_control() || c.is_whitespace() {
                return Err(format!("{last:?} is not a key"));
            }
            Key::Char(c)
        }
        _ => {
            return Err(format!(
                "unknown key {last:?} (use a letter, digit or symbol, Return, Tab, BackSpace, Escape or space)"
            ))
        }
    };
    Ok(chord)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_chords_and_says_what_is_wrong() {
        assert_eq!(
            parse_keys("ctrl+s").unwrap(),
            vec![Chord::ctrl(Key::Char('s'))]
        );
        assert_eq!(
            parse_keys("Return  Return").unwrap(),
            vec![Chord::key(Key::Return); 2]
        );
        let c = parse_keys("ctrl+shift+T").unwrap()[0];
        assert!(c.ctrl && c.shift && !c.alt && c.key == Key::Char('t'));
        assert_eq!(c.to_string(), "ctrl+shift+t");
        assert!(parse_keys("").unwrap_err().contains("no keys"));
        assert!(parse_keys("hyper+x").unwrap_err().contains("modifier"));
        assert!(parse_keys("ctrl+pagedown")
            .unwrap_err()
            .contains("unknown key"));
    }
}
