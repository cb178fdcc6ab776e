//! The pipeline for one utterance: decode → resample → VAD → whisper → LLM cleanup → history.
//! The history row is inserted as `pending` before any stage runs and completed at the end,
//! whatever happened: success, no speech, or an error with its message. The finished row is
//! built and written here for live dictation too ([`Words`], [`fail_row`], [`store_finished`]:
//! the worker's `finish` calls them).

use crate::audio::{self, Pcm16k};
use crate::config::{AudioCtxMode, Config, SttBackend, SttTask};
use crate::gpu::planner::Plan;
use crate::gpu::speech_plan;
use crate::llm::{Cleaner, LlmReport, WarmUp};
use crate::profile::Profile;
use crate::snippets::Rewriter;
use crate::store::{Entry, History, Outcome, Source};
use crate::stt::remote::{Gate, RemoteError, RemoteOutput, RemoteStt};
use crate::stt::{
    degenerate, is_silence_phrase, strip_nonspeech, ResilientTranscriber, SttOptions, Transcriber,
    Window,
};
use crate::timing::{ms_since, timed, StageTimings};
use crate::vad::{self, Detector};
use crate::{Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Holds the config and the loaded model; reuse one per process so the model loads once.
pub struct Engine {
    pub config: Config,
    /// Folders searched for models given by name.
    pub model_dirs: Vec<PathBuf>,
    /// Where kept audio goes (only with `history.keep_audio`).
    pub audio_dir: Option<PathBuf>,
    transcriber: Option<ResilientTranscriber>,
    /// The speech server's client (`stt.backend = "openai"`), built on first use; the error
    /// when the settings cannot work (kept until the config changes).
    remote: Option<std::result::Result<RemoteStt, RemoteError>>,
    /// The server backend has been reported ready once (start-up waits for that report).
    server_ready: bool,
    llm: Option<LlmStage>,
    /// What the LLM holds on the GPU (Ollama `/api/ps` after the warm-up), for the planner.
    llm_resident_bytes: u64,
    /// The VRAM plan behind the loaded model: where it runs and why.
    pub plan: Option<Plan>,
    /// The longest stretch of a file given to whisper at once, in seconds. Longer files are
    /// cut at their quietest point into pieces of 3/4 to all of this and transcribed as they
    /// are decoded, each with the text before it as context: memory stays flat and progress
    /// can be shown, whatever the file's length.
    pub file_piece_s: u32,
    /// The per-app profile of the utterance being worked on (live dictation sets it per job;
    /// `default` otherwise): its language, vocabulary and LLM settings win over `config`.
    profile: Arc<Profile>,
    /// LLM stages of profiles that change the request (prompt, vocabulary) or turn the LLM
    /// on while `[llm] enabled` is off, by profile name; dropped when the config changes.
    profile_llm: HashMap<String, LlmStage>,
    /// `[[replace]]` and `[[snippet]]` compiled, rebuilt when the config's tables change;
    /// every segment carries it to the row ([`Words::into_row`]).
    rewriter: Arc<Rewriter>,
}

/// The default [`Engine::file_piece_s`]: two minutes (whisper reads 30 s windows; a piece of a
/// few windows keeps its own context handling, and the cut falls in a pause).
pub const FILE_PIECE_S: u32 = 120;

/// How far the transcription of a long file has got.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileProgress {
    /// Audio transcribed so far, and in all (from the file's header).
    pub done_ms: u64,
    pub total_ms: u64,
    /// Pieces transcribed so far.
    pub pieces: usize,
    /// Wall time since the file was opened.
    pub elapsed_ms: f64,
}

impl FileProgress {
    /// The expected wall time still to go, from the pace so far.
    pub fn remaining_ms(&self) -> f64 {
        if self.done_ms == 0 {
            return 0.0;
        }
        let rest = self.total_ms.saturating_sub(self.done_ms) as f64;
        self.elapsed_ms / self.done_ms as f64 * rest
    }
}

/// The LLM cleanup stage as the (synchronous) engine runs it: the async [`Cleaner`] on a
/// runtime of its own, so its connection pool lives as long as the engine.
struct LlmStage {
    runtime: tokio::runtime::Runtime,
    cleaner: Cleaner,
}

/// What whisper made of one stretch of audio (a file, or a chunk of a live utterance).
#[derive(Debug, Clone, Default)]
pub struct Segment {
    /// The words, annotations like `(water splashing)` removed; empty = no speech.
    pub text: String,
    /// Whisper's own output.
    pub raw: String,
    pub vad_ms: f64,
    pub speech_ms: i64,
    /// Whisper time (0 when the VAD found no speech and whisper did not run).
    pub stt_ms: f64,
    /// Whisper's own probability that there was no speech.
    pub no_speech_prob: f32,
    pub language: Option<String>,
    pub model: Option<String>,
    pub device: Option<String>,
    /// Set when the GPU failed and the segment was redone on the CPU.
    pub fallback: Option<String>,
    /// (load ms, warm-up ms) when this segment had to load the model.
    pub model_load: Option<(f64, f64)>,
    /// Where whisper stopped when speech went on after it (sample index in the audio given):
    /// it sometimes ends a long stretch at a pause. Set for full-window pieces only.
    pub uncovered_from: Option<usize>,
    /// "openai" when the speech server's answer was used, "local" otherwise.
    pub backend: Option<String>,
    /// Why the local model stood in for the speech server (with the server's answer when it
    /// was judged not a transcript: kept, see [`kept_answer`]).
    pub stt_fallback: Option<String>,
    /// `stt_fallback` holds an answer the server gave (each one is kept in the row).
    pub server_answer_kept: bool,
    /// Speech server: round trip minus the server's reported time, and that time.
    pub upload_ms: Option<f64>,
    pub server_ms: Option<f64>,
    /// The snippets and replacements of the engine that made this segment, applied when
    /// the row's text is made ([`Words::into_row`], [`Segment::into_row_text`]).
    pub rewriter: Option<Arc<Rewriter>>,
}

/// The row's text from the transcript: replacements, then snippets. A file's text keeps a
/// snippet's newlines; a typed dictation's get spaces (the typing path sends no newline: in a
/// terminal it would be Enter).
fn rewritten(rewriter: Option<&Arc<Rewriter>>, text: String, entry: &Entry) -> String {
    let Some(r) = rewriter.filter(|r| !r.is_empty() && !text.is_empty()) else {
        return text;
    };
    let out = r.apply(&text, entry.source == Source::File);
    if !out.applied.is_empty() {
        tracing::debug!(applied = ?out.applied, "snippets and replacements applied");
    }
    out.text.trim().to_string()
}

impl Segment {
    /// Adds what whisper made of the rest of the same stretch (see
    /// [`Engine::transcribe_segment`]): its text after this one, its time on top. The speech
    /// found was already counted over the whole stretch.
    fn append(&mut self, rest: Segment) {
        for (to, from) in [(&mut self.text, &rest.text), (&mut self.raw, &rest.raw)] {
            if !from.trim().is_empty() {
                if !to.is_empty() {
                    to.push(' ');
                }
                to.push_str(from.trim());
            }
        }
        self.vad_ms += rest.vad_ms;
        self.stt_ms += rest.stt_ms;
        self.no_speech_prob = self.no_speech_prob.min(rest.no_speech_prob);
        self.uncovered_from = rest.uncovered_from;
        self.fallback = self.fallback.take().or(rest.fallback);
        self.model_load = self.model_load.or(rest.model_load);
    }

    /// Makes this segment the row's words: its text and raw text, and the outcome they give
    /// (no text: no speech). Call after [`Segment::apply_to`].
    pub fn into_row_text(self, entry: &mut Entry) {
        let text = rewritten(self.rewriter.as_ref(), self.text, entry);
        entry.outcome = if text.is_empty() {
            Outcome::NoSpeech
        } else {
            Outcome::Ok
        };
        entry.raw_text = Some(self.raw);
        entry.text = Some(text);
    }

    /// Copies the timings and facts (not the text) into a history row.
    pub fn apply_to(&self, entry: &mut Entry, timings: &mut StageTimings) {
        timings.vad = Some(timings.vad.unwrap_or(0.0) + self.vad_ms);
        entry.vad_ms = timings.vad;
        entry.speech_ms = Some(entry.speech_ms.unwrap_or(0) + self.speech_ms);
        if let Some((load, warm)) = self.model_load {
            timings.model_load = Some(load);
            timings.warmup = Some(warm);
            entry.model_load_ms = Some(load);
            entry.warmup_ms = Some(warm);
        }
        if self.stt_ms > 0.0 {
            timings.stt = Some(timings.stt.unwrap_or(0.0) + self.stt_ms);
            entry.stt_ms = timings.stt;
        }
        if let Some(m) = &self.model {
            entry.model = Some(m.clone());
        }
        if let Some(l) = &self.language {
            entry.language = Some(l.clone());
        }
        if let Some(d) = &self.device {
            entry.device = Some(d.clone());
        }
        if let Some(note) = &self.fallback {
            entry.error_kind = Some("gpu_fallback".into());
            entry.error = Some(note.clone());
        }
        if let Some(b) = &self.backend {
            entry.stt_backend = Some(match entry.stt_backend.take() {
                Some(old) if old != *b && old.split('+').all(|o| o != b) => format!("{old}+{b}"),
                Some(old) => old,
                None => b.clone(),
            });
        }
        if let Some(why) = &self.stt_fallback {
            match &mut entry.stt_fallback {
                None => entry.stt_fallback = Some(why.clone()),
                // Every answer the server gave and the local model replaced stays in the row.
                Some(old) if self.server_answer_kept && !old.contains(why.as_str()) => {
                    old.push_str(" | ");
                    old.push_str(why);
                }
                Some(_) => {}
            }
        }
        if let Some(ms) = self.upload_ms {
            entry.stt_upload_ms = Some(entry.stt_upload_ms.unwrap_or(0.0) + ms);
        }
        if let Some(ms) = self.server_ms {
            entry.stt_server_ms = Some(entry.stt_server_ms.unwrap_or(0.0) + ms);
        }
    }
}

/// Keeps in `entry.raw_text` the speech server's answer `e` set aside (judged not a
/// transcript, and nothing could redo it), after whatever raw text the row already has.
pub fn keep_rejected_answer(entry: &mut Entry, e: &Error) {
    if let Some(answer) = e.rejected_answer() {
        let raw = entry.raw_text.get_or_insert_with(String::new);
        if !raw.trim().is_empty() {
            raw.push(' ');
        }
        raw.push_str(answer);
    }
}

/// The words of one utterance transcribed in pieces, in order: a file's pieces, or a live
/// dictation's committed chunks and its tail. The text so far is the next piece's context.
/// Both paths turn them into the finished row here ([`Words::into_row`], [`fail_row`]).
#[derive(Debug, Default, Clone)]
pub struct Words {
    /// The pieces' texts, empty ones left out.
    pub texts: Vec<String>,
    /// Whisper's raw text of every piece.
    pub raws: Vec<String>,
    /// The snippets and replacements the row's text gets (the latest piece's engine's).
    pub rewriter: Option<Arc<Rewriter>>,
}

impl Words {
    /// Adds the next piece.
    pub fn push(&mut self, seg: &Segment) {
        self.adopt(seg);
        if !seg.text.is_empty() {
            self.texts.push(seg.text.clone());
        }
        self.raws.push(seg.raw.clone());
    }

    /// Takes `seg`'s snippets and replacements for the row (the engine's latest tables).
    fn adopt(&mut self, seg: &Segment) {
        if seg.rewriter.is_some() {
            self.rewriter = seg.rewriter.clone();
        }
    }

    /// The text so far: whisper's prompt for the next piece. Whisper's words as they came:
    /// snippets and replacements are applied once, to the whole, by [`Words::into_row`] (a
    /// phrase may span two pieces).
    pub fn text(&self) -> String {
        self.texts.join(" ")
    }

    /// The raw texts, each trimmed, joined by spaces.
    pub fn raw(&self) -> String {
        self.raws
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Makes these the finished row's words: its text (with the snippets and replacements),
    /// raw text (whisper's), and the outcome they give (no text: no speech). Call after every
    /// piece's [`Segment::apply_to`].
    pub fn into_row(self, entry: &mut Entry) {
        let text = rewritten(self.rewriter.as_ref(), self.text(), entry);
        entry.outcome = if text.is_empty() {
            Outcome::NoSpeech
        } else {
            Outcome::Ok
        };
        entry.raw_text = Some(self.raw());
        entry.text = Some(text);
    }
}

/// Fails the finished row with `e` (file and live path alike): `outcome` (`Error`, or `Ok`
/// when the live path still delivers what its committed chunks hold), the error's kind,
/// `message` for the user, and the server answer `e` set aside, if any.
pub fn fail_row(entry: &mut Entry, e: &Error, outcome: Outcome, message: String) {
    keep_rejected_answer(entry, e);
    entry.outcome = outcome;
    entry.error_kind = Some(e.kind().to_string());
    entry.error = Some(message);
}

/// Writes the finished row (the file path's, the live path's before it is typed). Rows of
/// utterances that never reach the stages are written where they end (see ARCHITECTURE.md).
pub fn store_finished(history: &History, entry: &Entry) -> Result<()> {
    history.update(entry)
}

/// The last `n` characters of `s`, starting at a word boundary.
fn tail_chars(s: &str, n: usize) -> &str {
    let s = s.trim();
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    let start = s.char_indices().nth(count - n).map_or(0, |(i, _)| i);
    let cut = &s[start..];
    cut.find(' ').map_or(cut, |i| cut[i + 1..].trim_start())
}

/// The text of a file transcribed piece by piece.
#[derive(Default)]
struct PieceText {
    words: Words,
    /// Time spent in VAD and whisper (the rest of the decoding loop is decoding).
    ms: f64,
}

impl PieceText {
    /// Transcribes the next piece, with the text so far as context (`full_window`: see
    /// [`Engine::transcribe_piece`]).
    fn add(
        &mut self,
        engine: &mut Engine,
        full_window: bool,
        samples: &[f32],
        entry: &mut Entry,
        timings: &mut StageTimings,
    ) -> Result<()> {
        let speech_before = entry.speech_ms.unwrap_or(0);
        let speech = self.add_checked(engine, full_window, samples, entry, timings, 0)?;
        // Second looks re-analyse audio already counted: the piece's speech counts once.
        entry.speech_ms = Some(speech_before + speech);
        Ok(())
    }

    /// Whisper sometimes ends a long stretch at a pause and drops what follows (tiny.en does
    /// it on 10 to 20 s of several sentences). Two checks catch it: speech left after the
    /// last segment's end is transcribed on its own, and a text far too short for the speech
    /// in it (under 0.8 words per second of speech) is redone as two halves cut at the
    /// quietest point, kept if they say more. Returns the piece's speech ms.
    fn add_checked(
        &mut self,
        engine: &mut Engine,
        full_window: bool,
        samples: &[f32],
        entry: &mut Entry,
        timings: &mut StageTimings,
        depth: u32,
    ) -> Result<i64> {
        let rate = crate::SAMPLE_RATE as usize;
        let mut from = 0;
        let mut speech = None;
        for _ in 0..4 {
            let part = &samples[from..];
            let t = Instant::now();
            let seg = engine.transcribe_piece(part, &self.words.text(), full_window);
            self.ms += ms_since(t);
            let seg = seg?;
            seg.apply_to(entry, timings);
            speech.get_or_insert(seg.speech_ms);
            tracing::debug!(
                seconds = part.len() as f64 / rate as f64,
                speech_ms = seg.speech_ms,
                text = seg.text,
                "file piece transcribed"
            );
            let words = seg.text.split_whitespace().count() as f64;
            let too_short = words < seg.speech_ms as f64 / 1000.0 * 0.8 - 2.0;
            if full_window && too_short && depth < 2 && part.len() >= 4 * rate {
                let cut =
                    crate::audio::cut::quietest_point(part, part.len() / 4, part.len() * 3 / 4);
                let mut halves = PieceText {
                    words: Words {
                        texts: self.words.texts.clone(),
                        raws: Vec::new(),
                        rewriter: None,
                    },
                    ms: 0.0,
                };
                halves.add_checked(engine, true, &part[..cut], entry, timings, depth + 1)?;
                halves.add_checked(engine, true, &part[cut..], entry, timings, depth + 1)?;
                self.ms += halves.ms;
                let said = |t: &[String]| {
                    t.iter()
                        .map(|t| t.split_whitespace().count())
                        .sum::<usize>()
                };
                let more = said(&halves.words.texts[self.words.texts.len()..]);
                tracing::debug!(
                    whole = words,
                    halves = more,
                    "whisper's text was short for the speech; redone in two halves"
                );
                if more as f64 > words {
                    self.words.adopt(&seg);
                    self.words.texts = halves.words.texts;
                    self.words.raws.extend(halves.words.raws);
                    break;
                }
            }
            self.words.push(&seg);
            let Some(next) = seg.uncovered_from else {
                break;
            };
            tracing::debug!(
                at_s = (from + next) as f64 / rate as f64,
                "whisper stopped before the speech did; transcribing the rest"
            );
            from += next;
        }
        Ok(speech.unwrap_or(0))
    }
}

/// The outcome of one utterance, as stored in history, plus the error if there was one.
#[derive(Debug)]
pub struct Utterance {
    pub entry: Entry,
    pub timings: StageTimings,
    pub error: Option<Error>,
    /// The LLM cleanup, when the stage ran.
    pub llm: Option<LlmReport>,
}

impl Engine {
    pub fn new(config: Config, model_dirs: Vec<PathBuf>) -> Engine {
        let rewriter = Arc::new(Rewriter::new(&config.snippets, &config.replacements));
        Engine {
            config,
            model_dirs,
            audio_dir: None,
            transcriber: None,
            remote: None,
            server_ready: false,
            llm: None,
            llm_resident_bytes: 0,
            plan: None,
            file_piece_s: FILE_PIECE_S,
            rewriter,
            profile: Profile::default_arc(),
            profile_llm: HashMap::new(),
        }
    }

    /// The compiled snippets and replacements of the current config (rebuilt here when its
    /// tables changed, `config` being public).
    pub fn rewriter(&mut self) -> Arc<Rewriter> {
        if !self
            .rewriter
            .built_from(&self.config.snippets, &self.config.replacements)
        {
            self.rewriter = Arc::new(Rewriter::new(
                &self.config.snippets,
                &self.config.replacements,
            ));
        }
        Arc::clone(&self.rewriter)
    }

    /// Builds the LLM stage from `config.llm` (if enabled) and warms it up with exactly a
    /// dictation's options. Returns the warm-up, or None when the stage is off. A server that
    /// is down is not an error: the warm-up says so and dictations fall back to raw text.
    pub fn enable_llm(&mut self) -> Result<Option<WarmUp>> {
        self.llm = None;
        if !self.config.llm.enabled {
            return Ok(None);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Llm(format!("cannot start the async runtime: {e}")))?;
        let cleaner = Cleaner::new(&self.config.llm, &self.config.stt.vocabulary)
            .map_err(|e| Error::Llm(e.to_string()))?;
        let warm = runtime.block_on(cleaner.warm_up());
        self.llm_resident_bytes = warm
            .residency
            .as_ref()
            .and_then(|r| r.size_vram)
            .unwrap_or(0);
        self.llm = Some(LlmStage { runtime, cleaner });
        Ok(Some(warm))
    }

    /// Applies a new config; a changed `[llm]` section or vocabulary rebuilds and re-warms the
    /// LLM stage (returning that warm-up).
    pub fn reconfigure(&mut self, config: Config) -> Result<Option<WarmUp>> {
        if server_settings_changed(&self.config.stt, &config.stt) {
            self.remote = None;
        }
        self.profile_llm.clear();
        self.profile = Profile::default_arc();
        let llm_changed = config.llm != self.config.llm
            || config.stt.vocabulary != self.config.stt.vocabulary
            || (config.llm.enabled && self.llm.is_none());
        self.config = config;
        if llm_changed {
            return self.enable_llm();
        }
        Ok(None)
    }

    /// The LLM stage, for callers that are async themselves.
    pub fn cleaner(&self) -> Option<&Cleaner> {
        self.llm.as_ref().map(|s| &s.cleaner)
    }

    /// Runs the cleanup on `raw` (blocking); None when the stage is off.
    pub fn clean_text(&self, raw: &str) -> Option<LlmReport> {
        let stage = self.llm.as_ref()?;
        Some(stage.runtime.block_on(stage.cleaner.clean(raw)))
    }

    /// The profile the next transcriptions and cleanups run with (live dictation: the
    /// utterance's). A profile that needs an LLM request of its own (another prompt or
    /// vocabulary, or the LLM on while `[llm] enabled` is off) gets its client built here,
    /// once; the model is the configured one, so no warm-up is sent.
    pub fn set_profile(&mut self, profile: Arc<Profile>) {
        if Arc::ptr_eq(&profile, &self.profile) {
            return;
        }
        let own_stage = profile.llm_enabled(&self.config)
            && (profile.changes_llm_request(&self.config) || self.llm.is_none());
        if own_stage && !self.profile_llm.contains_key(&profile.name) {
            let applied = profile.applied_to(&self.config);
            let stage = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
                .and_then(|runtime| {
                    Cleaner::new(&applied.llm, &applied.stt.vocabulary)
                        .map(|cleaner| LlmStage { runtime, cleaner })
                        .map_err(|e| e.to_string())
                });
            match stage {
                Ok(stage) => {
                    self.profile_llm.insert(profile.name.clone(), stage);
                }
                Err(e) => tracing::warn!(
                    "profile {}: the LLM cannot be used ({e}); its dictations are typed uncleaned",
                    profile.name
                ),
            }
        }
        self.profile = profile;
    }

    /// The profile transcriptions and cleanups run with now.
    pub fn profile(&self) -> &Arc<Profile> {
        &self.profile
    }

    /// The LLM stage for the current profile: its own, or the config's; None when off.
    fn llm_stage(&self) -> Option<&LlmStage> {
        if !self.profile.llm_enabled(&self.config) {
            return None;
        }
        self.profile_llm
            .get(&self.profile.name)
            .or(self.llm.as_ref())
    }

    /// Cleans a finished `ok` row in place: `text` becomes the cleanup only if the guard
    /// accepted it (judged for the row's window: a terminal, or not); every LLM column is
    /// filled either way. Never fails. A profile that turns
    /// the LLM off records `llm_outcome = "disabled"`.
    pub fn clean_entry(&self, entry: &mut Entry, timings: &mut StageTimings) -> Option<LlmReport> {
        if entry.outcome != Outcome::Ok {
            return None;
        }
        if self.profile.llm == Some(false) {
            entry.llm_outcome = Some(crate::llm::LlmOutcome::Disabled.as_str().to_string());
            return None;
        }
        let raw = entry.text.clone().unwrap_or_default();
        let stage = self.llm_stage()?;
        // Where the text goes: a terminal gets the strict character rule; so does a window
        // nobody could name (the worst case).
        let terminal = entry
            .app_class
            .as_deref()
            .is_none_or(|class| self.config.inject.is_terminal(None, Some(class)));
        let report = stage
            .runtime
            .block_on(stage.cleaner.clean_for(&raw, terminal));
        report.apply_to(entry);
        timings.llm = Some(report.total_ms);
        Some(report)
    }

    pub fn stt_options(&self) -> SttOptions {
        SttOptions {
            language: self.profile.source_language(&self.config).to_string(),
            threads: self.config.threads(),
            window: match self.config.stt.audio_ctx {
                AudioCtxMode::Auto => Some(Window {
                    margin: self.config.stt.audio_ctx_margin,
                    min: self.config.stt.audio_ctx_min,
                }),
                AudioCtxMode::Full => None,
            },
            initial_prompt: self.profile.vocabulary(&self.config).join(", "),
            translate: self.profile.task(&self.config) == SttTask::Translate,
            adapt_threads: self.config.stt.adapt_threads,
        }
    }

    /// The model file the config points at.
    pub fn model_path(&self) -> Result<PathBuf> {
        crate::models::resolve(&self.config.stt.model, &self.model_dirs)
    }

    /// Makes the configured backend ready: loads and warms the local model if not loaded yet
    /// (returning (load ms, warm-up ms) when this call did the loading). With the speech server
    /// backend nothing is loaded: the local model loads on demand, the first time the server
    /// fails ([`Engine::ensure_local_model`]).
    pub fn ensure_model(&mut self) -> Result<Option<(f64, f64)>> {
        if self.config.stt.backend == SttBackend::Openai {
            // Reported once as a (0 ms) load, so start-up (which waits for the model) goes on.
            if std::mem::replace(&mut self.server_ready, true) {
                return Ok(None);
            }
            if self.transcriber.is_none() {
                self.plan = Some(Plan {
                    device: format!("server {}", self.config.stt.url),
                    model: self.config.stt.remote_model.clone(),
                    reason: match no_local_fallback(&self.config, &self.model_dirs) {
                        Some(_) => "speech is transcribed by the server; no local model is installed to stand in".into(),
                        None => "speech is transcribed by the server; the local model loads only if it fails".into(),
                    },
                    budget_bytes: None,
                    need_bytes: None,
                });
            }
            return Ok(Some((0.0, 0.0)));
        }
        self.ensure_local_model()
    }

    /// Loads and warms the local model (with the VRAM planner) if not loaded yet.
    pub fn ensure_local_model(&mut self) -> Result<Option<(f64, f64)>> {
        if self.transcriber.is_some() {
            return Ok(None);
        }
        let path = self.model_path()?;
        // Plan VRAM before loading: the LLM's resident memory is subtracted first, so the
        // speech model never pushes it out; no room means the CPU.
        let mut plan = self.plan_for(&path);
        if plan.on_gpu() || self.config.stt.use_gpu {
            tracing::info!("speech on {}: {}", plan.device, plan.reason);
        }
        let opts = self.stt_options();
        let warmed = |t: Result<Transcriber>| -> Result<(Transcriber, f64)> {
            let mut t = t?;
            let warm = t.warm_up(&opts)?;
            Ok((t, warm))
        };
        // A GPU that fails to take the model (VRAM taken since the plan, a driver error, the
        // worker aborting) costs a CPU load, never the dictation.
        let in_worker = crate::stt::worker_process::wanted(plan.on_gpu());
        let (t, warm) = match warmed(Transcriber::load(&path, plan.on_gpu())) {
            Err(e) if in_worker => {
                tracing::warn!(
                    "the speech model did not load on {}: {e}; loading it on the CPU",
                    plan.device
                );
                plan.reason = format!(
                    "loading on {} failed ({e}); speech runs on the CPU",
                    plan.device
                );
                plan.device = "cpu".into();
                warmed(Transcriber::load_in_process(&path, false))?
            }
            other => other?,
        };
        self.plan = Some(plan);
        let load = t.load_ms;
        self.transcriber = Some(ResilientTranscriber::new(t));
        Ok(Some((load, warm)))
    }

    /// Plans again for the loaded model (the LLM backend or model changed, so its resident
    /// memory did): if speech is on the GPU and no longer fits beside the LLM, it moves to the
    /// CPU. Returns the new plan when a model is loaded.
    pub fn replan(&mut self) -> Option<Plan> {
        let path = self.transcriber.as_ref()?.primary().model_path.clone();
        let plan = self.plan_for(&path);
        if let Some(t) = self.transcriber.as_mut() {
            if t.on_gpu() && !plan.on_gpu() {
                if let Err(e) = t.move_to_cpu() {
                    tracing::warn!("could not move speech to the CPU: {e}");
                }
            }
        }
        self.plan = Some(plan.clone());
        Some(plan)
    }

    /// Where the model at `path` should run now (`gpu::speech_plan`: NVML in a CUDA build,
    /// the Vulkan loader in a Vulkan build, asked only with `stt.use_gpu` on).
    pub fn plan_for(&self, path: &Path) -> Plan {
        speech_plan::plan(
            self.config.stt.use_gpu,
            &self.config.stt.model,
            std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
            self.llm_resident_bytes,
        )
    }

    pub fn transcriber(&self) -> Option<&Transcriber> {
        self.transcriber.as_ref().map(ResilientTranscriber::primary)
    }

    pub fn transcriber_mut(&mut self) -> Option<&mut Transcriber> {
        self.transcriber
            .as_mut()
            .map(ResilientTranscriber::primary_mut)
    }

    /// The GPU-failure wrapper, for tests that inject GPU faults.
    pub fn resilient_mut(&mut self) -> Option<&mut ResilientTranscriber> {
        self.transcriber.as_mut()
    }

    /// Transcribes a file into `history`. Never returns without having stored the row
    /// (unless the database itself fails, which is the `Err`).
    pub fn transcribe_file(&mut self, history: &History, path: &Path) -> Result<Utterance> {
        self.transcribe_file_with(history, path, &mut |_| {})
    }

    /// [`Engine::transcribe_file`], calling `progress` after each piece of a file longer than
    /// [`Engine::file_piece_s`] (shorter files are one piece and report nothing).
    pub fn transcribe_file_with(
        &mut self,
        history: &History,
        path: &Path,
        progress: &mut dyn FnMut(&FileProgress),
    ) -> Result<Utterance> {
        let start = Instant::now();
        let mut entry = Entry::new(Source::File);
        entry.source_path = Some(path.display().to_string());
        entry.model = Some(self.config.stt.model.clone());
        entry.language = Some(self.config.stt.language.clone());
        history.insert(&mut entry)?;

        let mut timings = StageTimings::default();
        let result = self.run_file(path, &mut entry, &mut timings, progress);
        let llm = if result.is_ok() {
            // Cannot fail: any LLM problem is recorded in the row and the raw text is kept.
            self.clean_entry(&mut entry, &mut timings)
        } else {
            None
        };
        timings.total = Some(ms_since(start));
        entry.total_ms = timings.total;
        let error = match result {
            Ok(()) => None,
            Err(e) => {
                fail_row(&mut entry, &e, Outcome::Error, e.to_string());
                Some(e)
            }
        };
        store_finished(history, &entry)?;
        Ok(Utterance {
            entry,
            timings,
            error,
            llm,
        })
    }

    fn run_file(
        &mut self,
        path: &Path,
        entry: &mut Entry,
        timings: &mut StageTimings,
        progress: &mut dyn FnMut(&FileProgress),
    ) -> Result<()> {
        // Decoded, downmixed and resampled in one streaming pass (the header is checked
        // first: rate, size, duration cap); whisper takes the audio piece by piece as it
        // comes, so memory is one piece whatever the file's length.
        let start = Instant::now();
        let rate = crate::SAMPLE_RATE as usize;
        let piece_max = (self.file_piece_s.max(1) as usize).saturating_mul(rate);
        let piece_min = piece_max * 3 / 4;
        let mut pending: Vec<f32> = Vec::new();
        let mut text = PieceText::default();
        let mut done: u64 = 0;
        let mut total: u64 = 0;
        let mut pieces = 0usize;
        let mut kept = self.kept_audio_writer(entry);
        let decoded =
            audio::decode_16k_blocks(path, self.config.stt.max_file_s, &mut |block, expected| {
                total = expected;
                if let Some((writer, _)) = kept.as_mut() {
                    if let Err(e) = writer.write(block) {
                        tracing::warn!("could not keep the audio: {e}");
                        kept = None;
                    }
                }
                pending.extend_from_slice(block);
                while pending.len() >= piece_max {
                    let cut = audio::cut::quietest_point(&pending, piece_min, piece_max).max(1);
                    text.add(self, true, &pending[..cut], entry, timings)?;
                    pending.drain(..cut);
                    done += cut as u64;
                    pieces += 1;
                    progress(&FileProgress {
                        done_ms: done * 1000 / rate as u64,
                        total_ms: (total * 1000 / rate as u64).max(done * 1000 / rate as u64),
                        pieces,
                        elapsed_ms: ms_since(start),
                    });
                }
                Ok(())
            });
        let info = match decoded {
            Ok(info) => info,
            Err(e) => {
                timings.decode = Some((ms_since(start) - text.ms).max(0.0));
                entry.decode_ms = timings.decode;
                return Err(e);
            }
        };
        let resample_ms = info.resample.as_secs_f64() * 1000.0;
        timings.decode = Some((ms_since(start) - text.ms - resample_ms).max(0.0));
        entry.decode_ms = timings.decode;
        timings.resample = Some(resample_ms);
        entry.resample_ms = Some(resample_ms);
        entry.audio_ms = Some(info.duration_ms() as i64);
        if let Some((writer, file)) = kept {
            match writer.finish() {
                Ok(()) => entry.audio_path = Some(file.display().to_string()),
                Err(e) => tracing::warn!("could not keep audio in {}: {e}", file.display()),
            }
        }
        let long = pieces > 0;
        if !pending.is_empty() || pieces == 0 {
            text.add(self, long, &pending, entry, timings)?;
            done += pending.len() as u64;
            pieces += 1;
        }
        if long {
            progress(&FileProgress {
                done_ms: done * 1000 / rate as u64,
                total_ms: done * 1000 / rate as u64,
                pieces,
                elapsed_ms: ms_since(start),
            });
        }
        // A file of one piece keeps whisper's raw text as it came (untrimmed).
        let single_raw = match text.words.raws.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        };
        text.words.into_row(entry);
        if single_raw.is_some() {
            entry.raw_text = single_raw;
        }
        Ok(())
    }

    /// Where a file's 16 kHz copy goes while it is decoded, when `history.keep_audio` is on.
    fn kept_audio_writer(&self, entry: &Entry) -> Option<(audio::WavWriter16k, PathBuf)> {
        if !self.config.history.keep_audio {
            return None;
        }
        let (dir, id) = (self.audio_dir.as_ref()?, entry.id?);
        let file = dir.join(format!("{id}.wav"));
        let writer = crate::paths::create_private_dir_all(dir)
            .and_then(|_| audio::WavWriter16k::create(&file));
        match writer {
            Ok(w) => Some((w, file)),
            Err(e) => {
                tracing::warn!("could not keep audio in {}: {e}", file.display());
                None
            }
        }
    }

    /// VAD → whisper on 16 kHz mono audio; fills `entry` and `timings`.
    pub fn run_pcm(
        &mut self,
        pcm: &Pcm16k,
        entry: &mut Entry,
        timings: &mut StageTimings,
    ) -> Result<()> {
        entry.audio_ms.get_or_insert(pcm.duration_ms() as i64);
        self.keep_audio(pcm, entry);
        let seg = self.transcribe_segment(&pcm.samples, "")?;
        seg.apply_to(entry, timings);
        seg.into_row_text(entry);
        Ok(())
    }

    /// VAD → whisper on one stretch of 16 kHz mono audio. `context` is the text said just
    /// before it (earlier chunks of the same utterance): whisper gets it as its prompt, after
    /// the vocabulary, so words and casing carry across chunk boundaries.
    ///
    /// Whisper (tiny especially) can end its text at a pause and drop the sentences after it
    /// without saying so (its one segment's timestamps then span the whole stretch). People
    /// dictate 2–3 words a second; under one a second over 6 s of speech, the stretch is
    /// transcribed again in two halves cut at its quietest point, kept if they say more.
    /// Measured: a live 10.7 s stretch ("ask what you can do for your country" + 0.4 s +
    /// a 7 s sentence) came back as its first 8 words.
    pub fn transcribe_segment(&mut self, samples: &[f32], context: &str) -> Result<Segment> {
        self.transcribe_checked(samples, context, 0)
    }

    fn transcribe_checked(
        &mut self,
        samples: &[f32],
        context: &str,
        depth: u32,
    ) -> Result<Segment> {
        let mut seg = self.transcribe_piece(samples, context, false)?;
        let rate = crate::SAMPLE_RATE as usize;
        let words = |s: &Segment| s.text.split_whitespace().count();
        let speech_s = seg.speech_ms as f64 / 1000.0;
        if depth >= 2
            || speech_s < 6.0
            || words(&seg) as f64 >= speech_s
            || samples.len() < 4 * rate
        {
            return Ok(seg);
        }
        let cut =
            crate::audio::cut::quietest_point(samples, samples.len() / 4, samples.len() * 3 / 4);
        let mut first = self.transcribe_checked(&samples[..cut], context, depth + 1)?;
        let before = format!("{context} {}", first.text);
        let second = self.transcribe_checked(&samples[cut..], before.trim(), depth + 1)?;
        let halves = words(&first) + words(&second);
        tracing::debug!(
            whole = words(&seg),
            halves,
            speech_s,
            "whisper's text was short for the speech; redone in two halves"
        );
        if halves > words(&seg) {
            first.append(second);
            first.speech_ms = seg.speech_ms;
            first.stt_ms += seg.stt_ms;
            first.vad_ms += seg.vad_ms;
            return Ok(first);
        }
        seg.stt_ms += first.stt_ms + second.stt_ms;
        seg.vad_ms += first.vad_ms + second.vad_ms;
        Ok(seg)
    }

    /// [`Engine::transcribe_segment`]; `full_window` forces whisper's full 30 s window
    /// (pieces of a long file: the sized window, a live-latency measure, can end the decode
    /// at the first pause of a long stretch).
    fn transcribe_piece(
        &mut self,
        samples: &[f32],
        context: &str,
        full_window: bool,
    ) -> Result<Segment> {
        let (vad, vad_ms) = timed(|| vad::analyze(samples, &self.config.vad, Detector::Earshot));
        let mut seg = Segment {
            vad_ms,
            speech_ms: vad.speech_ms as i64,
            rewriter: Some(self.rewriter()),
            ..Segment::default()
        };
        if vad.no_speech {
            return Ok(seg);
        }
        let kept = &samples[vad.keep.clone()];
        let mut remote_ms = 0.0;
        let mut failed = None;
        if self.config.stt.backend == SttBackend::Openai {
            let t = Instant::now();
            let prompt = self.prompt_with(context);
            match self.try_remote(kept, &prompt) {
                Ok((out, model, host)) => {
                    self.fill_from_remote(&mut seg, out, model, host, &vad.keep, full_window);
                    return Ok(seg);
                }
                Err(fail) if !self.config.stt.fallback => {
                    let why = fail.why.clone();
                    return Err(fail.into_error(why));
                }
                Err(fail) => {
                    remote_ms = ms_since(t);
                    seg.stt_fallback = Some(match &fail.answer {
                        Some(answer) => format!(
                            "{}; transcribed locally; the server's answer: «{}»",
                            fail.why,
                            kept_answer(answer)
                        ),
                        None => format!("{}; transcribed locally", fail.why),
                    });
                    seg.server_answer_kept = fail.answer.is_some();
                    failed = Some(fail);
                }
            }
        }
        seg.backend = Some("local".into());
        seg.model_load = match (self.ensure_local_model(), failed) {
            (Ok(load), _) => load,
            // A thin client (speech server, no local model): the utterance fails, and the
            // caller keeps its audio for a retry.
            (Err(Error::ModelNotFound(_)), Some(fail)) => {
                let why = format!("{}; {NO_LOCAL_FALLBACK}", fail.why);
                return Err(fail.into_error(why));
            }
            (Err(e), Some(fail)) => {
                let why = format!(
                    "{}; the local model could not load to redo it: {e}",
                    fail.why
                );
                return Err(fail.into_error(why));
            }
            (Err(e), None) => return Err(e),
        };
        let mut opts = self.stt_options();
        if full_window {
            opts.window = None;
        }
        let context = tail_chars(context, 200);
        if !context.is_empty() {
            opts.initial_prompt = if opts.initial_prompt.is_empty() {
                context.to_string()
            } else {
                format!("{}. {context}", opts.initial_prompt)
            };
        }
        let transcriber = self
            .transcriber
            .as_mut()
            .ok_or_else(|| Error::Transcribe("model not loaded".into()))?;
        seg.model = Some(transcriber.primary().model_name.clone());
        let delivered = transcriber.transcribe(kept, &opts)?;
        seg.device = Some(delivered.device);
        seg.fallback = delivered.fallback;
        let out = delivered.output;
        if full_window {
            let covered = out
                .end_ms
                .map(|ms| vad.keep.start + (ms as usize) * crate::SAMPLE_RATE as usize / 1000);
            // More than 1.5 s of the kept audio after the last segment: look again there.
            let slack = crate::SAMPLE_RATE as usize * 3 / 2;
            seg.uncovered_from =
                covered.filter(|&c| c > vad.keep.start && c + slack < vad.keep.end);
        }
        seg.stt_ms = out.ms + remote_ms;
        seg.language = Some(out.language.clone());
        seg.no_speech_prob = out.no_speech_prob;
        seg.text = strip_nonspeech(&out.text);
        if is_silence_phrase(&seg.text, seg.speech_ms, out.no_speech_prob) {
            tracing::debug!(
                text = seg.text,
                speech_ms = seg.speech_ms,
                no_speech_prob = out.no_speech_prob,
                "whisper's stock phrase for silence dropped"
            );
            seg.text.clear();
        }
        seg.raw = out.text;
        Ok(seg)
    }

    /// whisper's prompt: the vocabulary, then the last 200 characters said before.
    fn prompt_with(&self, context: &str) -> String {
        let vocabulary = self.profile.vocabulary(&self.config).join(", ");
        let context = tail_chars(context, 200);
        match (vocabulary.is_empty(), context.is_empty()) {
            (_, true) => vocabulary,
            (true, false) => context.to_string(),
            (false, false) => format!("{vocabulary}. {context}"),
        }
    }

    /// The speech server's client, built on first use.
    pub fn remote(&mut self) -> std::result::Result<&mut RemoteStt, RemoteError> {
        let built = self
            .remote
            .get_or_insert_with(|| RemoteStt::new(&self.config.stt));
        built.as_mut().map_err(|e| e.clone())
    }

    /// One utterance to the speech server, through the breaker: Ok with (answer, model, host),
    /// or Err with the one-line reason the local model has to do it (and the server's answer
    /// when it was judged not a transcript).
    fn try_remote(
        &mut self,
        samples: &[f32],
        prompt: &str,
    ) -> std::result::Result<(RemoteOutput, String, String), RemoteFailure> {
        let language = self.profile.source_language(&self.config).to_string();
        let task = self.profile.task(&self.config);
        let then = match no_local_fallback(&self.config, &self.model_dirs) {
            Some(_) => "no local model to redo it",
            None => "transcribing locally",
        };
        let remote = self
            .remote()
            .map_err(|e| RemoteFailure::new(e.to_string()))?;
        remote.set_language(&language);
        remote.set_task(task);
        if let Gate::Open { remaining, reason } = remote.breaker.gate(Instant::now()) {
            return Err(RemoteFailure::new(format!(
                "the speech server is skipped for {:.1} s more after: {reason}",
                remaining.as_secs_f64()
            )));
        }
        let mut answer = None;
        let result = remote.transcribe(samples, prompt).and_then(|out| {
            match degenerate(&out.text, samples.len()) {
                Some(why) => {
                    answer = Some(out.text);
                    Err(RemoteError::Garbage(why.to_string()))
                }
                None => Ok(out),
            }
        });
        match result {
            Ok(out) => {
                remote.breaker.success();
                Ok((out, remote.model().to_string(), remote.host()))
            }
            Err(e) => {
                let why = e.to_string();
                // The answer's words only at debug level (the row keeps them).
                tracing::warn!("{}; {then}", e.without_words());
                tracing::debug!("speech server: {why}");
                remote.breaker.failure(&why, Instant::now());
                Err(RemoteFailure { why, answer })
            }
        }
    }

    /// Fills a segment from the server's answer, as the local path does from whisper's.
    fn fill_from_remote(
        &self,
        seg: &mut Segment,
        out: RemoteOutput,
        model: String,
        host: String,
        keep: &std::ops::Range<usize>,
        full_window: bool,
    ) {
        seg.backend = Some("openai".into());
        seg.model = Some(model);
        seg.device = Some(format!("server {host}"));
        seg.stt_ms = out.round_trip_ms;
        seg.upload_ms = out.upload_ms;
        seg.server_ms = out.server_ms;
        let configured = self.profile.source_language(&self.config);
        seg.language = if configured != "auto" {
            Some(configured.to_string())
        } else {
            out.language.clone()
        };
        if full_window {
            let covered = out.end_ms.map(|ms| {
                // The server's number: saturating, whatever it claims.
                let at = usize::try_from(ms).unwrap_or(usize::MAX);
                keep.start
                    .saturating_add(at.saturating_mul(crate::SAMPLE_RATE as usize) / 1000)
            });
            let slack = crate::SAMPLE_RATE as usize * 3 / 2;
            seg.uncovered_from = covered.filter(|&c| c > keep.start && c + slack < keep.end);
        }
        seg.no_speech_prob = out.no_speech_prob;
        seg.text = strip_nonspeech(&out.text);
        if is_silence_phrase(&seg.text, seg.speech_ms, out.no_speech_prob) {
            seg.text.clear();
        }
        seg.raw = out.text;
    }

    /// Drops the speech model (idle unload); the next utterance loads it again.
    pub fn unload_model(&mut self) -> bool {
        self.transcriber.take().is_some()
    }

    pub fn model_loaded(&self) -> bool {
        self.transcriber.is_some()
    }

    /// Keeps a WAV of `pcm` for `entry` when `history.keep_audio` is on.
    pub fn keep_audio(&self, pcm: &Pcm16k, entry: &mut Entry) {
        if !self.config.history.keep_audio {
            return;
        }
        let (Some(dir), Some(id)) = (&self.audio_dir, entry.id) else {
            return;
        };
        let file = dir.join(format!("{id}.wav"));
        let saved = crate::paths::create_private_dir_all(dir)
            .and_then(|_| audio::write_wav_16k(&file, &pcm.samples));
        match saved {
            Ok(()) => entry.audio_path = Some(file.display().to_string()),
            Err(e) => tracing::warn!("could not keep audio in {}: {e}", file.display()),
        }
    }
}

/// What a thin client (speech server, no local model) says once at start-up, and what an
/// utterance the server fails says in its row.
pub const NO_LOCAL_FALLBACK: &str =
    "no local model: utterances the speech server fails are kept for retry (no local fallback)";

/// [`NO_LOCAL_FALLBACK`] when `config` sends speech to a server and its local model
/// (`stt.model`) is not installed in `model_dirs`: Dictum starts anyway, as a thin client.
pub fn no_local_fallback(config: &Config, model_dirs: &[PathBuf]) -> Option<&'static str> {
    (config.stt.backend == SttBackend::Openai
        && crate::models::resolve(&config.stt.model, model_dirs).is_err())
    .then_some(NO_LOCAL_FALLBACK)
}

/// Characters of a rejected server answer kept in the row: minutes of speech (at 5 words/s,
/// ~6 characters a word, 10 minutes is 18 000), not the 1 MiB a server may send.
const KEPT_ANSWER_CHARS: usize = 20_000;

/// A rejected server answer as the row keeps it: control characters dropped, cut at
/// [`KEPT_ANSWER_CHARS`] with "…".
fn kept_answer(answer: &str) -> String {
    let clean = crate::text_safety::strip_control(answer, false);
    let mut kept: String = clean.chars().take(KEPT_ANSWER_CHARS).collect();
    if clean.chars().nth(KEPT_ANSWER_CHARS).is_some() {
        kept.push('…');
    }
    kept
}

/// Why the speech server's answer was not used: the one-line reason, and the answer itself
/// when the server gave one that was judged not a transcript.
struct RemoteFailure {
    why: String,
    answer: Option<String>,
}

impl RemoteFailure {
    fn new(why: String) -> RemoteFailure {
        RemoteFailure { why, answer: None }
    }

    /// The utterance's error, carrying the answer (if any) for the row.
    fn into_error(self, why: String) -> Error {
        match self.answer {
            Some(answer) => Error::AnswerRejected {
                why,
                answer: kept_answer(&answer),
            },
            None => Error::Transcribe(why),
        }
    }
}

/// Whether the speech server's client must be rebuilt for `new`.
fn server_settings_changed(old: &crate::config::SttConfig, new: &crate::config::SttConfig) -> bool {
    old.backend != new.backend
        || old.url != new.url
        || old.remote_model != new.remote_model
        || old.api_key_env != new.api_key_env
        || old.timeout_ms != new.timeout_ms
        || old.allow_insecure != new.allow_insecure
        || old.retry_after_ms != new.retry_after_ms
        || old.language != new.language
        || old.upload != new.upload
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::snippets::{ReplaceConfig, SnippetConfig};

    fn rules() -> Arc<Rewriter> {
        Arc::new(Rewriter::new(
            &[SnippetConfig {
                phrase: "my address".into(),
                text: "12 Main Street\nSpringfield".into(),
            }],
            &[ReplaceConfig {
                from: "cooper netties".into(),
                to: "Kubernetes".into(),
            }],
        ))
    }

    fn seg(text: &str, rewriter: Option<Arc<Rewriter>>) -> Segment {
        Segment {
            text: text.into(),
            raw: format!(" {text}"),
            rewriter,
            ..Segment::default()
        }
    }

    /// The row of a live dictation (microphone) and of a file, from pieces as the worker and
    /// `run_file` push them: the rules apply to the whole text (a phrase across two pieces
    /// too), the raw text stays whisper's, a typed dictation gets no newline.
    #[test]
    fn the_rows_text_gets_replacements_and_snippets() {
        // (pieces, source, text, outcome)
        #[rustfmt::skip]
        let table: &[(&[&str], Source, &str, Outcome)] = &[
            (&["We run Cooper", "Netties."], Source::Mic, "We run Kubernetes.", Outcome::Ok),
            (&["My address."], Source::Mic, "12 Main Street Springfield", Outcome::Ok),
            (&["My address."], Source::File, "12 Main Street\nSpringfield", Outcome::Ok),
            (&["Send it to", "my address, please."], Source::Mic,
             "Send it to 12 Main Street Springfield, please.", Outcome::Ok),
            (&[], Source::Mic, "", Outcome::NoSpeech),
        ];
        for &(pieces, source, text, outcome) in table {
            let mut words = Words::default();
            for p in pieces {
                words.push(&seg(p, Some(rules())));
            }
            let mut entry = Entry::new(source);
            words.into_row(&mut entry);
            assert_eq!(entry.text.as_deref(), Some(text), "{pieces:?}");
            assert_eq!(entry.outcome, outcome, "{pieces:?}");
            assert_eq!(
                entry.raw_text.as_deref(),
                Some(pieces.join(" ").as_str()),
                "{pieces:?}"
            );
        }
        // A retried dictation's one segment, and a segment made without rules.
        let mut entry = Entry::new(Source::Mic);
        seg("cooper netties", Some(rules())).into_row_text(&mut entry);
        assert_eq!(entry.text.as_deref(), Some("Kubernetes"));
        let mut entry = Entry::new(Source::Mic);
        seg("cooper netties", None).into_row_text(&mut entry);
        assert_eq!(entry.text.as_deref(), Some("cooper netties"));
    }

    /// Every segment the engine makes carries the config's current tables.
    #[test]
    fn the_engine_rebuilds_the_rules_when_the_config_changes() {
        let mut engine = Engine::new(Config::default(), Vec::new());
        assert!(engine.rewriter().is_empty());
        engine.config.replacements.push(ReplaceConfig {
            from: "dictem".into(),
            to: "Dictum".into(),
        });
        let r = engine.rewriter();
        assert_eq!(r.apply("open dictem", false).text, "open Dictum");
        assert!(
            Arc::ptr_eq(&r, &engine.rewriter()),
            "rebuilt only on a change"
        );
    }
}
