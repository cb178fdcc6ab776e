//! The engine: the config, the loaded model and the LLM stage, kept for the life of a process
//! (model load, VRAM plan, warm-up, per-app profiles, reconfiguring). The jobs that run an
//! utterance through it (`segment.rs`, `remote.rs`, `file.rs`) add their methods to [`Engine`]
//! from beside it; this file names none of them, so the pipeline has no circle
//! (`scripts/module-graph`).

use crate::audio::{self, Pcm16k};
use crate::config::{AudioCtxMode, Config, SttBackend, SttTask};
use crate::gpu::planner::Plan;
use crate::gpu::speech_plan;
use crate::llm::{Cleaner, LlmReport, WarmUp};
use crate::profile::Profile;
use crate::snippets::Rewriter;
use crate::store::{Entry, Outcome};
use crate::stt::priority::Stop;
use crate::stt::remote::{RemoteError, RemoteStt};
use crate::stt::{ResilientTranscriber, SttOptions, Transcriber, Window};
use crate::timing::StageTimings;
use crate::{Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The default [`Engine::file_piece_s`]: two minutes (whisper reads 30 s windows; a piece of a
/// few windows keeps its own context handling, and the cut falls in a pause).
pub const FILE_PIECE_S: u32 = 120;

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

/// Holds the config and the loaded model; reuse one per process so the model loads once.
pub struct Engine {
    pub config: Config,
    /// Folders searched for models given by name.
    pub model_dirs: Vec<PathBuf>,
    /// Where kept audio goes (only with `history.keep_audio`).
    pub audio_dir: Option<PathBuf>,
    pub(super) transcriber: Option<ResilientTranscriber>,
    /// The speech server's client (`stt.backend = "openai"`), built on first use; the error
    /// when the settings cannot work (kept until the config changes).
    pub(super) remote: Option<std::result::Result<RemoteStt, RemoteError>>,
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
    pub(super) profile: Arc<Profile>,
    /// LLM stages of profiles that change the request (prompt, vocabulary) or turn the LLM
    /// on while `[llm] enabled` is off, by profile name; dropped when the config changes.
    profile_llm: HashMap<String, LlmStage>,
    /// `[[replace]]` and `[[snippet]]` compiled, rebuilt when the config's tables change;
    /// every segment carries it to the row ([`Words::into_row`]).
    rewriter: Arc<Rewriter>,
    /// A background job's stop (a file's: cancelled, or a dictation goes first), given to
    /// every local whisper pass ([`Engine::set_stop`]).
    pub(super) stop: Option<Stop>,
}

/// The LLM cleanup stage as the (synchronous) engine runs it: the async [`Cleaner`] on a
/// runtime of its own, so its connection pool lives as long as the engine.
struct LlmStage {
    runtime: tokio::runtime::Runtime,
    cleaner: Cleaner,
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
            stop: None,
        }
    }

    /// Makes every local whisper pass stoppable by `stop` (a file job's: its Cancel, and
    /// dictations that go first); `None` for passes nothing stops.
    pub fn set_stop(&mut self, stop: Option<Stop>) {
        self.stop = stop;
    }

    /// The stop given to [`Engine::set_stop`].
    pub fn stop(&self) -> Option<&Stop> {
        self.stop.as_ref()
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
        if own_stage && !self.profile_llm.contains_key(&profile.llm_key()) {
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
                    self.profile_llm.insert(profile.llm_key(), stage);
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
            .get(&self.profile.llm_key())
            .or(self.llm.as_ref())
    }

    /// Cleans a finished `ok` row in place: `text` becomes the cleanup only if the guard
    /// accepted it (judged for the row's window: a terminal, or not); every LLM column is
    /// filled either way. Never fails. A profile that turns
    /// the LLM off records `llm_outcome = "disabled"`.
    pub fn clean_entry(&self, entry: &mut Entry, timings: &mut StageTimings) -> Option<LlmReport> {
        self.clean_entry_in(entry, timings, None)
    }

    /// [`Engine::clean_entry`] with the place the text goes (`[context] llm`, read at the
    /// press; the caller decided it may go to this server: `dictation/caret.rs`).
    pub fn clean_entry_in(
        &self,
        entry: &mut Entry,
        timings: &mut StageTimings,
        context: Option<&crate::llm::prompt::Context>,
    ) -> Option<LlmReport> {
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
            .block_on(stage.cleaner.clean_in(&raw, None, terminal, context));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::snippets::ReplaceConfig;

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
