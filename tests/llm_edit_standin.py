#!/usr/bin/env python3
"""TEST STAND-IN for an OpenAI-compatible LLM server.  THIS IS NOT A MODEL.

Why it exists
-------------
The live edit-mode test (crates/dictum-cli/tests/live_edit.rs) must show that Dictum sends the
selected text and the spoken instruction to the LLM and types the answer over the selection.
What a real model answers cannot be known in advance, so this stand-in answers every request
with the text given by --answer, always the same.  It speaks the one endpoint Dictum's
`openai` backend uses, POST /v1/chat/completions (request and answer shapes as llama-server and
the OpenAI API have them), and appends each request's messages as one JSON line to --log, so
the test can check what Dictum sent.  Everything else about the edit (the selection, the
microphone, whisper, the window, the typing, the history) is real.  Only the test suite uses
it; the Dictum product never ships or runs it.

Usage
-----
    python3 tests/llm_edit_standin.py --answer TEXT --log FILE [--host 127.0.0.1]

Listens on a free port and prints exactly one line `listening PORT` on stdout (flushed).
Python 3 standard library only.
"""

import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def make_handler(answer, log):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            sys.stderr.write("edit standin: " + (fmt % args) + "\n")

        def send_json(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path in ("/health", "/v1/health"):
                self.send_json(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self.send_json(200, {"object": "list", "data": [{"id": "edit-standin", "object": "model"}]})
            else:
                self.send_json(404, {"error": {"message": "not found", "type": "not_found_error"}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            try:
                req = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self.send_json(400, {"error": {"message": "malformed JSON", "type": "invalid_request_error"}})
                return
            if self.path != "/v1/chat/completions":
                self.send_json(404, {"error": {"message": "not found", "type": "not_found_error"}})
                return
            messages = req.get("messages", [])
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"messages": messages}) + "\n")
            self.send_json(
                200,
                {
                    "id": "chatcmpl-edit-standin",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": req.get("model", "edit-standin"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": answer},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": len(answer.split()), "total_tokens": 10 + len(answer.split())},
                },
            )

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answer", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()
    server = ThreadingHTTPServer((args.host, 0), make_handler(args.answer, args.log))
    print("listening %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
