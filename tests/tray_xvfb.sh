#!/usr/bin/env bash
# The real tray app under Xvfb (with a private D-Bus session for the tray and single-instance
# plugins) on a seeded history database: opens its history, settings and stats windows (the
# app starts hidden; each window is asked for by a second launch, which the running instance
# receives), screenshots each one, and checks the screenshot is not blank and the UI reported
# the entries it rendered.
#
# Dictation is kept running: the app starts while the sound server is down, says why dictation
# is off (its status line, `dictum-tray: status: …` in its log, is what the tooltip shows), and
# becomes ready by itself once the sound server is up, within its retry backoff (1, 2, 4 … s).
#
#   tests/tray_xvfb.sh TRAY_BINARY SEED_BINARY [OUT_DIR] [DICTUM_BINARY]
# With DICTUM_BINARY, a second dictation is driven by `dictum ctl toggle` (the control socket
# the tray app serves, as a Wayland compositor shortcut would), and then `dictum ctl quit`, sent
# while a dictation is recording and the sound server is frozen, must take the tray icon away
# within 1 s and end the app within 6 s. Last, SIGTERM in the middle of an utterance does the
# same, the utterance's history row written.
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
    cp "$work"/*.log "$out/" 2>/dev/null || true # the logs (app, second launches, Xvfb), with the screenshots
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
# The transcribe window: file #1 cancelled once its progress shows, then saved as SRT (a DOM
# click, `windows.rs` TRANSCRIBE_DRIVE: no hand here); Save as writes into this folder (no
# dialog to drive).
export DICTUM_TRAY_DRIVE_TRANSCRIBE=1 DICTUM_TRAY_SAVE_DIR="$work/saved"
mkdir -p "$work/saved"
# Live dictation inside the tray app needs a microphone and the speech model: a private
# PulseAudio daemon with a virtual microphone, and the test model in the data folder.
assets="${DICTUM_TEST_ASSETS:-$(cd "$(dirname "$0")/.." && pwd)/../shared}"
mkdir -p "$DICTUM_DATA_DIR/models"
cp "$assets/models/ggml-tiny.en-q8_0.bin" "$DICTUM_DATA_DIR/models/"
# The sound server's address, but no sound server yet: it comes up after the app has started.
export PULSE_SERVER="unix:$work/pulse/runtime/pulse/native" XDG_RUNTIME_DIR="$work/pulse/runtime" \
    PULSE_RUNTIME_PATH="$work/pulse/runtime/pulse" DICTUM_PULSE_DIR="$work/pulse"
mkdir -p "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
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

start_app() { # the app in its own private D-Bus session, its output in $log
    rm -f "$work/pid"
    dbus-run-session -- bash -c "
        \"$bin\" >\"$log\" 2>&1 &
        echo \$! >\"$work/pid\"
        wait
    " &
    for _ in $(seq 50); do [ -s "$work/pid" ] && break; sleep 0.1; done
    app_pid="$(cat "$work/pid")"
}
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
# T0 WHAT: after a quit sent at T0 (a `date +%s.%N`), the tray icon must be gone within 1 s
# (quit never waits on the GUI) and the process within 6 s (the app's bound is 5.5 s: the
# engine's own 5 s to finish the utterance under way, and a margin; + this loop's polling on
# a loaded machine); sets icon_s and gone_s.
wait_gone() {
    local gone=""
    icon_s=""
    for _ in $(seq 160); do
        # (grep -c reads it all: with pipefail, grep -q could fail xwininfo and pass this)
        [ -z "$icon_s" ] && ! xwininfo -root -tree | grep -c '"tray-icon tray app' >/dev/null &&
            icon_s=$(since "$1")
        kill -0 "$app_pid" 2>/dev/null || { gone=1; break; }
        sleep 0.05
    done
    gone_s=$(since "$1")
    [ -n "$gone" ] || {
        echo "the app is still running ${gone_s} s after $2:" >&2
        cat "$log" >&2
        return 1
    }
    awk -v q="$gone_s" -v i="${icon_s:-99}" 'BEGIN { exit !(q <= 6.0 && i <= 1.0) }' || {
        echo "$2: tray icon gone after ${icon_s:-?} s (limit 1 s), the app after ${gone_s} s (limit 6 s):" >&2
        cat "$log" >&2
        return 1
    }
}
start_app
unset WAYLAND_DISPLAY XDG_SESSION_TYPE # an X11 session on the private Xvfb, whatever runs the tests
bus_env() { tr '\0' '\n' <"/proc/$app_pid/environ" | grep '^DBUS_SESSION_BUS_ADDRESS='; }

wait_for "dictum-tray: ready" 60
# No sound server: dictation cannot start; the app says why and retries after 1 s, then 2 s…
wait_for "dictum-tray: dictation could not start (attempt 2): .*; retrying in 2 s" 60
grep -q "dictum-tray: status: Dictum — not running: dictation could not start: .*input" "$log" || {
    echo "the tray's status does not say why dictation is off:" >&2
    cat "$log" >&2
    exit 1
}
grep "dictum-tray: status: Dictum — not running" "$log" | tail -1
if grep -q "dictum-tray: dictation ready" "$log"; then
    echo "dictation said ready with no sound server" >&2
    exit 1
fi
# The sound server comes up: the next retry (at most 2 s away) finds it, with no help.
bash "$pulse_script" start "$work/pulse" >/dev/null
up_at=$(date +%s.%N)
wait_for "dictum-tray: dictation ready" 40
ready_after=$(awk -v a="$up_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
tail -n +"$(grep -n "dictum-tray: dictation ready" "$log" | tail -1 | cut -d: -f1)" "$log" |
    grep -q "dictum-tray: status: Dictum — idle" || {
    echo "dictation is ready but the tray's status does not say so:" >&2
    cat "$log" >&2
    exit 1
}
echo "dictation ready by itself ${ready_after} s after the sound server came up ($(grep -c "dictation could not start (attempt" "$log") failed starts before)"
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

# Files from a file manager (`dictum-tray --transcribe FILE…`, a second launch): a 3-minute
# recording of speech and a short MP3 queue up in the Transcribe window; the first is
# cancelled once its progress shows (its text so far kept) and saved as SRT, the second
# runs to its end; each has its history row.
jfk_s="$work/jfk5.wav"
sox "$assets/audio/dev/jfk.wav" "$assets/audio/dev/jfk.wav" "$assets/audio/dev/jfk.wav" \
    "$assets/audio/dev/jfk.wav" "$assets/audio/dev/jfk.wav" "$jfk_s"
sox "$jfk_s" "$jfk_s" "$jfk_s" "$work/talk.wav"
files=("$work/talk.wav")
if command -v lame >/dev/null; then
    lame --quiet -b 64 "$assets/audio/dev/jfk.wav" "$work/short.mp3"
    files+=("$work/short.mp3")
fi
env "$(bus_env)" timeout 30 "$bin" --transcribe "${files[@]}" >>"$work/second.log" 2>&1 || true
wait_for "dictum-tray: transcribe: ${#files[@]} file(s) queued" 30
wait_for "ui: transcribe: rendered [0-9]* files" 60
wait_for "ui: transcribe: #1 running [1-9][0-9]*%" 120
wait_for "ui: transcribe: #1 cancelled" 30
wait_for "ui: transcribe: saved $work/saved/talk.srt" 30
if [ "${#files[@]}" = 2 ]; then wait_for "ui: transcribe: #2 done 100%" 120; fi
shot transcribe
if command -v ffmpeg >/dev/null; then
    # A real parser reads it (ffmpeg's SRT demuxer), as WebVTT too.
    ffmpeg -v error -i "$work/saved/talk.srt" -f webvtt "$work/saved/talk.vtt" || {
        echo "ffmpeg cannot read the saved SRT:" >&2; cat "$work/saved/talk.srt" >&2; exit 1; }
fi
python3 - "$work/saved/talk.srt" "$DICTUM_DATA_DIR/history.sqlite3" "${#files[@]}" <<'PY'
import re, sqlite3, sys
srt = open(sys.argv[1], encoding="utf-8").read()
t = lambda h, m, s, ms: ((int(h) * 60 + int(m)) * 60 + int(s)) * 1000 + int(ms)
cues = [(t(*a), t(*b)) for a, b in
        ((m[:4], m[4:]) for m in re.findall(r"(\d+):(\d+):(\d+),(\d+) --> (\d+):(\d+):(\d+),(\d+)", srt))]
assert cues, f"no cues in the saved SRT: {srt[:300]!r}"
assert all(a < b for a, b in cues) and all(p[1] <= n[0] for p, n in zip(cues, cues[1:])), cues
assert "country" in srt.lower(), srt[:300]
db = sqlite3.connect(sys.argv[2])
rows = db.execute("SELECT source_path, error_kind, text, audio_ms FROM dictations "
                  "WHERE source = 'file' ORDER BY id").fetchall()
assert len(rows) == int(sys.argv[3]), rows
assert rows[0][1] == "cancelled" and "country" in (rows[0][2] or "").lower(), rows[0]
assert cues[-1][1] <= rows[0][3], (cues[-1], rows[0][3])
if len(rows) == 2:
    assert rows[1][1] is None and "country" in (rows[1][2] or "").lower(), rows[1]
print(f"transcribe window: {len(rows)} file(s) queued from the command line; #1 cancelled with "
      f"{len((rows[0][2] or '').split())} words kept, saved as SRT ({len(cues)} cues, last ends "
      f"{cues[-1][1] / 1000:.1f} s){'; #2 (MP3) done: ' + repr(rows[1][2]) if len(rows) == 2 else ''}")
PY

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

    # `dictum ctl quit` quits the app (as it ends `dictum run`), in time even while a
    # dictation is recording and the sound server does not answer.
    "$dictum" ctl press
    sleep 0.5
    pulse_pid="$(cat "$work/pulse/runtime/pulse/pid")"
    kill -STOP "$pulse_pid"
    "$dictum" ctl quit # answered once the app has the command
    t0=$(date +%s.%N)
    wait_gone "$t0" "\`dictum ctl quit\`" || { kill -CONT "$pulse_pid"; exit 1; }
    kill -CONT "$pulse_pid"
    grep -q "dictum-tray: quitting (dictum ctl quit)" "$log" || {
        echo "the app ended without saying it was quitting:" >&2
        cat "$log" >&2
        exit 1
    }
    if "$dictum" ctl toggle 2>/dev/null; then
        echo "the control socket still answers after quit" >&2
        exit 1
    fi
    echo "dictum ctl quit (recording, sound server frozen): icon gone in ${icon_s} s, app in ${gone_s} s; $(grep -o "dictation ended in [0-9]* ms\|dictation did not end within [0-9.]* s" "$log" | tail -1)"
fi

# Per-window capabilities: each window may call its own view's commands, not another's.
for expect in "acl: history history_count allowed" "acl: history get_config refused" \
    "acl: settings get_config allowed" "acl: settings history_count refused" \
    "acl: stats history_count refused" "acl: stats get_config refused" \
    "acl: transcribe history_count refused" "acl: transcribe get_config refused"; do
    grep -q "^ui: $expect" "$work/app.log" || { echo "capability check failed: no \"$expect\" in the app log" >&2; grep "^ui: acl" "$work/app.log" >&2; exit 1; }
done
echo "capabilities: each window allowed only its own view's commands"
# SIGTERM (a logout) quits the same way, mid-utterance: the app is gone in time and the
# utterance under way has its history row.
if ! kill -0 "$app_pid" 2>/dev/null; then # quit by `dictum ctl quit` above: a new one
    log="$work/app-sigterm.log"
    start_app
    wait_for "dictum-tray: dictation ready" 60
fi
rows_before=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM dictations WHERE source = ?", ("mic",)).fetchone()[0])' "$DICTUM_DATA_DIR/history.sqlite3")
xdotool keydown ctrl+alt+space
sleep 0.1
paplay --device=dictum_sink "$assets/audio/dev/goforward.wav"
t0=$(date +%s.%N)
kill -TERM "$app_pid"
wait_gone "$t0" "SIGTERM" || exit 1
xdotool keyup ctrl+alt+space
grep -q "dictum-tray: quitting (SIGTERM)" "$log" || {
    echo "the app ended on SIGTERM without quitting as from the menu:" >&2
    cat "$log" >&2
    exit 1
}
python3 - "$DICTUM_DATA_DIR/history.sqlite3" "$rows_before" "icon gone in $icon_s s, app in $gone_s s" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT id, outcome, text FROM dictations WHERE source = 'mic' ORDER BY id").fetchall()
assert len(rows) == int(sys.argv[2]) + 1, f"the utterance under way at SIGTERM has no row: {rows[-3:]}"
print(f"SIGTERM mid-utterance: {sys.argv[3]}; its row: {rows[-1][1]} {rows[-1][2]!r}")
PY

grep "^ui: " "$work/app.log"
echo "tray app: history, settings, stats and transcribe windows rendered, files queued from the command line (one cancelled and saved as SRT), dictation ready by itself once the sound server came up, live dictation from its hotkey${dictum:+ and from dictum ctl}, quit in time${dictum:+ (dictum ctl quit and SIGTERM)}, each window allowed only its own commands; screenshots in $out"
