#!/usr/bin/env python3
"""A GTK 4 field with the caret in the middle of its text, for the AT-SPI reader's test
(crates/dictum-engine/tests/atspi_caret.rs).

--mode entry     a GtkEntry holding --text, the caret after the first --caret characters;
--mode view      the same in a GtkTextView (a multi-line text);
--mode password  a GtkPasswordEntry holding --text (the secret that must never be read).

GTK 4 talks AT-SPI by default (GTK_A11Y unset) on the accessibility bus of the session bus in
DBUS_SESSION_BUS_ADDRESS.  --name sets the program name, which GTK gives AT-SPI as the
application's name and X11 as the window class (the opt-out case).  Prints `shown` once the
window is mapped (no window manager: the test then moves the pointer into it, which gives it
the focus) and `ready pid=N` once the window is active, the field has the keyboard focus and
the caret is in place; then `text=<JSON string>` at every change of the text.

Usage: GDK_BACKEND=x11 python3 tests/gtk_caret_box.py --mode entry --text T --caret N [--name N]
"""

import argparse
import json
import os
import sys

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import GLib, Gtk  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["entry", "view", "password"], default="entry")
    ap.add_argument("--text", required=True)
    ap.add_argument("--caret", type=int, default=0)
    ap.add_argument("--name", default=None)
    ap.add_argument("--title", default="Dictum caret test")
    args = ap.parse_args()
    if args.name:
        GLib.set_prgname(args.name)
        GLib.set_application_name(args.name)

    app = Gtk.Application(application_id=None)

    def activate(app):
        win = Gtk.ApplicationWindow(application=app, title=args.title)
        win.set_default_size(600, 200)
        if args.mode == "view":
            field = Gtk.TextView()
            field.get_buffer().set_text(args.text)
        elif args.mode == "password":
            field = Gtk.PasswordEntry()
            field.set_text(args.text)
        else:
            field = Gtk.Entry()
            field.set_text(args.text)
        win.set_child(field)

        # Every change of the text, as one JSON line `text=...` (the dictation tests read what
        # arrived in the field from these).
        def report(*_):
            if args.mode == "view":
                buf = field.get_buffer()
                now = buf.get_text(buf.get_start_iter(), buf.get_end_iter(), True)
            else:
                now = field.get_text()
            print("text=" + json.dumps(now), flush=True)

        if args.mode == "view":
            field.get_buffer().connect("changed", report)
        else:
            field.connect("changed", report)
        win.present()
        field.grab_focus()
        print("shown", flush=True)
        state = {"placed": 0}

        def place_caret():
            if args.mode == "view":
                buf = field.get_buffer()
                buf.place_cursor(buf.get_iter_at_offset(args.caret))
            elif args.mode == "entry":
                field.select_region(args.caret, args.caret)
                field.set_position(args.caret)

        def poll():
            focus = win.get_focus()
            inside = focus is not None and (focus == field or focus.is_ancestor(field))
            if not (win.is_active() and inside):
                return True
            # Focus-in selects the whole entry: place the caret after it, twice, a moment
            # apart, so the accessible caret offset has caught up when `ready` is printed.
            place_caret()
            state["placed"] += 1
            if state["placed"] < 3:
                return True
            print(f"ready pid={os.getpid()}", flush=True)
            return False

        GLib.timeout_add(100, poll)

    app.connect("activate", activate)
    app.run([sys.argv[0]])


if __name__ == "__main__":
    main()
