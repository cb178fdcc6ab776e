//! The packaged systemd user unit (`packaging/dictum.service`) is sandboxed and cannot
//! restart forever (issue 26), with a system call filter, the socket families it needs and
//! only its own runtime folder writable (issue 38): the keys are there, in their sections, and
//! `systemd-analyze verify` (where installed) finds nothing unknown or invalid in it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn unit_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../packaging/dictum.service")
}

/// section → key → values (a key may repeat).
fn parse(text: &str) -> HashMap<String, HashMap<String, Vec<String>>> {
    let mut out: HashMap<String, HashMap<String, Vec<String>>> = HashMap::new();
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
            continue;
        }
        let (k, v) = line.split_once('=').expect("key=value");
        out.entry(section.clone())
            .or_default()
            .entry(k.trim().to_string())
            .or_default()
            .push(v.trim().to_string());
    }
    out
}

#[test]
fn the_user_unit_is_sandboxed_and_rate_limited() {
    let text = std::fs::read_to_string(unit_path()).expect("packaging/dictum.service");
    let unit = parse(&text);
    let get = |section: &str, key: &str| -> String {
        unit.get(section)
            .and_then(|s| s.get(key))
            .map(|v| v.join(" "))
            .unwrap_or_else(|| panic!("[{section}] {key}= missing"))
    };
    assert_eq!(get("Service", "NoNewPrivileges"), "yes");
    assert_eq!(get("Service", "ProtectSystem"), "strict");
    assert_eq!(get("Service", "PrivateTmp"), "yes");
    // What `dictum run` writes stays writable: data (history, audio, models, portal token),
    // config, and its own runtime folder (control socket, KWin script), not the whole
    // runtime dir (other programs' sockets).
    let rw = get("Service", "ReadWritePaths");
    for p in ["%h/.local/share/dictum", "%h/.config/dictum", "%t/dictum"] {
        assert!(
            rw.split_whitespace()
                .any(|w| w.trim_start_matches('-') == p),
            "{p}: {rw}"
        );
    }
    assert!(
        !rw.split_whitespace()
            .any(|w| matches!(w.trim_start_matches('-'), "%t" | "%t/")),
        "the whole runtime dir is writable: {rw}"
    );
    assert_eq!(get("Service", "RuntimeDirectory"), "dictum");
    assert_eq!(get("Service", "RuntimeDirectoryMode"), "0700");
    // System calls and socket families.
    assert_eq!(get("Service", "SystemCallFilter"), "@system-service");
    assert_eq!(get("Service", "SystemCallErrorNumber"), "EPERM");
    let families = get("Service", "RestrictAddressFamilies");
    let mut families: Vec<&str> = families.split_whitespace().collect();
    families.sort_unstable();
    assert_eq!(
        families,
        ["AF_INET", "AF_INET6", "AF_NETLINK", "AF_UNIX"],
        "X11, Wayland, D-Bus and PulseAudio are AF_UNIX; the servers AF_INET(6)"
    );
    // The X server's socket folder, hidden by the private /tmp, is bound back in.
    assert!(
        get("Service", "BindReadOnlyPaths").contains("/tmp/.X11-unix"),
        "X11 without the abstract socket"
    );
    // Folders a read-only parent would not let Dictum create are made before the sandbox.
    assert!(get("Service", "ExecStartPre").starts_with('+'));
    assert_eq!(get("Service", "Restart"), "on-failure");
    let rest: u64 = get("Service", "RestartSec")
        .parse()
        .expect("RestartSec in seconds");
    assert!(rest >= 1);
    // A start limit, in [Unit] (where systemd reads it): a broken config stops retrying.
    let interval: u64 = get("Unit", "StartLimitIntervalSec")
        .parse()
        .expect("seconds");
    let burst: u64 = get("Unit", "StartLimitBurst").parse().expect("count");
    // Restarts `rest` s apart must reach the burst within the interval, or it never trips.
    assert!(
        burst > 0 && burst * rest <= interval,
        "{burst} starts {rest} s apart do not fit in {interval} s"
    );

    // systemd's own check, where it is installed: no unknown key, no bad value. The
    // Documentation= man pages and the binary are not installed here, so those two lines are
    // swapped for ones that resolve.
    let Ok(out) = std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output()
    else {
        eprintln!("SKIPPED systemd-analyze verify: not installed");
        return;
    };
    assert!(out.status.success());
    let dir = tempfile::tempdir().expect("tempdir");
    let checked: String = text
        .lines()
        .filter(|l| !l.starts_with("Documentation="))
        .map(|l| {
            if l.starts_with("ExecStart=") {
                "ExecStart=/bin/true".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let copy = dir.path().join("dictum.service");
    std::fs::write(&copy, checked).expect("copy");
    let out = std::process::Command::new("systemd-analyze")
        .args(["verify"])
        .arg(&copy)
        .output()
        .expect("systemd-analyze verify");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert!(
        !said.contains("Unknown") && !said.contains("Invalid") && !said.contains("ignoring"),
        "{said}"
    );
}
