#!/usr/bin/env python3
"""TEST STAND-IN for the Ollama HTTP API.  THIS IS NOT OLLAMA.

Why it exists
-------------
Dictum's LLM-cleanup stage talks to Ollama's native HTTP API (/api/chat, /api/generate,
/api/ps, ...).  Ollama itself is in no package registry that this project's machines and CI
can reach, so tests cannot install it.  This script is a stand-in written from Ollama's
published API documentation (docs/api.md and docs.ollama.com): it speaks the same request
and response shapes, and it fronts a REAL llama.cpp `llama-server` child process (built by
scripts/llama-server) that does the actual inference.  Nothing it returns is canned: texts,
token counts and durations come from the real model run, and a model (re)load is a real
process start.  Only the test suite uses it; the Dictum product never ships or runs it.

Usage
-----
    python3 tests/ollama_standin.py --port P --llama-server PATH \
        --model-file MODEL.gguf --model-name smollm2:135m [--host 127.0.0.1]

Prints exactly one line `READY http://HOST:P` on stdout (flushed) once it is listening;
everything else goes to stderr.  Python 3.11 standard library only.

What it emulates (and how)
--------------------------
* GET  /                 -> 200 "Ollama is running" (HEAD too)
* GET  /api/version      -> {"version": ...}   (--api-version, default "0.0.0-standin")
* GET  /api/tags         -> the one configured model, with size/digest/details read from the GGUF
* POST /api/show         -> details, model_info (from the GGUF header), template, capabilities
* GET  /api/ps           -> the loaded model: name, model, size, digest, details, expires_at,
                            size_vram (0: CPU only), context_length (the loaded num_ctx);
                            {"models": []} when nothing is loaded
* POST /api/chat         -> llama-server /v1/chat/completions
* POST /api/generate     -> llama-server /v1/chat/completions (system + prompt), or /completion
                            when "raw": true
  Both stream NDJSON when "stream" is true or absent (Ollama's default) and answer one JSON
  object when "stream": false.  The final object carries model, created_at, message{role,
  content} (chat) or response (generate), done: true, done_reason ("stop" | "length"),
  total_duration, load_duration, prompt_eval_count, prompt_eval_duration, eval_count,
  eval_duration -- all durations in nanoseconds, counts and eval times taken from
  llama-server's `timings`/`usage`.
  An empty `messages` (chat) or `prompt` (generate) only loads the model (done_reason
  "load"), or unloads it when keep_alive is 0 (done_reason "unload"), as in Ollama.
* options: temperature, top_p, top_k, min_p, typical_p, seed, num_predict (-> max_tokens /
  n_predict), stop, repeat_penalty, repeat_last_n, presence_penalty, frequency_penalty,
  num_keep are forwarded.  Ollama's defaults are applied when absent (temperature 0.8,
  top_k 40, top_p 0.9, repeat_penalty 1.1, repeat_last_n 64).  `format` "json" or a JSON
  schema is forwarded as llama-server's response_format.  `tools` -> 400 "... does not
  support tools" (the test model has no tools capability), as Ollama answers for such models.
* num_ctx: default 4096 (Ollama's documented default for machines with < 24 GiB VRAM, which
  includes CPU-only ones; older Ollama releases used 2048), or OLLAMA_CONTEXT_LENGTH, or
  --default-num-ctx.  Capped at the model's trained context length.  A request whose num_ctx
  differs from the loaded one waits for in-flight requests, kills llama-server and starts it
  again with `-c <num_ctx>`: a real reload.  options.num_thread likewise (-> --threads).  Its wall time (spawn until /health answers 200)
  is reported as load_duration.  A request that finds the model loaded reports the real time
  spent checking/acquiring it: microseconds, or the time it queued behind a load in progress.
* keep_alive: number of seconds or a Go duration string ("5m", "30s", "1h30m", "0"); 0 unloads
  right after the request; negative keeps it loaded forever; default 5m (OLLAMA_KEEP_ALIVE or
  --default-keep-alive).  Each request resets the expiry.  A reaper thread stops llama-server
  when it expires; /api/ps then lists nothing.
* Errors: unknown model -> 404 {"error": "model 'x' not found"}; malformed JSON, an empty body,
  a missing model or a bad keep_alive -> 400 {"error": ...}; llama-server failures -> 500
  {"error": ...}; unknown paths -> 404 "404 page not found".

Deliberate differences from Ollama
----------------------------------
* One model only (the --model-file GGUF, under --model-name); no pull/push/create/copy/delete/
  embed.  Only num_ctx and num_thread trigger a reload (not num_batch, num_gpu, ...).
* `template` in /api/show is the GGUF's Jinja chat template, not an Ollama Go template.
* `size` in /api/ps is the GGUF file size plus an f16 KV-cache estimate for the loaded
  num_ctx; `size_vram` is always 0 (CPU).  No `context` array in /api/generate answers.
* Model names are matched exactly after adding ":latest" to a name without a tag.

Test-only knobs (not in Ollama)
-------------------------------
* Request header `X-Standin-Hang: SECONDS` -- the request sleeps that long before it is
  handled at all (simulates a hung or very slow server, e.g. for client timeout tests).
* --child-log PATH        llama-server's own stdout/stderr go there (default: discarded).
* --threads N             llama-server --threads when a request sets no options.num_thread
                          (default 1: on a 2-core machine shared with builds, measured 1 thread
                          answered 2-10x faster and reloaded in ~0.5 s instead of 0.7-6 s, as
                          ggml's spinning thread pool suffers badly from CPU contention;
                          0 = llama-server's own choice).
* --verbose               log each request and each load/unload to stderr.
* --api-version STRING    what /api/version reports.

Process hygiene
---------------
ThreadingHTTPServer; one lock (a Condition) around load/unload; llama-server is spawned from
a dedicated long-lived thread with PR_SET_PDEATHSIG (so it dies even if this process is
SIGKILLed), killed and reaped on unload, on SIGTERM/SIGINT and at exit (atexit): no orphans,
no zombies.
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import datetime as _dt
import hashlib
import http.client
import json
import os
import queue
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VERBOSE = False


def log(msg: str) -> None:
    if VERBOSE:
        sys.stderr.write(f"[ollama-standin] {msg}\n")
        sys.stderr.flush()


def warn(msg: str) -> None:
    sys.stderr.write(f"[ollama-standin] {msg}\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------------------------
# Time helpers (Ollama answers RFC 3339 timestamps with sub-second precision)
# --------------------------------------------------------------------------------------------

def rfc3339(ts: float | None = None) -> str:
    return _rfc3339(_dt.datetime.fromtimestamp(time.time() if ts is None else ts).astimezone())


def _rfc3339(d: _dt.datetime) -> str:
    s = d.strftime("%Y-%m-%dT%H:%M:%S.%f")
    off = d.utcoffset() or _dt.timedelta(0)
    if off == _dt.timedelta(0):
        return s + "Z"
    mins = int(off.total_seconds() // 60)
    sign = "+" if mins >= 0 else "-"
    mins = abs(mins)
    return f"{s}{sign}{mins // 60:02d}:{mins % 60:02d}"


FOREVER_S = (2**63 - 1) / 1e9  # Go's time.Duration(math.MaxInt64), about 292 years


def rfc3339_far_future(seconds: float) -> str:
    # datetime cannot hold "now + 292 years" only on odd platforms; add with timedelta.
    return _rfc3339(_dt.datetime.now().astimezone() + _dt.timedelta(seconds=seconds))


_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0,
             "m": 60.0, "h": 3600.0}
_GO_DUR_RE = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(s: str) -> float:
    """Go's time.ParseDuration, returning seconds.  Raises ValueError like Go errors."""
    orig = s
    if s in ("0", "+0", "-0"):
        return 0.0
    sign = 1.0
    if s[:1] in "+-":
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if not s:
        raise ValueError(f'time: invalid duration "{orig}"')
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _GO_DUR_RE.match(s, pos)
        if not m:
            if re.match(r"[0-9.]+$", s[pos:]):
                raise ValueError(f'time: missing unit in duration "{orig}"')
            raise ValueError(f'time: invalid duration "{orig}"')
        total += float(m.group(1)) * _GO_UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def parse_keep_alive(v: Any, default_s: float) -> float:
    """Ollama's api.Duration: float seconds or a Go duration string; negative -> forever.
    Returns seconds (FOREVER_S for forever)."""
    if v is None:
        return default_s
    if isinstance(v, bool):
        raise ValueError(f"Unsupported type: '{type(v).__name__}'")
    if isinstance(v, (int, float)):
        return FOREVER_S if v < 0 else float(v)
    if isinstance(v, str):
        d = parse_go_duration(v)
        return FOREVER_S if d < 0 else d
    raise ValueError(f"Unsupported type: '{type(v).__name__}'")


# --------------------------------------------------------------------------------------------
# GGUF header reader (metadata + parameter count), stdlib only
# --------------------------------------------------------------------------------------------

_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                 10: "<Q", 11: "<q", 12: "<d"}
_FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
               10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S",
               15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS",
               20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S",
               25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M",
               30: "IQ4_XS", 31: "IQ1_M", 32: "BF16"}


def read_gguf(path: str) -> tuple[dict[str, Any], int]:
    """Return (metadata, parameter_count).  Large arrays (tokenizer vocab) are skipped and
    reported as [] like Ollama's non-verbose /api/show."""
    meta: dict[str, Any] = {}
    with open(path, "rb") as f:
        def rd(fmt: str):
            n = struct.calcsize(fmt)
            b = f.read(n)
            if len(b) != n:
                raise ValueError("truncated GGUF")
            return struct.unpack(fmt, b)[0]

        def rstr() -> str:
            n = rd("<Q")
            return f.read(n).decode("utf-8", "replace")

        def rval(t: int, keep: bool = True):
            if t in _GGUF_SCALARS:
                return rd(_GGUF_SCALARS[t])
            if t == 8:
                return rstr()
            if t == 9:
                it = rd("<I")
                n = rd("<Q")
                if it in _GGUF_SCALARS and not keep:
                    f.seek(n * struct.calcsize(_GGUF_SCALARS[it]), os.SEEK_CUR)
                    return []
                items = [rval(it, keep) for _ in range(n)]
                return items if keep else []
            raise ValueError(f"unknown GGUF value type {t}")

        if f.read(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        version = rd("<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF v{version} is not supported")
        n_tensors = rd("<Q")
        n_kv = rd("<Q")
        for _ in range(n_kv):
            key = rstr()
            t = rd("<I")
            big = key.startswith("tokenizer.ggml.")
            meta[key] = rval(t, keep=not big)
        params = 0
        for _ in range(n_tensors):
            rstr()
            n_dims = rd("<I")
            count = 1
            for _ in range(n_dims):
                count *= rd("<Q")
            rd("<I")
            rd("<Q")
            params += count
    return meta, params


def human_params(n: int) -> str:
    # Ollama's format.HumanNumber, as shown in /api/show details.parameter_size
    if n >= 1_000_000_000:
        v = n / 1e9
        return f"{v:.0f}B" if v == int(v) else f"{v:.1f}B"
    if n >= 1_000_000:
        v = n / 1e6
        return f"{v:.0f}M" if v == int(v) else f"{v:.2f}M"
    if n >= 1_000:
        return f"{n / 1e3:.0f}K"
    return str(n)


# --------------------------------------------------------------------------------------------
# The model and its llama-server runner
# --------------------------------------------------------------------------------------------

class ModelInfo:
    def __init__(self, name: str, path: str):
        self.name = name
        self.path = os.path.abspath(path)
        st = os.stat(self.path)
        self.file_size = st.st_size
        self.modified_at = rfc3339(st.st_mtime)
        self.meta, self.param_count = read_gguf(self.path)
        self.arch = str(self.meta.get("general.architecture", "llama"))
        self.n_ctx_train = int(self.meta.get(f"{self.arch}.context_length", 0) or 0)
        self._digest: str | None = None
        self._digest_lock = threading.Lock()

    @property
    def digest(self) -> str:
        with self._digest_lock:
            if self._digest is None:
                h = hashlib.sha256()
                with open(self.path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                self._digest = h.hexdigest()
            return self._digest

    def details(self) -> dict[str, Any]:
        ft = self.meta.get("general.file_type")
        return {
            "parent_model": "",
            "format": "gguf",
            "family": self.arch,
            "families": [self.arch],
            "parameter_size": human_params(self.param_count),
            "quantization_level": _FILE_TYPES.get(ft, "unknown") if ft is not None else "unknown",
        }

    def kv_cache_bytes(self, n_ctx: int) -> int:
        a = self.arch
        try:
            n_layer = int(self.meta[f"{a}.block_count"])
            n_embd = int(self.meta[f"{a}.embedding_length"])
            n_head = int(self.meta[f"{a}.attention.head_count"])
            n_head_kv = int(self.meta.get(f"{a}.attention.head_count_kv", n_head))
        except (KeyError, TypeError, ValueError):
            return 0
        n_embd_gqa = n_embd // max(n_head, 1) * n_head_kv
        return 2 * n_layer * n_ctx * n_embd_gqa * 2  # K and V, f16

    def model_info(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in self.meta.items():
            if k == "tokenizer.chat_template":
                continue
            out[k] = v
        out.setdefault("general.parameter_count", self.param_count)
        return out


class LoadError(Exception):
    pass


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Spawner:
    """Spawns children from one long-lived thread.  PR_SET_PDEATHSIG fires when the *thread*
    that forked the child exits, so spawning from short-lived request threads would kill the
    child as soon as that request ended."""

    def __init__(self):
        self._q: queue.Queue = queue.Queue()
        self._libc = None
        try:
            self._libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            self._libc = None
        t = threading.Thread(target=self._loop, name="spawner", daemon=True)
        t.start()

    def _preexec(self):
        if self._libc is not None:
            PR_SET_PDEATHSIG = 1
            self._libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    def _loop(self):
        while True:
            args, kwargs, box, done = self._q.get()
            try:
                box.append(subprocess.Popen(args, preexec_fn=self._preexec, **kwargs))
            except BaseException as e:  # noqa: BLE001
                box.append(e)
            done.set()

    def popen(self, args: list[str], **kwargs) -> subprocess.Popen:
        box: list = []
        done = threading.Event()
        self._q.put((args, kwargs, box, done))
        done.wait()
        r = box[0]
        if isinstance(r, BaseException):
            raise r
        return r


class Runner:
    """Owns the llama-server child.  All state changes happen under self.cond."""

    def __init__(self, model: ModelInfo, binary: str, threads: int | None,
                 child_log: str | None, spawner: Spawner):
        self.model = model
        self.binary = binary
        self.default_threads = threads or 0
        self.threads: int | None = None  # of the loaded child
        self.child_log = child_log
        self.spawner = spawner
        self.cond = threading.Condition()
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.num_ctx: int | None = None
        self.active = 0
        self.expires_at: float | None = None  # monotonic deadline; None = forever/not loaded
        self.expires_wall: float | None = None
        self.keep_alive_s: float = 300.0
        self.closed = False
        threading.Thread(target=self._reaper, name="keep-alive-reaper", daemon=True).start()

    # -- child process management (call with self.cond held) -------------------------------

    def _spawn(self, num_ctx: int, threads: int) -> None:
        last_err = "unknown error"
        for _attempt in range(3):
            port = free_port()
            args = [self.binary, "--host", "127.0.0.1", "--port", str(port),
                    "-m", self.model.path, "-c", str(num_ctx), "--parallel", "1",
                    "--alias", self.model.name, "--no-webui"]
            if threads > 0:
                args += ["--threads", str(threads)]
            out = open(self.child_log, "ab") if self.child_log else subprocess.DEVNULL
            try:
                proc = self.spawner.popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                          stderr=subprocess.STDOUT, close_fds=True)
            finally:
                if out is not subprocess.DEVNULL:
                    out.close()
            log(f"spawned llama-server pid {proc.pid} port {port} -c {num_ctx}")
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    last_err = f"llama-server exited with code {proc.returncode} while loading"
                    break
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                    c.request("GET", "/health")
                    r = c.getresponse()
                    r.read()
                    c.close()
                    if r.status == 200:
                        self.proc, self.port, self.num_ctx = proc, port, num_ctx
                        self.threads = threads
                        return
                except OSError:
                    pass
                time.sleep(0.01)
            else:
                last_err = "llama-server did not become healthy within 180 s"
            self._kill(proc)
        raise LoadError(last_err)

    @staticmethod
    def _kill(proc: subprocess.Popen) -> None:
        t0 = time.perf_counter()
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        else:
            proc.wait()
        log(f"llama-server pid {proc.pid} stopped in {(time.perf_counter() - t0) * 1e3:.0f} ms")

    def _unload_locked(self, why: str) -> None:
        if self.proc is not None:
            log(f"unloading (pid {self.proc.pid}, {why})")
            self._kill(self.proc)
        self.proc = self.port = self.num_ctx = self.threads = None
        self.expires_at = self.expires_wall = None
        self.cond.notify_all()

    def _alive_locked(self) -> bool:
        if self.proc is None:
            return False
        if self.proc.poll() is not None:
            warn(f"llama-server pid {self.proc.pid} died (code {self.proc.returncode})")
            self._unload_locked("child died")
            return False
        return True

    # -- public API -------------------------------------------------------------------------

    def acquire(self, num_ctx: int, threads: int | None = None) -> tuple[int, int]:
        """Make sure the model is loaded with num_ctx (and threads); returns
        (port, load_duration_ns).  Caller must call release() afterwards."""
        t0 = time.perf_counter_ns()
        threads = self.default_threads if threads is None else threads
        with self.cond:
            if self.closed:
                raise LoadError("server is shutting down")
            while self._alive_locked() and (self.num_ctx, self.threads) != (num_ctx, threads) \
                    and self.active > 0:
                self.cond.wait()  # a reload must wait for in-flight requests
            if self.closed:
                raise LoadError("server is shutting down")
            if not self._alive_locked() or (self.num_ctx, self.threads) != (num_ctx, threads):
                if self.proc is not None:
                    self._unload_locked(f"reload: num_ctx {self.num_ctx} -> {num_ctx}, "
                                        f"threads {self.threads} -> {threads}")
                t0 = time.perf_counter_ns()  # load_duration = spawn until healthy
                self._spawn(num_ctx, threads)
                load_ns = time.perf_counter_ns() - t0
                log(f"loaded with num_ctx {num_ctx} threads {threads} in {load_ns / 1e6:.1f} ms")
            else:
                load_ns = time.perf_counter_ns() - t0
            self.active += 1
            self.expires_at = None  # never expires while in use
            assert self.port is not None
            return self.port, load_ns

    def release(self, keep_alive_s: float) -> None:
        with self.cond:
            self.active = max(0, self.active - 1)
            self._set_expiry_locked(keep_alive_s)
            if self.active == 0 and keep_alive_s <= 0 and self.proc is not None:
                self._unload_locked("keep_alive 0")
            self.cond.notify_all()

    def _set_expiry_locked(self, keep_alive_s: float) -> None:
        self.keep_alive_s = keep_alive_s
        if keep_alive_s >= FOREVER_S:
            self.expires_at = None
            self.expires_wall = time.time() + FOREVER_S
        else:
            self.expires_at = time.monotonic() + keep_alive_s
            self.expires_wall = time.time() + keep_alive_s

    def load_only(self, num_ctx: int, keep_alive_s: float,
                  threads: int | None = None) -> tuple[str, int]:
        """Empty chat/generate: load (or unload with keep_alive 0).  Returns (done_reason,
        load_ns)."""
        if keep_alive_s <= 0:
            with self.cond:
                while self.active > 0:
                    self.cond.wait()
                if self.proc is not None:
                    self._unload_locked("unload request")
            return "unload", 0
        _, load_ns = self.acquire(num_ctx, threads)
        self.release(keep_alive_s)
        return "load", load_ns

    def ps(self) -> dict[str, Any] | None:
        digest = self.model.digest  # hashed once, outside the lock
        with self.cond:
            if not self._alive_locked():
                return None
            if self.active > 0:
                # In use: Ollama shows the expiry the session will have after the request.
                exp = rfc3339_far_future(self.keep_alive_s if self.keep_alive_s < FOREVER_S
                                         else FOREVER_S)
            elif self.expires_wall is None or self.expires_at is None:
                exp = rfc3339_far_future(FOREVER_S)
            else:
                exp = rfc3339(self.expires_wall)
            assert self.num_ctx is not None
            return {
                "name": self.model.name,
                "model": self.model.name,
                "size": self.model.file_size + self.model.kv_cache_bytes(self.num_ctx),
                "digest": digest,
                "details": self.model.details(),
                "expires_at": exp,
                "size_vram": 0,
                "context_length": self.num_ctx,
            }

    def _reaper(self) -> None:
        while True:
            time.sleep(0.05)
            with self.cond:
                if self.closed:
                    return
                if self.proc is None:
                    continue
                if not self._alive_locked():
                    continue
                if self.active == 0 and self.expires_at is not None \
                        and time.monotonic() >= self.expires_at:
                    self._unload_locked("keep_alive expired")

    def shutdown(self) -> None:
        with self.cond:
            self.closed = True
            if self.proc is not None:
                self._unload_locked("shutdown")


# --------------------------------------------------------------------------------------------
# HTTP front end
# --------------------------------------------------------------------------------------------

class HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


# Ollama's defaults for a model whose Modelfile sets no parameters.
OLLAMA_DEFAULT_OPTIONS = {"temperature": 0.8, "top_k": 40, "top_p": 0.9, "min_p": 0.0,
                          "repeat_penalty": 1.1, "repeat_last_n": 64}
_FORWARDED = ("temperature", "top_p", "top_k", "min_p", "typical_p", "seed", "stop",
              "repeat_penalty", "repeat_last_n", "presence_penalty", "frequency_penalty",
              "mirostat", "mirostat_tau", "mirostat_eta")


class Config:
    model: ModelInfo
    runner: Runner
    default_num_ctx: int
    default_keep_alive_s: float
    api_version: str


CFG = Config()


def normalize_name(name: str) -> str:
    name = name.strip()
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        name += ":latest"
    return name


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ollama-standin"
    sys_version = ""
    _body: bytes = b""

    # -- plumbing -----------------------------------------------------------------------------

    def log_message(self, fmt: str, *args) -> None:  # noqa: A003
        log(f"{self.address_string()} {fmt % args}")

    def _send_bytes(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, status: int, obj: Any) -> None:
        self._send_bytes(status, json.dumps(obj).encode(), "application/json; charset=utf-8")

    def _send_error(self, status: int, message: str) -> None:
        self._send_json(status, {"error": message})

    def _read_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                out += self.rfile.read(size)
                self.rfile.readline()
            return bytes(out)
        return self.rfile.read(n) if n > 0 else b""

    def _json_body(self) -> dict[str, Any]:
        raw = self._body
        if not raw.strip():
            raise HttpError(400, "missing request body")
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise HttpError(400, f"invalid JSON: {e}") from None
        if not isinstance(obj, dict):
            raise HttpError(400, "invalid JSON: request body must be an object")
        return obj

    def _hang(self) -> None:
        v = self.headers.get("X-Standin-Hang")
        if v:
            try:
                secs = float(v)
            except ValueError:
                return
            log(f"X-Standin-Hang: sleeping {secs} s")
            time.sleep(max(0.0, secs))

    def _dispatch(self, routes: dict[str, Any]) -> None:
        path = self.path.split("?", 1)[0]
        # Read the whole body first, whatever the route: an unread body on a keep-alive
        # connection would be parsed as the next request.
        try:
            self._body = self._read_body()
        except (OSError, ValueError):
            self.close_connection = True
            return
        try:
            self._hang()
            fn = routes.get(path)
            if fn is None:
                if path in GET_ROUTES or path in POST_ROUTES:
                    self._send_bytes(405, b"405 method not allowed", "text/plain")
                else:
                    self._send_bytes(404, b"404 page not found", "text/plain")
                return
            fn(self)
        except HttpError as e:
            self._send_error(e.status, e.message)
        except LoadError as e:
            self._send_error(500, f"llama runner process has terminated: {e}")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # noqa: BLE001
            warn(f"internal error on {self.command} {path}: {e!r}")
            try:
                self._send_error(500, str(e))
            except OSError:
                self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch(GET_ROUTES)

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch(GET_ROUTES)

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch(POST_ROUTES)

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch({})

    # -- simple endpoints ---------------------------------------------------------------------

    def h_root(self) -> None:
        self._send_bytes(200, b"Ollama is running", "text/plain; charset=utf-8")

    def h_version(self) -> None:
        self._send_json(200, {"version": CFG.api_version})

    def h_tags(self) -> None:
        m = CFG.model
        self._send_json(200, {"models": [{
            "name": m.name, "model": m.name, "modified_at": m.modified_at,
            "size": m.file_size, "digest": m.digest, "details": m.details()}]})

    def h_ps(self) -> None:
        entry = CFG.runner.ps()
        self._send_json(200, {"models": [entry] if entry else []})

    def _check_model(self, req: dict[str, Any]) -> str:
        name = req.get("model") or req.get("name")
        if not isinstance(name, str) or not name.strip():
            raise HttpError(400, "model is required")
        if normalize_name(name) != normalize_name(CFG.model.name):
            raise HttpError(404, f"model '{name}' not found")
        return name

    def h_show(self) -> None:
        req = self._json_body()
        self._check_model(req)
        m = CFG.model
        tmpl = str(m.meta.get("tokenizer.chat_template", ""))
        self._send_json(200, {
            "license": str(m.meta.get("general.license", "")),
            "modelfile": (f"# Modelfile generated by the Ollama TEST STAND-IN\n"
                          f"FROM {m.path}\n"),
            "parameters": "",
            "template": tmpl,
            "details": m.details(),
            "model_info": m.model_info(),
            "capabilities": ["completion"],
            "modified_at": m.modified_at,
        })

    # -- chat / generate ----------------------------------------------------------------------

    def _options(self, req: dict[str, Any]) -> tuple[dict[str, Any], int, int | None]:
        opts = req.get("options") or {}
        if not isinstance(opts, dict):
            raise HttpError(400, "options must be an object")
        num_ctx = opts.get("num_ctx", CFG.default_num_ctx)
        try:
            num_ctx = int(num_ctx)
        except (TypeError, ValueError):
            raise HttpError(400, f"invalid num_ctx: {num_ctx!r}") from None
        if num_ctx <= 0:
            num_ctx = CFG.default_num_ctx
        if CFG.model.n_ctx_train and num_ctx > CFG.model.n_ctx_train:
            log(f"num_ctx {num_ctx} exceeds the model's trained context; "
                f"capping to {CFG.model.n_ctx_train}")
            num_ctx = CFG.model.n_ctx_train
        threads = opts.get("num_thread")
        if threads is not None:
            try:
                threads = max(0, int(threads))
            except (TypeError, ValueError):
                raise HttpError(400, f"invalid num_thread: {threads!r}") from None
        params: dict[str, Any] = dict(OLLAMA_DEFAULT_OPTIONS)
        for k in _FORWARDED:
            if k in opts and opts[k] is not None:
                params[k] = opts[k]
        if isinstance(params.get("stop"), str):
            params["stop"] = [params["stop"]]
        if "num_keep" in opts:
            params["n_keep"] = opts["num_keep"]
        np_ = opts.get("num_predict")
        if isinstance(np_, (int, float)) and np_ >= 0:
            params["max_tokens"] = int(np_)
            params["n_predict"] = int(np_)
        fmt = req.get("format")
        if fmt == "json":
            params["response_format"] = {"type": "json_object"}
        elif isinstance(fmt, dict) and fmt:
            params["response_format"] = {"type": "json_schema", "json_schema": {"schema": fmt}}
        elif fmt not in (None, ""):
            raise HttpError(400, f"invalid format: {fmt!r}")
        return params, num_ctx, threads

    def h_chat(self) -> None:
        req = self._json_body()
        self._generate_common(req, chat=True)

    def h_generate(self) -> None:
        req = self._json_body()
        self._generate_common(req, chat=False)

    def _generate_common(self, req: dict[str, Any], chat: bool) -> None:
        t_start = time.perf_counter_ns()
        name = self._check_model(req)
        try:
            keep_alive_s = parse_keep_alive(req.get("keep_alive"), CFG.default_keep_alive_s)
        except ValueError as e:
            raise HttpError(400, str(e)) from None
        params, num_ctx, threads = self._options(req)
        stream = req.get("stream", True) is not False
        if req.get("tools"):
            raise HttpError(400, f"{name} does not support tools")

        if chat:
            messages = req.get("messages") or []
            if not isinstance(messages, list):
                raise HttpError(400, "messages must be an array")
            out_msgs = []
            for msg in messages:
                if not isinstance(msg, dict):
                    raise HttpError(400, "invalid message")
                role = msg.get("role")
                if role not in ("system", "user", "assistant", "tool"):
                    raise HttpError(400, f"invalid role: {role!r}")
                out_msgs.append({"role": role, "content": str(msg.get("content") or "")})
            empty = not out_msgs
            raw = False
        else:
            prompt = req.get("prompt") or ""
            if not isinstance(prompt, str):
                raise HttpError(400, "prompt must be a string")
            system = req.get("system")
            raw = bool(req.get("raw"))
            out_msgs = []
            if system and not raw:
                out_msgs.append({"role": "system", "content": str(system)})
            out_msgs.append({"role": "user", "content": prompt})
            empty = prompt == ""

        if empty:
            reason, load_ns = CFG.runner.load_only(num_ctx, keep_alive_s, threads)
            obj: dict[str, Any] = {"model": name, "created_at": rfc3339()}
            if chat:
                obj["message"] = {"role": "assistant", "content": ""}
            else:
                obj["response"] = ""
            obj["done_reason"] = reason
            obj["done"] = True
            self._send_json(200, obj)
            return

        port, load_ns = CFG.runner.acquire(num_ctx, threads)
        # Tests watch for this line to know a request is being processed (--verbose).
        log(f"forwarding {self.path} to llama-server on port {port}")
        try:
            if raw:
                body = dict(params)
                body.pop("max_tokens", None)
                body.pop("response_format", None)
                body["prompt"] = out_msgs[-1]["content"]
                upstream_path = "/completion"
            else:
                body = dict(params)
                body.pop("n_predict", None)
                body["model"] = CFG.model.name
                body["messages"] = out_msgs
                upstream_path = "/v1/chat/completions"
            body["stream"] = stream
            if stream and not raw:
                body["stream_options"] = {"include_usage": True}
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            try:
                conn.request("POST", upstream_path, body=json.dumps(body).encode(),
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                if resp.status != 200:
                    detail = resp.read().decode("utf-8", "replace")
                    try:
                        detail = json.loads(detail)["error"]["message"]
                    except Exception:  # noqa: BLE001
                        pass
                    raise HttpError(500 if resp.status >= 500 else 400,
                                    f"llama-server: {detail}")
                if stream:
                    self._relay_stream(resp, name, chat, raw, t_start, load_ns)
                else:
                    data = json.loads(resp.read())
                    self._send_json(200, self._final(data, name, chat, raw, t_start, load_ns))
            finally:
                conn.close()
        finally:
            CFG.runner.release(keep_alive_s)

    @staticmethod
    def _stats(data: dict[str, Any], raw: bool) -> tuple[str, str, dict[str, int]]:
        timings = data.get("timings") or {}
        usage = data.get("usage") or {}
        if raw:
            text = data.get("content", "")
            reason = "length" if data.get("stop_type") == "limit" else "stop"
        else:
            choice = (data.get("choices") or [{}])[0]
            text = (choice.get("message") or {}).get("content") or ""
            reason = "length" if choice.get("finish_reason") == "length" else "stop"
        prompt_n = usage.get("prompt_tokens")
        if prompt_n is None:
            prompt_n = int(timings.get("prompt_n", 0)) + int(timings.get("cache_n", 0))
        eval_n = timings.get("predicted_n", usage.get("completion_tokens", 0))
        stats = {
            "prompt_eval_count": int(prompt_n),
            "prompt_eval_duration": int(float(timings.get("prompt_ms", 0.0)) * 1e6),
            "eval_count": int(eval_n),
            "eval_duration": int(float(timings.get("predicted_ms", 0.0)) * 1e6),
        }
        return text, reason, stats

    def _final(self, data: dict[str, Any], name: str, chat: bool, raw: bool, t_start: int,
               load_ns: int) -> dict[str, Any]:
        text, reason, stats = self._stats(data, raw)
        obj: dict[str, Any] = {"model": name, "created_at": rfc3339()}
        if chat:
            obj["message"] = {"role": "assistant", "content": text}
        else:
            obj["response"] = text
        obj["done"] = True
        obj["done_reason"] = reason
        obj["total_duration"] = time.perf_counter_ns() - t_start
        obj["load_duration"] = load_ns
        obj.update(stats)
        return obj

    def _write_chunk(self, obj: dict[str, Any]) -> None:
        line = json.dumps(obj).encode() + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
        self.wfile.flush()

    def _relay_stream(self, resp: http.client.HTTPResponse, name: str, chat: bool, raw: bool,
                      t_start: int, load_ns: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self._relay_stream_body(resp, name, chat, raw, t_start, load_ns)
        except (BrokenPipeError, ConnectionResetError):
            raise
        except Exception as e:  # noqa: BLE001
            # Headers are out: like Ollama, report the failure as a final NDJSON line.
            warn(f"stream failed: {e!r}")
            self.close_connection = True
            self._write_chunk({"error": str(e) or repr(e)})
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _relay_stream_body(self, resp: http.client.HTTPResponse, name: str, chat: bool,
                           raw: bool, t_start: int, load_ns: int) -> None:
        last: dict[str, Any] = {}
        finish = None
        usage = None
        complete = False
        while True:
            line = resp.readline()
            if not line:
                break
            line = line.strip()
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                complete = True
                break
            try:
                ev = json.loads(payload)
            except json.JSONDecodeError:
                continue
            if ev.get("timings"):
                last["timings"] = ev["timings"]
            if ev.get("usage"):
                usage = ev["usage"]
            if raw:
                delta = ev.get("content", "")
                for k in ("stop_type", "stopped_eos", "truncated"):
                    if k in ev:
                        last[k] = ev[k]
                stop = bool(ev.get("stop"))
            else:
                choices = ev.get("choices") or []
                delta = ""
                if choices:
                    delta = (choices[0].get("delta") or {}).get("content") or ""
                    if choices[0].get("finish_reason"):
                        finish = choices[0]["finish_reason"]
                stop = False
            if delta:
                chunk: dict[str, Any] = {"model": name, "created_at": rfc3339()}
                if chat:
                    chunk["message"] = {"role": "assistant", "content": delta}
                else:
                    chunk["response"] = delta
                chunk["done"] = False
                self._write_chunk(chunk)
            if raw and stop:
                complete = True
                break
        if not complete and finish is None:
            raise LoadError("llama runner process has terminated: the stream from "
                            "llama-server ended early")
        data: dict[str, Any] = dict(last)
        if usage:
            data["usage"] = usage
        if not raw:
            data["choices"] = [{"message": {"content": ""}, "finish_reason": finish}]
        else:
            data["content"] = ""
        self._write_chunk(self._final(data, name, chat, raw, t_start, load_ns))


GET_ROUTES = {"/": Handler.h_root, "/api/version": Handler.h_version,
              "/api/tags": Handler.h_tags, "/api/ps": Handler.h_ps}
POST_ROUTES = {"/api/chat": Handler.h_chat, "/api/generate": Handler.h_generate,
               "/api/show": Handler.h_show}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64


def main(argv: list[str] | None = None) -> int:
    global VERBOSE
    ap = argparse.ArgumentParser(description="TEST STAND-IN for the Ollama HTTP API "
                                 "(fronts a real llama-server). Not Ollama.")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True, help="0 picks a free port")
    ap.add_argument("--llama-server", required=True, help="path of the llama-server binary")
    ap.add_argument("--model-file", required=True, help="GGUF model file")
    ap.add_argument("--model-name", required=True, help="name clients use, e.g. smollm2:135m")
    ap.add_argument("--default-num-ctx", type=int,
                    default=int(os.environ.get("OLLAMA_CONTEXT_LENGTH") or 4096))
    ap.add_argument("--default-keep-alive", default=os.environ.get("OLLAMA_KEEP_ALIVE") or "5m")
    ap.add_argument("--threads", type=int, default=1,
                    help="llama-server --threads unless options.num_thread says otherwise "
                         "(default 1; 0 = llama-server's choice)")
    ap.add_argument("--child-log", default=None)
    ap.add_argument("--api-version", default="0.0.0-standin")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)
    VERBOSE = a.verbose

    if not (os.path.isfile(a.llama_server) and os.access(a.llama_server, os.X_OK)):
        ap.error(f"--llama-server {a.llama_server!r} is not an executable file")
    try:
        # Like Ollama's OLLAMA_KEEP_ALIVE, a plain number here means seconds.
        try:
            default_ka = parse_keep_alive(float(a.default_keep_alive), 300.0)
        except ValueError:
            default_ka = parse_keep_alive(a.default_keep_alive, 300.0)
    except ValueError as e:
        ap.error(f"--default-keep-alive: {e}")
    try:
        model = ModelInfo(a.model_name, a.model_file)
    except (OSError, ValueError) as e:
        ap.error(f"--model-file: {e}")

    CFG.model = model
    CFG.default_num_ctx = a.default_num_ctx
    CFG.default_keep_alive_s = default_ka
    CFG.api_version = a.api_version
    CFG.runner = Runner(model, os.path.abspath(a.llama_server), a.threads, a.child_log,
                        Spawner())

    cleaned = threading.Event()

    def cleanup() -> None:
        if not cleaned.is_set():
            cleaned.set()
            CFG.runner.shutdown()

    atexit.register(cleanup)

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    srv = Server((a.host, a.port), Handler)
    port = srv.server_address[1]
    shown_host = a.host if ":" not in a.host else f"[{a.host}]"
    print(f"READY http://{shown_host}:{port}", flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0
        return 0 if code in (128 + signal.SIGTERM, 128 + signal.SIGINT) else code
    finally:
        cleanup()
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
