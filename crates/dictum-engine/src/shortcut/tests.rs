use super::*;
use std::path::PathBuf;

fn exe() -> PathBuf {
    PathBuf::from("/opt/dictum/bin/dictum")
}

#[test]
fn detects_the_desktop_from_the_session() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    assert_eq!(
        detect(env(&[("SWAYSOCK", "/run/user/1000/sway-ipc.sock")])),
        Desktop::Sway
    );
    assert_eq!(
        detect(env(&[
            ("HYPRLAND_INSTANCE_SIGNATURE", "abc"),
            ("XDG_CURRENT_DESKTOP", "Hyprland")
        ])),
        Desktop::Hyprland
    );
    assert_eq!(
        detect(env(&[("XDG_CURRENT_DESKTOP", "sway")])),
        Desktop::Sway
    );
    assert_eq!(
        detect(env(&[("XDG_CURRENT_DESKTOP", "ubuntu:GNOME")])),
        Desktop::Gnome
    );
    assert_eq!(
        detect(env(&[("XDG_CURRENT_DESKTOP", "GNOME")])),
        Desktop::Gnome
    );
    assert_eq!(detect(env(&[("XDG_CURRENT_DESKTOP", "KDE")])), Desktop::Kde);
    assert_eq!(
        detect(env(&[("XDG_CURRENT_DESKTOP", "XFCE")])),
        Desktop::Other
    );
    assert_eq!(detect(env(&[("SWAYSOCK", "")])), Desktop::Other);
    assert_eq!(detect(env(&[])), Desktop::Other);
    assert_eq!(Desktop::parse("Hyprland"), Ok(Desktop::Hyprland));
    assert!(Desktop::parse("weston")
        .unwrap_err()
        .contains("sway, hyprland"));
}

/// spec → (sway, Hyprland, GNOME) forms.
#[test]
fn chords_in_every_desktops_syntax() {
    let table = [
        (
            "ctrl+alt+space",
            "Ctrl+Mod1+space",
            "CTRL ALT, space",
            "<Control><Alt>space",
            "Ctrl+Alt+Space",
        ),
        (
            "super+shift+d",
            "Mod4+Shift+d",
            "SUPER SHIFT, d",
            "<Super><Shift>d",
            "Super+Shift+D",
        ),
        ("SUPER+D", "Mod4+d", "SUPER, d", "<Super>d", "Super+D"),
        ("f9", "F9", ", F9", "F9", "F9"),
        (
            "shift+f12",
            "Shift+F12",
            "SHIFT, F12",
            "<Shift>F12",
            "Shift+F12",
        ),
        (
            "ctrl+f24",
            "Ctrl+F24",
            "CTRL, F24",
            "<Control>F24",
            "Ctrl+F24",
        ),
        ("alt+1", "Mod1+1", "ALT, 1", "<Alt>1", "Alt+1"),
        (
            "ctrl+alt+enter",
            "Ctrl+Mod1+Return",
            "CTRL ALT, Return",
            "<Control><Alt>Return",
            "Ctrl+Alt+Return",
        ),
        (
            "ctrl+shift+slash",
            "Ctrl+Shift+slash",
            "CTRL SHIFT, slash",
            "<Control><Shift>slash",
            "Ctrl+Shift+Slash",
        ),
        (
            "ctrl+alt+shift+super+x",
            "Mod4+Ctrl+Mod1+Shift+x",
            "SUPER CTRL ALT SHIFT, x",
            "<Super><Control><Alt><Shift>x",
            "Super+Ctrl+Alt+Shift+X",
        ),
        ("pause", "Pause", ", Pause", "Pause", "Pause"),
        (
            "mediaplaypause",
            "XF86AudioPlay",
            ", XF86AudioPlay",
            "XF86AudioPlay",
            "XF86AudioPlay",
        ),
        (
            "ctrl+numpad5",
            "Ctrl+KP_5",
            "CTRL, KP_5",
            "<Control>KP_5",
            "Ctrl+KP_5",
        ),
        (
            "super+pageup",
            "Mod4+Page_Up",
            "SUPER, Page_Up",
            "<Super>Page_Up",
            "Super+Page_Up",
        ),
    ];
    for (spec, sway, hypr, gtk, human) in table {
        let c = chord(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(c.sway(), sway, "{spec}");
        assert_eq!(c.hyprland(), hypr, "{spec}");
        assert_eq!(c.gtk(), gtk, "{spec}");
        assert_eq!(c.human(), human, "{spec}");
    }
}

#[test]
fn refuses_what_no_desktop_should_bind() {
    for (spec, why) in [
        ("a", "take that key away"),
        ("space", "take that key away"),
        ("shift+a", "take that key away"),
        ("shift+space", "take that key away"),
        ("enter", "take that key away"),
        ("escape", "take that key away"),
        ("down", "take that key away"),
        ("numpad1", "take that key away"),
        ("capslock", "changes the keyboard's state"),
        ("ctrl+numlock", "changes the keyboard's state"),
        ("ctrl+alt", "ends with a modifier"),
        ("ctrl+alt+banana", "is not a hotkey"),
        ("", "empty hotkey"),
    ] {
        let err = chord(spec).expect_err(spec);
        assert!(err.contains(why), "{spec}: {err}");
        for desktop in [
            Desktop::Sway,
            Desktop::Hyprland,
            Desktop::Gnome,
            Desktop::Kde,
            Desktop::Other,
        ] {
            assert_eq!(binding(desktop, spec, &exe()).err(), Some(err.clone()));
        }
    }
    // Bare keys nobody types with are fine.
    for spec in [
        "f1",
        "f13",
        "pause",
        "printscreen",
        "insert",
        "scrolllock",
        "volumeup",
    ] {
        assert!(chord(spec).is_ok(), "{spec}");
    }
}

#[test]
fn every_key_the_parser_accepts_has_a_keysym() {
    let keys = "` \\ [ ] pause , 0 1 2 3 4 5 6 7 8 9 = a b c d e f g h i j k l m n o p q r s t u v w x y z - . ' ; / backspace capslock enter space tab delete end home insert pagedown pageup printscreen scrolllock down left right up numlock num0 num9 numadd numdecimal numdivide numenter numequal nummultiply numsubtract escape f1 f12 f13 f24 volumedown volumeup volumemute mediaplay mediapause mediaplaypause mediastop mediatracknext mediatrackprev";
    for key in keys.split(' ') {
        let spec = format!("ctrl+{key}");
        let hk = crate::hotkey::parse(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert!(keysym(hk.key).is_some(), "{spec}");
    }
}

#[test]
fn sway_lines_press_and_release_with_the_absolute_path() {
    let b = binding(Desktop::Sway, "ctrl+alt+space", &exe()).expect("binding");
    assert_eq!(b.trigger, Trigger::PushToTalk);
    let lines: Vec<&str> = b.text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [
            "bindsym --no-repeat Ctrl+Mod1+space exec /opt/dictum/bin/dictum ctl press",
            "bindsym --release Ctrl+Mod1+space exec /opt/dictum/bin/dictum ctl release",
        ]
    );
    assert!(b.text.contains("hold Ctrl+Alt+Space"), "{}", b.text);
    assert!(b.text.contains("hotkey = \"ctrl+alt+space\""), "{}", b.text);
}

#[test]
fn hyprland_lines_bind_and_bindr() {
    let b = binding(Desktop::Hyprland, "super+f9", &exe()).expect("binding");
    let lines: Vec<&str> = b.text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [
            "bind = SUPER, F9, exec, /opt/dictum/bin/dictum ctl press",
            "bindr = SUPER, F9, exec, /opt/dictum/bin/dictum ctl release",
        ]
    );
    let b = binding(Desktop::Hyprland, "f9", &exe()).expect("binding");
    assert!(b.text.contains("\nbind = , F9, exec, "), "{}", b.text);
}

#[test]
fn gnome_is_a_toggle_keybinding_and_says_why() {
    let b = binding(Desktop::Gnome, "ctrl+alt+space", &exe()).expect("binding");
    assert_eq!(b.trigger, Trigger::Toggle);
    assert_eq!(
        b.gnome,
        Some(GnomeKeybinding {
            name: "Dictum dictation".into(),
            command: "/opt/dictum/bin/dictum ctl toggle".into(),
            binding: "<Control><Alt>space".into(),
        })
    );
    assert!(b.notes[0].contains("toggles"), "{:?}", b.notes);
    assert!(
        b.text.contains(
            "gsettings set org.gnome.settings-daemon.plugins.media-keys.custom-keybinding:/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/dictum/ binding \"'<Control><Alt>space'\"\n"
        ),
        "{}",
        b.text
    );
    assert!(
        b.text
            .contains(" command \"'/opt/dictum/bin/dictum ctl toggle'\"\n"),
        "{}",
        b.text
    );
}

#[test]
fn kde_and_other_print_toggle_commands() {
    for d in [Desktop::Kde, Desktop::Other] {
        let b = binding(d, "super+shift+d", &exe()).expect("binding");
        assert!(
            b.text.contains("\n/opt/dictum/bin/dictum ctl toggle\n"),
            "{}",
            b.text
        );
        assert!(b.text.contains("Super+Shift+D"), "{}", b.text);
        assert!(b.gnome.is_none());
    }
    let kde = binding(Desktop::Kde, "ctrl+alt+space", &exe()).expect("binding");
    assert!(kde.text.contains("GlobalShortcuts portal"), "{}", kde.text);
}

#[test]
fn paths_with_spaces_are_quoted_for_the_shell() {
    assert_eq!(shell_word(Path::new("/usr/bin/dictum")), "/usr/bin/dictum");
    assert_eq!(
        shell_word(Path::new("/home/a b/it's/dictum")),
        r"'/home/a b/it'\''s/dictum'"
    );
    let b = binding(Desktop::Sway, "f9", Path::new("/my apps/dictum")).expect("binding");
    assert!(
        b.text.contains("exec '/my apps/dictum' ctl press"),
        "{}",
        b.text
    );
}

#[test]
fn gvariant_round_trip() {
    assert_eq!(parse_gvariant_strv("@as []"), Ok(vec![]));
    assert_eq!(parse_gvariant_strv("[]\n"), Ok(vec![]));
    let v = vec!["/a/custom0/".to_string(), "it's \\ \"x\"".to_string()];
    assert_eq!(parse_gvariant_strv(&gvariant_strv(&v)), Ok(v.clone()));
    assert_eq!(
        parse_gvariant_strv("['/org/x/custom0/', \"/org/x/custom1/\"]"),
        Ok(vec!["/org/x/custom0/".into(), "/org/x/custom1/".into()])
    );
    assert_eq!(gvariant_strv(&[]), "@as []");
    assert_eq!(
        parse_gvariant_string("'<Control>d'\n"),
        Ok("<Control>d".into())
    );
    assert_eq!(parse_gvariant_string("''"), Ok(String::new()));
    assert!(parse_gvariant_strv("['a'").is_err());
    assert!(parse_gvariant_strv("[a]").is_err());
}

#[test]
fn include_patterns_that_cover_the_file() {
    let home = Path::new("/home/u");
    let cfg = Path::new("/home/u/.config");
    let target = Path::new("/home/u/.config/sway/config.d/dictum.conf");
    for (pattern, covers) in [
        ("/home/u/.config/sway/config.d/dictum.conf", true),
        ("~/.config/sway/config.d/*", true),
        ("$HOME/.config/sway/config.d/*.conf", true),
        ("\"${XDG_CONFIG_HOME}/sway/config.d/dict?m.conf\"", true),
        ("/home/u/.config/sway/config.d/./dictum.conf", true),
        ("/etc/sway/config.d/*", false),
        ("~/.config/sway/config.d/*.sway", false),
        ("~/.config/sway/dictum.conf", false),
    ] {
        assert_eq!(
            pattern_covers(pattern, target, home, cfg),
            covers,
            "{pattern}"
        );
    }
}
