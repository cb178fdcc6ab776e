#!/usr/bin/python3
"""STAND-IN for xdg-desktop-portal (org.freedesktop.portal.Desktop), for tests only.

Not the real portal: a faithful stand-in written from the published D-Bus interface XML of
xdg-desktop-portal (org.freedesktop.portal.RemoteDesktop version 2,
org.freedesktop.portal.GlobalShortcuts version 1, org.freedesktop.portal.Request,
org.freedesktop.portal.Session), used where the real one cannot show what a test needs here:
the restore-token round trip (the real KDE 5.27 portal here is RemoteDesktop version 1, with
no tokens), consent counting, and press/release with timestamps on demand.

Behaviour modelled on the spec:
- Request-returning methods reply with the request handle
  /org/freedesktop/portal/desktop/request/SENDER/TOKEN (SENDER = caller's unique name without
  ':' and with '.' -> '_', TOKEN = the `handle_token` option), then emit that object's
  org.freedesktop.portal.Request.Response (u response, a{sv} results).
- Sessions live at /org/freedesktop/portal/desktop/session/SENDER/TOKEN
  (`session_handle_token`); CreateSession answers `session_handle` as a string, as the spec says.
- RemoteDesktop: SelectDevices(types, persist_mode, restore_token); Start asks the user
  ("consent") unless the restore token is one this portal issued and not yet used; with
  persist_mode 2 it returns a new single-use restore_token. NotifyKeyboardKeysym is refused
  (D-Bus error) on sessions not started or without keyboard access.
- GlobalShortcuts: bindings persist per application (here: per host app, keyed by id) in the
  state file; ListShortcuts returns the persisted ones; BindShortcuts "asks" (counted) for
  shortcuts not yet bound or when the preferred trigger changes, and stores them.
  Activated / Deactivated (o session, s id, t timestamp_ms, a{sv}) are emitted on demand.

Control: stdin lines `press ID` / `release ID` emit the signals to every live session that has
ID bound. Every call and emission is printed on stdout as one JSON object per line; "ready" is
printed once the name is owned.

Usage: DBUS_SESSION_BUS_ADDRESS=... portal_standin.py STATE_FILE
"""

import asyncio
import json
import os
import sys
import time
import uuid

from dbus_next import Message, MessageType, Variant
from dbus_next.aio import MessageBus
from dbus_next.constants import NameFlag, RequestNameReply

PATH = "/org/freedesktop/portal/desktop"
RD = "org.freedesktop.portal.RemoteDesktop"
GS = "org.freedesktop.portal.GlobalShortcuts"
REQUEST = "org.freedesktop.portal.Request"
SESSION = "org.freedesktop.portal.Session"
PROPS = "org.freedesktop.DBus.Properties"
KEYBOARD = 1


def log(**kw):
    kw["t"] = time.monotonic()
    print(json.dumps(kw), flush=True)


class State:
    def __init__(self, path):
        self.path = path
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError):
            d = {}
        self.tokens = d.get("tokens", [])  # valid, unused restore tokens
        self.bindings = d.get("bindings", {})  # id -> {description, trigger_description}
        self.consents = d.get("consents", 0)
        self.bind_asks = d.get("bind_asks", 0)

    def save(self):
        with open(self.path, "w") as f:
            json.dump(
                {
                    "tokens": self.tokens,
                    "bindings": self.bindings,
                    "consents": self.consents,
                    "bind_asks": self.bind_asks,
                },
                f,
            )


class StandIn:
    def __init__(self, bus, state):
        self.bus = bus
        self.state = state
        self.sessions = {}  # path -> dict(kind, sender, ...)

    def sender_part(self, msg):
        return msg.sender.lstrip(":").replace(".", "_")

    def error(self, msg, text, name="org.freedesktop.portal.Error.InvalidArgument"):
        return Message.new_error(msg, name, text)

    def respond_later(self, handle, code, results):
        def emit():
            self.bus.send(
                Message.new_signal(handle, REQUEST, "Response", "ua{sv}", [code, results])
            )

        asyncio.get_event_loop().call_later(0.001, emit)

    def request(self, msg, options, work):
        token = options.get("handle_token", Variant("s", "t%d" % id(msg))).value
        handle = "%s/request/%s/%s" % (PATH, self.sender_part(msg), token)
        code, results = work()
        self.respond_later(handle, code, results)
        return Message.new_method_return(msg, "o", [handle])

    def session_of(self, msg, path, kind):
        s = self.sessions.get(path)
        if s is None or s["kind"] != kind or s["sender"] != msg.sender:
            return None
        return s

    # --- RemoteDesktop -------------------------------------------------------------------

    def rd(self, msg):
        m, b = msg.member, msg.body
        if m == "CreateSession":
            opts = b[0]
            stoken = opts["session_handle_token"].value
            path = "%s/session/%s/%s" % (PATH, self.sender_part(msg), stoken)

            def work():
                self.sessions[path] = {"kind": "rd", "sender": msg.sender, "started": False}
                log(call="rd.CreateSession", session=path)
                return 0, {"session_handle": Variant("s", path)}

            return self.request(msg, opts, work)
        if m == "SelectDevices":
            path, opts = b
            s = self.session_of(msg, path, "rd")
            if s is None:
                return self.error(msg, "no such session")

            def work():
                s["types"] = opts.get("types", Variant("u", 7)).value
                s["persist_mode"] = opts.get("persist_mode", Variant("u", 0)).value
                s["restore_token"] = opts.get("restore_token", Variant("s", "")).value
                log(
                    call="rd.SelectDevices",
                    types=s["types"],
                    persist_mode=s["persist_mode"],
                    restore_token=s["restore_token"],
                )
                return 0, {}

            return self.request(msg, opts, work)
        if m == "Start":
            path, _parent, opts = b
            s = self.session_of(msg, path, "rd")
            if s is None:
                return self.error(msg, "no such session")

            def work():
                token = s.get("restore_token", "")
                restored = token != "" and token in self.state.tokens
                if restored:
                    self.state.tokens.remove(token)  # single use
                else:
                    self.state.consents += 1  # the dialog would be shown; the user allows
                results = {"devices": Variant("u", s.get("types", 7) & 7)}
                new = ""
                if s.get("persist_mode", 0) == 2:
                    new = str(uuid.uuid4())
                    self.state.tokens.append(new)
                    results["restore_token"] = Variant("s", new)
                    results["persist_mode"] = Variant("u", 2)
                s["started"] = True
                self.state.save()
                log(
                    call="rd.Start",
                    restored=restored,
                    consent_asked=not restored,
                    consents=self.state.consents,
                    new_token=new,
                )
                return 0, results

            return self.request(msg, opts, work)
        if m == "NotifyKeyboardKeysym":
            path, _opts, keysym, state = b
            s = self.session_of(msg, path, "rd")
            if s is None or not s["started"] or not (s.get("types", 0) & KEYBOARD):
                return self.error(msg, "session not started with keyboard access",
                                  "org.freedesktop.portal.Error.NotAllowed")
            log(call="rd.NotifyKeyboardKeysym", keysym=keysym, state=state)
            return Message.new_method_return(msg)
        return None

    # --- GlobalShortcuts -----------------------------------------------------------------

    def shortcuts_value(self, ids):
        out = []
        for i in ids:
            bnd = self.state.bindings[i]
            out.append(
                [
                    i,
                    {
                        "description": Variant("s", bnd["description"]),
                        "trigger_description": Variant("s", bnd["trigger_description"]),
                    },
                ]
            )
        return Variant("a(sa{sv})", out)

    def gs(self, msg):
        m, b = msg.member, msg.body
        if m == "CreateSession":
            opts = b[0]
            stoken = opts["session_handle_token"].value
            path = "%s/session/%s/%s" % (PATH, self.sender_part(msg), stoken)
            if path in self.sessions:
                return self.error(msg, "session exists")

            def work():
                self.sessions[path] = {"kind": "gs", "sender": msg.sender, "ids": []}
                log(call="gs.CreateSession", session=path)
                return 0, {"session_handle": Variant("s", path)}

            return self.request(msg, opts, work)
        if m == "ListShortcuts":
            path, opts = b
            s = self.session_of(msg, path, "gs")
            if s is None:
                return self.error(msg, "no such session")

            def work():
                # The portal restores this app's persisted bindings into the session.
                s["ids"] = list(self.state.bindings)
                log(call="gs.ListShortcuts", ids=s["ids"])
                return 0, {"shortcuts": self.shortcuts_value(s["ids"])}

            return self.request(msg, opts, work)
        if m == "BindShortcuts":
            path, shortcuts, _parent, opts = b
            s = self.session_of(msg, path, "gs")
            if s is None:
                return self.error(msg, "no such session")

            def work():
                asked = False
                for sid, info in shortcuts:
                    pref = info.get("preferred_trigger", Variant("s", "")).value
                    desc = info["description"].value
                    old = self.state.bindings.get(sid)
                    if old is None or old.get("preferred") != pref:
                        asked = True
                    self.state.bindings[sid] = {
                        "description": desc,
                        "trigger_description": pref,
                        "preferred": pref,
                    }
                if asked:
                    self.state.bind_asks += 1
                s["ids"] = [sid for sid, _ in shortcuts]
                self.state.save()
                log(
                    call="gs.BindShortcuts",
                    ids=s["ids"],
                    triggers=[i.get("preferred_trigger", Variant("s", "")).value for _, i in shortcuts],
                    asked=asked,
                    bind_asks=self.state.bind_asks,
                )
                return 0, {"shortcuts": self.shortcuts_value(s["ids"])}

            return self.request(msg, opts, work)
        return None

    def emit_shortcut(self, member, sid):
        ts = int(time.monotonic() * 1000)
        n = 0
        for path, s in self.sessions.items():
            if s["kind"] == "gs" and sid in s["ids"]:
                self.bus.send(
                    Message.new_signal(PATH, GS, member, "osta{sv}", [path, sid, ts, {}])
                )
                n += 1
        log(emit=member, id=sid, timestamp=ts, sessions=n)

    # --- plumbing ------------------------------------------------------------------------

    def props(self, msg):
        values = {
            RD: {"version": Variant("u", 2), "AvailableDeviceTypes": Variant("u", 7)},
            GS: {"version": Variant("u", 1)},
        }
        if msg.member == "Get":
            iface, name = msg.body
            v = values.get(iface, {}).get(name)
            if v is None:
                return self.error(msg, "no such property", "org.freedesktop.DBus.Error.InvalidArgs")
            return Message.new_method_return(msg, "v", [v])
        if msg.member == "GetAll":
            return Message.new_method_return(msg, "a{sv}", [values.get(msg.body[0], {})])
        return None

    def handle(self, msg):
        if msg.message_type != MessageType.METHOD_CALL:
            return None
        try:
            if msg.path == PATH and msg.interface == PROPS:
                return self.props(msg)
            if msg.path == PATH and msg.interface == RD:
                return self.rd(msg)
            if msg.path == PATH and msg.interface == GS:
                return self.gs(msg)
            if msg.interface == SESSION and msg.member == "Close" and msg.path in self.sessions:
                s = self.sessions.pop(msg.path)
                log(call="Session.Close", session=msg.path, kind=s["kind"])
                return Message.new_method_return(msg)
        except (KeyError, ValueError, TypeError) as e:
            return self.error(msg, "bad arguments: %r" % (e,))
        return None


async def main():
    state = State(sys.argv[1])
    bus = await MessageBus().connect()
    standin = StandIn(bus, state)
    bus.add_message_handler(standin.handle)
    reply = await bus.request_name("org.freedesktop.portal.Desktop", NameFlag.DO_NOT_QUEUE)
    if reply != RequestNameReply.PRIMARY_OWNER:
        log(error="name taken")
        sys.exit(1)
    log(ready=True)
    loop = asyncio.get_event_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            break
        parts = line.decode().split()
        if len(parts) == 2 and parts[0] in ("press", "release"):
            standin.emit_shortcut("Activated" if parts[0] == "press" else "Deactivated", parts[1])


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    asyncio.run(main())
