//! Compositor and desktop shortcuts that drive Dictum through `dictum ctl`, for Wayland
//! desktops where no program may grab a global key and the GlobalShortcuts portal is missing
//! (`dictum shortcut print|install|remove`).
//!
//! | desktop  | what is written                                                   | gives        |
//! |----------|-------------------------------------------------------------------|--------------|
//! | sway     | `bindsym --no-repeat` + `bindsym --release` in `config.d/dictum.conf`, included from the main config | push-to-talk |
//! | Hyprland | `bind` + `bindr` in `hypr/dictum.conf`, `source`d from `hyprland.conf` | push-to-talk |
//! | GNOME    | a gsettings custom keybinding running `dictum ctl toggle`          | toggle (GNOME custom shortcuts fire on press only) |
//! | KDE      | nothing: the GlobalShortcuts portal, or a custom shortcut by hand  | -            |
//! | other    | nothing: the lines to add by hand                                 | -            |
//!
//! This file is the pure part: hotkey spec → keysym chord → the exact text for each desktop
//! (unit-tested as a table). [`install`] does the file and gsettings edits.

pub mod install;

use global_hotkey::hotkey::{Code, Modifiers};
use std::path::Path;

/// The desktops Dictum knows how to bind a shortcut on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Desktop {
    Sway,
    Hyprland,
    Gnome,
    Kde,
    Other,
}

impl Desktop {
    pub const NAMES: &'static str = "sway, hyprland, gnome, kde, other";

    pub fn parse(name: &str) -> Result<Desktop, String> {
        Ok(match name.trim().to_ascii_lowercase().as_str() {
            "sway" => Desktop::Sway,
            "hyprland" => Desktop::Hyprland,
            "gnome" => Desktop::Gnome,
            "kde" | "plasma" => Desktop::Kde,
            "other" => Desktop::Other,
            other => return Err(format!("unknown desktop `{other}` ({})", Desktop::NAMES)),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Desktop::Sway => "sway",
            Desktop::Hyprland => "Hyprland",
            Desktop::Gnome => "GNOME",
            Desktop::Kde => "KDE Plasma",
            Desktop::Other => "this desktop",
        }
    }
}

/// The desktop this session runs: the compositors' own sockets first (`SWAYSOCK`,
/// `HYPRLAND_INSTANCE_SIGNATURE`), then `XDG_CURRENT_DESKTOP` (a `:`-separated list such as
/// `ubuntu:GNOME`).
pub fn detect(env: impl Fn(&str) -> Option<String>) -> Desktop {
    let set = |k: &str| env(k).is_some_and(|v| !v.is_empty());
    if set("HYPRLAND_INSTANCE_SIGNATURE") {
        return Desktop::Hyprland;
    }
    if set("SWAYSOCK") {
        return Desktop::Sway;
    }
    let current = env("XDG_CURRENT_DESKTOP").unwrap_or_default();
    for name in current.split(':').map(|s| s.trim().to_ascii_lowercase()) {
        match name.as_str() {
            "sway" => return Desktop::Sway,
            "hyprland" => return Desktop::Hyprland,
            "gnome" | "gnome-classic" | "gnome-flashback" | "ubuntu" | "pop" | "unity" => {
                return Desktop::Gnome
            }
            "kde" | "plasma" => return Desktop::Kde,
            _ => {}
        }
    }
    Desktop::Other
}

/// [`detect`] on this process's environment.
pub fn detect_here() -> Desktop {
    detect(|k| std::env::var(k).ok())
}

/// A hotkey as modifiers plus an xkb keysym name, the form every compositor binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
    pub super_: bool,
    /// xkb keysym name: `space`, `d`, `F9`, `Return`, `XF86AudioPlay`...
    pub keysym: &'static str,
}

impl Chord {
    /// `Ctrl+Alt+Space`, as the user reads it.
    pub fn human(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for (on, name) in [
            (self.super_, "Super"),
            (self.ctrl, "Ctrl"),
            (self.alt, "Alt"),
            (self.shift, "Shift"),
        ] {
            if on {
                parts.push(name.into());
            }
        }
        let mut key = self.keysym.to_string();
        if let Some(first) = key.get(..1) {
            key = first.to_ascii_uppercase() + &key[1..];
        }
        parts.push(key);
        parts.join("+")
    }

    /// sway's `bindsym` form: `Mod4+Ctrl+Mod1+Shift+space`.
    pub fn sway(&self) -> String {
        let mut parts: Vec<&str> = Vec::new();
        for (on, name) in [
            (self.super_, "Mod4"),
            (self.ctrl, "Ctrl"),
            (self.alt, "Mod1"),
            (self.shift, "Shift"),
        ] {
            if on {
                parts.push(name);
            }
        }
        parts.push(self.keysym);
        parts.join("+")
    }

    /// Hyprland's `MODS, key` form: `CTRL ALT, space` (`, F9` without modifiers).
    pub fn hyprland(&self) -> String {
        let mut mods: Vec<&str> = Vec::new();
        for (on, name) in [
            (self.super_, "SUPER"),
            (self.ctrl, "CTRL"),
            (self.alt, "ALT"),
            (self.shift, "SHIFT"),
        ] {
            if on {
                mods.push(name);
            }
        }
        format!("{}, {}", mods.join(" "), self.keysym)
    }

    /// GTK's accelerator form, as GNOME's keybinding settings store it: `<Control><Alt>space`.
    pub fn gtk(&self) -> String {
        let mut s = String::new();
        for (on, name) in [
            (self.super_, "<Super>"),
            (self.ctrl, "<Control>"),
            (self.alt, "<Alt>"),
            (self.shift, "<Shift>"),
        ] {
            if on {
                s.push_str(name);
            }
        }
        s.push_str(self.keysym);
        s
    }
}

/// Parses a `[dictation] hotkey` spec (`dictum_engine::hotkey::parse`) into a [`Chord`].
/// Refuses what no desktop should bind globally: a key you type with (letters, digits,
/// space, punctuation, Return, arrows...) without Ctrl, Alt or Super would stop working in
/// every application, and Caps Lock / Num Lock change state when pressed.
pub fn chord(spec: &str) -> Result<Chord, String> {
    let hotkey = crate::hotkey::parse(spec)?;
    let keysym = keysym(hotkey.key).ok_or_else(|| {
        format!("`{spec}`: Dictum cannot name this key for a compositor shortcut; use a letter, digit, F1-F24, space or a media key")
    })?;
    let m = hotkey.mods;
    let c = Chord {
        ctrl: m.contains(Modifiers::CONTROL),
        alt: m.contains(Modifiers::ALT),
        shift: m.contains(Modifiers::SHIFT),
        super_: m.contains(Modifiers::SUPER) || m.contains(Modifiers::META),
        keysym,
    };
    if matches!(hotkey.key, Code::CapsLock | Code::NumLock) {
        return Err(format!(
            "`{spec}`: {} changes the keyboard's state when pressed, so it cannot be a dictation shortcut; pick another key, e.g. \"ctrl+alt+space\"",
            c.keysym
        ));
    }
    if !(c.ctrl || c.alt || c.super_) && is_typing_key(hotkey.key) {
        return Err(format!(
            "`{spec}`: a desktop shortcut on {} without Ctrl, Alt or Super would take that key away from every application; add a modifier (e.g. \"ctrl+alt+space\") or use a key such as F9",
            c.human()
        ));
    }
    Ok(c)
}

/// Keys that applications need for typing and editing.
fn is_typing_key(code: Code) -> bool {
    keysym(code).is_some_and(|k| k.chars().count() == 1)
        || matches!(
            code,
            Code::Space
                | Code::Enter
                | Code::Tab
                | Code::Backspace
                | Code::Delete
                | Code::Escape
                | Code::Backquote
                | Code::Backslash
                | Code::BracketLeft
                | Code::BracketRight
                | Code::Comma
                | Code::Equal
                | Code::Minus
                | Code::Period
                | Code::Quote
                | Code::Semicolon
                | Code::Slash
                | Code::ArrowUp
                | Code::ArrowDown
                | Code::ArrowLeft
                | Code::ArrowRight
                | Code::Home
                | Code::End
                | Code::PageUp
                | Code::PageDown
        )
        || matches!(
            code,
            Code::Numpad0
                | Code::Numpad1
                | Code::Numpad2
                | Code::Numpad3
                | Code::Numpad4
                | Code::Numpad5
                | Code::Numpad6
                | Code::Numpad7
                | Code::Numpad8
                | Code::Numpad9
                | Code::NumpadAdd
                | Code::NumpadDecimal
                | Code::NumpadDivide
                | Code::NumpadEnter
                | Code::NumpadEqual
                | Code::NumpadMultiply
                | Code::NumpadSubtract
        )
}

/// The xkb keysym name of a physical key on a US layout (what compositors bind on), for
/// every key `hotkey::parse` accepts.
pub fn keysym(code: Code) -> Option<&'static str> {
    use Code::*;
    const LETTERS: [&str; 26] = [
        "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r",
        "s", "t", "u", "v", "w", "x", "y", "z",
    ];
    const LETTER_CODES: [Code; 26] = [
        KeyA, KeyB, KeyC, KeyD, KeyE, KeyF, KeyG, KeyH, KeyI, KeyJ, KeyK, KeyL, KeyM, KeyN, KeyO,
        KeyP, KeyQ, KeyR, KeyS, KeyT, KeyU, KeyV, KeyW, KeyX, KeyY, KeyZ,
    ];
    const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
    const DIGIT_CODES: [Code; 10] = [
        Digit0, Digit1, Digit2, Digit3, Digit4, Digit5, Digit6, Digit7, Digit8, Digit9,
    ];
    const F: [&str; 24] = [
        "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12", "F13", "F14",
        "F15", "F16", "F17", "F18", "F19", "F20", "F21", "F22", "F23", "F24",
    ];
    const F_CODES: [Code; 24] = [
        F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13, F14, F15, F16, F17, F18, F19, F20,
        F21, F22, F23, F24,
    ];
    const KP: [&str; 10] = [
        "KP_0", "KP_1", "KP_2", "KP_3", "KP_4", "KP_5", "KP_6", "KP_7", "KP_8", "KP_9",
    ];
    const KP_CODES: [Code; 10] = [
        Numpad0, Numpad1, Numpad2, Numpad3, Numpad4, Numpad5, Numpad6, Numpad7, Numpad8, Numpad9,
    ];
    for (codes, names) in [
        (&LETTER_CODES[..], &LETTERS[..]),
        (&DIGIT_CODES[..], &DIGITS[..]),
        (&F_CODES[..], &F[..]),
        (&KP_CODES[..], &KP[..]),
    ] {
        if let Some(i) = codes.iter().position(|c| *c == code) {
            return Some(names[i]);
        }
    }
    Some(match code {
        Space => "space",
        Enter => "Return",
        Tab => "Tab",
        Backspace => "BackSpace",
        Delete => "Delete",
        Insert => "Insert",
        Escape => "Escape",
        Home => "Home",
        End => "End",
        PageUp => "Page_Up",
        PageDown => "Page_Down",
        ArrowUp => "Up",
        ArrowDown => "Down",
        ArrowLeft => "Left",
        ArrowRight => "Right",
        PrintScreen => "Print",
        ScrollLock => "Scroll_Lock",
        Pause => "Pause",
        CapsLock => "Caps_Lock",
        NumLock => "Num_Lock",
        Backquote => "grave",
        Backslash => "backslash",
        BracketLeft => "bracketleft",
        BracketRight => "bracketright",
        Comma => "comma",
        Equal => "equal",
        Minus => "minus",
        Period => "period",
        Quote => "apostrophe",
        Semicolon => "semicolon",
        Slash => "slash",
        NumpadAdd => "KP_Add",
        NumpadDecimal => "KP_Decimal",
        NumpadDivide => "KP_Divide",
        NumpadEnter => "KP_Enter",
        NumpadEqual => "KP_Equal",
        NumpadMultiply => "KP_Multiply",
        NumpadSubtract => "KP_Subtract",
        AudioVolumeDown => "XF86AudioLowerVolume",
        AudioVolumeUp => "XF86AudioRaiseVolume",
        AudioVolumeMute => "XF86AudioMute",
        MediaPlay | MediaPlayPause => "XF86AudioPlay",
        MediaPause => "XF86AudioPause",
        MediaStop => "XF86AudioStop",
        MediaTrackNext => "XF86AudioNext",
        MediaTrackPrevious => "XF86AudioPrev",
        _ => return None,
    })
}

/// How the shortcut drives dictation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Hold to speak: `dictum ctl press` on key down, `dictum ctl release` on key up.
    PushToTalk,
    /// Press to start, press again to stop: `dictum ctl toggle` (the desktop has no release
    /// event for custom shortcuts).
    Toggle,
}

/// GNOME's custom keybinding (a relocatable gsettings schema at [`GNOME_PATH`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GnomeKeybinding {
    pub name: String,
    pub command: String,
    pub binding: String,
}

pub const GNOME_SCHEMA: &str = "org.gnome.settings-daemon.plugins.media-keys";
pub const GNOME_LIST_KEY: &str = "custom-keybindings";
pub const GNOME_BINDING_SCHEMA: &str =
    "org.gnome.settings-daemon.plugins.media-keys.custom-keybinding";
/// Dictum's own entry in the custom-keybindings list (GNOME Settings names its own
/// `custom0/`, `custom1/`...: this one never collides with them).
pub const GNOME_PATH: &str =
    "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/dictum/";

/// Everything `dictum shortcut` needs for one desktop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub desktop: Desktop,
    pub chord: Chord,
    pub trigger: Trigger,
    /// sway/Hyprland: the whole text of Dictum's own config file. Others: the lines or steps
    /// for the user to add by hand.
    pub text: String,
    /// GNOME only: the keybinding to store.
    pub gnome: Option<GnomeKeybinding>,
    /// What the user should know (toggle instead of push-to-talk, the portal...).
    pub notes: Vec<String>,
}

/// `exe` as one word for `sh -c` (sway and Hyprland `exec`) and `g_shell_parse_argv`
/// (GNOME): quoted only when it has to be.
pub fn shell_word(exe: &Path) -> String {
    let s = exe.to_string_lossy();
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The binding for `desktop` from the hotkey `spec`, running `exe` (the absolute path of the
/// `dictum` binary, so the shortcut works without PATH).
pub fn binding(desktop: Desktop, spec: &str, exe: &Path) -> Result<Binding, String> {
    let c = chord(spec)?;
    let dictum = shell_word(exe);
    let human = c.human();
    let header = |file_note: &str| {
        format!(
            "# Dictum push-to-talk: hold {human} to dictate, release to type.\n\
             # From [dictation] hotkey = \"{}\"; written by `dictum shortcut install`,\n\
             # {file_note}\n",
            spec.trim()
        )
    };
    let toggle_note = |who: &str| {
        format!(
            "{who} custom shortcuts fire when the key goes down, never when it comes up, so {human} toggles: press it to start dictating, press it again to stop. Your [dictation] mode setting is left as it is (it still applies to the hotkey `dictum run` grabs itself)."
        )
    };
    Ok(match desktop {
        Desktop::Sway => Binding {
            desktop,
            chord: c,
            trigger: Trigger::PushToTalk,
            text: format!(
                "{}bindsym --no-repeat {k} exec {dictum} ctl press\nbindsym --release {k} exec {dictum} ctl release\n",
                header("removed with this file by `dictum shortcut remove`."),
                k = c.sway()
            ),
            gnome: None,
            notes: Vec::new(),
        },
        Desktop::Hyprland => Binding {
            desktop,
            chord: c,
            trigger: Trigger::PushToTalk,
            text: format!(
                "{}bind = {k}, exec, {dictum} ctl press\nbindr = {k}, exec, {dictum} ctl release\n",
                header("removed with this file by `dictum shortcut remove`."),
                k = c.hyprland()
            ),
            gnome: None,
            notes: vec![format!(
                "Hyprland matches the release binding when {} comes up while the modifiers are still down: let go of it before the modifiers.",
                c.keysym
            )],
        },
        Desktop::Gnome => {
            let kb = GnomeKeybinding {
                name: "Dictum dictation".into(),
                command: format!("{dictum} ctl toggle"),
                binding: c.gtk(),
            };
            let key = format!("{GNOME_BINDING_SCHEMA}:{GNOME_PATH}");
            let text = format!(
                "# Add '{GNOME_PATH}' to the list (keep the entries already there):\n\
                 gsettings get {GNOME_SCHEMA} {GNOME_LIST_KEY}\n\
                 gsettings set {GNOME_SCHEMA} {GNOME_LIST_KEY} \"[..., '{GNOME_PATH}']\"\n\
                 gsettings set {key} name {}\n\
                 gsettings set {key} command {}\n\
                 gsettings set {key} binding {}\n",
                shell_double(&gvariant_string(&kb.name)),
                shell_double(&gvariant_string(&kb.command)),
                shell_double(&gvariant_string(&kb.binding)),
            );
            Binding {
                desktop,
                chord: c,
                trigger: Trigger::Toggle,
                text,
                gnome: Some(kb),
                notes: vec![
                    toggle_note("GNOME"),
                    "On GNOME 48 and later, `dictum run` and the tray app ask for a push-to-talk shortcut through the GlobalShortcuts portal instead; this one is for older GNOME.".into(),
                ],
            }
        }
        Desktop::Kde => Binding {
            desktop,
            chord: c,
            trigger: Trigger::Toggle,
            text: format!(
                "# KDE Plasma 5.27 and later: nothing to add. `dictum run` and the tray app ask for\n\
                 # {human} through the GlobalShortcuts portal (push-to-talk: press and release);\n\
                 # confirm it once in the dialog, change it in System Settings > Keyboard > Shortcuts.\n\
                 # Without the portal: System Settings > Keyboard > Shortcuts > Add New >\n\
                 # Command or Script, bound to {human}, running:\n\
                 {dictum} ctl toggle\n"
            ),
            gnome: None,
            notes: vec![
                "Dictum does not edit KDE's shortcut files: the GlobalShortcuts portal is the supported way there.".into(),
                toggle_note("KDE"),
            ],
        },
        Desktop::Other => Binding {
            desktop,
            chord: c,
            trigger: Trigger::Toggle,
            text: format!(
                "# Bind {human} in your desktop's keyboard settings to run:\n\
                 {dictum} ctl toggle\n\
                 # If it can also run a command when the key is released, hold-to-talk instead:\n\
                 #   key down: {dictum} ctl press\n\
                 #   key up:   {dictum} ctl release\n"
            ),
            gnome: None,
            notes: vec![
                "Dictum does not know this desktop's shortcut settings (XDG_CURRENT_DESKTOP names none of sway, Hyprland, GNOME, KDE); add the lines above by hand, or pass --desktop.".into(),
            ],
        },
    })
}

/// GVariant text of a string: `'it''s'` is written `'it\'s'`.
pub fn gvariant_string(s: &str) -> String {
    format!("'{}'", s.replace('\\', r"\\").replace('\'', r"\'"))
}

/// GVariant text of a string array: `['/a/', '/b/']`, `@as []` when empty.
pub fn gvariant_strv(items: &[String]) -> String {
    if items.is_empty() {
        return "@as []".into();
    }
    let inner: Vec<String> = items.iter().map(|s| gvariant_string(s)).collect();
    format!("[{}]", inner.join(", "))
}

/// Parses what `gsettings get` prints for a string (`'x'`, `"x"`) or string array
/// (`['a', 'b']`, `@as []`).
pub fn parse_gvariant_strv(text: &str) -> Result<Vec<String>, String> {
    let t = text.trim();
    let t = t.strip_prefix("@as").map(str::trim_start).unwrap_or(t);
    let inner = t
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| format!("not a string list: {text:?}"))?;
    let mut out = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let Some(quote) = chars.next() else {
            return Ok(out);
        };
        if quote != '\'' && quote != '"' {
            return Err(format!("not a string list: {text:?}"));
        }
        let mut s = String::new();
        loop {
            match chars.next() {
                None => return Err(format!("unterminated string in {text:?}")),
                Some('\\') => match chars.next() {
                    Some(c) => s.push(c),
                    None => return Err(format!("unterminated string in {text:?}")),
                },
                Some(c) if c == quote => break,
                Some(c) => s.push(c),
            }
        }
        out.push(s);
    }
}

/// Parses what `gsettings get` prints for a string.
pub fn parse_gvariant_string(text: &str) -> Result<String, String> {
    let mut v = parse_gvariant_strv(&format!("[{}]", text.trim()))?;
    match (v.pop(), v.is_empty()) {
        (Some(s), true) => Ok(s),
        _ => Err(format!("not a string: {text:?}")),
    }
}

/// `s` double-quoted for a POSIX shell.
fn shell_double(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Does the config argument `pattern` (an `include` or `source` path, with `~`, `$HOME`,
/// `$XDG_CONFIG_HOME` and `*`/`?` in the file name allowed) name `target`?
pub fn pattern_covers(pattern: &str, target: &Path, home: &Path, config_home: &Path) -> bool {
    let p = pattern.trim().trim_matches(|c| c == '"' || c == '\'');
    let home_s = home.to_string_lossy();
    let cfg_s = config_home.to_string_lossy();
    let expanded = if let Some(rest) = p.strip_prefix("~/") {
        format!("{home_s}/{rest}")
    } else {
        p.replace("${XDG_CONFIG_HOME}", &cfg_s)
            .replace("$XDG_CONFIG_HOME", &cfg_s)
            .replace("${HOME}", &home_s)
            .replace("$HOME", &home_s)
    };
    let pat = Path::new(&expanded);
    let (Some(pat_dir), Some(pat_name)) = (pat.parent(), pat.file_name()) else {
        return false;
    };
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return false;
    };
    let clean = |p: &Path| p.components().collect::<std::path::PathBuf>();
    clean(pat_dir) == clean(dir) && glob_match(&pat_name.to_string_lossy(), &name.to_string_lossy())
}

/// `*` and `?` only.
fn glob_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

#[cfg(test)]
mod tests;
