#!/usr/bin/python3
"""A native Wayland window for typing tests: a GTK 3 text view (GDK_BACKEND=wayland) that
writes everything it receives to FILE after each change. Used where foot cannot run (foot 1.13
crashes on outputs without a physical size, like KWin's --virtual output).

Usage: GDK_BACKEND=wayland wayland_textbox.py FILE
"""

import os
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

path = sys.argv[1]


def save(buf):
    text = buf.get_text(buf.get_start_iter(), buf.get_end_iter(), True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


win = Gtk.Window(title="Dictum textbox")
win.set_default_size(600, 300)
view = Gtk.TextView()
view.get_buffer().connect("changed", save)
win.add(view)
win.connect("destroy", Gtk.main_quit)
win.show_all()
view.grab_focus()
save(view.get_buffer())  # the file exists once the window is up
Gtk.main()
