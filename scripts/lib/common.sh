# Shared by scripts/run and scripts/test: install what is missing (idempotently) and set the
# paths every command uses. Source it; do not run it.

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dictum/target}"
export DICTUM_TEST_ASSETS="${DICTUM_TEST_ASSETS:-$repo_root/../shared}"

# Each step names itself and when it began (minutes:seconds since the script started), so a slow
# CI run says where its time went.
log() { printf '==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

# stage NAME: log NAME as the start of a step whose time stage_report prints (scripts/test's
# per-stage table: a step lasts until the next one begins).
stage_names=()
stage_starts=()
stage() {
    stage_names+=("$*")
    stage_starts+=("$SECONDS")
    log "$*"
}
stage_report() {
    local status=$? i n=${#stage_names[@]} end
    [ "$n" -gt 0 ] || return "$status"
    printf '\nTime per stage (min:s), %s:\n' "$([ "$status" -eq 0 ] && echo "all passed" || echo "FAILED in the last one")" >&2
    for ((i = 0; i < n; i++)); do
        end=$SECONDS
        [ $((i + 1)) -lt "$n" ] && end=${stage_starts[$((i + 1))]}
        printf '  %3d:%02d  %s\n' $(((end - stage_starts[i]) / 60)) $(((end - stage_starts[i]) % 60)) "${stage_names[$i]%%(*}" >&2
    done
    printf '  %3d:%02d  total\n' $((SECONDS / 60)) $((SECONDS % 60)) >&2
    return "$status"
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# apt_ensure PKG...: installs the Debian/Ubuntu packages that are not installed yet.
apt_ensure() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing ${missing[*]}"
    if [ -z "${DICTUM_APT_UPDATED:-}" ]; then
        as_root apt-get update -qq
        export DICTUM_APT_UPDATED=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# Build tools for whisper.cpp (cmake, C++), bindgen (libclang) and the crates' C parts.
ensure_build_deps() {
    # python3 + pip: scripts/llama-server fetches the test LLM server's source with pip, and
    # tests/ollama_standin.py runs on python3 (both used by the real-LLM tests). libasound2-dev:
    # cpal links ALSA (its fallback host); a fresh machine does not have it. libxkbcommon-dev +
    # xkb-data: the uinput keyboard compiles the user's layout with libxkbcommon (inject/uinput).
    apt_ensure build-essential cmake pkg-config clang libclang-dev curl ca-certificates python3 python3-pip \
        libasound2-dev libxkbcommon-dev xkb-data
    if ! command -v cargo >/dev/null 2>&1; then
        [ -x "$HOME/.cargo/bin/cargo" ] || {
            log "installing the Rust toolchain with rustup"
            curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt
        }
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
}

# The Vulkan loader and Mesa's Vulkan drivers, lavapipe among them (a CPU Vulkan device):
# `dictum doctor` lists it as CPU-type and keeps speech on the CPU
# (crates/dictum-cli/tests/doctor_vulkan.rs).
ensure_vulkan_deps() {
    apt_ensure libvulkan1 mesa-vulkan-drivers
}

# What building whisper.cpp's Vulkan backend needs (scripts/build-vulkan): the loader's
# development files, glslc for the compute shaders, and Vulkan headers that know
# VK_EXT_layer_settings (ggml-vulkan uses it). Debian 12's headers (1.3.239) do not: then Debian 13's
# libvulkan-dev (headers only, pinned by SHA-256) is unpacked into the cache, never installed.
# Prints the folder to put first on the include path, or nothing when the system's will do.
vulkan_headers_version=1.4.309.0-1
vulkan_headers_sha256=8d329d465e16168afff58b1bd0dd6db46aac2cc3f56054a481b25a04e90b345a
ensure_vulkan_build_deps() {
    ensure_build_deps >&2
    apt_ensure libvulkan-dev glslc mesa-vulkan-drivers >&2
    if grep -q 'LayerSettingEXT' /usr/include/vulkan/vulkan_structs.hpp 2>/dev/null; then
        return 0
    fi
    local dir="${XDG_CACHE_HOME:-$HOME/.cache}/dictum/vulkan-headers-$vulkan_headers_version"
    if [ ! -f "$dir/usr/include/vulkan/vulkan.hpp" ]; then
        local deb="$dir.deb"
        log "Vulkan headers without VK_EXT_layer_settings: fetching Debian 13's libvulkan-dev $vulkan_headers_version (headers only) into $dir"
        mkdir -p "$(dirname "$dir")"
        curl -fsSL --retry 3 -o "$deb" \
            "http://deb.debian.org/debian/pool/main/v/vulkan-loader/libvulkan-dev_${vulkan_headers_version}_amd64.deb"
        echo "$vulkan_headers_sha256  $deb" | sha256sum -c --quiet - ||
            { echo "the downloaded libvulkan-dev does not match its SHA-256; delete $deb and retry" >&2; return 1; }
        rm -rf "$dir.tmp" && dpkg-deb -x "$deb" "$dir.tmp" && rm -rf "$dir" && mv "$dir.tmp" "$dir"
    fi
    echo "$dir/usr/include"
}

# What the end-to-end injection tests drive: a private X server (Xvfb), a terminal to type
# into (xterm), xdotool (pointer, held keys, Return), xclip (another clipboard owner) and
# notify-send (the failure notification; harmless without a notification daemon); espeak-ng
# and sox speak and shape the voice-command and hands-free clips (live_commands.rs, ...).
# DICTUM_REQUIRE_E2E=1 makes those tests fail instead of skipping when a tool is missing.
ensure_e2e_deps() {
    apt_ensure xvfb xterm xdotool xclip x11-utils libnotify-bin espeak-ng sox
    # The live edit-mode test's text box (tests/gtk_textbox.py): a GTK 4 TextView from Python.
    apt_ensure python3-gi gir1.2-gtk-4.0
    # The AT-SPI reader's test (crates/dictum-engine/tests/atspi_caret.rs): at-spi-bus-launcher
    # and at-spi2-registryd, the accessibility bus a GTK 4 field (tests/gtk_caret_box.py) talks to.
    apt_ensure at-spi2-core
    # The virtual microphone's sound server. tests/pulse-virtual-mic.sh installs it too when it
    # starts one, but tests check for paplay/pactl before that (on a fresh machine the fault
    # matrix, the first live test to run, failed on it). Not when another server provides the
    # commands (pipewire-pulse on a desktop): the script uses whatever pactl/paplay are there.
    if ! command -v pulseaudio >/dev/null 2>&1 || ! command -v pactl >/dev/null 2>&1 ||
        ! command -v paplay >/dev/null 2>&1; then
        apt_ensure pulseaudio pulseaudio-utils libasound2-plugins
    fi
    # PipeWire's PulseAudio server for the microphone test under PipeWire (live_mic,
    # DICTUM_SOUND_SERVER=pipewire in tests/pulse-virtual-mic.sh): installed here so no test
    # runs apt-get beside another. Not on a desktop whose session runs PulseAudio itself
    # (a user's pulse socket in /run/user): Debian enables pipewire-pulse's user units, which
    # would compete with it for that socket at the next login. There the PipeWire part of
    # live_mic says it is skipped and why (DICTUM_SKIP_PIPEWIRE).
    if command -v pipewire-pulse >/dev/null 2>&1 && command -v wireplumber >/dev/null 2>&1; then
        :
    elif compgen -G "/run/user/*/pulse/native" >/dev/null && ! pgrep -x pipewire >/dev/null; then
        export DICTUM_SKIP_PIPEWIRE="this desktop's session runs PulseAudio; installing pipewire-pulse would compete with it (apt install pipewire-pulse wireplumber to run this part)"
        log "not installing pipewire-pulse: $DICTUM_SKIP_PIPEWIRE"
    else
        apt_ensure pipewire pipewire-bin pipewire-pulse wireplumber dbus-daemon
    fi
    export DICTUM_REQUIRE_E2E=1
}

# What the Wayland tests drive (crates/dictum-engine/tests/inject_wayland.rs,
# crates/dictum-cli/tests/live_wayland.rs): a headless sway with XWayland, a native terminal
# (foot) and an X11 one (xterm), wtype (the typing reference), wl-clipboard (another clipboard
# owner, wl-paste), xhost (lets the tests' XTest into the test user's XWayland), the gsettings
# schema for GNOME's custom shortcuts (`dictum shortcut install` on GNOME, tested with
# gsettings' keyfile backend), and runuser/useradd (sway refuses root: the session runs as an
# unprivileged test user). The tray indicator's Wayland test (tray_indicator_wayland.rs) also
# needs grim (screenshots of the layer surface) and libgtk-layer-shell0 (the tray app loads it
# at run time to make the indicator a layer-shell overlay).
ensure_wayland_deps() {
    apt_ensure sway foot wtype wl-clipboard xwayland xterm x11-xserver-utils libglib2.0-bin \
        gnome-settings-daemon-common util-linux passwd grim libgtk-layer-shell0
    export DICTUM_REQUIRE_E2E=1
}

# The XDG portal tests: the real KDE Plasma 5.27 stack (headless kwin_wayland --virtual, which
# hosts kglobalaccel; xdg-desktop-portal + -kde; qtwayland5 for the portal's Qt; a GTK 3 window
# as the native Wayland target) for crates/dictum-engine/tests/portal_kde.rs, and dbus-daemon +
# python3-dbus-next for the declared stand-in portal (tests/portal_standin.py).
ensure_portal_deps() {
    apt_ensure dbus python3-dbus-next kwin-wayland xdg-desktop-portal xdg-desktop-portal-kde \
        qtwayland5 python3-gi gir1.2-gtk-3.0
    export DICTUM_REQUIRE_E2E=1
}

# The GNOME portal test (crates/dictum-engine/tests/portal_gnome.rs): headless mutter 43
# (GNOME's compositor), xdg-desktop-portal + -gnome, a GTK 3 window as the native Wayland
# target; python3-gi's Gio also drives tests/mutter_keys.py (the "user" answering GNOME's
# consent dialog); wl-clipboard for paste mode (mutter has no data-control clipboard);
# xwayland and x11-utils (xdpyinfo, xwininfo, xprop) for the tray indicator's GNOME with
# XWayland case.
ensure_gnome_deps() {
    apt_ensure dbus mutter xdg-desktop-portal xdg-desktop-portal-gnome python3-gi gir1.2-gtk-3.0 \
        wl-clipboard xwayland x11-utils
    export DICTUM_REQUIRE_E2E=1
}

# ensure_model FILE: makes sure the whisper model FILE is in Dictum's models folder, from the
# test assets when they are there, else from the models' public home.
ensure_model() {
    local file="$1"
    local dir="${DICTUM_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/dictum}/models"
    mkdir -p "$dir"
    [ -s "$dir/$file" ] && return 0
    if [ -s "$DICTUM_TEST_ASSETS/models/$file" ]; then
        log "copying $file from $DICTUM_TEST_ASSETS/models"
        cp "$DICTUM_TEST_ASSETS/models/$file" "$dir/$file.part"
        mv "$dir/$file.part" "$dir/$file"
    else
        # The engine's own downloader: resumes, and checks the published size, SHA-256 and SHA-1.
        log "downloading $file (dictum models download)"
        cargo build --release --locked -p dictum-cli >&2
        "$CARGO_TARGET_DIR/release/dictum" models download "$file" >&2
    fi
}

# The tray app (src-tauri/, a workspace member: clippy and tests build it): Tauri's system
# libraries, and Node for the UI (Debian's nodejs/npm are enough; an installed Node is kept).
ensure_tray_deps() {
    apt_ensure libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev \
        libsoup-3.0-dev libjavascriptcoregtk-4.1-dev
    command -v npm >/dev/null 2>&1 || apt_ensure nodejs npm
}

# ensure_ui: the UI's npm packages (npm ci, again only when package-lock.json changed) and its
# build in ui/dist, which the tray app embeds.
ensure_ui() {
    ensure_tray_deps
    local lock="$repo_root/ui/package-lock.json" stamp="$repo_root/ui/node_modules/.dictum-lock"
    if ! cmp -s "$lock" "$stamp"; then
        log "npm ci (ui/)"
        # Some registry mirrors serve no other-platform optional packages (esbuild/rollup/tauri
        # binaries for macOS, Windows): the lock then lists fewer than npm ci expects. Fall back
        # to installing the same locked versions without touching the lock.
        (cd "$repo_root/ui" && { npm ci --no-audit --no-fund --loglevel=error 2>/dev/null || {
            echo "npm ci: the lock lists fewer platform packages than this registry expects; installing the locked versions with npm install --no-save"
            npm install --no-save --no-audit --no-fund --loglevel=error
        }; }) >&2
        cp "$lock" "$stamp"
    fi
    log "building the UI (ui/dist)"
    (cd "$repo_root/ui" && npm run --silent build) >&2
}

# What the UI and tray app tests drive: Debian's chromium (Playwright's own browser download
# is not used), Xvfb + a D-Bus session for the real app, ImageMagick for its screenshots.
ensure_ui_test_deps() {
    apt_ensure chromium xvfb xauth imagemagick dbus dbus-daemon x11-utils fonts-dejavu-core
}

# What scripts/package uses: dpkg-dev (dpkg-shlibdeps), binutils (strip), rpm (rpmbuild), and
# lintian for the packaging test's check of the .deb.
ensure_package_deps() {
    apt_ensure dpkg-dev binutils rpm lintian man-db
}

# Audio and video files for `dictum transcribe` (issue 40): ffmpeg decodes Opus and video at
# run time and makes the test files (AAC, Vorbis, MPEG-4 video), lame the MP3s, oggenc the Ogg
# Vorbis, opusenc the Opus and flac the FLAC of crates/dictum-cli/tests/file_formats.rs and
# crates/dictum-engine/tests/decode_fuzz.rs.
ensure_media_deps() {
    apt_ensure ffmpeg lame vorbis-tools opus-tools flac
}

# Shared-speech-server tests (crates/dictum-cli/tests/remote_stt.rs, issue 15): the real
# whisper.cpp whisper-server (built once, cached outside the clone) and a real Secret Service
# (gnome-keyring on a private D-Bus session) for the keyring path.
ensure_remote_stt_deps() {
    apt_ensure dbus gnome-keyring flac
    [ "${1:-}" = --apt-only ] || "$repo_root/scripts/whisper-cpp-baseline" --build-only
}
