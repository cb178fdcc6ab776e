#!/usr/bin/env python3
"""STAND-IN for the GPU speech worker (declared: not the real worker; for tests only).

A GPU driver hang cannot be produced on a machine without a GPU, so this stand-in plays a
worker that stops answering. It speaks the worker protocol of
crates/dictum-engine/src/stt/worker_process.rs (one JSON line per message; a request is a JSON
line with "samples": N followed by N little-endian f32) by running the real worker behind it
(the executable named in DICTUM_STT_WORKER_EXE, with the same environment) and relaying every
message both ways, except that:

- with DICTUM_STANDIN_STALL_AT=N, request N (1 = the warm-up) is read and then never answered:
  the stand-in sleeps, as a worker stuck in a driver call would, until it is killed;
- with DICTUM_STANDIN_STATE=DIR, it stalls only in the first worker started (it leaves
  DIR/stalled behind), so the fresh worker Dictum starts afterwards answers normally.

Started by Dictum through the debug-build test seam DICTUM_STT_WORKER_PROGRAM.
"""
import json
import os
import subprocess
import sys
import time


def main() -> int:
    real = os.environ["DICTUM_STT_WORKER_EXE"]
    stall_at = int(os.environ.get("DICTUM_STANDIN_STALL_AT", "0") or 0)
    state = os.environ.get("DICTUM_STANDIN_STATE")
    marker = os.path.join(state, "stalled") if state else None
    if marker and os.path.exists(marker):
        stall_at = 0  # a fresh worker after the stall: answer everything
    child = subprocess.Popen([real], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    src = sys.stdin.buffer
    out = sys.stdout.buffer
    # "ready" (or an error) after loading.
    out.write(child.stdout.readline())
    out.flush()
    served = 0
    while True:
        line = src.readline()
        if not line:
            child.stdin.close()
            return child.wait()
        samples = json.loads(line)["samples"]
        payload = src.read(samples * 4)
        served += 1
        if served == stall_at:
            if marker:
                with open(marker, "w") as f:
                    f.write(str(os.getpid()))
            sys.stderr.write(f"stand-in speech worker: stalling on request {served}\n")
            sys.stderr.flush()
            while True:
                time.sleep(3600)
        child.stdin.write(line)
        child.stdin.write(payload)
        child.stdin.flush()
        out.write(child.stdout.readline())
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
