#!/usr/bin/env python3
"""Runs the workspace's test binaries side by side (scripts/test's `cargo test` step).

`cargo test` runs one test binary after another, and most of Dictum's are end-to-end tests that
wait on real time (a clip played into a virtual microphone, a window that must show the words):
run one at a time they left one of CI's two cores idle for half an hour. Every binary already
isolates what it starts (its own Xvfb display chosen by pid, its own PulseAudio daemon and
folders, ports bound to 0, the test user created race-free), so binaries can share the machine;
tests inside one binary keep cargo's own rules (in-process locks serialise what must be).

Usage: run_tests.py --jobs N [--timeout S] [--log-dir D] [--job NAME=SECONDS=COMMAND]... < cargo-json
  cargo-json: the output of `cargo test --no-run --message-format=json` (the test executables).
  --job: one more job in the same queue, a shell command run from this folder (e.g. scripts/test's
  accuracy gate, which needs both cores for ~5 min: beside the real-time tests it uses cores they
  leave idle); SECONDS is its expected time, for the order.
Each binary runs in its package's folder, as `cargo test` runs it, with its output in
D/NAME.log; a failing binary's log is printed whole. The longest binaries start first
(EXPECTED_S below: figures from a CI run on 2 cores; a binary not listed counts as short).
A binary that fails beside another runs again alone once; the run fails when it fails again.
Prints a table of every binary's time at the end; exits 1 when any binary failed or timed out.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

# Seconds each binary took two at a time on 2 cores (the table this script prints; 2026-11-27, a
# busy machine), used only to start the long ones first so that the lanes end together. The
# real-LLM ones wait for scripts/test's background llama-server build when it is late.
EXPECTED_S = {
    "fault_matrix": 330,
    "live_mic_presses": 300,
    "live_x11": 237,
    "live_clean_real": 188,
    "live_trust": 167,
    "llm_real": 148,
    "remote_stt": 146,
    "file_formats": 120,
    "live_partial": 120,
    "live_wayland": 105,
    "dictation_pulse": 85,
    "live_cleanup": 82,
    "long_file": 80,
    "live_hands_free": 75,
    "live_cues": 72,
    "translate": 63,
    "tray_indicator_wayland": 56,
    "tray_indicator": 55,
    "live_profiles": 49,
    "transcription": 49,
    "decode_fuzz": 45,
    "capture_pulse": 39,
    "log_privacy": 39,
    "live_retype": 37,
    "live_styles": 56,
    "live_context": 40,
    "live_mouse": 32,
    "bench_live": 30,
    "live_gnome": 26,
    "live_mic": 45,
    "snippets": 24,
    "live_kde": 24,
    "live_edit": 22,
    "live_commands": 20,
    "live_snippets": 17,
    "cli": 17,
    "live_gate_wayland": 16,
    "live_mute": 15,
    "inject_x11": 21,
    "models_recommend": 12,
    "inject_wayland": 11,
    "live_media": 11,
    "portal_gnome": 10,
}


def executables(lines):
    """(name, executable, package folder) for each test binary in cargo's JSON messages."""
    seen = []
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        target = msg["target"]
        kind = target["kind"][0]
        name = target["name"] if kind == "test" else f"{target['name']} (unit tests)"
        seen.append((name, msg["executable"], os.path.dirname(msg["manifest_path"])))
    return seen


def expected(name):
    return EXPECTED_S.get(name.split(" ")[0], 5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=1200, help="seconds one binary may run")
    ap.add_argument("--log-dir", default="test-logs")
    ap.add_argument("--job", action="append", default=[], metavar="NAME=SECONDS=COMMAND")
    args = ap.parse_args()

    jobs = executables(sys.stdin)
    for spec in args.job:
        name, secs, command = spec.split("=", 2)
        EXPECTED_S[name] = int(secs)
        jobs.append((name, ["bash", "-c", command], os.getcwd()))
    if not jobs:
        print("run_tests.py: cargo listed no test executables", file=sys.stderr)
        return 1
    jobs.sort(key=lambda j: -expected(j[0]))
    os.makedirs(args.log_dir, exist_ok=True)
    start = time.monotonic()
    lock = threading.Lock()
    queue = list(jobs)
    results = []

    def stamp():
        t = int(time.monotonic() - start)
        return f"[{t // 60}:{t % 60:02d}]"

    def run(name, exe, cwd, rerun=False):
        log_path = os.path.join(args.log_dir, name.replace(" ", "_").replace("(", "").replace(")", "")
                                + (".alone.log" if rerun else ".log"))
        began = time.monotonic()
        with open(log_path, "wb") as log:
            # Its own process group: a binary past its time is stopped with everything it started.
            proc = subprocess.Popen(exe if isinstance(exe, list) else [exe], cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                rc = proc.wait(timeout=args.timeout)
                outcome = "ok" if rc == 0 else f"FAILED (exit {rc})"
                if rerun and rc == 0:
                    outcome = "ok alone (failed beside another binary)"
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                outcome = f"TIMED OUT after {args.timeout} s"
        took = time.monotonic() - began
        summary = ""
        with open(log_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        for line in text.splitlines():
            if line.startswith("test result:"):
                summary = line[len("test result: "):]
        with lock:
            results.append((name, took, outcome))
            print(f"{stamp()} {outcome:<6} {name} in {took:.0f} s: {summary}", flush=True)
            if not outcome.startswith("ok"):
                print(f"----- {name}: {log_path} -----\n{text}\n----- end of {name} -----", flush=True)

    def lane():
        while True:
            with lock:
                if not queue:
                    return
                job = queue.pop(0)
            run(*job)

    print(f"{stamp()} {len(jobs)} test binaries, {args.jobs} at a time (logs in {args.log_dir})", flush=True)
    lanes = [threading.Thread(target=lane) for _ in range(args.jobs)]
    for t in lanes:
        t.start()
    for t in lanes:
        t.join()

    # A binary that failed beside another runs again alone, once: a real failure fails twice and
    # stops the run; one that passes alone is named in the table (load-sensitive: its first log
    # was printed above), so a test that only holds on an idle machine cannot hide.
    failed_first = [r[0] for r in results if r[2] != "ok"]
    by_name = {j[0]: j for j in jobs}
    for name in failed_first:
        print(f"{stamp()} {name} failed beside another binary: running it again alone", flush=True)
        results[:] = [r for r in results if r[0] != name]
        run(*by_name[name], rerun=True)

    wall = time.monotonic() - start
    busy = sum(r[1] for r in results)
    print(f"\nTest binaries by time (wall {wall:.0f} s for {busy:.0f} s of binaries, {busy / wall:.2f} at once):")
    for name, took, outcome in sorted(results, key=lambda r: -r[1]):
        print(f"  {took:7.1f} s  {outcome:<6} {name}")
    alone = [r[0] for r in results if r[2].startswith("ok alone")]
    if alone:
        print(f"Passed only when run alone (load-sensitive, look at their first log): {', '.join(alone)}")
    failed = [r for r in results if not r[2].startswith("ok")]
    if failed:
        print(f"run_tests.py: {len(failed)} of {len(results)} test binaries failed: "
              + ", ".join(r[0] for r in failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
