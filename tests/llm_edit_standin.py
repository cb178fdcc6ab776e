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
Python 3 standard library only; the HTTP side is tests/openai_standin.py.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openai_standin import serve  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answer", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()

    def reply(messages):
        with open(args.log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"messages": messages}) + "\n")
        return args.answer

    serve(args.host, "edit-standin", reply, "edit standin")


if __name__ == "__main__":
    main()
