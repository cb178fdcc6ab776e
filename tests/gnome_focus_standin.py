#!/usr/bin/python3
"""STAND-IN for GNOME Shell's focused-window extensions, for tests only.

Not GNOME Shell: a faithful stand-in written from the published sources of two extensions
that tell the focused window over D-Bus, owning `org.gnome.Shell` on a private bus:
- "Focused Window D-Bus" (focused-window-dbus@flexagoon.com): object
  /org/gnome/shell/extensions/FocusedWindow, interface
  org.gnome.shell.extensions.FocusedWindow, method Get() -> s (a JSON object with title,
  wm_class, wm_class_instance, pid, id, focus...; "{}" when nothing is focused);
- "Window Calls" (window-calls@domandoman.xyz): object /org/gnome/Shell/Extensions/Windows,
  interface org.gnome.Shell.Extensions.Windows, method List() -> s (a JSON array of windows
  with wm_class, wm_class_instance, title, focus...).

Usage: DBUS_SESSION_BUS_ADDRESS=... gnome_focus_standin.py focused-window|window-calls
Prints "ready" once the name is owned.
"""

import asyncio
import json
import sys

from dbus_next.aio import MessageBus
from dbus_next.service import ServiceInterface, method

MAIL = {"title": "Inbox — Mail", "wm_class": "org.gnome.Evolution",
        "wm_class_instance": "evolution", "pid": 4242, "id": 7, "focus": True}
TERM = {"title": "~ — bash", "wm_class": "org.gnome.Terminal",
        "wm_class_instance": "gnome-terminal-server", "pid": 4243, "id": 8, "focus": False}


class FocusedWindow(ServiceInterface):
    def __init__(self):
        super().__init__("org.gnome.shell.extensions.FocusedWindow")

    @method()
    def Get(self) -> "s":
        return json.dumps(MAIL)


class Windows(ServiceInterface):
    def __init__(self):
        super().__init__("org.gnome.Shell.Extensions.Windows")

    @method()
    def List(self) -> "s":
        return json.dumps([TERM, MAIL])


async def main():
    bus = await MessageBus().connect()
    if sys.argv[1] == "focused-window":
        bus.export("/org/gnome/shell/extensions/FocusedWindow", FocusedWindow())
    else:
        bus.export("/org/gnome/Shell/Extensions/Windows", Windows())
    await bus.request_name("org.gnome.Shell")
    print("ready", flush=True)
    await asyncio.get_running_loop().create_future()


asyncio.run(main())
