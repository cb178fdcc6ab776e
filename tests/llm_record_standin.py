#!/usr/bin/env python3
"""TEST STAND-IN for an OpenAI-compatible LLM server.  THIS IS NOT A MODEL.

Why it exists
-------------
The styles test (crates/dictum-cli/tests/live_styles.rs) must show which request Dictum sent
for each dictation: which system prompt (the style's) and which model.  A real server does not
say what it was asked, so this stand-in records it: it speaks the one endpoint Dictum's
`openai` backend uses, POST /v1/chat/completions (request and answer shapes as llama-server and
the OpenAI API have them; the HTTP side is tests/openai_standin.py), appends each request's
model and messages as one JSON line to --record, and answers with the last user message
unchanged (a cleanup that changes nothing, which Dictum's guard accepts).  Everything else
about the dictation (the microphone, whisper, the keys, the window, the history) is real.
Only the test suite uses it; the Dictum product never ships or runs it.

Usage
-----
    python3 tests/llm_record_standin.py --record PATH [--host 127.0.0.1]

Listens on a free port and prints exactly one line `listening PORT` on stdout (flushed).
Python 3 standard library only.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openai_standin import serve  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--record", required=True, help="file each request is appended to")
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()

    def record(req):
        line = json.dumps({"model": req.get("model"), "messages": req.get("messages", [])})
        with open(args.record, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def reply(messages):
        users = [m.get("content", "") for m in messages if m.get("role") == "user"]
        return users[-1] if users else ""

    serve(args.host, "record", reply, "record-standin", on_request=record)


if __name__ == "__main__":
    main()
