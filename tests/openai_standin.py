"""The HTTP side shared by the test suite's stand-in OpenAI-compatible LLM servers
(llm_edit_standin.py, llm_drop_word_standin.py).  THIS IS NOT A MODEL: each stand-in decides
its answer itself; this module only speaks the endpoints Dictum's `openai` backend uses, with
the request and answer shapes llama-server and the OpenAI API have:

- GET /health, /v1/health: {"status": "ok"}
- GET /v1/models: one model, `model_id`
- POST /v1/chat/completions: `reply(messages)` as the assistant's message

Listens on a free port and prints exactly one line `listening PORT` on stdout (flushed).
Python 3 standard library only.  Only the test suite uses it.
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(host, model_id, reply, name, on_request=None):
    """Serves until killed.  `reply(messages)` gives the answer's text for one request's
    messages; `name` prefixes the request log on stderr; `on_request(req)`, when given, sees
    each chat request's whole body first."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            sys.stderr.write(name + ": " + (fmt % args) + "\n")

        def send_json(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def not_found(self):
            self.send_json(404, {"error": {"message": "not found", "type": "not_found_error"}})

        def do_GET(self):
            if self.path in ("/health", "/v1/health"):
                self.send_json(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self.send_json(200, {"object": "list", "data": [{"id": model_id, "object": "model"}]})
            else:
                self.not_found()

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            try:
                req = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self.send_json(400, {"error": {"message": "malformed JSON", "type": "invalid_request_error"}})
                return
            if self.path != "/v1/chat/completions":
                self.not_found()
                return
            messages = req.get("messages", [])
            if on_request is not None:
                on_request(req)
            out = reply(messages)
            prompt = sum(len(str(m.get("content", "")).split()) for m in messages)
            tokens = len(out.split())
            self.send_json(
                200,
                {
                    "id": "chatcmpl-" + model_id,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": req.get("model", model_id),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": out},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": prompt, "completion_tokens": tokens, "total_tokens": prompt + tokens},
                },
            )

    server = ThreadingHTTPServer((host, 0), Handler)
    print("listening %d" % server.server_address[1], flush=True)
    server.serve_forever()
