#!/usr/bin/env python3
"""Owns the clipboard with an image and HTML, as a browser's "Copy image" does.

A GTK 4 process offers --png-kib of a real PNG image (image/png) and --html-kib of HTML
(text/html) together, writes the exact bytes it serves to OUT/clip.png and OUT/clip.html,
prints `ready`, and serves them until killed.  On X11 (no window) values above a quarter
MiB go by INCR (GTK's own limit), so a large one tests the INCR side of the reader.  On
Wayland (--window) the compositor takes a selection only with the serial of an input event
the client got, so it opens a small window, prints `focused` once that window has the
keyboard focus, and claims the clipboard at the first key pressed in it (then prints
`ready`); it keeps the clipboard after losing the focus.  Used by
crates/dictum-engine/tests/inject_x11.rs and inject_wayland.rs (paste mode keeps every
clipboard type).

Usage: GDK_BACKEND=x11 python3 tests/clipboard_owner.py --out DIR [--png-kib N] [--html-kib N]
       GDK_BACKEND=wayland python3 tests/clipboard_owner.py --window --out DIR [...]
"""

import argparse
import os
import random
import struct
import sys
import zlib

import gi

gi.require_version("Gdk", "4.0")
gi.require_version("Gtk", "4.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


def png(width, height):
    """An RGB PNG of noise-like pixels (compresses poorly, so its size follows its area)."""
    noise = random.Random(41)
    rows = [b"\x00" + noise.randbytes(width * 3) for _ in range(height)]

    def chunk(kind, data):
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )


def html(kib):
    """At least `kib` KiB: the paragraph repeated (counted, not grown: 600 KiB took 9 s)."""
    head = "<html><body>\n".encode()
    body = "<p>Grüße from the <b>clipboard</b> ✓</p>\n".encode()
    count = max(0, -(-(kib * 1024 - len(head)) // len(body)))
    return head + body * count + "</body></html>\n".encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--png-kib", type=int, default=4)
    ap.add_argument("--html-kib", type=int, default=1)
    ap.add_argument("--window", action="store_true", help="claim from a focused window")
    args = ap.parse_args()

    side = max(8, int((args.png_kib * 1024 / 3) ** 0.5))
    image = png(side, side)
    page = html(args.html_kib)
    with open(os.path.join(args.out, "clip.png"), "wb") as f:
        f.write(image)
    with open(os.path.join(args.out, "clip.html"), "wb") as f:
        f.write(page)

    GLib.set_prgname("dictumclipowner")
    Gtk.init()
    display = Gdk.Display.get_default()
    if display is None:
        print("no display (DISPLAY or WAYLAND_DISPLAY, and GDK_BACKEND?)", file=sys.stderr)
        return 1
    provider = Gdk.ContentProvider.new_union(
        [
            Gdk.ContentProvider.new_for_bytes("image/png", GLib.Bytes.new(image)),
            Gdk.ContentProvider.new_for_bytes("text/html", GLib.Bytes.new(page)),
        ]
    )
    clipboard = display.get_clipboard()
    loop = GLib.MainLoop()

    def announce():
        print("ready", flush=True)
        return False

    def claim():
        clipboard.set_content(provider)
        # Once the main loop runs again: GTK claims the selection from it.
        GLib.idle_add(announce)
        return False

    if not args.window:
        claim()
        loop.run()
        return 0

    # GTK claims with the serial of the last key event it got (0 before any: refused), so
    # it claims at the first key pressed in its window; it says `focused` when one may be.
    window = Gtk.Window(title="dictumclipowner")
    window.set_default_size(200, 100)
    said = []

    def on_active(win, _param):
        if win.is_active() and not said:
            said.append(True)
            print("focused", flush=True)

    claimed = []

    def on_key(_controller, _keyval, _keycode, _state):
        if not claimed:
            claimed.append(True)
            claim()
        return True

    keys = Gtk.EventControllerKey()
    keys.connect("key-pressed", on_key)
    window.add_controller(keys)
    window.connect("notify::is-active", on_active)
    window.present()
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
