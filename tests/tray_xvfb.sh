#!/usr/bin/env bash
# The real tray app under Xvfb (with a private D-Bus session for the tray and single-instance
# plugins) on a seeded history database: opens its history, settings and stats windows (the
# app starts hidden; each window is asked for by a second launch, which the running instance
# receives), screenshots each one, and checks the screenshot is not blank and the UI reported
# the entries it rendered.
#
#   tests/tray_xvfb.sh TRAY_BINARY SEED_BINARY [OUT_DIR] [DICTUM_BINARY]
# With DICTUM_BINARY, a second dictation is driven by `dictum ctl toggle` (the control socket
# the tray app serves, as a Wayland compositor shortcut would).
set -euo pipefail
bin="$1"
seed="$2"
out="${3:-ui/test-artifacts/app}"
dictum="${4:-}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
app_pid=""
xvfb_pid=""
pulse_script="$(cd "$(dirname "$0")" && pwd)/pulse-virtual-mic.sh"
cleanup() {
    [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true
    [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
    bash "$pulse_script" stop "$work/pulse" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

export DICTUM_DATA_DIR="$work/data" DICTUM_CONFIG="$work/config.toml" XDG_CONFIG_HOME="$work/xdg"
export DICTUM_EXPORT_DIR="$work"
# Each window logs whether a history and a settings command are allowed to it (checked below).
export DICTUM_TRAY_ACL_PROBE=1
# Live dictation inside the tray app needs a microphone and the speech model: a private
# PulseAudio daemon with a virtual microphone, and the test model in the data folder.
assets="${DICTUM_TEST_ASSETS:-$(cd "$(dirname "$0")/.." && pwd)/../shared}"
mkdir -p "$DICTUM_DATA_DIR/models"
cp "$assets/models/ggml-tiny.en-q8_0.bin" "$DICTUM_DATA_DIR/models/"
eval "$(bash "$pulse_script" start "$work/pulse" | sed 's/^/export /')"
"$seed" "$DICTUM_DATA_DIR/history.sqlite3" 2000 30

# A free display number.
d=90
while [ -e "/tmp/.X11-unix/X$d" ] || [ -e "/tmp/.X$d-lock" ]; do d=$((d + 1)); done
Xvfb ":$d" -screen 0 1280x900x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
export DISPLAY=":$d"
for _ in $(seq 50); do xwininfo -root >/dev/null 2>&1 && break; sleep 0.1; done
# WebKitGTK under Xvfb: software rendering, no DMA-BUF, no accessibility bus.
export WEBKIT_DISABLE_DMABUF_RENDERER=1 WEBKIT_DISABLE_COMPOSITING_MODE=1 LIBGL_ALWAYS_SOFTWARE=1 NO_AT_BRIDGE=1

log="$work/app.log"
wait_for() { # PATTERN SECONDS
    for _ in $(seq $(($2 * 10))); do
        grep -q "$1" "$log" && return 0
        kill -0 "$app_pid" 2>/dev/null || { echo "tray app exited early:" >&2; cat "$log" >&2; return 1; }
        sleep 0.1
    done
    echo "timed out waiting for \"$1\"; app log:" >&2
    cat "$log" >&2
    return 1
}
shot() { # NAME: screenshot of the screen, must not be blank
    sleep 1.5 # let WebKit paint
    import -window root "$out/$1.png"
    local sd colors
    sd=$(convert "$out/$1.png" -colorspace Gray -format '%[fx:standard_deviation]' info:)
    colors=$(convert "$out/$1.png" -format '%k' info:)
    echo "$1.png: gray std dev $sd, $colors colors"
    awk -v s="$sd" -v c="$colors" 'BEGIN { exit !(s > 0.04 && c > 50) }' || {
        echo "$1.png looks blank" >&2
        return 1
    }
}

dbus-run-session -- bash -c "
    \"$bin\" >\"$log\" 2>&1 &
    echo \$! >\"$work/pid\"
    wait
" &
for _ in $(seq 50); do [ -s "$work/pid" ] && break; sleep 0.1; done
app_pid="$(cat "$work/pid")"
unset WAYLAND_DISPLAY XDG_SESSION_TYPE # an X11 session on the private Xvfb, whatever runs the tests
bus_env() { tr '\0' '\n' <"/proc/$app_pid/environ" | grep '^DBUS_SESSION_BUS_ADDRESS='; }

wait_for "dictum-tray: ready" 60
# It starts hidden in the tray: no window of its own is mapped.
sleep 2
if xwininfo -root -tree | grep -q '"Dictum — '; then
    echo "the app opened a window at start; it should start hidden in the tray" >&2
    exit 1
fi
echo "started hidden: no window"

# A second launch hands its --show to the running instance (single instance) and exits.
second() {
    env "$(bus_env)" timeout 30 "$bin" --show "$1" >>"$work/second.log" 2>&1 || true
}
second history
wait_for "ui: history: rendered first page of 200 rows" 120
shot history
# The tray icon: with no StatusNotifier host on this bare X server, libayatana-appindicator
# falls back to an XEmbed status icon window of the app's.
xwininfo -root -tree | grep -q '"tray-icon tray app' || {
    echo "no tray icon window" >&2
    xwininfo -root -tree >&2
    exit 1
}
echo "tray icon: present"

second settings
wait_for "ui: settings: rendered [0-9]* models" 60
shot settings
second stats
wait_for "ui: stats: rendered [0-9]* buckets of [1-9][0-9]* entries" 60
shot stats

if grep -q "dictum-tray: ready" "$work/second.log"; then
    echo "a second launch started a second app instead of handing over to the first:" >&2
    cat "$work/second.log" >&2
    exit 1
fi
# The dictation hotkey works with no window of ours focused: hold it while a clip plays into
# the virtual microphone; the tray app's engine stores (and types) the words.
wait_for "dictum-tray: dictation ready" 60
xdotool keydown ctrl+alt+space
sleep 0.1
paplay --device=dictum_sink "$assets/audio/dev/jfk.wav"
sleep 0.5
xdotool keyup ctrl+alt+space
wait_for "dictum-tray: dictation #[0-9]* Ok" 60
python3 - "$DICTUM_DATA_DIR/history.sqlite3" <<'PY'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(
    "SELECT text, release_to_text_ms, inject_method FROM dictations "
    "WHERE source = 'mic' ORDER BY id DESC LIMIT 1").fetchone()
assert row and "country" in (row[0] or "").lower(), f"no live dictation stored: {row}"
print(f"live dictation in the tray app: {row[0]!r}, text ready {row[1]:.0f} ms after the release, {row[2]}")
PY

if [ -n "$dictum" ]; then
    done_before=$(grep -c "dictum-tray: dictation #[0-9]* Ok" "$log")
    "$dictum" ctl toggle
    sleep 0.1
    paplay --device=dictum_sink "$assets/audio/dev/goforward.wav"
    sleep 0.4
    "$dictum" ctl toggle
    for _ in $(seq 300); do
        [ "$(grep -c "dictum-tray: dictation #[0-9]* Ok" "$log")" -gt "$done_before" ] && break
        sleep 0.1
    done
    python3 - "$DICTUM_DATA_DIR/history.sqlite3" <<'PY'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(
    "SELECT text FROM dictations WHERE source = 'mic' ORDER BY id DESC LIMIT 1").fetchone()
assert row and "forward" in (row[0] or "").lower(), f"no dictation from `dictum ctl`: {row}"
print(f"dictation from `dictum ctl toggle` in the tray app: {row[0]!r}")
PY
fi

# Per-window capabilities: each window may call its own view's commands, not another's.
for expect in "acl: history history_count allowed" "acl: history get_config refused" \
    "acl: settings get_config allowed" "acl: settings history_count refused" \
    "acl: stats history_count refused" "acl: stats get_config refused"; do
    grep -q "^ui: $expect" "$log" || { echo "capability check failed: no \"$expect\" in the app log" >&2; grep "^ui: acl" "$log" >&2; exit 1; }
done
echo "capabilities: each window allowed only its own view's commands"
grep "^ui: " "$log"
echo "tray app: history, settings and stats windows rendered, live dictation from its hotkey${dictum:+ and from dictum ctl}; screenshots in $out"
