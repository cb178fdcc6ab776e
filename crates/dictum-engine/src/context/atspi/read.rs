//! One read, end to end: the buses, the target application, the opt-out list, the walk, the
//! password checks, then the text on each side of the caret. See `mod.rs` for the rules.

use std::time::{Duration, Instant};

use super::bus::{self, A11y};
use super::rules::{self, role, state};
use super::types::{
    Caret, Probe, Read, Target, NODE_BUDGET, REFUSED_MASKED, REFUSED_OPT_OUT, REFUSED_PASSWORD,
};
use super::walk::{self, Budget, Walk};
use crate::portal::{rt, Bus};

pub(super) fn read(bus: &Bus, target: &Target, opt_out: &[String], budget: Duration) -> Read {
    let start = Instant::now();
    let outcome =
        rt::run(budget, read_async(bus, target, opt_out, start + budget)).unwrap_or_else(|| {
            Read::Unavailable(format!(
                "the accessibility bus did not answer within {budget:?}"
            ))
        });
    match outcome {
        Read::Known(mut c) => {
            c.took = start.elapsed();
            tracing::debug!(
                before_chars = c.before.chars().count(),
                after_chars = c.after.chars().count(),
                role = %c.role,
                nodes = c.nodes,
                ms = c.took.as_secs_f64() * 1000.0,
                "text around the caret read"
            );
            Read::Known(c)
        }
        other => {
            tracing::debug!(
                outcome = ?other,
                ms = start.elapsed().as_secs_f64() * 1000.0,
                "text around the caret not read"
            );
            other
        }
    }
}

async fn read_async(bus: &Bus, target: &Target<'_>, opt_out: &[String], deadline: Instant) -> Read {
    let a11y = match connect(bus).await {
        Ok(a) => a,
        Err(e) => return Read::Unavailable(e),
    };
    let apps = match a11y.apps().await {
        Ok(a) => a,
        Err(e) => return Read::Unavailable(e),
    };
    let mut budget = Budget {
        deadline,
        nodes_left: NODE_BUDGET,
        visited: 0,
    };
    let mut matched = 0;
    let mut no_text = false;
    for app in apps {
        let pid = a11y.pid_of(&app.bus).await;
        if target.pid.is_some() && pid != target.pid {
            continue;
        }
        matched += 1;
        let name = a11y.name(&app).await.ok().filter(|n| !n.is_empty());
        let process = pid.map(process_names).unwrap_or_default();
        let mut names: Vec<&str> = process.iter().map(String::as_str).collect();
        names.extend(target.class);
        names.extend(name.as_deref());
        if rules::opted_out(opt_out, &names).is_some() {
            if target.pid.is_some() {
                return Read::Refused(REFUSED_OPT_OUT);
            }
            continue; // not known to be the focused app: left alone
        }
        match walk::find_focus(&a11y, app, &mut budget).await {
            Walk::Found(focus) => return read_focus(&a11y, focus, name, budget.visited).await,
            Walk::NoText => no_text = true,
            Walk::NotFound => {}
            Walk::Spent(what) => {
                return Read::Unavailable(format!(
                    "gave up looking for the focused field after {} objects ({what} budget spent)",
                    budget.visited
                ))
            }
        }
    }
    Read::Unavailable(match (target.pid, matched, no_text) {
        (_, _, true) => "the focused object is not a text field".into(),
        (Some(pid), 0, _) => format!(
            "process {pid} has no accessible application (Qt and Chromium/Electron apps need \
             accessibility switched on; terminals and some toolkits have none)"
        ),
        _ => format!(
            "no focused text field found ({} objects looked at)",
            budget.visited
        ),
    })
}

async fn connect(bus: &Bus) -> Result<A11y, String> {
    let session = bus::session(bus).await?;
    let address = bus::a11y_address(&session).await?;
    A11y::connect(&address).await
}

/// The password checks, then the text on each side of the caret.
async fn read_focus(a11y: &A11y, focus: walk::Focus, app: Option<String>, nodes: u32) -> Read {
    if focus.in_password || focus.role == role::PASSWORD_TEXT {
        return Read::Refused(REFUSED_PASSWORD);
    }
    if focus.role == role::TERMINAL {
        return Read::Unavailable("the focus is in a terminal (its text is the screen)".into());
    }
    if !focus.states.has(state::EDITABLE) {
        return Read::Unavailable("the focused text is not editable".into());
    }
    let n = &focus.node;
    let (caret, count) = tokio::join!(
        a11y.text_int(n, "CaretOffset"),
        a11y.text_int(n, "CharacterCount")
    );
    let caret = match caret {
        Ok(c) => c,
        Err(e) => return Read::Unavailable(format!("the focused field gave no caret ({e})")),
    };
    let Some(((b0, b1), (a0, a1))) = rules::ranges(caret, count.unwrap_or(-1)) else {
        return Read::Unavailable("the focused field has no caret".into());
    };
    let (before, after, role_name) = tokio::join!(
        a11y.text(n, b0, b1),
        a11y.text(n, a0, a1),
        a11y.role_name(n)
    );
    let (before, after) = match (before, after) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => {
            return Read::Unavailable(format!("the focused field's text could not be read ({e})"))
        }
    };
    let before = rules::last_chars(&before, rules::BEFORE_CHARS);
    let after = rules::first_chars(&after, rules::AFTER_CHARS);
    if rules::looks_masked(before, after) {
        return Read::Refused(REFUSED_MASKED);
    }
    Read::Known(Caret {
        before: before.to_string(),
        after: after.to_string(),
        app,
        role: role_name.unwrap_or_default(),
        nodes,
        took: Duration::ZERO,
    })
}

/// The names a process goes by, for the opt-out list: its `comm`, its executable's file name
/// and, for a Flatpak app, its app id.
fn process_names(pid: u32) -> Vec<String> {
    let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
    let mut names = Vec::new();
    if let Ok(comm) = std::fs::read_to_string(proc.join("comm")) {
        names.push(comm.trim().to_string());
    }
    if let Some(exe) = std::fs::read_link(proc.join("exe"))
        .ok()
        .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
    {
        names.push(exe);
    }
    if let Ok(info) = std::fs::read_to_string(proc.join("root/.flatpak-info")) {
        names.extend(
            info.lines()
                .filter_map(|l| l.strip_prefix("name="))
                .map(|n| n.trim().to_string())
                .take(1),
        );
    }
    names
}

/// Sets the desktop's accessibility switch to `on`; Ok(what it was: None when it could not
/// be read).
pub(super) fn switch(bus: &Bus, on: bool, limit: Duration) -> Result<Option<bool>, String> {
    let bus = bus.clone();
    rt::run(limit, async move {
        let session = bus::session(&bus).await?;
        let before = bus::toolkit_accessibility(&session).await;
        bus::set_toolkit_accessibility(&session, on).await?;
        Ok(before)
    })
    .unwrap_or_else(|| {
        Err(format!(
            "the accessibility bus did not answer within {} s",
            limit.as_secs_f32()
        ))
    })
}

pub(super) fn probe(bus: &Bus, limit: Duration) -> Probe {
    let bus = bus.clone();
    rt::run(limit, async move {
        let session = match bus::session(&bus).await {
            Ok(s) => s,
            Err(e) => return unreachable_probe(e, None),
        };
        // The launcher first: `org.a11y.Bus` is D-Bus-activatable, and asking its switch
        // when it does not run would start it.
        let address = match bus::a11y_address(&session).await {
            Ok(a) => a,
            Err(e) => return unreachable_probe(e, None),
        };
        let enabled = bus::toolkit_accessibility(&session).await;
        let apps = match A11y::connect(&address).await {
            Ok(a11y) => a11y.apps().await,
            Err(e) => Err(e),
        };
        match apps {
            Ok(apps) => Probe {
                bus: true,
                apps: Some(apps.len()),
                toolkit_accessibility: enabled,
                error: None,
            },
            Err(e) => unreachable_probe(e, enabled),
        }
    })
    .unwrap_or_else(|| {
        unreachable_probe(
            format!(
                "the accessibility bus did not answer within {} s",
                limit.as_secs_f32()
            ),
            None,
        )
    })
}

fn unreachable_probe(error: String, enabled: Option<bool>) -> Probe {
    Probe {
        bus: false,
        apps: None,
        toolkit_accessibility: enabled,
        error: Some(error),
    }
}
