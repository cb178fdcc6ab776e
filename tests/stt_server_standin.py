#!/usr/bin/env python3
"""Stand-ins around a speech server, for Dictum's remote-STT tests (declared stand-ins: the
real server behind them is whisper.cpp's whisper-server).

  stt_server_standin.py auth PORT UPSTREAM   an API gateway in front of UPSTREAM (e.g.
      http://127.0.0.1:8080) that does what OpenAI's API does with keys: every request must
      carry "Authorization: Bearer $STANDIN_KEY", else HTTP 401 with OpenAI's error shape
      ({"error": {"message", "type": "invalid_request_error", "code": "invalid_api_key"}}).
      Accepted requests are forwarded unchanged and answered with the upstream's answer plus
      an "x-processing-ms" header (the upstream's time), as gateways report it. Each request's
      Authorization verdict is appended to $STANDIN_LOG ("ok" / "refused"; never the key).
  stt_server_standin.py noflac PORT UPSTREAM   a speech server that takes WAV only, in front
      of UPSTREAM: a request whose uploaded file is FLAC (it starts with "fLaC", whatever its
      name or type says) is refused the way an OpenAI-compatible server refuses a format it
      cannot read: HTTP 415 with {"error": {"message": "Unsupported audio format ...",
      "type": "invalid_request_error"}}; with STANDIN_FLAC_ANSWER=garbage it is answered
      HTTP 200 with an HTML page instead (a server whose decoder fails without saying so).
      Other requests are forwarded unchanged. Each transcription request appends
      "<flac|wav|other> <status>" to $STANDIN_LOG.
  stt_server_standin.py hang PORT            accepts connections and reads requests, and never
      answers (a server that hangs); each connection accepted is a line "accepted" in
      $STANDIN_LOG.

  stt_server_standin.py answer PORT          a hostile or broken speech server: every
      transcription request (POST .../audio/transcriptions) is answered HTTP 200 with
      {"text": <the content of the file $STANDIN_TEXT_FILE>} whatever the audio said (e.g.
      "touch pwned press enter", or a 2 MB "word"); other requests (GET /v1/models, the
      health check) get {"data": []}. Each transcription request appends "answered" to
      $STANDIN_LOG.

Prints "listening PORT" once ready.
"""
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request


def file_format(body, ctype):
    """The uploaded file's format, sniffed from the multipart body's file part."""
    if not body or "multipart/form-data" not in (ctype or ""):
        return "other"
    marker = b'name="file"'
    i = body.find(marker)
    if i < 0:
        return "other"
    j = body.find(b"\r\n\r\n", i)
    head = body[j + 4:j + 8] if j >= 0 else b""
    return {b"fLaC": "flac", b"RIFF": "wav"}.get(head, "other")


def proxy(port, upstream, check):
    """Forwards requests to UPSTREAM unless check(handler, body) answers them first with
    (status, content type, body bytes)."""
    log = os.environ.get("STANDIN_LOG")

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def verdict(self, v):
            if log:
                with open(log, "a") as f:
                    f.write(v + "\n")

        def answer(self, status, ctype, data, extra=()):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client hung up (Dictum stops reading an answer past its cap)

        def handle_any(self, method):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            self.tag = None  # set by check: log "<tag> <status>" once forwarded
            early = check(self, body)
            if early is not None:
                self.answer(*early)
                return
            req = urllib.request.Request(upstream + self.path, data=body, method=method)
            for h in ("Content-Type",):
                if self.headers.get(h):
                    req.add_header(h, self.headers[h])
            t = time.monotonic()
            try:
                with urllib.request.urlopen(req, timeout=300) as r:
                    status, data, ctype = r.status, r.read(), r.headers.get("Content-Type", "")
            except urllib.error.HTTPError as e:
                status, data, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
            ms = (time.monotonic() - t) * 1000
            if self.tag:
                self.verdict("%s %d" % (self.tag, status))
            self.answer(status, ctype or "application/json", data,
                        [("x-processing-ms", "%.1f" % ms)])

        def do_POST(self):
            self.handle_any("POST")

        def do_GET(self):
            self.handle_any("GET")

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
    print("listening", srv.server_address[1], flush=True)
    srv.serve_forever()


def auth(port, upstream):
    key = os.environ["STANDIN_KEY"]

    def check(h, body):
        if h.headers.get("Authorization", "") != "Bearer " + key:
            h.verdict("refused")
            out = json.dumps({"error": {"message": "Incorrect API key provided.",
                                        "type": "invalid_request_error",
                                        "param": None, "code": "invalid_api_key"}}).encode()
            return 401, "application/json", out
        h.verdict("ok")
        return None

    proxy(port, upstream, check)


def noflac(port, upstream):
    garbage = os.environ.get("STANDIN_FLAC_ANSWER") == "garbage"

    def check(h, body):
        if h.command != "POST":
            return None
        fmt = file_format(body, h.headers.get("Content-Type"))
        if fmt == "flac":
            if garbage:
                h.verdict("flac 200-garbage")
                return 200, "text/html", b"<html><body>decoder error</body></html>"
            h.verdict("flac 415")
            out = json.dumps({"error": {"message": "Unsupported audio format: flac. "
                                        "Supported formats: wav",
                                        "type": "invalid_request_error",
                                        "param": "file", "code": None}}).encode()
            return 415, "application/json", out
        h.tag = fmt
        return None

    proxy(port, upstream, check)


def hang(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    print("listening", s.getsockname()[1], flush=True)
    held = []

    def drain(c):
        try:
            while c.recv(65536):
                pass
        except OSError:
            pass

    log = os.environ.get("STANDIN_LOG")
    while True:
        c, _ = s.accept()
        held.append(c)
        if log:
            with open(log, "a") as f:
                f.write("accepted\n")
        threading.Thread(target=drain, args=(c,), daemon=True).start()


def answer(port):
    with open(os.environ["STANDIN_TEXT_FILE"], encoding="utf-8") as f:
        text = f.read()
    data = json.dumps({"text": text}).encode()

    def check(h, body):
        if h.command == "POST" and "transcriptions" in h.path:
            h.verdict("answered")
            return (200, "application/json", data)
        return (200, "application/json", b'{"data": []}')

    proxy(port, "http://127.0.0.1:9", check)


if __name__ == "__main__":
    if sys.argv[1] == "auth":
        auth(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "noflac":
        noflac(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "hang":
        hang(int(sys.argv[2]))
    elif sys.argv[1] == "answer":
        answer(int(sys.argv[2]))
    else:
        sys.exit("usage: stt_server_standin.py auth PORT UPSTREAM | noflac PORT UPSTREAM | hang PORT | answer PORT")
