#!/usr/bin/env bash
# A private PulseAudio daemon with a virtual microphone, for capture tests.
#
#   tests/pulse-virtual-mic.sh start [DIR]   start it (idempotent); prints the env to use
#   tests/pulse-virtual-mic.sh env   [DIR]   print the env of a running one
#   tests/pulse-virtual-mic.sh stop  [DIR]   stop it and remove DIR
#   tests/pulse-virtual-mic.sh slow  [DIR]   the microphone's signal off: a slow-start source
#   tests/pulse-virtual-mic.sh fast  [DIR]   the signal on again (what `start` leaves)
#
# DIR (default /tmp/dictum-pulse-$UID) holds everything: runtime dir, socket, pid, log, a
# HOME for the daemon's cookie. Nothing touches the user's own PulseAudio/PipeWire session.
#
# Graph: module-null-sink `dictum_sink` (play into it: `paplay --device=dictum_sink x.wav`)
#        -> its monitor -> module-virtual-source `dictum_mic`, the default source.
# Loading the null sink makes it the default *output* too, so plain `paplay x.wav` also
# reaches the mic.
#
# The microphone's signal: a real microphone delivers a buffer every period from the moment
# its stream opens (~10-50 ms). A null sink with nothing playing renders in 2 s blocks, so a
# stream opened on its monitor got its first samples 1.5-2 s late (`parec --latency-msec=20`:
# 1755-1845 ms). `start` therefore plays silence into `dictum_sink` at 20 ms latency
# (`pacat` from /dev/zero, its pid in DIR/signal.pid): the first samples then come after
# 6-22 ms. `slow` stops it, which makes `dictum_mic` a source that needs ~1.5-2 s to start
# (a Bluetooth headset switching profile, for the tests of that wait); `fast` restarts it.
#
# Works as root: the daemon runs with --system=false, -n (no default.pa: no hardware, no
# D-Bus, no X11 modules) and loads exactly the modules above; anonymous auth on a socket in
# DIR. Installs pulseaudio, pulseaudio-utils and libasound2-plugins via apt when missing.
#
# DICTUM_SOUND_SERVER=pipewire (at `start`): PipeWire instead, as most desktops now run it:
# `pipewire`, its session manager `wireplumber` and its PulseAudio server `pipewire-pulse`
# (Debian's pipewire-pulse), each a process of its own with HOME, XDG dirs and a private
# D-Bus session daemon in DIR, so the same socket path serves the same clients. The graph is
# the same but for the microphone: pipewire-pulse has no module-virtual-source, so it is a
# module-remap-source of the sink's monitor (still a source of its own, the default one).
# Installs pipewire, pipewire-pulse and wireplumber via apt when missing.
#
# DICTUM_MIC_SOURCE=NAME (at `start`): the microphone's source name (default dictum_mic);
# e.g. `bluez_input.00_1B_66_AA_BB_CC.0` for a stand-in of a Bluetooth headset's microphone,
# which Dictum tells by the name its audio server gives it.
#
# `start` prints `KEY=value` lines (also usable with `eval "$(… start | sed 's/^/export /')"`):
#   PULSE_SERVER     unix:DIR/runtime/pulse/native  (clients: pactl, paplay, cpal, ALSA pulse plugin)
#   XDG_RUNTIME_DIR  DIR/runtime
#   PULSE_RUNTIME_PATH DIR/runtime/pulse
#   DICTUM_PULSE_DIR DIR
set -euo pipefail

cmd="${1:-}"
dir="${2:-${DICTUM_PULSE_DIR:-/tmp/dictum-pulse-$(id -u)}}"
runtime="$dir/runtime"
pulse_dir="$runtime/pulse"
socket="$pulse_dir/native"
server="unix:$socket"

log() { echo "pulse-virtual-mic: $*" >&2; }

# The server and microphone `start` chose (kept in DIR for slow/fast/stop/env).
server_kind() { cat "$dir/server" 2>/dev/null || echo "${DICTUM_SOUND_SERVER:-pulseaudio}"; }
mic_name() { cat "$dir/mic" 2>/dev/null || echo "${DICTUM_MIC_SOURCE:-dictum_mic}"; }

print_env() {
    echo "PULSE_SERVER=$server"
    echo "XDG_RUNTIME_DIR=$runtime"
    echo "PULSE_RUNTIME_PATH=$pulse_dir"
    echo "DICTUM_PULSE_DIR=$dir"
}

# apt_install PKG...: installs them (none given: nothing).
apt_install() {
    [ "$#" -gt 0 ] || return 0
    log "installing $*"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >&2
}

ensure_packages() {
    local missing=()
    command -v pulseaudio >/dev/null 2>&1 || missing+=(pulseaudio)
    command -v pactl >/dev/null 2>&1 && command -v paplay >/dev/null 2>&1 || missing+=(pulseaudio-utils)
    [ -e /usr/share/alsa/alsa.conf.d/pulse.conf ] || [ -e /etc/alsa/conf.d/99-pulse.conf ] ||
        dpkg -s libasound2-plugins >/dev/null 2>&1 || missing+=(libasound2-plugins)
    apt_install "${missing[@]}"
}

ensure_pipewire_packages() {
    local missing=()
    command -v pipewire >/dev/null 2>&1 || missing+=(pipewire pipewire-bin)
    command -v pipewire-pulse >/dev/null 2>&1 || missing+=(pipewire-pulse)
    command -v wireplumber >/dev/null 2>&1 || missing+=(wireplumber)
    command -v dbus-daemon >/dev/null 2>&1 || missing+=(dbus-daemon)
    # The pactl/paplay clients are PulseAudio's whichever server answers them.
    command -v pactl >/dev/null 2>&1 && command -v paplay >/dev/null 2>&1 || missing+=(pulseaudio-utils)
    apt_install "${missing[@]}"
}

pa() { PULSE_SERVER="$server" PULSE_RUNTIME_PATH="$pulse_dir" XDG_RUNTIME_DIR="$runtime" "$@"; }

running() { [ -S "$socket" ] && pa pactl info >/dev/null 2>&1; }

daemon_pid() { cat "$pulse_dir/pid" 2>/dev/null || true; }

signal_on() {
    local pid
    pid="$(cat "$dir/signal.pid" 2>/dev/null || true)"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        return
    fi
    PULSE_SERVER="$server" PULSE_RUNTIME_PATH="$pulse_dir" XDG_RUNTIME_DIR="$runtime" \
        pacat --playback --device=dictum_sink --latency-msec=20 --format=s16le \
        --rate=16000 --channels=1 --raw --client-name=dictum-test-mic-signal /dev/zero \
        </dev/null >/dev/null 2>>"$dir/signal.log" &
    echo $! >"$dir/signal.pid"
    # The sink finishes the 2 s block it was rendering before it follows the signal's
    # latency: the first read from the monitor returns once it does.
    pa timeout 5 parec --device=dictum_sink.monitor --latency-msec=20 --format=s16le \
        --rate=16000 --channels=1 --raw 2>/dev/null | head -c 2 >/dev/null || true
}

signal_off() {
    local pid
    pid="$(cat "$dir/signal.pid" 2>/dev/null || true)"
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    rm -f "$dir/signal.pid"
}

# PipeWire, its session manager and its PulseAudio server, in DIR (see the header). Each
# process detached from this script's output (the caller reads it to its end).
start_pipewire() {
    ensure_pipewire_packages
    mkdir -p "$runtime" "$dir/home"
    chmod 700 "$runtime"
    local bus="unix:path=$dir/bus"
    dbus-daemon --session --fork --address="$bus" --print-pid=1 >"$dir/dbus.pid" </dev/null 2>>"$dir/dbus.log" ||
        { log "dbus-daemon failed to start; log:"; cat "$dir/dbus.log" >&2 || true; exit 1; }
    local env=(env -u DISPLAY -u WAYLAND_DISPLAY -u PIPEWIRE_REMOTE HOME="$dir/home"
        XDG_CONFIG_HOME="$dir/home/.config" XDG_STATE_HOME="$dir/home/.local/state"
        XDG_DATA_HOME="$dir/home/.local/share" XDG_RUNTIME_DIR="$runtime"
        PULSE_RUNTIME_PATH="$pulse_dir" DBUS_SESSION_BUS_ADDRESS="$bus")
    : >"$dir/pipewire.pids"
    "${env[@]}" pipewire </dev/null >"$dir/pipewire.log" 2>&1 &
    echo $! >>"$dir/pipewire.pids"
    for _ in $(seq 1 100); do
        [ -S "$runtime/pipewire-0" ] && break
        sleep 0.05
    done
    [ -S "$runtime/pipewire-0" ] || { log "pipewire did not start; log:"; cat "$dir/pipewire.log" >&2 || true; exit 1; }
    "${env[@]}" wireplumber </dev/null >"$dir/wireplumber.log" 2>&1 &
    echo $! >>"$dir/pipewire.pids"
    "${env[@]}" pipewire-pulse </dev/null >"$dir/pipewire-pulse.log" 2>&1 &
    echo $! >>"$dir/pipewire.pids"
    for _ in $(seq 1 100); do
        running && break
        sleep 0.05
    done
    running || { log "pipewire-pulse did not answer on $socket; logs:"; cat "$dir"/pipewire*.log "$dir/wireplumber.log" >&2 || true; exit 1; }
    pa pactl load-module module-null-sink sink_name=dictum_sink \
        sink_properties=device.description=Dictum_test_sink >/dev/null
    pa pactl load-module module-remap-source source_name="$(mic_name)" \
        master=dictum_sink.monitor >/dev/null
}

start() {
    if running; then
        log "already running in $dir"
    else
        # The choice is this start's (not a stale DIR's).
        mkdir -p "$dir"
        echo "${DICTUM_SOUND_SERVER:-pulseaudio}" >"$dir/server"
        echo "${DICTUM_MIC_SOURCE:-dictum_mic}" >"$dir/mic"
    fi
    if running; then
        :
    elif [ "$(server_kind)" = pipewire ]; then
        start_pipewire
    else
        ensure_packages
        mkdir -p "$pulse_dir" "$dir/home"
        chmod 700 "$runtime" "$pulse_dir"
        rm -f "$socket" "$pulse_dir/pid"
        # HOME points at DIR so the daemon's cookie and state stay out of the real home.
        HOME="$dir/home" XDG_CONFIG_HOME="$dir/home/.config" \
            PULSE_RUNTIME_PATH="$pulse_dir" XDG_RUNTIME_DIR="$runtime" \
            pulseaudio --daemonize=yes --system=false -n \
            --exit-idle-time=-1 --disallow-exit --disallow-module-loading=no \
            --use-pid-file=yes --log-target="file:$dir/pulse.log" \
            --load="module-native-protocol-unix auth-anonymous=1 socket=$socket" \
            --load="module-null-sink sink_name=dictum_sink sink_properties=device.description=Dictum_test_sink" \
            --load="module-virtual-source source_name=$(mic_name) master=dictum_sink.monitor" \
            || { log "pulseaudio failed to start; log:"; cat "$dir/pulse.log" >&2 || true; exit 1; }
        for _ in $(seq 1 100); do
            running && break
            sleep 0.05
        done
        running || { log "pulseaudio did not answer on $socket; log:"; cat "$dir/pulse.log" >&2 || true; exit 1; }
    fi
    # wireplumber may take a moment to register a new source before it can be the default.
    local mic
    mic="$(mic_name)"
    for _ in $(seq 1 100); do
        pa pactl list short sources | awk '{print $2}' | grep -qxF "$mic" && break
        sleep 0.05
    done
    pa pactl list short sources | awk '{print $2}' | grep -qxF "$mic" || { log "$mic missing"; exit 1; }
    pa pactl set-default-source "$mic"
    pa pactl set-default-sink dictum_sink
    signal_on
    print_env
}

stop() {
    local pid
    signal_off
    # PipeWire's three processes and its D-Bus daemon (none under PulseAudio).
    for pid in $(cat "$dir/pipewire.pids" 2>/dev/null) $(cat "$dir/dbus.pid" 2>/dev/null); do
        kill "$pid" 2>/dev/null || true
    done
    for pid in $(cat "$dir/pipewire.pids" 2>/dev/null) $(cat "$dir/dbus.pid" 2>/dev/null); do
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    done
    pid="$(daemon_pid)"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    fi
    case "$dir" in
        /tmp/*|"${TMPDIR:-/tmp}"/*) rm -rf "$dir" ;;
        *) log "not removing $dir (outside /tmp)" ;;
    esac
}

case "$cmd" in
    start) start ;;
    stop) stop ;;
    slow) signal_off ;;
    fast) running && signal_on ;;
    env)
        running || { log "not running in $dir (run: $0 start)"; exit 1; }
        print_env
        ;;
    *)
        echo "usage: $0 start|stop|slow|fast|env [DIR]" >&2
        exit 2
        ;;
esac
