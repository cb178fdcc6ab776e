#!/usr/bin/env python3
"""Owns the X11 CLIPBOARD with an image and HTML, as a browser's "Copy image" does.

A GTK 4 process (no window) offers --png-kib of a real PNG image (image/png) and --html-kib
of HTML (text/html) together, writes the exact bytes it serves to OUT/clip.png and
OUT/clip.html, prints `ready`, and serves them until killed.  Values above a quarter MiB
go by INCR (GTK's own limit), so a large one tests the INCR side of the reader.  Used by
crates/dictum-engine/tests/inject_x11.rs (paste mode keeps every clipboard format).

Usage: GDK_BACKEND=x11 python3 tests/clipboard_owner.py --out DIR [--png-kib N] [--html-kib N]
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
    body = "<p>Grüße from the <b>clipboard</b> ✓</p>\n"
    out = "<html><body>\n"
    while len(out.encode()) < kib * 1024:
        out += body
    return (out + "</body></html>\n").encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--png-kib", type=int, default=4)
    ap.add_argument("--html-kib", type=int, default=1)
    args = ap.parse_args()

    side = max(8, int((args.png_kib * 1024 / 3) ** 0.5))
    image = png(side, side)
    page = html(args.html_kib)
    with open(os.path.join(args.out, "clip.png"), "wb") as f:
        f.write(image)
    with open(os.path.join(args.out, "clip.html"), "wb") as f:
        f.write(page)

    Gtk.init()
    display = Gdk.Display.get_default()
    if display is None:
        print("no display (is DISPLAY set and GDK_BACKEND=x11?)", file=sys.stderr)
        return 1
    provider = Gdk.ContentProvider.new_union(
        [
            Gdk.ContentProvider.new_for_bytes("image/png", GLib.Bytes.new(image)),
            Gdk.ContentProvider.new_for_bytes("text/html", GLib.Bytes.new(page)),
        ]
    )
    clipboard = display.get_clipboard()
    clipboard.set_content(provider)
    loop = GLib.MainLoop()

    def announce():
        print("ready", flush=True)
        return False

    # Once the main loop runs: GTK claims the selection from it.
    GLib.idle_add(announce)
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
