#!/usr/bin/env python3
"""A GTK 4 text box for the live edit-mode test (crates/dictum-cli/tests/live_edit.rs).

A real GtkTextView (GTK 4: its buffer has undo, so Ctrl+Z works as in any GTK 4 editor) in a
window titled --title, holding --text.  With --select the whole text is selected once the
window has the focus (a real selection: GTK offers it as the X11 PRIMARY selection).  Every
change of the buffer is written whole to --out (replaced atomically), so the test reads what
the box holds.  Prints `ready` on stdout once the text is selected and written.

Usage: GDK_BACKEND=x11 python3 tests/gtk_textbox.py --text T --out FILE [--select] [--title T]
"""

import argparse
import os
import sys

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import GLib, Gtk  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--text", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--select", action="store_true")
    ap.add_argument("--title", default="Dictum edit test")
    args = ap.parse_args()

    def write(buf):
        start, end = buf.get_bounds()
        text = buf.get_text(start, end, True)
        tmp = args.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.out)

    app = Gtk.Application(application_id=None)

    def activate(app):
        win = Gtk.ApplicationWindow(application=app, title=args.title)
        win.set_default_size(600, 200)
        view = Gtk.TextView()
        buf = view.get_buffer()
        buf.begin_irreversible_action()
        buf.set_text(args.text)
        buf.end_irreversible_action()
        buf.connect("changed", write)
        win.set_child(view)
        win.present()
        view.grab_focus()
        write(buf)

        def select():
            if args.select:
                start, end = buf.get_bounds()
                buf.select_range(start, end)
            print("ready", flush=True)
            return False

        GLib.timeout_add(500, select)

    app.connect("activate", activate)
    app.run([sys.argv[0]])


if __name__ == "__main__":
    main()
