//! The injector thread: types (or pastes) each finished dictation into the focused window,
//! strictly in the order the utterances were spoken, and completes their history rows.
//! A panic while typing is caught (the row keeps the text and says so; a fresh sink is
//! built); a row the database refuses (locked, disk full) is held and written later.

use crate::commands::trust::{self, Situation};
use crate::commands::{Action, Chord, Key};
use crate::config::Config;
use crate::dictation::messages::{report, InjectorMsg, Input, Part, SinkReport, StoredRow, Typed};
use crate::dictation::shared::{catch, Shared};
use crate::dictation::sink::{Sink, SinkFactory};
use crate::fault;
use crate::inject::{InjectMethod, StopCheck};
use crate::store::journal::Journal;
use crate::store::row::{RowUpdate, WholeRow};
use crate::store::row_owner::Rows;
use crate::store::spool::Spool;
use crate::store::{History, Outcome};
use crate::timing::ms_since;
use std::collections::HashMap;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Rows that could not be written yet (database locked, disk full): appended to the
/// history's journal (`store::journal`, replayed at the next start if Dictum quits or is
/// killed first), or held in memory when even that fails, and written when the database
/// takes them again, so no dictation is lost to a busy database.
struct Backlog {
    rows: Vec<crate::store::Entry>,
    journal: Journal,
    told: bool,
}

/// At most this many unwritten rows are held in memory (the oldest are dropped, with a
/// warning); the journal has no such bound.
const BACKLOG_MAX: usize = 256;

impl Backlog {
    fn new(rows: &Rows) -> Backlog {
        Backlog {
            rows: Vec::new(),
            journal: Journal::for_history(rows.path()),
            told: false,
        }
    }

    /// Completes `entry`'s row as delivered (created whole when the press could not create
    /// it), or keeps it for later.
    fn store(&mut self, rows: &Rows, entry: &mut crate::store::Entry) -> Option<String> {
        let e = rows.write(entry, WholeRow::Delivered).err()?;
        let kept = match self.journal.append(entry) {
            Ok(()) => format!("it is kept in {}", self.journal.path().display()),
            Err(j) => {
                tracing::warn!("history journal {}: {j}", self.journal.path().display());
                if self.rows.len() >= BACKLOG_MAX {
                    let lost = self.rows.remove(0);
                    tracing::error!("dictation {:?} dropped from the unwritten backlog", lost.id);
                }
                self.rows.push(entry.clone());
                "it is kept in memory".into()
            }
        };
        let first = !self.told;
        self.told = true;
        first.then(|| {
            format!(
                "could not store the dictation ({e}); {kept} and written once the history \
                 database accepts it (is another program holding it, or the disk full?)"
            )
        })
    }

    /// Retries the rows held back; returns a message once they are all written.
    fn retry(&mut self, rows: &Rows) -> Option<String> {
        let mut left = Vec::new();
        for mut entry in std::mem::take(&mut self.rows) {
            if rows.write(&mut entry, WholeRow::Delivered).is_err() {
                left.push(entry);
            }
        }
        self.rows = left;
        let journaled = self.journal.is_empty() || rows.replay_journal();
        (self.rows.is_empty() && journaled && std::mem::take(&mut self.told))
            .then(|| "the history database accepts writes again; held dictations stored".into())
    }

    /// At exit: what is still held in memory goes to the journal if it can.
    fn close(&mut self) {
        self.rows.retain(|e| self.journal.append(e).is_err());
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    mut sink: Box<dyn Sink>,
    factory: SinkFactory,
    mut config: Config,
    history: History,
    rows: Rows,
    jobs: mpsc::Receiver<InjectorMsg>,
    to_controller: mpsc::Sender<Input>,
    shared: Arc<Shared>,
) {
    let mut backlog = Backlog::new(&rows);
    let spool = Spool::for_history(rows.path());
    let notice = |m: String| {
        let _ = to_controller.send(Input::Notice(m));
    };
    let mut last: Option<LastTyped> = None;
    // Sinks for a per-app profile's injection method other than the config's, built on
    // demand from a copy of the config with that method, kept until the config changes.
    let mut by_method: HashMap<InjectMethod, Box<dyn Sink>> = HashMap::new();
    // First words typed ahead of their dictation's text, by utterance.
    let mut parts: HashMap<u64, Sent> = HashMap::new();
    loop {
        let msg = match jobs.recv_timeout(Duration::from_secs(1)) {
            Ok(msg) => msg,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(m) = backlog.retry(&rows) {
                    notice(m);
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let mut typed = match msg {
            InjectorMsg::Type(t) => *t,
            InjectorMsg::Part(part) => {
                let method = profile_method(&part.profile, &config, &factory, &mut by_method);
                if let Some(m) = method.1 {
                    notice(m);
                }
                let target = match method.0.and_then(|m| by_method.get_mut(&m)) {
                    Some(s) => s.as_mut(),
                    None => sink.as_mut(),
                };
                // Words that did not reach the window: nothing more goes ahead of them.
                if parts.get(&part.seq).is_some_and(|s| !s.ok) {
                    continue;
                }
                match catch(|| type_part(target, &part, &shared, &config)) {
                    Ok(Some(sent)) => match parts.get_mut(&part.seq) {
                        Some(before) => before.then(sent),
                        None => {
                            parts.insert(part.seq, sent);
                        }
                    },
                    Ok(None) => {}
                    Err(msg) => {
                        shared.set_injecting(false);
                        // Not recorded: the dictation's text is typed whole (or kept).
                        tracing::warn!("typing the first words crashed ({msg})");
                    }
                }
                continue;
            }
            InjectorMsg::Reconfigure(new) => {
                match factory(&new) {
                    Ok(new) => sink = new,
                    Err(e) => notice(format!("injection settings not applied: {e}")),
                }
                by_method.clear();
                config = *new;
                continue;
            }
            InjectorMsg::Stored(job) => {
                // The last dictation is chosen now, in its turn: one typed just before is it.
                let done = match job.row {
                    StoredRow::Id(id) => Ok(id),
                    StoredRow::LastDictation => crate::dictation::retype::find(&history),
                }
                .and_then(|id| {
                    catch(|| type_stored(sink.as_mut(), (&history, &rows), &config, &shared, id))
                        .unwrap_or_else(|msg| {
                            shared.set_injecting(false);
                            Err(format!(
                                "typing #{id} crashed ({msg}); its text is in history \
                                 (`dictum history`)"
                            ))
                        })
                });
                shared
                    .stored
                    .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                let _ = to_controller.send(Input::StateChanged);
                if let Err(why) = &done {
                    notice(why.clone());
                }
                if let Some(reply) = job.reply {
                    let _ = reply.send(done);
                }
                continue;
            }
            InjectorMsg::Stop => break,
        };
        if let Some(m) = backlog.retry(&rows) {
            notice(m);
        }
        let seq = typed.seq;
        let release_at = typed.release_at;
        let mut release = typed.release.clone();
        let mut entry = typed.entry.clone();
        let (method, problem) = profile_method(&typed.profile, &config, &factory, &mut by_method);
        if let Some(m) = problem {
            notice(m);
        }
        let target = match method.and_then(|m| by_method.get_mut(&m)) {
            Some(s) => s.as_mut(),
            None => sink.as_mut(),
        };
        let sent = parts.remove(&seq);
        if let (Some(r), Some(s)) = (release.as_mut(), sent.as_ref().filter(|s| s.ok)) {
            r.typed_ahead_chars = s.chars;
        }
        let edit = typed.edit.take();
        match catch(|| match edit {
            // Edit mode: the answer is typed over the selection, not the instruction.
            Some(request) => {
                last = None;
                deliver_edit(&factory, &config, typed, request, &shared, &to_controller)
            }
            None => deliver(
                target,
                typed,
                sent,
                &shared,
                &config,
                &to_controller,
                &mut last,
            ),
        }) {
            Ok(delivered) => entry = delivered,
            Err(msg) => {
                last = None;
                shared.set_injecting(false);
                let what =
                    format!("typing crashed ({msg}); the text is in history (`dictum history`)");
                entry.inject_method = Some("none".into());
                entry.inject_error = Some(what.clone());
                notice(what);
                // The sink may be left in any state: start a fresh one.
                match method {
                    Some(m) => {
                        by_method.remove(&m);
                    }
                    None => match factory(&config) {
                        Ok(new) => sink = new,
                        Err(e) => notice(format!("typing could not be restarted: {e}")),
                    },
                }
            }
        }
        entry
            .release_to_typed_ms
            .get_or_insert(ms_since(release_at));
        // Delivered: its spool audio goes; not delivered: kept, and the row says how to retry.
        spool.settle(&mut entry);
        if let Some(m) = backlog.store(&rows, &mut entry) {
            notice(m);
        }
        let _ = to_controller.send(Input::Done {
            seq,
            report: Box::new(report(&entry, release)),
        });
    }
    if let Some(m) = backlog.retry(&rows) {
        notice(m);
    }
    backlog.close();
    if !backlog.rows.is_empty() {
        tracing::error!(
            "{} dictation(s) could not be written to the history database before quitting",
            backlog.rows.len()
        );
    }
}

/// The injection method of a per-app profile when it differs from the config's, with its
/// sink built (once) into `by_method`; the message when it could not start (typed with the
/// config's method then).
fn profile_method(
    profile: &crate::profile::Profile,
    config: &Config,
    factory: &SinkFactory,
    by_method: &mut HashMap<InjectMethod, Box<dyn Sink>>,
) -> (Option<InjectMethod>, Option<String>) {
    let method = profile.inject_method.filter(|m| *m != config.inject.method);
    let mut problem = None;
    if let Some(m) = method.filter(|m| !by_method.contains_key(m)) {
        let mut with = config.clone();
        with.inject.method = m;
        match catch_factory(factory, &with) {
            Ok(s) => {
                by_method.insert(m, s);
            }
            Err(e) => {
                problem = Some(format!(
                    "profile {}: {} could not start ({e}); typed with [inject] method instead",
                    profile.name,
                    m.as_str()
                ))
            }
        }
    }
    (method, problem)
}

/// Types the text of row `id` (a retry, "type again") as the gate allows: within the
/// character budget of its audio, stopped by the cancel key (the rest left on the clipboard)
/// and by a focus change. The row records how it went (`retry::delivered`: a retried row's
/// spool audio goes once delivered). Ok: what was done; Err: why not (also on the row).
fn type_stored(
    sink: &mut dyn Sink,
    (history, rows): (&History, &Rows),
    config: &Config,
    shared: &Arc<Shared>,
    id: i64,
) -> Result<String, String> {
    let mut entry = history
        .get(id)
        .map_err(|e| format!("cannot read #{id}: {e}"))?
        .ok_or_else(|| format!("no entry #{id} (see the ids with `dictum history`)"))?;
    let text = entry.text.clone().unwrap_or_default();
    if text.trim().is_empty() {
        return Err(format!("#{id} has no text to type"));
    }
    let report = match crate::inject::gate::over_budget(&config.inject, &text, entry.audio_ms) {
        // A runaway text (a speech server gone wild) is stored, never typed.
        Some(why) => SinkReport {
            method: "none".into(),
            error: Some(why),
            ..SinkReport::default()
        },
        None => {
            wait_for_release(sink, shared, Instant::now());
            shared
                .stored_stop
                .store(false, std::sync::atomic::Ordering::SeqCst);
            shared.set_injecting(true);
            let stop = {
                let shared = Arc::clone(shared);
                Arc::new(move || shared.stored_stop.load(std::sync::atomic::Ordering::SeqCst))
                    as StopCheck
            };
            let fitted = crate::dictation::caret::fit(sink, config, &text);
            let report = crate::dictation::caret::deliver_fitted(
                sink,
                fitted,
                &text,
                &mut entry,
                |sink, text| sink.deliver_stored(text, stop),
            );
            shared.set_injecting(false);
            report
        }
    };
    let keep_audio_dir = config
        .history
        .keep_audio
        .then(crate::paths::audio_dir)
        .and_then(Result::ok);
    crate::dictation::retry::settle(rows.path(), &mut entry, &report, keep_audio_dir.as_deref());
    rows.apply(RowUpdate::Delivered(&entry))
        .map_err(|e| format!("#{id}: how it was typed could not be stored: {e}"))?;
    match report.error {
        Some(e) => Err(format!("#{id}: {e}")),
        None => Ok(format!(
            "#{id} typed ({} characters, {})",
            report.chars.unwrap_or(0),
            report.method
        )),
    }
}

/// First words typed ahead of their dictation ([`Part`]), and how that went.
pub(crate) struct Sent {
    /// What was typed (ending with a space).
    text: String,
    /// They reached the window (typed or pasted, no error).
    ok: bool,
    method: String,
    chars: usize,
    handed_over_ms: f64,
}

impl Sent {
    /// The next words typed ahead of the same dictation, after these.
    fn then(&mut self, next: Sent) {
        self.text.push_str(&next.text);
        self.ok &= next.ok;
        self.chars += next.chars;
        self.handed_over_ms += next.handed_over_ms;
        self.method = next.method;
    }
}

/// Types a dictation's first words ([`Part`]) after the release, as its text would be
/// (the same checks: not cancelled, not given up on, within the typing budget); None when
/// nothing was typed, so the dictation's text is typed whole when it comes.
fn type_part(
    sink: &mut dyn Sink,
    part: &Part,
    shared: &Arc<Shared>,
    config: &Config,
) -> Option<Sent> {
    let id = part.id.unwrap_or(0);
    let chars = part.text.chars().count();
    if !sink.streams()
        || part.text.trim().is_empty()
        || (part.id.is_some() && shared.cancelled(id))
        || shared.abandoned(part.seq)
        || chars > config.inject.char_budget(part.audio_ms)
    {
        return None;
    }
    wait_for_release(sink, shared, part.release_at);
    shared.set_injecting(true);
    let t0 = Instant::now();
    let stop = {
        let shared = Arc::clone(shared);
        let cancellable = part.id.is_some();
        Arc::new(move || cancellable && shared.cancelled(id)) as StopCheck
    };
    let delivery = sink.deliver_until(&part.text, stop);
    shared.set_injecting(false);
    let ok =
        delivery.error.is_none() && !matches!(delivery.method.as_str(), "none" | "clipboard_only");
    Some(Sent {
        text: part.text.clone(),
        ok,
        chars: delivery.chars.unwrap_or(chars),
        handed_over_ms: delivery.handed_over_ms.unwrap_or_else(|| ms_since(t0)),
        method: delivery.method,
    })
}

/// What is left of `text` to type after `typed` (first words typed ahead of it): None when
/// `text` does not start with them.
fn rest_after(text: &str, typed: &str) -> Option<String> {
    let typed = typed.trim_end();
    if let Some(rest) = text.strip_prefix(typed) {
        return Some(rest.trim_start().to_string());
    }
    // Everything was typed ahead, and the profile dropped a final period since.
    typed.starts_with(text.trim_end()).then(String::new)
}

/// The factory, with a panic turned into its message.
fn catch_factory(factory: &SinkFactory, config: &Config) -> Result<Box<dyn Sink>, String> {
    catch(|| factory(config)).unwrap_or_else(|msg| Err(format!("crashed: {msg}")))
}

/// Types one dictation (unless it is cancelled, given up on, or has nothing to type) and
/// returns its row with how it went.
#[allow(clippy::too_many_arguments)]
fn deliver(
    sink: &mut dyn Sink,
    typed: Typed,
    sent: Option<Sent>,
    shared: &Arc<Shared>,
    config: &Config,
    to_controller: &mpsc::Sender<Input>,
    last: &mut Option<LastTyped>,
) -> crate::store::Entry {
    let Typed {
        seq,
        mut entry,
        release_at,
        commands,
        profile,
        hands_free,
        ..
    } = typed;
    let id = entry.id.unwrap_or(0);
    let text = entry.text.clone().unwrap_or_default();
    // Where the keys of its commands would go, and how it was said (`commands::trust`).
    let situation = Situation {
        terminal: config.inject.is_terminal(None, entry.app_class.as_deref()),
        hands_free,
        // Only a profile matched by class turns keys on (a title is set by what runs in
        // a terminal); `screen` asks again for the window focused at delivery.
        profile_allows: profile.allows_keys(),
        with_text: !text.trim().is_empty(),
        focus_moved: false,
    };
    // A long snippet is not cut by the budget; an LLM that writes more gets no allowance.
    let budget = crate::snippets::typing_budget(config, entry.audio_ms, entry.raw_text.as_deref());
    let chars = text.chars().count();
    let typed_ahead = sent.as_ref().filter(|s| s.ok).map(|s| s.chars);
    if entry.id.is_some() && shared.cancelled(id) {
        entry.inject_method = Some("cancelled".into());
    } else if shared.abandoned(seq) {
        // The controller gave up waiting: typing it now would surprise the user.
        entry.inject_method = Some("none".into());
        entry.inject_error = Some("ready too late to be typed; the text is in history".into());
    } else if entry.outcome != Outcome::Ok || (text.trim().is_empty() && commands.is_empty()) {
        // Silence, noise, errors: nothing is typed.
        entry.inject_method = Some("none".into());
    } else if chars > budget {
        // A speech server or an LLM gone wild: nothing typed, the text kept in history.
        let message = format!(
            "not typed: {chars} characters is more than {budget} for {:.1} s of speech \
             ([inject] max_chars_per_second); the text is in history (`dictum history`)",
            entry.audio_ms.unwrap_or(0) as f64 / 1000.0
        );
        entry.inject_method = Some("none".into());
        entry.inject_error = Some(message.clone());
        entry.error_kind.get_or_insert_with(|| "too_long".into());
        let _ = to_controller.send(Input::Notice(message));
        entry.commands = None;
    } else if text.trim().is_empty() {
        // Only commands ("new line", "scratch that"): after the release, like text.
        wait_for_release(sink, shared, release_at);
        shared.set_injecting(true);
        let t0 = Instant::now();
        let commands = screen(sink, commands, situation, config, &mut entry, to_controller);
        run_commands(sink, &commands, &mut entry, to_controller, last);
        entry.inject_method.get_or_insert_with(|| "none".into());
        entry.inject_ms = Some(ms_since(t0));
        entry.release_to_typed_ms = Some(ms_since(release_at));
        shared.set_injecting(false);
    } else {
        wait_for_release(sink, shared, release_at);
        shared.set_injecting(true);
        let _ = to_controller.send(Input::StateChanged);
        fault::point("inject_panic");
        fault::point("inject_hang");
        let stop = {
            let shared = Arc::clone(shared);
            let cancellable = entry.id.is_some();
            Arc::new(move || cancellable && shared.cancelled(id)) as StopCheck
        };
        // A snippet's newlines, where the window at the press was no terminal: line breaks.
        // Hands-free, nobody held a key: background audio saying a snippet's phrase types
        // its words, and its line breaks as spaces (a Return is a key, issue 38).
        let breaks = if situation.terminal || situation.hands_free {
            Vec::new()
        } else {
            crate::snippets::line_breaks(config, entry.raw_text.as_deref(), &text)
        };
        // First words typed ahead (`Part`): only the rest now. Words that did not reach
        // the window are delivered again with the rest (or left on the clipboard whole).
        let ahead = sent
            .filter(|s| s.ok)
            .and_then(|s| match rest_after(&text, &s.text) {
                Some(rest) => Some((s, rest)),
                None => {
                    tracing::error!(
                        "the first words typed ahead do not start the text; typing it whole"
                    );
                    None
                }
            });
        // Fitted into the text around the cursor as it is now: not a text whose first words
        // were typed ahead (they went out as heard), nor one with a snippet's line breaks
        // (their places are in the text as heard).
        let fitted = (ahead.is_none() && breaks.is_empty())
            .then(|| crate::dictation::caret::fit(sink, config, &text))
            .flatten();
        let t0 = Instant::now();
        let delivery = match &ahead {
            Some((s, rest)) if rest.trim().is_empty() => SinkReport {
                method: s.method.clone(),
                chars: Some(0),
                handed_over_ms: Some(0.0),
                ..SinkReport::default()
            },
            Some((_, rest)) => {
                let at = text.len() - rest.len();
                let breaks: Vec<usize> = breaks
                    .iter()
                    .filter(|&&b| b >= at)
                    .map(|b| b - at)
                    .collect();
                sink.deliver_lines(rest, &breaks, stop)
            }
            None => crate::dictation::caret::deliver_fitted(
                sink,
                fitted,
                &text,
                &mut entry,
                |sink, text| sink.deliver_lines(text, &breaks, stop),
            ),
        };
        let handed_over = delivery.handed_over_ms.unwrap_or_else(|| ms_since(t0));
        let (ahead_chars, ahead_ms) = ahead
            .as_ref()
            .map_or((0, 0.0), |(s, _)| (s.chars, s.handed_over_ms));
        entry.inject_ms = Some(handed_over + ahead_ms);
        entry.release_to_typed_ms =
            Some(t0.saturating_duration_since(release_at).as_secs_f64() * 1000.0 + handed_over);
        entry.inject_method = Some(delivery.method);
        entry.inject_error = delivery.error;
        if entry.app_class.is_none() {
            entry.app_class = delivery.app_class;
            entry.window_title = delivery.window_title;
        }
        let typed_ok = !crate::inject::inject_failed(entry.inject_error.as_deref())
            && entry
                .inject_method
                .as_deref()
                .is_some_and(|m| m != "none" && m != "clipboard_only");
        *last = match (typed_ok, delivery.chars) {
            (true, Some(chars)) => Some(LastTyped {
                chars: chars + ahead_chars,
                focus: sink.focus_key(),
                at: Instant::now(),
            }),
            _ => None,
        };
        if !commands.is_empty() {
            if typed_ok {
                let commands = screen(sink, commands, situation, config, &mut entry, to_controller);
                run_commands(sink, &commands, &mut entry, to_controller, last);
            } else {
                // The text did not reach the window: keys pressed now would act on
                // whatever is there without it (a terminal's Return).
                let skipped = "voice commands not done: the text did not reach the window";
                entry.inject_error = Some(match entry.inject_error.take() {
                    Some(e) => format!("{e}; {skipped}"),
                    None => skipped.into(),
                });
                entry.commands = None;
            }
        }
        shared.set_injecting(false);
    }
    if let Some(n) = typed_ahead {
        if matches!(entry.inject_method.as_deref(), Some("cancelled" | "none")) {
            let note = format!("its first {n} characters were typed before this");
            entry.inject_error = Some(match entry.inject_error.take() {
                Some(e) => format!("{e}; {note}"),
                None => note,
            });
        }
    }
    entry
}

/// Completes an edit (`crate::edit::deliver`) through a sink of its own: the profile's
/// method, no trailing space after the answer.
fn deliver_edit(
    factory: &SinkFactory,
    config: &Config,
    typed: Typed,
    request: crate::edit::Request,
    shared: &Arc<Shared>,
    to_controller: &mpsc::Sender<Input>,
) -> crate::store::Entry {
    let notice = |m: String| {
        let _ = to_controller.send(Input::Notice(m));
    };
    let mut with = config.clone();
    with.inject.trailing_space = false;
    with.inject.method = typed.profile.inject_method(config);
    let (seq, release_at, mut entry) = (typed.seq, typed.release_at, typed.entry);
    let mut sink = match catch_factory(factory, &with) {
        Ok(s) => s,
        Err(e) => {
            let message = format!("edit: typing could not start ({e}); nothing was changed");
            entry.inject_method = Some("none".into());
            entry.inject_error = Some(message.clone());
            notice(message);
            return entry;
        }
    };
    let id = entry.id;
    let stop = || {
        if id.is_some_and(|id| shared.cancelled(id)) {
            return Some("cancelled with the cancel key; nothing was typed".to_string());
        }
        shared
            .abandoned(seq)
            .then(|| "ready too late to be typed; the answer is in history".to_string())
    };
    wait_for_release(sink.as_ref(), shared, release_at);
    shared.set_injecting(true);
    let entry = crate::edit::deliver::deliver(
        crate::edit::deliver::Delivery {
            sink: sink.as_mut(),
            config,
            notice: &notice,
            stop: &stop,
        },
        entry,
        request,
    );
    shared.set_injecting(false);
    entry
}

/// Keeps the commands that may press keys where they would go now (`commands::trust`);
/// the refused ones are recorded on the row (`commands_refused`) and announced.
///
/// The window focused now decides, as the gate sees it (`inject/gate.rs`): a terminal then
/// or now counts (one that cannot be known is one), its own profile (matched by class)
/// is the one that may turn keys on, and a window other than the one at the press gets no
/// keys at all.
fn screen(
    sink: &mut dyn Sink,
    commands: Vec<crate::commands::Spoken>,
    mut situation: Situation,
    config: &Config,
    entry: &mut crate::store::Entry,
    to_controller: &mpsc::Sender<Input>,
) -> Vec<crate::commands::Spoken> {
    if commands.is_empty() {
        return commands;
    }
    if let Some((window, verdict)) = sink.verdict() {
        situation.terminal |= verdict.terminal;
        let profiles = crate::profile::Profiles::compile(&config.profiles).unwrap_or_default();
        let now = profiles.pick(window.class.as_deref(), window.title.as_deref());
        situation.profile_allows &= now.allows_keys();
        situation.focus_moved = window.class != entry.app_class;
        tracing::debug!(
            terminal = verdict.terminal,
            reason = verdict.reason,
            "voice command keys: the window at delivery"
        );
    } else if !situation.terminal {
        situation.terminal = sink.focus_is_terminal().unwrap_or(false);
    }
    let (allowed, refused) = trust::screen(commands, &situation);
    if !refused.is_empty() {
        let names: Vec<&str> = refused.iter().map(|r| r.name.as_str()).collect();
        let _ = to_controller.send(Input::Notice(format!(
            "voice command {} not done: {}",
            names.join(", "),
            refused[0].why
        )));
        entry.commands_refused = trust::refused_json(&refused);
    }
    allowed
}

/// A result that is ready while the push-to-talk key is held for the next utterance waits
/// for the release (order is kept: later ones queue behind it), then for the sink's grace
/// after the release (the hotkey's modifiers).
fn wait_for_release(sink: &dyn Sink, shared: &Shared, release_at: Instant) {
    while shared.key_held() && !shared.shutting_down() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let ready_at = release_at + sink.release_grace();
    let now = Instant::now();
    if ready_at > now {
        std::thread::sleep(ready_at - now);
    }
}

/// The last dictation Dictum typed, for "scratch that".
pub(crate) struct LastTyped {
    chars: usize,
    /// The window it went to (None: unknown, so it cannot be erased safely).
    focus: Option<String>,
    at: Instant,
}

/// Does the commands said at the end of a dictation (its text, if any, is typed already) and
/// records on the row which were done; one that cannot be done says why in `inject_error`.
fn run_commands(
    sink: &mut dyn Sink,
    commands: &[crate::commands::Spoken],
    entry: &mut crate::store::Entry,
    to_controller: &mpsc::Sender<Input>,
    last: &mut Option<LastTyped>,
) {
    let mut done = Vec::new();
    let mut problems = Vec::new();
    for c in commands {
        let result = match &c.action {
            Action::Keys { keys } => {
                // Keys change the window in ways "scratch that" cannot know.
                *last = None;
                sink.press(keys).map(|method| {
                    entry.inject_method.get_or_insert(method);
                })
            }
            Action::ScratchThat => scratch_that(sink, last).map(|method| {
                entry.inject_method.get_or_insert(method);
            }),
            Action::Discard => Ok(()),
            Action::StopDictation => {
                let _ = to_controller.send(Input::VoiceStop);
                Ok(())
            }
        };
        match result {
            Ok(()) => done.push(c.name.as_str()),
            Err(e) => problems.push(format!("\"{}\" not done: {e}", c.name)),
        }
    }
    entry.commands = crate::commands::names_json(done.into_iter());
    if !problems.is_empty() {
        let message = problems.join("; ");
        let _ = to_controller.send(Input::Notice(message.clone()));
        entry.inject_error = Some(match entry.inject_error.take() {
            Some(e) => format!("{e}; {message}"),
            None => message,
        });
    }
}

/// Erases the previous dictation with BackSpace, only when it is safe: Dictum typed it, the
/// same window has the focus, and nothing was typed there since (where that can be seen).
fn scratch_that(sink: &mut dyn Sink, last: &mut Option<LastTyped>) -> Result<String, String> {
    let Some(prev) = last.take() else {
        return Err(
            "there is no dictation typed by Dictum to remove (only the last one can \
                    be, and not after a key command)"
                .into(),
        );
    };
    let now = sink.focus_key();
    if prev.focus.is_none() || now != prev.focus {
        return Err("the window that got the last dictation no longer has the focus".into());
    }
    if sink.typed_elsewhere_since(prev.at) == Some(true) {
        return Err("something was typed on the keyboard since the last dictation".into());
    }
    sink.press(&vec![Chord::key(Key::BackSpace); prev.chars])
}

#[cfg(test)]
mod tests;
