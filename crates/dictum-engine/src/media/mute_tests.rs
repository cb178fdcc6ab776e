//! The output mute against a real PulseAudio daemon: a private one per test, started with the
//! shared `tests/pulse-virtual-mic.sh` (its null sink `dictum_sink` is the default output),
//! spoken to through its socket (the process environment is left alone) and observed with
//! `pactl`. Skipped without PulseAudio unless `DICTUM_REQUIRE_E2E` is set.

use super::*;
use std::process::Command;

const WAIT: Duration = Duration::from_secs(10);
const SINK: &str = "dictum_sink";

struct PrivatePulse {
    script: PathBuf,
    dir: PathBuf,
    server: String,
}

impl PrivatePulse {
    fn start(name: &str) -> Option<PrivatePulse> {
        let found = Command::new("sh")
            .args(["-c", "command -v pulseaudio && command -v pactl"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            assert!(
                std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
                "DICTUM_REQUIRE_E2E is set but PulseAudio is missing (sudo apt install pulseaudio pulseaudio-utils)"
            );
            eprintln!("SKIPPED: PulseAudio missing (sudo apt install pulseaudio pulseaudio-utils)");
            return None;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/pulse-virtual-mic.sh");
        let dir =
            std::env::temp_dir().join(format!("dictum-mute-test-{}-{name}", std::process::id()));
        let out = Command::new("bash")
            .arg(&script)
            .arg("start")
            .arg(&dir)
            .output()
            .expect("run tests/pulse-virtual-mic.sh");
        let mut pulse = PrivatePulse {
            script,
            dir,
            server: String::new(),
        };
        assert!(
            out.status.success(),
            "PulseAudio: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        pulse.server = stdout
            .lines()
            .find_map(|l| l.strip_prefix("PULSE_SERVER="))
            .expect("PULSE_SERVER")
            .to_string();
        Some(pulse)
    }

    fn server(&self) -> Server {
        Server::Socket(PathBuf::from(
            self.server.strip_prefix("unix:").unwrap_or(&self.server),
        ))
    }

    fn pactl(&self, args: &[&str]) -> String {
        let out = Command::new("pactl")
            .args(args)
            .env("PULSE_SERVER", &self.server)
            .output()
            .expect("pactl");
        assert!(
            out.status.success(),
            "pactl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `pactl get-sink-mute`: an observer independent of the code under test.
    fn muted(&self, sink: &str) -> bool {
        let out = self.pactl(&["get-sink-mute", sink]);
        match out.trim() {
            "Mute: yes" => true,
            "Mute: no" => false,
            other => panic!("pactl get-sink-mute {sink}: {other}"),
        }
    }

    fn wait_muted(&self, sink: &str, want: bool) -> bool {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if self.muted(sink) == want {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.muted(sink) == want
    }
}

impl Drop for PrivatePulse {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

#[test]
fn the_default_sink_is_muted_only_if_it_was_not_and_unmuted_after() {
    let Some(pulse) = PrivatePulse::start("once") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(STATE_FILE);
    let server = pulse.server();

    assert!(!pulse.muted(SINK));
    let m = mute_default(&server, &file)
        .expect("mute")
        .expect("it was not muted: muted now");
    assert_eq!(m.sink, SINK);
    assert!(pulse.muted(SINK), "muted");
    assert_eq!(sink_muted(&server, SINK), Ok(Some(true)));
    assert_eq!(Muted::load(&file), Some(m.clone()), "on disk while muted");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(unmute(&server, &m, &file), Ok(true));
    assert!(!pulse.muted(SINK), "unmuted");
    assert!(!file.exists(), "state file removed once unmuted");

    // The user muted it: left muted, nothing on disk, nothing to undo.
    pulse.pactl(&["set-sink-mute", SINK, "1"]);
    assert_eq!(mute_default(&server, &file), Ok(None));
    assert!(!file.exists());
    assert!(pulse.muted(SINK));

    // Unmuted by the user meanwhile: nothing to undo, the file goes.
    pulse.pactl(&["set-sink-mute", SINK, "0"]);
    let m = mute_default(&server, &file).expect("mute").expect("muted");
    pulse.pactl(&["set-sink-mute", SINK, "0"]);
    assert_eq!(unmute(&server, &m, &file), Ok(false));
    assert!(!file.exists());
    assert_eq!(sink_muted(&server, "no_such_sink"), Ok(None));
}

#[test]
fn the_muter_unmutes_when_told_on_drop_and_when_the_controller_stalls() {
    let Some(pulse) = PrivatePulse::start("muter") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(STATE_FILE);
    pulse.pactl(&[
        "load-module",
        "module-null-sink",
        "sink_name=dictum_headphones",
    ]);

    let mut muter = Muter::new(pulse.server(), file.clone());
    muter.set(true);
    muter.set(true);
    assert!(muter.wait_idle(WAIT));
    assert!(pulse.muted(SINK));
    assert!(file.exists());
    // Headphones plugged in meanwhile (a new default): the sink muted is the one unmuted.
    pulse.pactl(&["set-default-sink", "dictum_headphones"]);
    muter.set(false);
    assert!(muter.wait_idle(WAIT));
    assert!(!pulse.muted(SINK));
    assert!(!pulse.muted("dictum_headphones"));
    assert!(!file.exists());

    muter.set(true);
    assert!(muter.wait_idle(WAIT));
    assert!(pulse.muted("dictum_headphones"));
    drop(muter);
    assert!(!pulse.muted("dictum_headphones"), "unmuted on drop (quit)");
    assert!(!file.exists());

    // The controller stops calling `set` (hung): unmuted after the stall limit, and not
    // muted again by a late heartbeat of the same dictation.
    let mut muter = Muter::with_stall_limit(pulse.server(), file.clone(), Duration::from_secs(2));
    muter.set(true);
    assert!(muter.wait_idle(WAIT));
    assert!(pulse.muted("dictum_headphones"));
    assert!(
        pulse.wait_muted("dictum_headphones", false),
        "unmuted once the controller stalled"
    );
    assert!(!file.exists());
    muter.set(true);
    assert!(muter.wait_idle(WAIT));
    assert!(
        !pulse.muted("dictum_headphones"),
        "same dictation: stays unmuted"
    );
    muter.set(false);
    muter.set(true);
    assert!(muter.wait_idle(WAIT));
    assert!(
        pulse.muted("dictum_headphones"),
        "the next dictation mutes again"
    );
    drop(muter);
    assert!(!pulse.muted("dictum_headphones"));
}

#[test]
fn a_crash_leaves_a_state_file_that_the_next_start_undoes() {
    let Some(pulse) = PrivatePulse::start("crash") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(STATE_FILE);

    let mut muter = Muter::new(pulse.server(), file.clone());
    muter.set(true);
    assert!(muter.wait_idle(WAIT));
    // The crash: no unmute, no drop.
    std::mem::forget(muter);
    assert!(pulse.muted(SINK));
    assert_eq!(Muted::load(&file).expect("state file").sink, SINK);

    let next = Muter::new(pulse.server(), file.clone());
    next.recover();
    assert!(next.wait_idle(WAIT));
    assert!(!pulse.muted(SINK), "unmuted at the next start");
    assert!(!file.exists(), "state file removed");
}

#[test]
fn no_server_is_an_error_that_says_what_to_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(STATE_FILE);
    let none = Server::Socket(dir.path().join("no-such-socket"));
    let e = mute_default(&none, &file).expect_err("no server");
    assert!(e.contains("mute_output") && e.contains("pactl info"), "{e}");
    assert!(!file.exists());

    // A left-over file that cannot be undone yet stays for the next start.
    let m = Muted {
        sink: "alsa_output.pci".into(),
    };
    m.save(&file).expect("save");
    assert!(unmute_left_over(&file, &none).is_err());
    assert!(file.exists());

    std::fs::write(&file, b"not json").expect("write");
    assert!(Muted::load(&file).is_none());
    assert!(!file.exists(), "a damaged file is dropped");
}

#[test]
fn the_server_is_found_as_libpulse_finds_it_and_a_remote_one_is_refused() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    assert_eq!(
        socket_from(env(&[("PULSE_SERVER", "unix:/run/user/1000/pulse/native")])),
        Ok(PathBuf::from("/run/user/1000/pulse/native"))
    );
    assert_eq!(
        socket_from(env(&[("PULSE_SERVER", "tcp:studio:4713 /tmp/p/native")])),
        Ok(PathBuf::from("/tmp/p/native")),
        "the first local one of a list"
    );
    let e = socket_from(env(&[
        ("PULSE_SERVER", "tcp:studio:4713"),
        ("XDG_RUNTIME_DIR", "/run/user/1000"),
    ]))
    .expect_err("a remote server is refused, not connected to");
    assert!(
        e.contains("PULSE_SERVER") && e.contains("mute_output"),
        "{e}"
    );
    assert_eq!(
        socket_from(env(&[
            ("PULSE_RUNTIME_PATH", "/nonexistent/dictum-a"),
            ("XDG_RUNTIME_DIR", "/nonexistent/dictum-b"),
        ])),
        Ok(PathBuf::from("/nonexistent/dictum-b/pulse/native")),
        "none exists: the usual place, whose error then names it"
    );
    let e = socket_from(env(&[])).expect_err("nothing set");
    assert!(e.contains("pactl info"), "{e}");
}
