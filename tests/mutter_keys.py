#!/usr/bin/python3
"""Plays the user at the keyboard of a headless mutter: presses keys through mutter's own
org.gnome.Mutter.RemoteDesktop D-Bus API (what gnome-remote-desktop uses) on the session bus
in DBUS_SESSION_BUS_ADDRESS. The GNOME portal test uses it to answer xdg-desktop-portal-gnome's
consent dialog (Tab to the "Allow remote interaction" switch, Space, Alt+S for Share), as a
user would.

Usage: mutter_keys.py KEY...   KEY: Tab, space, Return, Escape, Shift_L, a letter, or a chord
such as alt+s; "pause" waits 300 ms.
"""

import sys
import time

from gi.repository import Gio, GLib

NAMES = {
    "Tab": 0xFF09,
    "Return": 0xFF0D,
    "Escape": 0xFF1B,
    "space": 0x20,
    "Shift_L": 0xFFE1,
    "alt": 0xFFE9,
    "ctrl": 0xFFE3,
    "shift": 0xFFE1,
}
DEST = "org.gnome.Mutter.RemoteDesktop"
SESSION = "org.gnome.Mutter.RemoteDesktop.Session"


def keysym(name):
    if name in NAMES:
        return NAMES[name]
    if len(name) == 1:
        return ord(name)
    raise SystemExit(f"mutter_keys.py: unknown key {name!r}")


def main():
    bus = Gio.bus_get_sync(Gio.BusType.SESSION)
    (path,) = bus.call_sync(
        DEST, "/org/gnome/Mutter/RemoteDesktop", DEST, "CreateSession",
        None, GLib.VariantType("(o)"), 0, 5000, None,
    ).unpack()
    bus.call_sync(DEST, path, SESSION, "Start", None, None, 0, 5000, None)

    def key(sym, pressed):
        bus.call_sync(
            DEST, path, SESSION, "NotifyKeyboardKeysym",
            GLib.Variant("(ub)", (sym, pressed)), None, 0, 5000, None,
        )

    # mutter drops the first key of a new virtual device: a lone Shift goes first.
    key(NAMES["Shift_L"], True)
    key(NAMES["Shift_L"], False)
    time.sleep(0.3)
    for arg in sys.argv[1:]:
        if arg == "pause":
            time.sleep(0.3)
            continue
        syms = [keysym(part) for part in arg.split("+")]
        for s in syms:
            key(s, True)
        for s in reversed(syms):
            key(s, False)
        time.sleep(0.15)
    time.sleep(0.5)  # handled before the virtual device goes away
    bus.call_sync(DEST, path, SESSION, "Stop", None, None, 0, 5000, None)


main()
