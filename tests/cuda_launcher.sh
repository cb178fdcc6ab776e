#!/usr/bin/env bash
# packaging/dictum-cuda, the dictum-cuda package's launcher, against a stand-in for the CUDA
# build: a small program linked against a stub libcuda.so.1 (the NVIDIA driver library every
# CUDA build of dictum needs; there is no GPU, driver or CUDA toolkit on the test machine, so
# the real CUDA binary cannot be built or run here). Checks: without the library the launcher
# runs the CPU binary with the same arguments and says which library is missing and what to
# install; with it on the library path it runs the CUDA binary; its exit code is passed on.
#   tests/cuda_launcher.sh
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
launcher="$repo/packaging/dictum-cuda"
command -v cc >/dev/null || { [ "${DICTUM_REQUIRE_E2E:-}" = 1 ] && { echo "cc missing" >&2; exit 1; }; echo "skipped: no cc"; exit 0; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "cuda launcher test: FAIL: $*" >&2; exit 1; }

echo 'int cuInit(unsigned f) { (void)f; return 0; }' >"$work/stub.c"
cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$work/libcuda.so.1" "$work/stub.c"
cat >"$work/cuda.c" <<'C'
#include <stdio.h>
#include <string.h>
int cuInit(unsigned);
int main(int argc, char **argv) {
    cuInit(0);
    if (argc > 1 && strcmp(argv[1], "--version") == 0) { puts("dictum 0.1.0 (CUDA)"); return 0; }
    printf("cuda:");
    for (int i = 1; i < argc; i++) printf(" %s", argv[i]);
    puts("");
    return 3;
}
C
cc -o "$work/dictum-cuda-bin" "$work/cuda.c" -L"$work" -l:libcuda.so.1
printf '#!/bin/sh\necho "cpu: $*"\nexit 4\n' >"$work/dictum-cpu"
chmod +x "$work/dictum-cpu"
export DICTUM_CUDA_BINARY="$work/dictum-cuda-bin" DICTUM_CPU_BINARY="$work/dictum-cpu"

set +e
out="$(env -u LD_LIBRARY_PATH sh "$launcher" transcribe "a b.wav" 2>"$work/err")"
rc=$?
set -e
[ "$out" = "cpu: transcribe a b.wav" ] || fail "without libcuda.so.1 it ran: $out"
[ "$rc" = 4 ] || fail "the CPU binary's exit code 4 became $rc"
grep -q "libcuda.so.1 not found" "$work/err" || fail "no message naming libcuda.so.1: $(cat "$work/err")"
grep -q "speech runs on the CPU" "$work/err" || fail "the message does not say it runs on the CPU"
echo "no driver: $(cat "$work/err")"

set +e
out="$(LD_LIBRARY_PATH="$work" sh "$launcher" transcribe "a b.wav" 2>"$work/err")"
rc=$?
set -e
[ "$out" = "cuda: transcribe a b.wav" ] || fail "with libcuda.so.1 it ran: $out"
[ "$rc" = 3 ] || fail "the CUDA binary's exit code 3 became $rc"
[ ! -s "$work/err" ] || fail "it complained although the driver loads: $(cat "$work/err")"
echo "cuda launcher test: OK (falls back to the CPU with a message; runs the CUDA build where its libraries load)"
