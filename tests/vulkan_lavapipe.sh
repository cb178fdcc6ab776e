#!/usr/bin/env bash
# The Vulkan build (scripts/build-vulkan) on a real Vulkan driver: Mesa's lavapipe, a CPU-type
# Vulkan device, the only Vulkan device a machine without a GPU has (issue 31).
#   tests/vulkan_lavapipe.sh VULKAN_DICTUM CPU_DICTUM [DICTUM_VULKAN_DEB]
# 1. With DICTUM_GPU_PLAN=force, every dev clip is transcribed on lavapipe (`transcribe --json`
#    reports device "vulkan") with the same words as the CPU build (normalised: case and
#    punctuation); silence stays silence. The times of both are printed.
# 2. Without it, the plan refuses the CPU-type device: speech runs on the CPU ("cpu") and
#    `doctor` lists llvmpipe as CPU-type and gives the reason.
# 3. A Vulkan device that fails under whisper (GGML_VK_VISIBLE_DEVICES naming a device that
#    does not exist: ggml-vulkan throws while the speech worker loads) costs a CPU load, not the
#    words: the worker process dies, the model is loaded on the CPU, the text is the same.
# 4. Without the Vulkan loader (libvulkan.so.1 hidden by a bind mount in a private mount
#    namespace: needs root), packaging/dictum-gpu installed as dictum-vulkan runs the CPU build
#    with the same arguments and says so in one line.
# 5. With DICTUM_VULKAN_DEB (scripts/package --vulkan): the package holds the launcher as
#    /usr/bin/dictum-vulkan and the stripped build in /usr/lib/dictum-vulkan, depends on the
#    loader, and its build is this Vulkan build.
# Needs mesa-vulkan-drivers (scripts/lib/common.sh ensure_vulkan_deps). With DICTUM_REQUIRE_E2E=1
# a missing part fails the test instead of skipping it.
set -euo pipefail
vk="$(realpath "$1")"
cpu="$(realpath "$2")"
deb="${3:+$(realpath "$3")}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
assets="$(realpath "${DICTUM_TEST_ASSETS:-$repo/../shared}")"
model="$assets/models/ggml-tiny.en-q8_0.bin"
fail() { echo "vulkan test: FAIL: $*" >&2; exit 1; }
skip() {
    [ "${DICTUM_REQUIRE_E2E:-}" = 1 ] && fail "$*"
    echo "vulkan test: skipped: $*"
    exit 0
}
ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || skip "no lavapipe (install mesa-vulkan-drivers)"
"$vk" --version | grep -q '(Vulkan)' || fail "$vk is not a Vulkan build: $("$vk" --version)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Private config and history; the Mesa shader cache stays where it is (a warm one saves ~10 s).
export DICTUM_CONFIG="$work/config.toml" DICTUM_DATA_DIR="$work/data"
: >"$DICTUM_CONFIG"

# field JSON NAME: a top-level string field of `transcribe --json`'s object ("" when null).
field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else v)' "$1" "$2"; }
stt_ms() { python3 -c 'import json,sys; print(round(json.loads(sys.argv[1])["timings_ms"]["stt"] or 0))' "$1"; }
words() { tr '[:upper:]' '[:lower:]' <<<"$1" | tr -c "a-z0-9'\n" ' ' | tr -s ' ' | sed 's/^ //; s/ $//'; }

echo "1. every dev clip on lavapipe (DICTUM_GPU_PLAN=force) against the CPU build"
n=0 cpu_total=0 vk_total=0
for wav in "$assets"/audio/dev/*.wav; do
    name="$(basename "$wav")"
    c="$("$cpu" transcribe --json --model "$model" "$wav" 2>"$work/cpu.err")" ||
        fail "the CPU build failed on $name: $(tail -3 "$work/cpu.err")"
    start=$(date +%s%N)
    v="$(DICTUM_GPU_PLAN=force "$vk" transcribe --json --model "$model" "$wav" 2>"$work/vk.err")" ||
        fail "the Vulkan build failed on $name: $(tail -3 "$work/vk.err")"
    wall=$((($(date +%s%N) - start) / 1000000))
    [ "$(field "$v" outcome)" = "$(field "$c" outcome)" ] ||
        fail "$name: outcome $(field "$v" outcome) on lavapipe, $(field "$c" outcome) on the CPU"
    if [ "$(field "$c" outcome)" = ok ]; then
        [ "$(field "$v" device)" = vulkan ] || fail "$name: device \"$(field "$v" device)\", not vulkan: $(tail -3 "$work/vk.err")"
        [ "$(field "$c" device)" = cpu ] || fail "$name: the CPU build reports device \"$(field "$c" device)\""
        cw="$(words "$(field "$c" text)")" vw="$(words "$(field "$v" text)")"
        [ "$cw" = "$vw" ] || fail "$name: lavapipe typed \"$vw\", the CPU \"$cw\""
        cpu_total=$((cpu_total + $(stt_ms "$c"))) vk_total=$((vk_total + $(stt_ms "$v")))
        n=$((n + 1))
        printf '   %-22s same words; whisper %5s ms on lavapipe (%s ms whole process), %4s ms on the CPU: "%s"\n' \
            "$name" "$(stt_ms "$v")" "$wall" "$(stt_ms "$c")" "$vw"
    else
        printf '   %-22s %s on both\n' "$name" "$(field "$c" outcome)"
    fi
done
[ "$n" -ge 8 ] || fail "only $n clips had words"
echo "   $n clips with the same words; whisper on lavapipe took $vk_total ms in all, on the CPU $cpu_total ms"

echo "2. without force the plan refuses lavapipe"
wav="$assets/audio/dev/goforward.wav"
v="$("$vk" transcribe --json --model "$model" "$wav" 2>"$work/vk.err")" || fail "the Vulkan build failed: $(tail -3 "$work/vk.err")"
[ "$(field "$v" device)" = cpu ] || fail "without force speech ran on \"$(field "$v" device)\""
doctor="$("$vk" doctor 2>&1 || true)"
grep -E '^\[info\] vulkan +llvmpipe.*CPU-type' <<<"$doctor" >/dev/null || fail "doctor does not list llvmpipe as CPU-type: $(grep -i vulkan <<<"$doctor")"
grep -E '^\[ok  \] plan +speech on cpu .*CPU-type.*DICTUM_GPU_PLAN=force uses it anyway' <<<"$doctor" >/dev/null ||
    fail "doctor's plan does not choose the CPU with the reason: $(grep -E 'plan' <<<"$doctor")"
grep -E 'Vulkan compiled in' <<<"$doctor" >/dev/null || fail "doctor does not say the Vulkan backend is compiled in"
grep -E 'plan +speech on' <<<"$doctor" | sed 's/^/   /'

echo "3. a Vulkan device that fails while loading: the utterance is transcribed on the CPU"
c="$("$cpu" transcribe --json --model "$model" "$wav" 2>/dev/null)"
v="$(DICTUM_GPU_PLAN=force GGML_VK_VISIBLE_DEVICES=7 "$vk" transcribe --json --model "$model" "$wav" 2>"$work/vk.err")" ||
    fail "a failing Vulkan device lost the utterance: $(tail -3 "$work/vk.err")"
[ "$(field "$v" device)" = cpu ] || fail "device \"$(field "$v" device)\" after the Vulkan load failed"
[ "$(words "$(field "$v" text)")" = "$(words "$(field "$c" text)")" ] || fail "the CPU fallback typed \"$(field "$v" text)\""
grep -q 'did not load on vulkan' "$work/vk.err" || fail "no warning that the load on the GPU failed: $(tail -3 "$work/vk.err")"
echo "   $(grep -m1 'did not load on vulkan' "$work/vk.err" | sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^ *WARN *//' | cut -c1-200)"

echo "4. no Vulkan loader: the dictum-vulkan launcher runs the CPU build"
loader="$(ldconfig -p | sed -n 's/^\s*libvulkan.so.1 (libc6,x86-64) => //p' | head -n 1)"
[ -n "$loader" ] || fail "libvulkan.so.1 is not in the linker cache (install libvulkan1)"
if [ "$(id -u)" != 0 ] || ! unshare --mount true 2>/dev/null; then
    skip "hiding libvulkan.so.1 needs root and unshare (part 4 only; parts 1-3 passed)"
fi
mkdir -p "$work/bin"
cp "$repo/packaging/dictum-gpu" "$work/bin/dictum-vulkan"
set +e
out="$(DICTUM_GPU_BINARY="$vk" DICTUM_CPU_BINARY="$cpu" unshare --mount sh -c \
    'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$loader" \
    sh "$work/bin/dictum-vulkan" transcribe --json --model "$model" "$wav" 2>"$work/launch.err")"
rc=$?
set -e
[ "$rc" = 0 ] || fail "the launcher's CPU fallback failed ($rc): $(cat "$work/launch.err")"
[ "$(field "$out" device)" = cpu ] || fail "without the loader speech ran on \"$(field "$out" device)\""
[ "$(words "$(field "$out" text)")" = "$(words "$(field "$c" text)")" ] || fail "the fallback typed \"$(field "$out" text)\""
[ "$(grep -c '^dictum-vulkan:' "$work/launch.err")" = 1 ] || fail "not one line from the launcher: $(cat "$work/launch.err")"
grep -Eq '^dictum-vulkan: [^ ]*libvulkan\.so\.1 .*speech runs on the CPU' "$work/launch.err" ||
    fail "the launcher's line does not name libvulkan.so.1: $(cat "$work/launch.err")"
echo "   $(grep '^dictum-vulkan:' "$work/launch.err" | cut -c1-160)"

if [ -n "$deb" ]; then
    echo "5. the dictum-vulkan package"
    files="$(dpkg-deb -c "$deb" | awk '{print $6}')"
    grep -qx './usr/bin/dictum-vulkan' <<<"$files" || fail "no /usr/bin/dictum-vulkan in $deb"
    grep -qx './usr/lib/dictum-vulkan/dictum' <<<"$files" || fail "no /usr/lib/dictum-vulkan/dictum in $deb"
    grep -qx './usr/share/man/man1/dictum-vulkan.1.gz' <<<"$files" || fail "no man page in $deb"
    depends="$(dpkg-deb -f "$deb" Depends)"
    grep -q 'libvulkan1' <<<"$depends" || fail "the package does not depend on libvulkan1: $depends"
    dpkg-deb -x "$deb" "$work/deb"
    cmp -s "$work/deb/usr/bin/dictum-vulkan" "$repo/packaging/dictum-gpu" || fail "/usr/bin/dictum-vulkan is not packaging/dictum-gpu"
    [ "$("$work/deb/usr/lib/dictum-vulkan/dictum" --version)" = "$("$vk" --version)" ] ||
        fail "the packaged build says $("$work/deb/usr/lib/dictum-vulkan/dictum" --version)"
    echo "   $(du -h "$deb" | cut -f1) .deb; Depends: $depends"
fi
echo "vulkan test: OK"
