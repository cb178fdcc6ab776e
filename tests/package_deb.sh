#!/usr/bin/env bash
# The packages as a user gets them (issue 14). Installs the .deb with apt-get, then, from the
# installed files only (PATH=/usr/bin:/bin, a fresh HOME, run from an empty folder, nothing of
# the repository):
#   - `dictum --version` names the version and build features; `man dictum`, `man dictum-tray`
#     and the bash completion work;
#   - `dictum transcribe` on a dev clip gives its reference words (model copied into the fresh
#     HOME's models folder, as the first-run import would);
#   - `dictum-tray`, started under Xvfb with the installed desktop entry's Exec line and no
#     model, opens the first-run window (screenshot: docs/img/first-run.png unless OUT given);
#   - reinstalling (the upgrade path) and `apt-get remove dictum` keep ~/.local/share/dictum;
#   - lintian reports no errors (its warnings are printed; docs/PACKAGING.md gives reasons);
#   - the .rpm (when given) carries the same files, the license files and library Requires.
# The package is purged at the end (also on failure), so the machine is left as it was found.
#
#   tests/package_deb.sh DEB [RPM] [SCREENSHOT]
# Needs root (apt-get), Xvfb, xdotool, ImageMagick, man, lintian, rpm; with
# DICTUM_REQUIRE_E2E=1 a missing tool fails the test instead of skipping it.
set -euo pipefail
deb="$(realpath "$1")"
rpm_file="${2:+$(realpath "$2")}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
shot="${3:-$repo/docs/img/first-run.png}"
assets="${DICTUM_TEST_ASSETS:-$repo/../shared}"
assets="$(realpath "$assets")"

fail() { echo "package test: FAIL: $*" >&2; exit 1; }
for tool in apt-get dpkg Xvfb xdotool import convert man lintian rpm dbus-run-session; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        [ "${DICTUM_REQUIRE_E2E:-}" = 1 ] && fail "$tool is missing (scripts/lib/common.sh ensure_package_deps installs it)"
        echo "package test: skipped, $tool is missing" >&2
        exit 0
    fi
done
[ "$(id -u)" -eq 0 ] || fail "run as root: it installs the package with apt-get"
# A run that was killed between its install and its purge (a stopped machine, a timeout) leaves
# this marker beside the package it installed: that leftover is this test's own and is purged.
# On CI (.ci/run sets DICTUM_CI=1) the machine is disposable, so any installed dictum is purged
# with a line saying so; anywhere else a dictum this test did not install is the user's: refuse.
marker=/var/lib/dictum-package-test/installed
if dpkg-query -W -f='${Status}' dictum 2>/dev/null | grep -q "install ok installed"; then
    installed_version="$(dpkg-query -W -f='${Version}' dictum)"
    if [ -e "$marker" ]; then
        echo "package test: purging dictum $installed_version left by an interrupted run of this test ($marker)"
    elif [ "${DICTUM_CI:-}" = 1 ]; then
        echo "package test: purging dictum $installed_version found installed on this CI machine (DICTUM_CI=1)"
    else
        fail "dictum $installed_version is installed already and this test did not install it; remove it first (apt-get purge dictum): the test must leave the machine as it found it"
    fi
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq dictum >/dev/null 2>&1 || fail "apt-get purge dictum failed"
fi
rm -f "$marker"

work="$(mktemp -d)"
chmod 755 "$work"
xvfb_pid="" app_pid="" installed=0
cleanup() {
    [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true
    [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
    if [ "$installed" = 1 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq dictum >/dev/null 2>&1 && rm -f "$marker" || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

home="$work/home"
mkdir -p "$home" "$work/cwd"
# Only what the package installed: no repository paths, no cargo, no build dirs.
user_env=(env -i PATH=/usr/bin:/bin HOME="$home" LANG=C.UTF-8 USER=root)

echo "== apt-get install ./$(basename "$deb")"
cp "$deb" "$work/"
t0=$(date +%s)
mkdir -p "$(dirname "$marker")"
echo "$deb" >"$marker"
installed=1
(cd "$work" && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$(basename "$deb")" >"$work/apt.log" 2>&1) ||
    { cat "$work/apt.log" >&2; fail "apt-get install failed"; }
echo "installed in $(($(date +%s) - t0)) s; $(dpkg-query -W -f='${Installed-Size}' dictum) KiB on disk"
[ "$(command -v dictum)" = /usr/bin/dictum ] || fail "dictum is not /usr/bin/dictum"

version="$(dpkg-query -W -f='${Version}' dictum)"
out="$(cd "$work/cwd" && "${user_env[@]}" dictum --version)"
echo "dictum --version: $out"
[[ "$out" == "dictum $version (CPU)" ]] || fail "dictum --version said \"$out\", expected \"dictum $version (CPU)\""
out="$(cd "$work/cwd" && "${user_env[@]}" dictum-tray --version)"
[[ "$out" == "dictum-tray $version (CPU)" ]] || fail "dictum-tray --version said \"$out\""
# What is installed is the optimised build without the tests' fault-injection seams
# (dictum-engine's `test-hooks` feature, on for `cargo test` only).
for b in dictum dictum-tray; do
    ! grep -aq -e DICTUM_FAULT -e DICTUM_STT_WORKER_PROGRAM "/usr/bin/$b" ||
        fail "/usr/bin/$b carries the test hooks (DICTUM_FAULT): it was built with dictum-engine/test-hooks or in debug"
done
doctor="$(cd "$work/cwd" && "${user_env[@]}" dictum doctor 2>&1 || true)"
grep -q "release build" <<<"$doctor" || { echo "$doctor" >&2; fail "dictum doctor does not report a release build"; }

echo "== man pages and completions"
(cd "$work/cwd" && "${user_env[@]}" MANPAGER=cat MANWIDTH=200 man dictum) >"$work/man.txt" 2>&1 || { cat "$work/man.txt" >&2; fail "man dictum failed"; }
grep -Eq "dictum +- +Local push-to-talk dictation" "$work/man.txt" || { head -20 "$work/man.txt" >&2; fail "man dictum lacks its NAME line"; }
grep -q "transcribe" "$work/man.txt" || fail "man dictum does not list the subcommands"
(cd "$work/cwd" && "${user_env[@]}" MANPAGER=cat MANWIDTH=200 man dictum-tray) | grep -q "first start" || fail "man dictum-tray does not describe the first run"
(cd "$work/cwd" && "${user_env[@]}" MANPAGER=cat man dictum-transcribe) | grep -q "dictum-transcribe" || fail "man dictum-transcribe missing"
"${user_env[@]}" bash -c 'source /usr/share/bash-completion/completions/dictum && complete -p dictum' | grep -q _dictum ||
    fail "the bash completion does not register for dictum"
"${user_env[@]}" bash -c 'source /usr/share/bash-completion/completions/dictum
    COMP_WORDS=(dictum tra); COMP_CWORD=1; COMP_LINE="dictum tra"; COMP_POINT=10; _dictum dictum tra dictum; echo "${COMPREPLY[*]}"' |
    grep -qw transcribe || fail "bash completion of 'dictum tra' does not offer transcribe"
for f in /usr/share/zsh/vendor-completions/_dictum /usr/share/fish/vendor_completions.d/dictum.fish \
    /usr/lib/systemd/user/dictum.service /etc/xdg/autostart/dictum.desktop \
    /usr/share/icons/hicolor/512x512/apps/org.dictum.tray.png /usr/share/icons/hicolor/scalable/apps/org.dictum.tray.svg \
    /usr/share/icons/hicolor/16x16/apps/org.dictum.tray.png /usr/share/metainfo/org.dictum.tray.metainfo.xml \
    /usr/share/doc/dictum/copyright; do
    [ -s "$f" ] || fail "$f is not installed"
done
grep -q '^ExecStart=/usr/bin/dictum run$' /usr/lib/systemd/user/dictum.service || fail "the systemd unit does not start dictum run"
grep -q '^Hidden=true$' /etc/xdg/autostart/dictum.desktop || fail "the autostart entry is not off by default"

echo "== dictum transcribe (a dev clip, the model the first-run import would put there)"
models="$home/.local/share/dictum/models"
mkdir -p "$models"
cp "$assets/models/ggml-tiny.en-q8_0.bin" "$models/"
clip="$work/jfk.wav"
cp "$assets/audio/dev/jfk.wav" "$clip"
chmod 644 "$clip"
text="$(cd "$work/cwd" && "${user_env[@]}" dictum transcribe "$clip" 2>"$work/transcribe.err")" ||
    { cat "$work/transcribe.err" >&2; fail "dictum transcribe failed"; }
echo "transcript: $text"
echo "$text" | tr 'A-Z' 'a-z' | grep -q "ask not what your country can do for you" || fail "the transcript lacks the clip's words"
[ -s "$home/.local/share/dictum/history.sqlite3" ] || fail "transcribe wrote no history"

echo "== dictum-tray from the desktop entry, no model: the first-run window"
mv "$models/ggml-tiny.en-q8_0.bin" "$work/model.bin" # first run: no model installed
exec_line="$(sed -n 's/^Exec=//p' /usr/share/applications/org.dictum.tray.desktop | head -n 1)"
[ -n "$exec_line" ] || fail "the desktop entry has no Exec line"
read -r -a exec_argv <<<"$exec_line"
[ "${exec_argv[0]}" = dictum-tray ] || fail "the desktop entry runs ${exec_argv[0]}, not dictum-tray"
d=90
while [ -e "/tmp/.X11-unix/X$d" ] || [ -e "/tmp/.X$d-lock" ]; do d=$((d + 1)); done
Xvfb ":$d" -screen 0 1280x900x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
for _ in $(seq 50); do DISPLAY=":$d" xdotool getdisplaygeometry >/dev/null 2>&1 && break; sleep 0.1; done
runtime="$work/runtime"
mkdir -p "$runtime" && chmod 700 "$runtime"
log="$work/tray.log"
(cd "$work/cwd" && "${user_env[@]}" DISPLAY=":$d" XDG_RUNTIME_DIR="$runtime" \
    WEBKIT_DISABLE_DMABUF_RENDERER=1 WEBKIT_DISABLE_COMPOSITING_MODE=1 LIBGL_ALWAYS_SOFTWARE=1 NO_AT_BRIDGE=1 \
    PIDF="$work/tray.pid" dbus-run-session -- bash -c '"$@" & echo $! >"$PIDF"; wait' _ "${exec_argv[@]}" >"$log" 2>&1) &
for _ in $(seq 50); do [ -s "$work/tray.pid" ] && break; sleep 0.1; done
app_pid="$(cat "$work/tray.pid")"
ok=0
for _ in $(seq 900); do
    grep -q "welcome: rendered [1-9][0-9]* models" "$log" && { ok=1; break; }
    kill -0 "$app_pid" 2>/dev/null || break
    sleep 0.1
done
[ "$ok" = 1 ] || { cat "$log" >&2; fail "the first-run window did not render (no 'welcome: rendered' in the app log)"; }
grep -o "welcome: rendered.*" "$log" | head -n 1
DISPLAY=":$d" xdotool search --name "^Welcome to Dictum$" >/dev/null || fail "no window titled 'Welcome to Dictum'"
if DISPLAY=":$d" xdotool search --name "^Dictum — Settings$" >/dev/null 2>&1; then
    fail "the settings window opened instead of (or beside) the first-run window"
fi
sleep 2 # let WebKit paint
mkdir -p "$(dirname "$shot")"
DISPLAY=":$d" import -window root -crop 860x760+0+0 +repage "$work/shot.png"
colors=$(convert "$work/shot.png" -format '%k' info:)
[ "$colors" -gt 50 ] || fail "the first-run screenshot looks blank ($colors colors)"
cp "$work/shot.png" "$shot"
echo "screenshot: $shot ($colors colors)"
kill "$app_pid" 2>/dev/null || true
wait "$app_pid" 2>/dev/null || true
app_pid=""
mv "$work/model.bin" "$models/ggml-tiny.en-q8_0.bin"

echo "== upgrade path (reinstall) and apt-get remove keep the user's data"
before="$(cd "$home/.local/share/dictum" && find . -type f ! -name '*-wal' ! -name '*-shm' | sort | xargs sha256sum)"
(cd "$work" && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall "./$(basename "$deb")" >"$work/apt.log" 2>&1) ||
    { cat "$work/apt.log" >&2; fail "reinstalling the package failed"; }
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq dictum >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; fail "apt-get remove failed"; }
[ ! -e /usr/bin/dictum ] || fail "apt-get remove left /usr/bin/dictum"
after="$(cd "$home/.local/share/dictum" && find . -type f ! -name '*-wal' ! -name '*-shm' | sort | xargs sha256sum)"
[ "$before" = "$after" ] || fail "\$HOME/.local/share/dictum changed across reinstall + remove"
echo "kept: $(echo "$after" | wc -l) files in ~/.local/share/dictum (history, models)"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq dictum >/dev/null 2>&1 || true
installed=0
rm -f "$marker"
[ ! -e /etc/xdg/autostart/dictum.desktop ] || fail "purge left the autostart entry"

echo "== lintian"
lintian --tag-display-limit 0 --fail-on error "$deb" >"$work/lintian.txt" 2>&1 || {
    cat "$work/lintian.txt" >&2
    fail "lintian reports errors"
}
grep -E '^[EW]:' "$work/lintian.txt" || echo "(no errors or warnings)"

if [ -n "$rpm_file" ]; then
    echo "== rpm"
    rpm -qip "$rpm_file" 2>/dev/null | grep -E '^(Name|Version|License|Size)'
    rpm -qlp "$rpm_file" 2>/dev/null | sort >"$work/rpm.files"
    dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' | grep -v '/$' | grep -v -e '^/usr/share/doc/' -e '^/usr/share/lintian/' | sort >"$work/deb.files"
    missing="$(comm -23 "$work/deb.files" "$work/rpm.files")"
    [ -z "$missing" ] || fail "the .rpm lacks: $missing"
    grep -q '^/usr/share/licenses/dictum/LICENSE-APACHE$' "$work/rpm.files" || fail "the .rpm lacks the license files"
    reqs="$(rpm -qp --requires "$rpm_file" 2>/dev/null)"
    for r in 'libwebkit2gtk-4.1.so.0()(64bit)' 'libasound.so.2()(64bit)' libayatana-appindicator-gtk3; do
        grep -qF "$r" <<<"$reqs" || fail "the .rpm does not require $r"
    done
    echo "rpm: same $(wc -l <"$work/deb.files") files as the .deb, licenses, $(grep -c . <<<"$reqs") Requires"
fi
echo "package test: OK ($(du -h "$deb" | cut -f1) .deb${rpm_file:+, $(du -h "$rpm_file" | cut -f1) .rpm})"
