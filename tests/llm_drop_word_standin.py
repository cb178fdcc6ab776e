#!/usr/bin/env python3
"""TEST STAND-IN for an OpenAI-compatible LLM server.  THIS IS NOT A MODEL.

Why it exists
-------------
The live cleanup test (crates/dictum-cli/tests/live_cleanup.rs) must show what Dictum types
when the LLM returns a tidy-looking cleanup that silently drops a negation ("we should not
ship" -> "We should ship").  A real model cannot be made to make that mistake on demand, so
this stand-in makes it every time: it speaks the one endpoint Dictum's `openai` backend uses,
POST /v1/chat/completions (request and answer shapes as llama-server and the OpenAI API have
them), and answers with the last user message, every word equal to --drop (default "not",
case-insensitive) removed, its first letter capitalised and a final period added.  Everything
else about the dictation (the microphone, whisper, the window, the guard, the history) is real.
Only the test suite uses it; the Dictum product never ships or runs it.

Usage
-----
    python3 tests/llm_drop_word_standin.py [--drop not] [--host 127.0.0.1]

Listens on a free port and prints exactly one line `listening PORT` on stdout (flushed).  Every
request's user text and answer are logged to stderr.  Python 3 standard library only.
"""

import argparse
import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def drop_word(text, word):
    words = [w for w in text.split() if re.sub(r"\W", "", w).lower() != word.lower()]
    out = " ".join(words).strip()
    if out:
        out = out[0].upper() + out[1:]
        if out[-1] not in ".!?":
            out += "."
    return out


def make_handler(word):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            sys.stderr.write("standin: " + (fmt % args) + "\n")

        def answer(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path in ("/health", "/v1/health"):
                self.answer(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self.answer(200, {"object": "list", "data": [{"id": "drop-" + word, "object": "model"}]})
            else:
                self.answer(404, {"error": {"message": "not found", "type": "not_found_error"}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            try:
                req = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self.answer(400, {"error": {"message": "malformed JSON", "type": "invalid_request_error"}})
                return
            if self.path != "/v1/chat/completions":
                self.answer(404, {"error": {"message": "not found", "type": "not_found_error"}})
                return
            users = [m.get("content", "") for m in req.get("messages", []) if m.get("role") == "user"]
            text = users[-1] if users else ""
            out = drop_word(text, word)
            sys.stderr.write("standin: %r -> %r\n" % (text, out))
            tokens = len(out.split())
            self.answer(
                200,
                {
                    "id": "chatcmpl-standin",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": req.get("model", "drop-" + word),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": out},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": len(text.split()),
                        "completion_tokens": tokens,
                        "total_tokens": len(text.split()) + tokens,
                    },
                },
            )

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--drop", default="not")
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()
    server = ThreadingHTTPServer((args.host, 0), make_handler(args.drop))
    print("listening %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
