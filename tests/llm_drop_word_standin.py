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
request's user text and answer are logged to stderr.  Python 3 standard library only; the HTTP
side is tests/openai_standin.py.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openai_standin import serve  # noqa: E402


def drop_word(text, word):
    words = [w for w in text.split() if re.sub(r"\W", "", w).lower() != word.lower()]
    out = " ".join(words).strip()
    if out:
        out = out[0].upper() + out[1:]
        if out[-1] not in ".!?":
            out += "."
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--drop", default="not")
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()

    def reply(messages):
        users = [m.get("content", "") for m in messages if m.get("role") == "user"]
        text = users[-1] if users else ""
        out = drop_word(text, args.drop)
        sys.stderr.write("standin: %r -> %r\n" % (text, out))
        return out

    serve(args.host, "drop-" + args.drop, reply, "standin")


if __name__ == "__main__":
    main()
