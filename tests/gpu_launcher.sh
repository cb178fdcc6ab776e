#!/usr/bin/env bash
# packaging/dictum-gpu, the launcher the dictum-cuda and dictum-vulkan packages install as
# /usr/bin/dictum-cuda and /usr/bin/dictum-vulkan, against stand-ins for the GPU builds: small
# programs linked against a stub of the one library each GPU build needs and a CPU build does
# not (CUDA: the NVIDIA driver's libcuda.so.1; Vulkan: the loader's libvulkan.so.1). The real
# Vulkan build is run through the launcher by tests/vulkan_lavapipe.sh; a real CUDA build
# cannot run here (no GPU, no driver). For each name: without the library the launcher runs
# the CPU binary with the same arguments and says which library is missing and what to
# install; with it on the library path it runs the GPU binary; its exit code is passed on.
#   tests/gpu_launcher.sh
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
command -v cc >/dev/null || { [ "${DICTUM_REQUIRE_E2E:-}" = 1 ] && { echo "cc missing" >&2; exit 1; }; echo "skipped: no cc"; exit 0; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "gpu launcher test: FAIL: $*" >&2; exit 1; }

printf '#!/bin/sh\necho "cpu: $*"\nexit 4\n' >"$work/dictum-cpu"
chmod +x "$work/dictum-cpu"
export DICTUM_CPU_BINARY="$work/dictum-cpu"

# check NAME LIBRARY SYMBOL HINT: the launcher installed as NAME, its build needing LIBRARY.
check() {
    local name="$1" lib="$2" sym="$3" hint="$4" dir="$work/$1"
    mkdir -p "$dir"
    cp "$repo/packaging/dictum-gpu" "$dir/$name"
    echo "int $sym(unsigned f) { (void)f; return 0; }" >"$dir/stub.c"
    cc -shared -fPIC -Wl,-soname,"$lib" -o "$dir/$lib" "$dir/stub.c"
    cat >"$dir/gpu.c" <<C
#include <stdio.h>
#include <string.h>
int $sym(unsigned);
int main(int argc, char **argv) {
    $sym(0);
    if (argc > 1 && strcmp(argv[1], "--version") == 0) { puts("dictum 0.1.0 ($name)"); return 0; }
    printf("gpu:");
    for (int i = 1; i < argc; i++) printf(" %s", argv[i]);
    puts("");
    return 3;
}
C
    cc -o "$dir/dictum-gpu-bin" "$dir/gpu.c" -L"$dir" -l:"$lib"
    export DICTUM_GPU_BINARY="$dir/dictum-gpu-bin"

    set +e
    out="$(env -u LD_LIBRARY_PATH sh "$dir/$name" transcribe "a b.wav" 2>"$dir/err")"
    rc=$?
    set -e
    [ "$out" = "cpu: transcribe a b.wav" ] || fail "$name without $lib ran: $out"
    [ "$rc" = 4 ] || fail "$name: the CPU binary's exit code 4 became $rc"
    grep -q "^$name: $lib not found" "$dir/err" || fail "$name: no message naming $lib: $(cat "$dir/err")"
    grep -q "$hint" "$dir/err" || fail "$name: the message does not say to install $hint: $(cat "$dir/err")"
    grep -q "speech runs on the CPU" "$dir/err" || fail "$name: the message does not say it runs on the CPU"
    [ "$(wc -l <"$dir/err")" = 1 ] || fail "$name: more than one line on stderr: $(cat "$dir/err")"
    echo "$name, no $lib: $(cat "$dir/err")"

    set +e
    out="$(LD_LIBRARY_PATH="$dir" sh "$dir/$name" transcribe "a b.wav" 2>"$dir/err")"
    rc=$?
    set -e
    [ "$out" = "gpu: transcribe a b.wav" ] || fail "$name with $lib ran: $out"
    [ "$rc" = 3 ] || fail "$name: the GPU binary's exit code 3 became $rc"
    [ ! -s "$dir/err" ] || fail "$name complained although $lib loads: $(cat "$dir/err")"
}

check dictum-cuda libcuda.so.1 cuInit "NVIDIA driver"
# A name libvulkan.so.1 would shadow: the test machine has the real loader installed, so the
# stand-in links a stub under a name only the test's folder has.
check dictum-vulkan libvulkan-standin.so.1 vkCreateInstance "libvulkan1"
echo "gpu launcher test: OK (dictum-cuda and dictum-vulkan fall back to the CPU with one line; run the GPU build where its library loads)"
