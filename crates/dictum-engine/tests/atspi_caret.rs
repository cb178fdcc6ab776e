//! The AT-SPI reader (`dictum_engine::context::atspi`) against real parts: Xvfb, a private
//! D-Bus session bus, the real accessibility bus (`at-spi-bus-launcher --launch-immediately`,
//! which starts the a11y bus; the registry, at-spi2-registryd, is activated on it) and a real
//! GTK 4 window (`tests/gtk_caret_box.py`; GTK 4 talks AT-SPI by default).
//!
//! - A GtkEntry holding "I think is right", caret after "I think ": before = "I think ", after
//!   = "is right", found by the window's pid and without one; `join` then fits "The report."
//!   as "the report ". The same in a GtkTextView.
//! - A GtkPasswordEntry is refused, and its secret is nowhere: not in the result, not in any
//!   log line of this process (every crate, trace level, zbus included).
//! - An app whose name is on the opt-out list (the user's list, and the default list) is
//!   refused; without a pid it is skipped, never read.
//! - No accessibility bus on the session bus: unavailable, with the reason; a budget too small
//!   to finish: unavailable.
//!
//! Needs Xvfb, xdotool, dbus-daemon, at-spi2-core and GTK 4 for Python (python3-gi,
//! gir1.2-gtk-4.0); skipped without them unless `DICTUM_REQUIRE_E2E` is set. Timings:
//! `cargo test -p dictum-engine --test atspi_caret -- --nocapture`.
#![cfg(target_os = "linux")]

mod common;
#[path = "common/atspi.rs"]
mod harness;

use common::x11::Xvfb;
use dictum_engine::context::atspi::{
    self, default_opt_out, read_around_caret_on, Read, Target, REFUSED_OPT_OUT, REFUSED_PASSWORD,
};
use dictum_engine::context::join;
use dictum_engine::portal::Bus;
use harness::{log_text, logs, tools_present, Field, Session, HINT};
use std::time::{Duration, Instant};

/// A read in a test may take longer than a dictation's budget on a loaded machine.
const BUDGET: Duration = Duration::from_secs(2);
/// The text and the caret offset (characters) of the entry.
const TEXT: (&str, usize) = ("I think is right", 8);
/// The text view's: two lines, non-ASCII letters before the caret (offsets are characters).
const VIEW: (&str, usize) = ("Déjà vu — ok.\nI think is right", 22);
const SECRET: &str = "hunter2-Tr0ub4dor&3";

fn read(s: &Session, pid: Option<u32>, opt_out: &[String]) -> Read {
    let target = Target { pid, class: None };
    read_around_caret_on(&s.bus(), &target, opt_out, BUDGET)
}

fn known(r: Read, what: &str) -> atspi::Caret {
    match r {
        Read::Known(c) => {
            eprintln!(
                "{what}: {} ms, {} objects, role {:?}, app {:?}",
                c.took.as_secs_f64() * 1000.0,
                c.nodes,
                c.role,
                c.app
            );
            c
        }
        other => panic!("{what}: expected the text, got {other:?}"),
    }
}

#[test]
fn the_text_around_the_caret_of_a_gtk_field_is_read_and_a_dictation_fits_it() {
    let Some(launcher) = tools_present() else {
        return;
    };
    let _ = logs();
    let x = Xvfb::start();
    let s = Session::start(Some(launcher), &x.display);
    let opt_out = default_opt_out();

    let entry = Field::start(&x, &s, "entry", TEXT, None);
    let c = known(read(&s, Some(entry.pid), &opt_out), "entry by pid");
    assert_eq!(
        (c.before.as_str(), c.after.as_str()),
        ("I think ", "is right")
    );
    assert_eq!(join("The report.", &c.around()), "the report ");
    let typed = format!(
        "{}{}{}",
        c.before,
        join("The report.", &c.around()),
        c.after
    );
    assert_eq!(typed, "I think the report is right");
    // Without the window's pid every app is walked; the same field is found.
    let c = known(read(&s, None, &opt_out), "entry without a pid");
    assert_eq!(
        (c.before.as_str(), c.after.as_str()),
        ("I think ", "is right")
    );
    // Repeated reads: the timing of a warm read.
    for _ in 0..5 {
        known(read(&s, Some(entry.pid), &opt_out), "entry again");
    }
    // A process with no accessible application: unavailable, with the reason.
    match read(&s, Some(std::process::id()), &opt_out) {
        Read::Unavailable(why) => assert!(why.contains("no accessible application"), "{why}"),
        other => panic!("expected unavailable, got {other:?}"),
    }
    // A budget far too small: unavailable, never a partial answer.
    let target = Target {
        pid: Some(entry.pid),
        class: None,
    };
    match read_around_caret_on(&s.bus(), &target, &opt_out, Duration::from_micros(50)) {
        Read::Unavailable(why) => eprintln!("50 µs budget: {why}"),
        other => panic!("expected unavailable with a 50 µs budget, got {other:?}"),
    }
    drop(entry);

    let view = Field::start(&x, &s, "view", VIEW, None);
    let c = known(read(&s, Some(view.pid), &opt_out), "text view");
    assert_eq!(
        (c.before.as_str(), c.after.as_str()),
        ("Déjà vu — ok.\nI think ", "is right")
    );
    drop(view);
    assert!(
        log_text().contains("text around the caret read"),
        "no debug line logged"
    );
}

#[test]
fn a_password_field_and_an_opted_out_app_are_refused_and_nothing_leaks() {
    let Some(launcher) = tools_present() else {
        return;
    };
    let _ = logs();
    let x = Xvfb::start();
    let s = Session::start(Some(launcher), &x.display);
    let opt_out = default_opt_out();

    let password = Field::start(&x, &s, "password", (SECRET, 0), None);
    for pid in [Some(password.pid), None] {
        let r = read(&s, pid, &opt_out);
        assert_eq!(r, Read::Refused(REFUSED_PASSWORD), "pid {pid:?}");
        assert!(!format!("{r:?}").contains(SECRET));
    }
    drop(password);

    // The user's own list: the app's name (GTK gives AT-SPI its program name).
    let vault = Field::start(&x, &s, "entry", TEXT, Some("org.example.Vault"));
    let mine = vec!["org.example.Vault".to_string()];
    assert_eq!(
        read(&s, Some(vault.pid), &mine),
        Read::Refused(REFUSED_OPT_OUT)
    );
    // Without a pid an opted-out app is not known to be the focused one: skipped, not read.
    match read(&s, None, &mine) {
        Read::Unavailable(why) => eprintln!("opted out, no pid: {why}"),
        other => panic!("expected unavailable, got {other:?}"),
    }
    // Not on the default list: read.
    known(read(&s, Some(vault.pid), &opt_out), "not opted out");
    drop(vault);

    // The default list: a password manager's name.
    let keepass = Field::start(&x, &s, "entry", TEXT, Some("keepassxc"));
    assert_eq!(
        read(&s, Some(keepass.pid), &opt_out),
        Read::Refused(REFUSED_OPT_OUT)
    );
    drop(keepass);

    let logs = log_text();
    assert!(!logs.is_empty(), "no log captured");
    assert!(!logs.contains(SECRET), "the secret reached a log line");
    assert!(
        !logs.contains("hunter2"),
        "part of the secret reached a log line"
    );
}

#[test]
fn without_an_accessibility_bus_the_read_is_unavailable_with_a_reason() {
    if !common::tools_ready(&["dbus-daemon"], HINT) {
        return;
    }
    let s = Session::start(None, ":0");
    let start = Instant::now();
    let r = read(&s, Some(1), &default_opt_out());
    eprintln!("no a11y bus: {:?} in {:?}", r, start.elapsed());
    match r {
        Read::Unavailable(why) => assert!(why.contains("org.a11y.Bus is not running"), "{why}"),
        other => panic!("expected unavailable, got {other:?}"),
    }
    let p = atspi::probe_on(&s.bus());
    assert!(!p.bus && p.apps.is_none(), "{p:?}");
    assert!(p.error.is_some_and(|e| e.contains("at-spi2-core")));
    // No session bus at all.
    let gone = Bus::Address("unix:path=/nonexistent/dictum-bus".into());
    let target = Target::default();
    match read_around_caret_on(&gone, &target, &[], BUDGET) {
        Read::Unavailable(why) => assert!(why.contains("session bus"), "{why}"),
        other => panic!("expected unavailable, got {other:?}"),
    }
}

#[test]
fn the_accessibility_switch_is_set_and_reads_back() {
    let Some(launcher) = tools_present() else {
        return;
    };
    let x = Xvfb::start();
    let s = Session::start(Some(launcher), &x.display);
    let before = atspi::probe_on(&s.bus()).toolkit_accessibility;
    assert_eq!(before, Some(false), "a fresh session has it off");
    assert_eq!(
        atspi::switch_accessibility_on(&s.bus(), true),
        Ok(Some(false))
    );
    assert_eq!(atspi::probe_on(&s.bus()).toolkit_accessibility, Some(true));
    assert_eq!(
        atspi::switch_accessibility_on(&s.bus(), false),
        Ok(Some(true))
    );
    assert_eq!(atspi::probe_on(&s.bus()).toolkit_accessibility, Some(false));
    // No session bus: an error that says what to do, never a hang.
    let gone = Bus::Address("unix:path=/nonexistent/dictum-bus".into());
    let err = atspi::switch_accessibility_on(&gone, true).expect_err("no bus");
    assert!(!err.is_empty());
}
