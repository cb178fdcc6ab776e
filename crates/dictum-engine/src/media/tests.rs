//! The media module against a stand-in MPRIS player ([`super::stand_in`], declared as one) on
//! a private `dbus-daemon --session`. Skipped without `dbus-daemon` unless
//! `DICTUM_REQUIRE_E2E` is set.

use super::stand_in::{PrivateBus, StandInPlayer};
use super::*;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

fn private_bus() -> Option<PrivateBus> {
    let bus = PrivateBus::start();
    if bus.is_none() {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but dbus-daemon is missing (sudo apt install dbus)"
        );
        eprintln!("SKIPPED: dbus-daemon missing (sudo apt install dbus)");
    }
    bus
}

#[test]
fn only_the_players_that_were_playing_are_paused_and_resumed() {
    let Some(bus) = private_bus() else { return };
    let music = StandInPlayer::start(&bus.address, "music", "Playing").expect("player");
    let podcast = StandInPlayer::start(&bus.address, "podcast", "Paused").expect("player");
    let video = StandInPlayer::start(&bus.address, "video", "Playing").expect("player");

    let paused = pause_playing(&bus.bus()).expect("pause");
    let mut names: Vec<&str> = paused.players.iter().map(|p| p.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "org.mpris.MediaPlayer2.music",
            "org.mpris.MediaPlayer2.video"
        ]
    );
    assert_eq!(
        (music.status(), podcast.status(), video.status()),
        ("Paused".into(), "Paused".into(), "Paused".into())
    );
    assert!(podcast.calls().is_empty(), "{:?}", podcast.calls());

    // Meanwhile the user stopped the video: it is left stopped.
    video.set_status("Stopped");
    let resumed = paused.resume(&bus.bus()).expect("resume");
    assert_eq!(resumed.len(), 1, "{resumed:?}");
    assert_eq!(music.status(), "Playing");
    assert_eq!(music.calls(), ["Pause", "Play"]);
    assert_eq!(podcast.status(), "Paused", "already paused: stays paused");
    assert!(podcast.calls().is_empty(), "{:?}", podcast.calls());
    assert_eq!(video.status(), "Stopped");
    assert_eq!(video.calls(), ["Pause"]);
}

#[test]
fn the_pauser_resumes_when_told_and_on_drop() {
    let Some(bus) = private_bus() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(STATE_FILE);
    let music = StandInPlayer::start(&bus.address, "music", "Playing").expect("player");

    let mut pauser = Pauser::new(bus.bus(), file.clone());
    pauser.set(true);
    pauser.set(true);
    assert!(pauser.wait_idle(WAIT));
    assert_eq!(music.status(), "Paused");
    let saved = Paused::load(&file).expect("state file while paused");
    assert_eq!(saved.players[0].name, music.name);
    pauser.set(false);
    assert!(pauser.wait_idle(WAIT));
    assert_eq!(music.status(), "Playing");
    assert!(!file.exists(), "state file removed once resumed");

    pauser.set(true);
    assert!(pauser.wait_idle(WAIT));
    assert_eq!(music.status(), "Paused");
    drop(pauser);
    assert_eq!(music.status(), "Playing", "resumed on drop (quit)");
    assert_eq!(music.calls(), ["Pause", "Play", "Pause", "Play"]);
}

#[test]
fn a_crash_leaves_a_state_file_that_the_next_start_resumes() {
    let Some(bus) = private_bus() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(STATE_FILE);
    let music = StandInPlayer::start(&bus.address, "music", "Playing").expect("player");
    let mut radio = StandInPlayer::start(&bus.address, "radio", "Playing").expect("player");

    let mut pauser = Pauser::new(bus.bus(), file.clone());
    pauser.set(true);
    assert!(pauser.wait_idle(WAIT));
    // The crash: no resume, no drop.
    std::mem::forget(pauser);
    assert_eq!(
        (music.status(), radio.status()),
        ("Paused".into(), "Paused".into())
    );
    assert_eq!(Paused::load(&file).expect("state file").players.len(), 2);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // The radio was restarted meanwhile (another process owns its name, paused): not ours.
    radio.quit();
    let radio = StandInPlayer::start(&bus.address, "radio", "Paused").expect("player");

    let next = Pauser::new(bus.bus(), file.clone());
    next.recover();
    assert!(next.wait_idle(WAIT));
    assert_eq!(music.status(), "Playing", "resumed at the next start");
    assert_eq!(radio.status(), "Paused", "a restarted player is left alone");
    assert!(radio.calls().is_empty());
    assert!(!file.exists(), "state file removed");
}

#[test]
fn no_session_bus_is_an_error_that_says_what_to_do() {
    let e = pause_playing(&Bus::Address("unix:path=/nonexistent/dictum-bus".into()))
        .expect_err("no bus");
    assert!(e.contains("pause_media"), "{e}");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(STATE_FILE);
    std::fs::write(&file, b"not json").expect("write");
    assert!(Paused::load(&file).is_none());
    assert!(!file.exists(), "a damaged file is dropped");
}
