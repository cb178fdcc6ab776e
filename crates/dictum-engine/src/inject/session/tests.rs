use super::*;

fn session(vars: &[(&str, &str)]) -> Session {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Session::from_env(|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
}

#[test]
fn session_kind_comes_from_wayland_first() {
    let s = session(&[("DISPLAY", ":0"), ("WAYLAND_DISPLAY", "wayland-1")]);
    assert_eq!(s.kind, SessionKind::Wayland);
    assert!(s.x_display && s.wayland_display);
    let s = session(&[("DISPLAY", ":0"), ("XDG_SESSION_TYPE", "wayland")]);
    assert_eq!(
        s.kind,
        SessionKind::Wayland,
        "a unit without WAYLAND_DISPLAY"
    );
    let s = session(&[("DISPLAY", ":0"), ("XDG_SESSION_TYPE", "x11")]);
    assert_eq!(s.kind, SessionKind::X11);
    let s = session(&[("DISPLAY", ":1")]);
    assert_eq!(s.kind, SessionKind::X11);
    let s = session(&[("DISPLAY", ""), ("WAYLAND_DISPLAY", " ")]);
    assert_eq!(s.kind, SessionKind::None);
    let s = session(&[("XDG_SESSION_TYPE", "tty")]);
    assert_eq!(s.kind, SessionKind::None);
}

#[test]
fn desktops_are_recognised() {
    let d = |vars: &[(&str, &str)]| session(vars).desktop;
    assert_eq!(
        d(&[("XDG_CURRENT_DESKTOP", "ubuntu:GNOME")]),
        Desktop::Gnome
    );
    assert_eq!(d(&[("XDG_CURRENT_DESKTOP", "KDE")]), Desktop::Kde);
    assert_eq!(d(&[("XDG_CURRENT_DESKTOP", "sway")]), Desktop::Sway);
    assert_eq!(
        d(&[("SWAYSOCK", "/run/user/1000/sway-ipc.sock")]),
        Desktop::Sway
    );
    assert_eq!(
        d(&[
            ("HYPRLAND_INSTANCE_SIGNATURE", "abc"),
            ("XDG_CURRENT_DESKTOP", "x")
        ]),
        Desktop::Hyprland
    );
    assert_eq!(
        d(&[("XDG_CURRENT_DESKTOP", "river")]),
        Desktop::Other("river".into())
    );
    assert_eq!(d(&[]), Desktop::Unknown);
}

const ALL_DESKTOPS: [&str; 5] = ["GNOME", "KDE", "sway", "Hyprland", "river"];

/// Every combination of session type, desktop, focused window kind and tool
/// availability: the route is what the table in the module docs says, and never an X11
/// path for a window that may be native on a Wayland session.
#[test]
fn decision_table_every_combination() {
    let focuses = [Focus::Native, Focus::XWayland, Focus::X11, Focus::Unknown];
    let mut cases = 0;
    for kind in ["x11", "wayland", "none"] {
        for xwayland in [false, true] {
            for desktop in ALL_DESKTOPS {
                for bits in 0u32..512 {
                    let ab = Abilities {
                        x11: bits & 1 != 0,
                        virtual_keyboard: bits & 2 != 0,
                        data_control: bits & 4 != 0,
                        remote_desktop: bits & 8 != 0,
                        global_shortcuts: bits & 16 != 0,
                        wtype: bits & 32 != 0,
                        ydotool: bits & 64 != 0,
                        wl_clipboard: bits & 128 != 0,
                        uinput: bits & 256 != 0,
                    };
                    let mut vars = vec![("XDG_CURRENT_DESKTOP", desktop)];
                    match kind {
                        "x11" => vars.push(("DISPLAY", ":0")),
                        "wayland" => {
                            vars.push(("WAYLAND_DISPLAY", "wayland-1"));
                            if xwayland {
                                vars.push(("DISPLAY", ":0"));
                            }
                        }
                        _ => {}
                    }
                    let s = session(&vars);
                    for focus in focuses {
                        for method in [InjectMethod::Type, InjectMethod::Paste] {
                            cases += 1;
                            check_case(&s, focus, &ab, method);
                        }
                    }
                }
            }
        }
    }
    assert!(cases > 80_000, "{cases}");
}

fn check_case(s: &Session, focus: Focus, ab: &Abilities, method: InjectMethod) {
    let got = route(s, focus, ab, method, InjectBackend::Auto);
    let ctx = format!("{s:?} {focus:?} {ab:?} {method:?} -> {got:?}");
    let expected_typing = match s.kind {
        SessionKind::None => None,
        SessionKind::X11 => Some(TypePath::X11),
        SessionKind::Wayland => {
            if focus == Focus::XWayland && ab.x11 {
                Some(TypePath::X11)
            } else if ab.virtual_keyboard {
                Some(TypePath::VirtualKeyboard)
            } else if ab.remote_desktop {
                Some(TypePath::Portal)
            } else if ab.uinput {
                // wtype needs the virtual-keyboard protocol, which came first.
                Some(TypePath::Uinput)
            } else if ab.ydotool {
                Some(TypePath::Ydotool)
            } else {
                None
            }
        }
    };
    let expected_clip = expected_typing.and_then(|t| {
        if t == TypePath::X11 {
            Some(ClipPath::X11)
        } else if ab.data_control {
            Some(ClipPath::DataControl)
        } else if ab.wl_clipboard {
            Some(ClipPath::WlCopy)
        } else {
            None
        }
    });
    match (expected_typing, got) {
        (None, Ok(_)) => panic!("expected no route: {ctx}"),
        (None, Err(e)) => assert!(!e.is_empty(), "{ctx}"),
        (Some(_), Err(e)) => {
            assert!(
                method == InjectMethod::Paste && expected_clip.is_none(),
                "unexpected error {e}: {ctx}"
            );
            assert!(e.contains("wl-clipboard"), "{ctx}");
        }
        (Some(t), Ok(r)) => {
            assert_eq!(r.typing, t, "{ctx}");
            assert_eq!(r.clipboard, expected_clip, "{ctx}");
            if method == InjectMethod::Paste {
                assert!(r.clipboard.is_some(), "{ctx}");
            }
            // The bug this table exists for: on Wayland, X11 only for a known XWayland window.
            if s.kind == SessionKind::Wayland && r.typing == TypePath::X11 {
                assert_eq!(focus, Focus::XWayland, "{ctx}");
            }
        }
    }
}

#[test]
fn wayland_with_xwayland_and_a_native_window_never_uses_x11() {
    let s = session(&[
        ("DISPLAY", ":0"),
        ("WAYLAND_DISPLAY", "wayland-1"),
        ("XDG_CURRENT_DESKTOP", "sway"),
    ]);
    let ab = Abilities {
        x11: true,
        virtual_keyboard: true,
        data_control: true,
        ..Abilities::default()
    };
    for focus in [Focus::Native, Focus::Unknown] {
        let r = route(&s, focus, &ab, InjectMethod::Type, InjectBackend::Auto);
        assert_eq!(r.map(|r| r.typing), Ok(TypePath::VirtualKeyboard));
    }
    let r = route(
        &s,
        Focus::XWayland,
        &ab,
        InjectMethod::Paste,
        InjectBackend::Auto,
    );
    assert_eq!(
        r,
        Ok(Route {
            typing: TypePath::X11,
            clipboard: Some(ClipPath::X11)
        })
    );
    // Only X11 can type (no virtual keyboard, portal or tools): refused, with the fix.
    let only_x = Abilities {
        x11: true,
        ..Abilities::default()
    };
    let e = route(
        &s,
        Focus::Unknown,
        &only_x,
        InjectMethod::Type,
        InjectBackend::Auto,
    )
    .expect_err("no native path");
    assert!(e.contains("/dev/uinput") && e.contains("clipboard"), "{e}");
}

#[test]
fn gnome_uses_the_portal_and_says_how_to_get_it() {
    let s = session(&[
        ("WAYLAND_DISPLAY", "wayland-0"),
        ("XDG_CURRENT_DESKTOP", "GNOME"),
    ]);
    let ab = Abilities {
        remote_desktop: true,
        wl_clipboard: true,
        ..Abilities::default()
    };
    assert_eq!(
        route(
            &s,
            Focus::Unknown,
            &ab,
            InjectMethod::Paste,
            InjectBackend::Auto
        ),
        Ok(Route {
            typing: TypePath::Portal,
            clipboard: Some(ClipPath::WlCopy)
        })
    );
    let e = route(
        &s,
        Focus::Unknown,
        &Abilities::default(),
        InjectMethod::Type,
        InjectBackend::Auto,
    )
    .expect_err("nothing");
    assert!(e.contains("xdg-desktop-portal-gnome"), "{e}");
    let s = session(&[
        ("WAYLAND_DISPLAY", "wayland-0"),
        ("XDG_CURRENT_DESKTOP", "KDE"),
    ]);
    let e = route(
        &s,
        Focus::Unknown,
        &Abilities::default(),
        InjectMethod::Type,
        InjectBackend::Auto,
    )
    .expect_err("nothing");
    assert!(e.contains("xdg-desktop-portal-kde"), "{e}");
}

#[test]
fn a_forced_backend_is_used_or_refused_with_the_reason() {
    let s = session(&[("WAYLAND_DISPLAY", "wayland-1"), ("DISPLAY", ":0")]);
    let ab = Abilities {
        x11: true,
        virtual_keyboard: true,
        remote_desktop: true,
        wtype: true,
        ..Abilities::default()
    };
    let typing =
        |forced| route(&s, Focus::Native, &ab, InjectMethod::Type, forced).map(|r| r.typing);
    assert_eq!(typing(InjectBackend::Portal), Ok(TypePath::Portal));
    assert_eq!(typing(InjectBackend::Wtype), Ok(TypePath::Wtype));
    assert_eq!(typing(InjectBackend::X11), Ok(TypePath::X11));
    let e = typing(InjectBackend::Ydotool).expect_err("no ydotool");
    assert!(e.contains("\"ydotool\"") && e.contains("auto"), "{e}");
    let x = session(&[("DISPLAY", ":0")]);
    let e = route(
        &x,
        Focus::X11,
        &ab,
        InjectMethod::Type,
        InjectBackend::VirtualKeyboard,
    )
    .expect_err("X11 session");
    assert!(e.contains("X11"), "{e}");
}

/// The uinput keyboard is the last resort before ydotool: after every protocol path
/// (and wtype), ahead of ydotool, which types US key codes whatever the layout.
#[test]
fn uinput_comes_after_the_protocols_and_before_ydotool() {
    let s = session(&[
        ("WAYLAND_DISPLAY", "wayland-0"),
        ("XDG_CURRENT_DESKTOP", "river"),
    ]);
    let typing = |ab: Abilities, forced| {
        route(&s, Focus::Unknown, &ab, InjectMethod::Type, forced).map(|r| r.typing)
    };
    let last = Abilities {
        uinput: true,
        ydotool: true,
        wtype: true, // without the virtual-keyboard protocol wtype cannot work
        ..Abilities::default()
    };
    assert_eq!(typing(last, InjectBackend::Auto), Ok(TypePath::Uinput));
    let with_portal = Abilities {
        remote_desktop: true,
        ..last
    };
    assert_eq!(
        typing(with_portal, InjectBackend::Auto),
        Ok(TypePath::Portal)
    );
    let with_wtype = Abilities {
        virtual_keyboard: true,
        ..last
    };
    assert_eq!(
        typing(with_wtype, InjectBackend::Auto),
        Ok(TypePath::VirtualKeyboard)
    );
    assert_eq!(
        typing(with_wtype, InjectBackend::Wtype),
        Ok(TypePath::Wtype)
    );
    assert_eq!(typing(last, InjectBackend::Uinput), Ok(TypePath::Uinput));
    let only_ydotool = Abilities {
        ydotool: true,
        ..Abilities::default()
    };
    assert_eq!(
        typing(only_ydotool, InjectBackend::Auto),
        Ok(TypePath::Ydotool)
    );
    let e = typing(only_ydotool, InjectBackend::Uinput).expect_err("no /dev/uinput");
    assert!(e.contains("\"uinput\""), "{e}");
}

#[test]
fn hotkey_paths() {
    let ab = Abilities {
        x11: true,
        ..Abilities::default()
    };
    let x = session(&[("DISPLAY", ":0")]);
    assert_eq!(hotkey_path(&x, &ab), HotkeyPath::X11Grab);
    let x_dead = hotkey_path(&x, &Abilities::default());
    assert_eq!(x_dead.as_str(), "none");
    let sway = session(&[
        ("WAYLAND_DISPLAY", "wayland-1"),
        ("DISPLAY", ":0"),
        ("XDG_CURRENT_DESKTOP", "sway"),
    ]);
    // XWayland's X server is there, but a grab there only fires in XWayland windows.
    assert_eq!(
        hotkey_path(&sway, &ab),
        HotkeyPath::Compositor { release: true }
    );
    let portal = Abilities {
        global_shortcuts: true,
        ..ab
    };
    assert_eq!(hotkey_path(&sway, &portal), HotkeyPath::Portal);
    let gnome = session(&[
        ("WAYLAND_DISPLAY", "wayland-0"),
        ("XDG_CURRENT_DESKTOP", "GNOME"),
    ]);
    assert_eq!(
        hotkey_path(&gnome, &Abilities::default()),
        HotkeyPath::Compositor { release: false }
    );
    assert_eq!(hotkey_path(&gnome, &portal), HotkeyPath::Portal);
    assert_eq!(
        hotkey_path(&session(&[]), &ab).as_str(),
        "none",
        "no session"
    );
}
