//! A private PulseAudio daemon (or PipeWire with its PulseAudio server: [`SoundServer`]) with
//! a virtual microphone (`tests/pulse-virtual-mic.sh`) for tests that capture real audio, and helpers to play clips into it. The daemon's address
//! goes into the process environment (cpal reads it there): use one `Pulse` per test binary,
//! from a single test function.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

/// True when `pulseaudio` and `paplay` are installed. Otherwise `test`'s daemon part is
/// skipped (false), or fails when `DICTUM_REQUIRE_E2E` is set (`scripts/test`).
pub fn available(test: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", "command -v pulseaudio && command -v paplay"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but PulseAudio is missing; sudo apt install pulseaudio pulseaudio-utils"
        );
        eprintln!("{test}: PulseAudio missing, the daemon part is skipped");
    }
    found
}

/// Which sound server serves the PulseAudio protocol (`tests/pulse-virtual-mic.sh`'s
/// `DICTUM_SOUND_SERVER`), and the microphone's source name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoundServer {
    /// PulseAudio itself, the microphone named `dictum_mic`.
    PulseAudio,
    /// PipeWire with wireplumber and pipewire-pulse (what most desktops run now), the
    /// microphone named `mic`: e.g. `bluez_input.…` for a stand-in of a Bluetooth headset's
    /// (Dictum tells one by the name the server gives it).
    PipeWire { mic: &'static str },
}

/// The daemon, stopped on drop (also when the test panics).
pub struct Pulse {
    script: PathBuf,
    dir: PathBuf,
    /// The microphone's source name (the default source).
    pub mic: String,
}

impl Pulse {
    pub fn start() -> Pulse {
        Pulse::start_on(SoundServer::PulseAudio)
    }

    /// A private `server` with its virtual microphone. Its address goes into this process's
    /// environment, as [`start`](Self::start)'s does.
    pub fn start_on(server: SoundServer) -> Pulse {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/pulse-virtual-mic.sh");
        reap_stale(&script);
        let dir = std::env::temp_dir().join(format!("dictum-pulse-test-{}", std::process::id()));
        let (kind, mic) = match server {
            SoundServer::PulseAudio => ("pulseaudio", "dictum_mic"),
            SoundServer::PipeWire { mic } => ("pipewire", mic),
        };
        let out = Command::new("bash")
            .arg(&script)
            .arg("start")
            .arg(&dir)
            .env("DICTUM_SOUND_SERVER", kind)
            .env("DICTUM_MIC_SOURCE", mic)
            .output()
            .expect("run tests/pulse-virtual-mic.sh");
        let pulse = Pulse {
            script,
            dir,
            mic: mic.to_string(),
        };
        assert!(
            out.status.success(),
            "PulseAudio could not be started ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if let Some((k, v)) = line.split_once('=') {
                // Single-threaded at this point: nothing else reads the environment yet.
                std::env::set_var(k, v);
            }
        }
        assert!(
            std::env::var_os("PULSE_SERVER").is_some(),
            "script printed no PULSE_SERVER"
        );
        pulse
    }

    /// Lets other users of this machine reach the daemon (anonymous auth on its socket): the
    /// folders on the socket's way are opened for traversal and the socket for writing. For a
    /// desktop session run as another user (`sway.rs` as root).
    pub fn share(&self) {
        use std::os::unix::fs::PermissionsExt;
        let server = std::env::var("PULSE_SERVER").expect("PULSE_SERVER");
        let socket = PathBuf::from(server.trim_start_matches("unix:"));
        let mut dir = socket.parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            let mode = std::fs::metadata(&d)
                .expect("pulse dir")
                .permissions()
                .mode();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode | 0o711))
                .expect("chmod pulse dir");
            if d == self.dir {
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777))
            .expect("chmod pulse socket");
    }

    /// Adds a null sink `name` (the machine's speakers, as far as a test can tell: its monitor
    /// records what was played) and makes it the default output; the virtual microphone stays
    /// the default input.
    pub fn add_speakers(&self, name: &str) {
        self.pactl(&[
            "load-module",
            "module-null-sink",
            &format!("sink_name={name}"),
            &format!("sink_properties=device.description={name}"),
        ]);
        self.pactl(&["set-default-sink", name]);
        self.pactl(&["set-default-source", &self.mic]);
    }

    /// `slow`: the virtual microphone's signal off, so a stream opened on it gets its first
    /// samples ~1.3-2 s late (a Bluetooth headset switching profile); off again: every
    /// stream's first samples within ~10-50 ms, as from a real microphone
    /// (`tests/pulse-virtual-mic.sh slow|fast`).
    pub fn slow_start(&self, slow: bool) {
        let status = Command::new("bash")
            .arg(&self.script)
            .arg(if slow { "slow" } else { "fast" })
            .arg(&self.dir)
            .status()
            .expect("run tests/pulse-virtual-mic.sh");
        assert!(status.success(), "pulse-virtual-mic.sh slow/fast: {status}");
    }

    /// The server's name as `pactl info` gives it ("pulseaudio", "PulseAudio (on PipeWire
    /// 0.3.65)").
    pub fn server_name(&self) -> String {
        self.pactl(&["info"])
            .lines()
            .find_map(|l| l.strip_prefix("Server Name: "))
            .unwrap_or_default()
            .to_string()
    }

    pub fn pactl(&self, args: &[&str]) -> String {
        let out = Command::new("pactl").args(args).output().expect("pactl");
        assert!(
            out.status.success(),
            "pactl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Stops daemons left by test processes that were killed before their Drop ran.
fn reap_stale(script: &Path) {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("dictum-pulse-test-") else {
            continue;
        };
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        let _ = Command::new("bash")
            .arg(script)
            .arg("stop")
            .arg(e.path())
            .status();
    }
}

impl Drop for Pulse {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

/// Starts playing the WAV file `path` into the virtual microphone (the `dictum_sink` sink);
/// the player, to wait for.
pub fn play_file(path: &Path) -> Child {
    Command::new("paplay")
        .arg("--device=dictum_sink")
        .arg(path)
        .spawn()
        .expect("spawn paplay")
}

/// [`play_file`], returning once it has played.
pub fn play_file_and_wait(path: &Path) {
    let status = play_file(path).wait().expect("paplay");
    assert!(status.success(), "paplay {}: {status}", path.display());
}

/// [`play_file`] with the test clip `clip` (e.g. `jfk.wav`).
pub fn play(clip: &str) -> Child {
    play_file(&super::clip(clip))
}

pub fn play_and_wait(clip: &str) {
    play_file_and_wait(&super::clip(clip))
}

pub fn clip_ms(clip: &str) -> u64 {
    let d = dictum_engine::audio::read_wav(&super::clip(clip)).expect("clip");
    d.samples.len() as u64 / d.channels.max(1) as u64 * 1000 / d.sample_rate as u64
}

pub fn reference(clip: &str) -> String {
    super::refs()
        .into_iter()
        .find(|(f, _)| f == clip)
        .map(|(_, r)| r)
        .expect("clip in refs.tsv")
}
