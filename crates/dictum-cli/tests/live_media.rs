//! Media paused while recording (issue 29 item 3): `dictum run` on Xvfb with the PulseAudio
//! virtual microphone (the shared live X11 harness), `[dictation] pause_media = true`, and
//! STAND-IN MPRIS players (`dictum_engine::media::stand_in`: not real players, they serve
//! `PlaybackStatus` / `Pause` / `Play` and record the calls) on a private
//! `dbus-daemon --session` that the daemon under test gets as its session bus.
//!
//! - A playing player is paused at the press, stays paused while the key is held, and plays
//!   again once the text is in the xterm; a player that was already paused gets no call.
//! - Dictum killed (SIGKILL) while the key is held leaves the player paused; the next start
//!   resumes it.

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;
#[path = "support/speech.rs"]
mod speech;
#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::pulse::play_file_and_wait;
use common::x11::tools_present;
use dictum_engine::media::stand_in::{PrivateBus, StandInPlayer};
use std::time::{Duration, Instant};
use x11_daemon::{release_typed, Live, HOTKEY};

/// Waits (at most `limit`) until `player` reports `status`.
fn wait_status(player: &StandInPlayer, status: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if player.status() == status {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    player.status() == status
}

#[test]
fn media_pause_at_the_press_and_play_once_the_text_is_typed() {
    if !(tools_present() && speech::tools()) {
        return;
    }
    let Some(bus) = PrivateBus::start() else {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but dbus-daemon is missing (sudo apt install dbus)"
        );
        eprintln!("SKIPPED: dbus-daemon missing (sudo apt install dbus)");
        return;
    };
    let clips = tempfile::tempdir().expect("tempdir");
    let clip = speech::report(clips.path());

    let live = Live::start().expect("tools checked above");
    let (x, dir) = (&live.x, live.path());
    let term = live.editor("Dictum media");
    let music = StandInPlayer::start(&bus.address, "music", "Playing").expect("stand-in player");
    let podcast = StandInPlayer::start(&bus.address, "podcast", "Paused").expect("stand-in player");

    live.append_config("\n[dictation]\npause_media = true\n");
    // The daemon's session bus is the private one (one test in this binary: nothing else
    // reads the environment meanwhile; `Pulse` sets its address the same way).
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    let mut d = live.daemon();
    assert_eq!(music.status(), "Playing", "nothing paused before the press");

    let pressed = Instant::now();
    x.xdotool(&["keydown", HOTKEY]);
    assert!(
        wait_status(&music, "Paused", Duration::from_secs(5)),
        "the playing player is paused at the press: {:?}",
        music.calls()
    );
    eprintln!(
        "paused {} ms after the key-down",
        pressed.elapsed().as_millis()
    );
    play_file_and_wait(&clip);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        music.status(),
        "Paused",
        "still paused while the key is held"
    );
    // Taken before the key-up: the daemon's release is later still. The dictation event
    // comes once the text is typed: it is in the xterm, then the music plays again.
    let (released, ev) = release_typed(x, &mut d, &term, HOTKEY, "report");
    assert!(
        wait_status(&music, "Playing", Duration::from_secs(5)),
        "resumed after the typing: {:?}",
        music.calls()
    );
    assert_eq!(music.calls(), ["Pause", "Play"]);
    // Not before the typing ended: `Play` came later after the key-up than the typing did
    // (release_to_typed_ms is counted from the daemon's key-up, after `released`).
    let typed_ms = ev["release_to_typed_ms"]
        .as_f64()
        .expect("release_to_typed_ms");
    let play_ms = music.call_times()[1]
        .1
        .duration_since(released)
        .as_secs_f64()
        * 1000.0;
    eprintln!("typed {typed_ms:.0} ms after the key-up, music back at {play_ms:.0} ms: {ev}");
    assert!(
        play_ms >= typed_ms,
        "resumed before the text was typed: {ev}"
    );
    assert_eq!(podcast.status(), "Paused", "already paused: stays paused");
    assert!(podcast.calls().is_empty(), "{:?}", podcast.calls());

    // Killed while the key is held: the player stays paused until the next start.
    x.xdotool(&["keydown", HOTKEY]);
    assert!(wait_status(&music, "Paused", Duration::from_secs(5)));
    let state = dir.join(dictum_engine::media::STATE_FILE);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !state.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        state.exists(),
        "the paused players are on disk before a crash can lose them"
    );
    d.child.kill().expect("kill dictum");
    d.child.wait().expect("reap dictum");
    x.xdotool(&["keyup", HOTKEY]);
    drop(d);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        music.status(),
        "Paused",
        "nothing resumed it: Dictum was killed"
    );
    let _d = live.daemon();
    assert!(
        wait_status(&music, "Playing", Duration::from_secs(5)),
        "the next start resumes what the killed one paused: {:?}",
        music.calls()
    );
    assert_eq!(music.calls(), ["Pause", "Play", "Pause", "Play"]);
    assert!(podcast.calls().is_empty(), "{:?}", podcast.calls());
}
