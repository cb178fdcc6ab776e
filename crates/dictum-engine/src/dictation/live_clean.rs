//! Cleanup while speaking (issue 27 item 6). With cleanup on, the release used to wait for one
//! LLM pass over the whole text. Here the text committed while the key is held (the worker's
//! final chunks) is cleaned piece by piece in the background: only whole sentences are sent
//! (an unfinished one waits for more text or the release), each with the piece before it and
//! its cleaned text as one earlier exchange of the conversation (the context), and each piece
//! is guarded on its own, so a rejected piece keeps its raw words while the others stay
//! cleaned. At the release only what is left (the tail, plus whatever the background had not
//! reached) is cleaned, in one request. Like whisper's speculation at a short silence, the
//! text the release would leave if nothing more were said (the pending words and the latest
//! speculation's) is cleaned ahead as a guess while the key is still held; when the release
//! leaves exactly that text, its cleanup is already done or under way.
//!
//! The pure part ([`whole_sentences`], [`after_words`], [`assemble`]) needs no server; the
//! [`Session`] runs the requests on a thread of its own, so the worker never waits for the
//! LLM while the key is held (whisper goes on with the next stretch). If the text the release
//! delivers does not start with the pieces cleaned so far (a voice command or a spoken
//! punctuation mark changed it), or the background is stuck, the release falls back to one
//! pass over the whole text, as before.

use crate::llm::config::LlmConfig;
use crate::llm::guard::{self, Limits};
use crate::llm::{Cleaner, LlmOutcome, LlmReport};
use crate::pipeline::Engine;
use crate::store::{Entry, Outcome};
use crate::timing::{ms_since, StageTimings};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Abbreviations whose period does not end a sentence ("Mr. Smith").
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "approx",
];

/// Byte length of the whole sentences at the start of `text`: up to and including the last
/// `.`, `?` or `!` (with closing quotes or brackets) that is followed by the end of the text
/// or by a space and a capital, a digit or an opening quote. 0: no whole sentence yet. A
/// trailing ellipsis ("and then...") is a sentence left hanging, not an end; a decimal point
/// or an abbreviation's period is no end either.
pub fn whole_sentences(text: &str) -> usize {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut end = 0;
    let mut i = 0;
    while i < chars.len() {
        let (_, c) = chars[i];
        if !matches!(c, '.' | '?' | '!' | '…') {
            i += 1;
            continue;
        }
        // The run of end marks and closers ("?!", ".\"", "...").
        let mut j = i;
        let mut dots = 0;
        while j < chars.len() && matches!(chars[j].1, '.' | '?' | '!' | '…') {
            dots += usize::from(chars[j].1 == '.');
            dots += 3 * usize::from(chars[j].1 == '…');
            j += 1;
        }
        while j < chars.len() && matches!(chars[j].1, '"' | '\'' | ')' | ']' | '”' | '’') {
            j += 1;
        }
        let after = chars.get(j).map(|&(_, c)| c);
        let next_word = chars[j..]
            .iter()
            .map(|&(_, c)| c)
            .find(|c| !c.is_whitespace());
        let word_before: String = chars[..i]
            .iter()
            .rev()
            .map(|&(_, c)| c)
            .take_while(|c| c.is_alphanumeric() || *c == '.')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>()
            .to_lowercase();
        let abbreviation = c == '.' && dots == 1 && ABBREVIATIONS.contains(&word_before.as_str());
        let byte_end = chars.get(j).map_or(text.len(), |&(b, _)| b);
        let ends = match after {
            None => dots < 3,
            Some(a) if a.is_whitespace() => next_word.is_some_and(|n| {
                n.is_uppercase() || n.is_ascii_digit() || matches!(n, '"' | '“' | '\'' | '(')
            }),
            _ => false,
        };
        if ends && !abbreviation {
            end = byte_end;
        }
        i = j.max(i + 1);
    }
    end
}

/// What is left of `full` after the words of `prefix` (compared word by word, so spacing does
/// not matter); None when `full` does not start with them.
pub fn after_words<'a>(full: &'a str, prefix: &str) -> Option<&'a str> {
    let mut rest = full;
    for word in prefix.split_whitespace() {
        rest = rest.trim_start().strip_prefix(word)?;
        // The word must end there ("cat" is no prefix of "cats").
        if rest.chars().next().is_some_and(|c| !c.is_whitespace()) {
            return None;
        }
    }
    Some(rest.trim())
}

/// One stretch of text sent to the LLM, and what came back.
#[derive(Debug, Clone)]
pub struct Piece {
    /// The raw words.
    pub raw: String,
    pub report: LlmReport,
}

impl Piece {
    /// The text this piece contributes (its cleanup if the guard accepts it for the target),
    /// and the verdict.
    fn judged(&self, limits: &Limits, terminal: bool) -> (String, LlmOutcome, Option<String>) {
        match &self.report.output {
            None => (self.raw.clone(), LlmOutcome::Failed, None),
            Some(out) => match guard::judge(&self.raw, out, limits, terminal) {
                Ok(text) => (text, LlmOutcome::Cleaned, None),
                Err(rejection) => (
                    self.raw.clone(),
                    LlmOutcome::Rejected,
                    Some(crate::net::snippet(&rejection.to_string(), 300)),
                ),
            },
        }
    }
}

/// The context of the next piece: the last piece's raw words and what they became (its
/// cleanup where the guard accepted it, else the raw words).
pub fn context(pieces: &[Piece]) -> Option<(String, String)> {
    let last = pieces.last()?;
    let (text, _, _) = last.judged(&Limits::default(), false);
    Some((last.raw.clone(), text))
}

/// The pieces' verdicts joined into one report, as one pass over the whole text would give:
/// the text is every piece's cleanup where the guard accepts it for the target (`terminal`),
/// its raw words where not. `outcome` is `cleaned` when any piece was; `reject_reason` and
/// `error` name each piece that was rejected or failed ("piece 2 of 3: ..."). `total_ms` is
/// the time the release waited for the LLM; the server timings are the last request's.
pub fn assemble(pieces: &[Piece], limits: &Limits, terminal: bool, total_ms: f64) -> LlmReport {
    let n = pieces.len();
    let mut texts = Vec::with_capacity(n);
    let mut outputs = Vec::with_capacity(n);
    let mut reasons = Vec::new();
    let mut errors = Vec::new();
    let mut error_kind = None;
    let (mut cleaned, mut rejected) = (0, 0);
    let label = |i: usize| {
        if n == 1 {
            String::new()
        } else {
            format!("piece {} of {n}: ", i + 1)
        }
    };
    for (i, p) in pieces.iter().enumerate() {
        let (text, outcome, reason) = p.judged(limits, terminal);
        match outcome {
            LlmOutcome::Cleaned => cleaned += 1,
            LlmOutcome::Rejected => rejected += 1,
            _ => {
                errors.push(format!(
                    "{}{}",
                    label(i),
                    p.report.error.as_deref().unwrap_or("no answer")
                ));
                error_kind = error_kind.or(p.report.error_kind.clone());
            }
        }
        if let Some(r) = reason {
            reasons.push(format!("{}{r}", label(i)));
        }
        outputs.push(p.report.output.clone().unwrap_or_else(|| p.raw.clone()));
        texts.push(text);
    }
    let outcome = if cleaned > 0 {
        LlmOutcome::Cleaned
    } else if rejected > 0 {
        LlmOutcome::Rejected
    } else {
        LlmOutcome::Failed
    };
    let last = pieces.last().map(|p| &p.report);
    let join = |v: Vec<String>| {
        v.into_iter()
            .filter(|s| !s.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    LlmReport {
        backend: last.map(|r| r.backend.clone()).unwrap_or_default(),
        model: last.map(|r| r.model.clone()).unwrap_or_default(),
        outcome,
        text: join(texts),
        output: Some(join(outputs)),
        reject_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        error_kind,
        load_ms: last.and_then(|r| r.load_ms),
        prompt_eval_ms: last.and_then(|r| r.prompt_eval_ms),
        eval_ms: last.and_then(|r| r.eval_ms),
        tokens_per_sec: last.and_then(|r| r.tokens_per_sec),
        total_ms,
        reloaded: pieces.iter().any(|p| p.report.reloaded),
        reload_cause: pieces.iter().find_map(|p| p.report.reload_cause.clone()),
    }
}

/// The cleaners of background sessions, kept across utterances (one connection pool, and the
/// API key looked up once) for the LLM settings they were built with.
static CLEANERS: Mutex<Option<CachedCleaner>> = Mutex::new(None);

/// A cleaner and the LLM settings and vocabulary it was built with.
type CachedCleaner = (LlmConfig, Vec<String>, Arc<Cleaner>);

fn cleaner_for(config: &LlmConfig, vocabulary: &[String]) -> Option<Arc<Cleaner>> {
    let mut cache = CLEANERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((c, v, cleaner)) = cache.as_ref() {
        if c == config && v == vocabulary {
            return Some(cleaner.clone());
        }
    }
    match Cleaner::new(config, vocabulary) {
        Ok(c) => {
            let c = Arc::new(c);
            *cache = Some((config.clone(), vocabulary.to_vec(), c.clone()));
            Some(c)
        }
        Err(e) => {
            tracing::warn!("cleanup while speaking is off for this dictation: {e}");
            None
        }
    }
}

#[derive(Default)]
struct State {
    /// Committed raw text not taken into a piece yet.
    pending: String,
    pieces: Vec<Piece>,
    /// A request (a piece or a guess) is in flight.
    busy: bool,
    /// The guess to clean next: what the release would leave if nothing more were said.
    want_guess: Option<String>,
    /// The last guess cleaned: its raw words and report, and how many characters of text
    /// before the cursor its request carried (`dictation/caret.rs`).
    guess: Option<(String, LlmReport, usize)>,
    /// The release came: no new piece starts.
    ending: bool,
    /// What the release left to clean, for the thread.
    last: Option<String>,
    /// Its cleanup.
    last_report: Option<LlmReport>,
    /// The session was dropped (utterance cancelled, or done): the thread ends.
    dropped: bool,
}

struct Inner {
    state: Mutex<State>,
    changed: Condvar,
    /// Wakes a guess in flight to drop it ([`Session::drop_guess`]).
    cancel_guess: tokio::sync::Notify,
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One utterance's cleanup while speaking: a thread that cleans each whole sentence committed
/// while the key is held, in order, one request at a time.
pub struct Session {
    inner: Arc<Inner>,
    /// The longest the release waits for a piece in flight (the request's own timeout, plus
    /// a margin) before it gives up on the pieces and cleans the whole text.
    patience: Duration,
    /// The place the words go (`[context] llm`), when the LLM may see it.
    around: Option<Arc<crate::dictation::llm_context::PressRead>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.inner.lock().dropped = true;
        self.inner.changed.notify_all();
    }
}

enum Work {
    Piece(String),
    Guess(String),
    Last(String),
}

/// The same words, whatever the spacing.
fn same_words(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

impl Session {
    /// Starts a session with `cleaner` (no request is sent until text is committed).
    pub fn start(cleaner: Arc<Cleaner>) -> Option<Session> {
        Session::start_in(cleaner, None)
    }

    /// [`Session::start`] with the place the text goes (`[context] llm`): every request of
    /// the session carries it.
    pub fn start_in(
        cleaner: Arc<Cleaner>,
        context: Option<Arc<crate::dictation::llm_context::PressRead>>,
    ) -> Option<Session> {
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            cancel_guess: tokio::sync::Notify::new(),
        });
        let patience = Duration::from_millis(cleaner.config().timeout_ms.saturating_add(1000));
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("cleanup while speaking is off: no async runtime ({e})");
                return None;
            }
        };
        let shared = inner.clone();
        let spawned = std::thread::Builder::new()
            .name("dictum-live-clean".into())
            .spawn({
                let context = context.clone();
                move || Session::run(&shared, &cleaner, &runtime, context.as_deref())
            });
        if let Err(e) = spawned {
            tracing::warn!("cleanup while speaking is off: cannot start its thread ({e})");
            return None;
        }
        Some(Session {
            inner,
            patience,
            around: context,
        })
    }

    /// The session of the utterance the engine's profile belongs to, when its cleanup is on.
    pub fn for_engine(
        engine: &Engine,
        context: Option<&Arc<crate::dictation::llm_context::PressRead>>,
    ) -> Option<Session> {
        let profile = engine.profile();
        if !profile.llm_enabled(&engine.config) {
            return None;
        }
        let applied = profile.applied_to(&engine.config);
        let context = context
            .filter(|_| {
                crate::dictation::llm_context::llm_may_see(&engine.config.context, &applied.llm.url)
                    .is_ok()
            })
            .cloned();
        Session::start_in(cleaner_for(&applied.llm, &applied.stt.vocabulary)?, context)
    }

    fn run(
        inner: &Inner,
        cleaner: &Cleaner,
        runtime: &tokio::runtime::Runtime,
        around: Option<&crate::dictation::llm_context::PressRead>,
    ) {
        let local = crate::net::is_loopback_url(&cleaner.config().url);
        loop {
            let (work, before) = {
                let mut s = inner.lock();
                loop {
                    if s.dropped {
                        return;
                    }
                    if let Some(rest) = s.last.take() {
                        break (Work::Last(rest), context(&s.pieces));
                    }
                    let n = whole_sentences(&s.pending);
                    if !s.ending && n > 0 {
                        let piece = s.pending[..n].trim().to_string();
                        s.pending = s.pending[n..].trim_start().to_string();
                        s.busy = true;
                        break (Work::Piece(piece), context(&s.pieces));
                    }
                    if let Some(guess) = s.want_guess.take().filter(|_| !s.ending) {
                        s.busy = true;
                        break (Work::Guess(guess), context(&s.pieces));
                    }
                    s = inner.changed.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            };
            let raw = match &work {
                Work::Piece(t) | Work::Guess(t) | Work::Last(t) => t.clone(),
            };
            let before_ref = before.as_ref().map(|(r, c)| (r.as_str(), c.as_str()));
            // Judged for any window here; the release judges again for the real target.
            let guess = matches!(work, Work::Guess(_));
            let kind = match &work {
                Work::Piece(_) => "piece",
                Work::Guess(_) => "guess",
                Work::Last(_) => "last",
            };
            // The place the words go, as known now (read again at the release when the press
            // found nothing: `dictation/caret.rs`).
            let place = around.and_then(|r| r.get(matches!(work, Work::Last(_))).ok());
            let t0 = Instant::now();
            // A server on this machine takes a core while it answers: whisper's passes take
            // one thread fewer meanwhile (`stt/cpu_share.rs`), rather than stall on it.
            let _core = local.then(crate::stt::cpu_share::LocalWork::start);
            let answer = crate::dictation::shared::catch(|| {
                runtime.block_on(async {
                    let request = cleaner.clean_in(&raw, before_ref, false, place.as_ref());
                    if !guess {
                        return Some(request.await);
                    }
                    // A guess the release made useless is dropped (its connection closed, so
                    // the server stops too) instead of holding a core while whisper works.
                    tokio::select! {
                        r = request => Some(r),
                        _ = inner.cancel_guess.notified() => None,
                    }
                })
            })
            .unwrap_or_else(|msg| {
                let mut r = cleaner.report(&raw, LlmOutcome::Failed, 0.0);
                r.error = Some(format!("the LLM stage crashed ({msg})"));
                r.error_kind = Some("panic".into());
                Some(r)
            });
            tracing::debug!(
                "cleanup while speaking: {kind} of {} characters {} after {:.0} ms",
                raw.len(),
                if answer.is_some() {
                    "cleaned"
                } else {
                    "dropped"
                },
                ms_since(t0)
            );
            let Some(report) = answer else {
                let mut s = inner.lock();
                s.busy = false;
                inner.changed.notify_all();
                continue;
            };
            let mut s = inner.lock();
            match work {
                Work::Piece(_) => {
                    s.pieces.push(Piece { raw, report });
                    s.busy = false;
                    inner.changed.notify_all();
                }
                Work::Guess(_) => {
                    let before = place.as_ref().map_or(0, |p| p.before.len());
                    s.guess = Some((raw, report, before));
                    s.busy = false;
                    inner.changed.notify_all();
                }
                Work::Last(_) => {
                    s.last_report = Some(report);
                    inner.changed.notify_all();
                    return;
                }
            }
        }
    }

    /// Text the worker committed (a final chunk's words): its whole sentences are cleaned in
    /// the background.
    pub fn commit(&self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let mut s = self.inner.lock();
        if !s.pending.is_empty() {
            s.pending.push(' ');
        }
        s.pending.push_str(text);
        // The release will leave other words than a guess made before.
        s.guess = None;
        s.want_guess = None;
        drop(s);
        self.inner.changed.notify_all();
    }

    /// Waits (at most `timeout`) until every whole sentence committed so far is cleaned
    /// and no guess waits or runs; true when it is. For tests and benchmarks: the release
    /// never waits for this.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut s = self.inner.lock();
        while s.busy || s.want_guess.is_some() || whole_sentences(&s.pending) > 0 {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            s = self
                .inner
                .changed
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// A speculation's words (the not-yet-final stretch, transcribed at a short silence):
    /// while nothing is cleaned yet and no whole sentence waits, the text the release would
    /// leave now (the pending words and these) is cleaned ahead, as a guess. Once a piece is
    /// cleaned there is no guess: the release types the pieces at once and cleans the rest
    /// while they are typed, so a guess would only take a core from whisper's passes
    /// (measured: 30 s dictations released 400 ms after the last word waited ~300 ms more
    /// for their first character while guesses ran).
    pub fn speculate(&self, text: &str) {
        let mut s = self.inner.lock();
        if s.ending || !s.pieces.is_empty() || whole_sentences(&s.pending) > 0 {
            return;
        }
        let rest = format!("{} {}", s.pending, text.trim()).trim().to_string();
        if rest.is_empty()
            || s.guess
                .as_ref()
                .is_some_and(|(g, _, _)| same_words(g, &rest))
        {
            return;
        }
        s.guess = None;
        s.want_guess = Some(rest);
        drop(s);
        self.inner.changed.notify_all();
    }

    /// The release will not leave the words of the last guess (whisper transcribes the tail
    /// anew): a guess waiting to start is forgotten and one in flight is dropped, so it
    /// neither holds a core while whisper works nor delays the release's own request.
    pub fn drop_guess(&self) {
        let mut s = self.inner.lock();
        s.want_guess = None;
        s.guess = None;
        drop(s);
        self.inner.cancel_guess.notify_waiters();
    }

    /// The release: waits for a request in flight, cleans what `full` (the whole text to
    /// type) has beyond the pieces done (unless a guess already cleaned exactly that), and
    /// joins the verdicts (guarded for the real target, `terminal`). None when nothing was
    /// cleaned early, or `full` does not start with the pieces, or the background is stuck:
    /// then the caller cleans the whole text in one pass.
    pub fn finish(self, full: &str, terminal: bool) -> Option<LlmReport> {
        self.finish_early(full, terminal, &mut |_| {})
    }

    /// [`Session::finish`], handing the text of the pieces already cleaned to `early` (in
    /// order, once each) as soon as it is known that `full` starts with them and goes on
    /// after them, so the caller can type it while the rest is cleaned: the release then
    /// waits for the LLM only before the last words, not before the first. Once something was
    /// handed over, the result is never None (the one-pass fallback would not start with
    /// it): a rest the background cannot clean in time keeps its raw words.
    pub fn finish_early(
        self,
        full: &str,
        terminal: bool,
        early: &mut dyn FnMut(&str),
    ) -> Option<LlmReport> {
        let start = Instant::now();
        let deadline = start + self.patience;
        let limits = Limits::default();
        let raws = |pieces: &[Piece]| {
            pieces
                .iter()
                .map(|p| p.raw.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut s = self.inner.lock();
        s.ending = true;
        s.want_guess = None;
        tracing::debug!(
            "cleanup while speaking: release with {} pieces done, busy {}, {} characters pending",
            s.pieces.len(),
            s.busy,
            s.pending.len()
        );
        // Pieces handed to `early` so far (always a prefix of `s.pieces`).
        let mut sent = 0;
        let mut in_time = true;
        loop {
            let goes_on = after_words(full, &raws(&s.pieces)).is_some_and(|r| !r.is_empty());
            if s.pieces.len() > sent && goes_on {
                let text = s.pieces[sent..]
                    .iter()
                    .map(|p| p.judged(&limits, terminal).0)
                    .filter(|t| !t.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                sent = s.pieces.len();
                if !text.is_empty() {
                    drop(s);
                    early(&text);
                    s = self.inner.lock();
                }
            }
            if !s.busy {
                break;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                in_time = false;
                break;
            };
            s = self
                .inner
                .changed
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let mut pieces = std::mem::take(&mut s.pieces);
        if sent == 0 && !in_time {
            return None;
        }
        let rest = match after_words(full, &raws(&pieces)) {
            Some(rest) => rest.to_string(),
            None if sent == 0 => return None,
            // A later piece does not fit (a voice command changed its words): the rest
            // goes on from the pieces handed over.
            None => {
                pieces.truncate(sent);
                after_words(full, &raws(&pieces))?.to_string()
            }
        };
        // A guess made while the text before the cursor could not be read (on X11 the
        // hotkey's grab hides the focus while the key is held) is not the release's answer
        // once that text is known: the rest is cleaned again, with it.
        let before_now = || {
            self.around
                .as_ref()
                .and_then(|r| r.get(true).ok())
                .map_or(0, |c| c.before.len())
        };
        let guessed = s
            .guess
            .take()
            .filter(|(g, _, before)| same_words(g, &rest) && *before == before_now());
        if let Some((_, report, _)) = guessed {
            pieces.push(Piece { raw: rest, report });
        } else if pieces.is_empty() {
            return None;
        } else if !rest.is_empty() {
            if in_time {
                s.last = Some(rest.clone());
                self.inner.changed.notify_all();
            }
            while in_time && s.last_report.is_none() {
                let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                    break;
                };
                s = self
                    .inner
                    .changed
                    .wait_timeout(s, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            match s.last_report.take() {
                Some(report) => pieces.push(Piece { raw: rest, report }),
                None if sent == 0 => return None,
                // Part of the text is typed already: the rest keeps its raw words.
                None => {
                    let mut report = pieces[pieces.len() - 1].report.clone();
                    report.outcome = LlmOutcome::Failed;
                    report.output = None;
                    report.text = rest.clone();
                    report.error = Some(format!(
                        "the last words were not cleaned within {} ms",
                        self.patience.as_millis()
                    ));
                    report.error_kind = Some("timeout".into());
                    pieces.push(Piece { raw: rest, report });
                }
            }
        }
        drop(s);
        Some(assemble(&pieces, &limits, terminal, ms_since(start)))
    }
}

/// The worker's hook for a committed chunk: starts the utterance's session on its first
/// committed text (when the engine's profile has cleanup on) and hands the text to it.
pub fn on_commit(
    slot: &mut Option<Session>,
    engine: &Engine,
    text: &str,
    context: Option<&Arc<crate::dictation::llm_context::PressRead>>,
) {
    if let Some(s) = started(slot, engine, text, context) {
        s.commit(text);
    }
}

/// The worker's hook for a speculation that ran to its end: its words are what the release
/// would add now, so the session cleans the rest ahead (a guess; starting the session when it
/// is the utterance's first text).
pub fn on_speculation(
    slot: &mut Option<Session>,
    engine: &Engine,
    text: &str,
    context: Option<&Arc<crate::dictation::llm_context::PressRead>>,
) {
    if let Some(s) = started(slot, engine, text, context) {
        s.speculate(text);
    }
}

/// The utterance's session for `text`, started on its first text; None for blank text or
/// when the engine's profile has no cleanup.
fn started<'a>(
    slot: &'a mut Option<Session>,
    engine: &Engine,
    text: &str,
    context: Option<&Arc<crate::dictation::llm_context::PressRead>>,
) -> Option<&'a mut Session> {
    if text.trim().is_empty() {
        return None;
    }
    if slot.is_none() {
        *slot = Session::for_engine(engine, context);
    }
    slot.as_mut()
}

/// The worker's cleanup of a finished row: with a session that cleaned pieces while the key
/// was held, only the rest is cleaned now and the verdicts are joined; otherwise (or when the
/// pieces do not fit the text) [`Engine::clean_entry`], one pass over the whole text.
/// `early` gets the cleaned pieces' text as soon as it is final ([`Session::finish_early`]).
pub fn clean_entry(
    session: Option<Session>,
    engine: &Engine,
    entry: &mut Entry,
    timings: &mut StageTimings,
    early: &mut dyn FnMut(&Entry, &str),
    context: Option<&crate::llm::prompt::Context>,
) -> Option<LlmReport> {
    let live = session
        .filter(|_| entry.outcome == Outcome::Ok && engine.profile().llm_enabled(&engine.config));
    if let Some(session) = live {
        let full = entry.text.clone().unwrap_or_default();
        // The same target rule as `Engine::clean_entry`: an unknown window is a terminal.
        let terminal = entry
            .app_class
            .as_deref()
            .is_none_or(|class| engine.config.inject.is_terminal(None, Some(class)));
        let raw_row = entry.clone();
        if let Some(report) =
            session.finish_early(&full, terminal, &mut |text| early(&raw_row, text))
        {
            report.apply_to(entry);
            timings.llm = Some(report.total_ms);
            return Some(report);
        }
        tracing::debug!("cleanup while speaking did not fit the text; one pass over it");
    }
    engine.clean_entry_in(entry, timings, context)
}

#[cfg(test)]
mod tests;
