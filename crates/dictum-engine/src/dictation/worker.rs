//! The transcription worker: one thread that owns the speech model (through [`Engine`]) and
//! does every piece of whisper and LLM work, in order. Jobs wait in a queue the worker can
//! look into, so a speculation that a later job has made useless is skipped, not run.
//!
//! A panic in a job is caught (see `dictation/mod.rs`, Supervision): a crashed speech stage
//! leaves the utterance's audio kept and its row failed with the reason, a crashed LLM stage
//! leaves the raw transcript, and the worker goes on with the next job.

use crate::config::Config;
use crate::dictation::messages::{Finish, InjectorMsg, Input, Job, Part, ReleasePath, Typed};
use crate::dictation::queue::Queue;
use crate::dictation::release::{self, TailPass};
use crate::dictation::shared::{catch, Shared};
use crate::fault;
use crate::gpu::monitor::{Verdict, VramMonitor};
use crate::gpu::NvmlProbe;
use crate::pipeline::{self, Engine, Segment, Words};
use crate::profile::Profile;
use crate::store::row::RowUpdate;
use crate::store::row_owner::Rows;
use crate::store::{Entry, Outcome};
use crate::timing::{ms_since, StageTimings};
use crate::Error;
use std::collections::HashMap;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// One whisper pass over part of an utterance while the key was held (or just after).
struct Pass {
    start: usize,
    end: usize,
    commit: bool,
    began: Instant,
    ended: Instant,
    aborted: bool,
}

/// Per-utterance progress while the key is held.
#[derive(Default)]
struct Progress {
    /// Final text of the committed chunks, in order.
    words: Words,
    /// Speculation over `start..end`.
    speculation: Option<(usize, usize, Segment)>,
    chunks: i64,
    segments: Vec<Segment>,
    passes: Vec<Pass>,
    /// Cleanup while speaking: the committed text's whole sentences, cleaned in the
    /// background while the key is held (`dictation/live_clean.rs`).
    live_clean: Option<crate::dictation::live_clean::Session>,
}

/// What a `Finish` job's crash leaves to complete its row: taken before the job runs.
struct Rescue {
    seq: u64,
    entry: Entry,
    samples: Arc<Vec<f32>>,
    release_at: Instant,
    profile: Arc<Profile>,
    edit: Option<crate::edit::Request>,
}

pub(crate) struct Worker {
    pub engine: Engine,
    /// The row owner's handle: every row write goes through it.
    pub rows: Rows,
    pub queue: Arc<Queue>,
    pub to_injector: mpsc::Sender<InjectorMsg>,
    pub to_controller: mpsc::Sender<Input>,
    pub shared: Arc<Shared>,
    /// A model (re)load done for the utterance being recorded (idle unload, model change):
    /// recorded in its row.
    pub pending_load: Option<(f64, f64)>,
}

impl Worker {
    /// Runs after the start-up load, which is reported at start-up, not in a row.
    pub fn run_warm(mut self) {
        if let Some(Job::Prepare) = self.queue.pop(Duration::from_secs(0)) {
            self.prepare();
            self.pending_load = None;
        }
        self.run()
    }

    pub fn run(mut self) {
        let mut progress: HashMap<u64, Progress> = HashMap::new();
        let mut last_work = Instant::now();
        let mut monitor = VramMonitor::default();
        let mut last_vram_check = Instant::now();
        loop {
            if self.shared.shutting_down() || self.queue.retired() {
                break;
            }
            if let Err(msg) = catch(|| self.watch_vram(&mut monitor, &mut last_vram_check)) {
                tracing::error!("VRAM check crashed: {msg}");
            }
            let Some(job) = self.queue.pop(Duration::from_millis(500)) else {
                if let Err(msg) = catch(|| self.maybe_unload(&mut last_work)) {
                    tracing::error!("idle unload crashed: {msg}");
                }
                continue;
            };
            last_work = Instant::now();
            // What is needed to fail the utterance if the job panics outside the stages
            // that catch their own panics.
            let rescue = match &job {
                Job::Finish(f) => Some(Rescue {
                    seq: f.seq,
                    entry: f.entry.clone(),
                    samples: f.samples.clone(),
                    release_at: f.release_at,
                    profile: f.profile.clone(),
                    edit: f.edit.clone(),
                }),
                _ => None,
            };
            self.queue.set_busy(true);
            let handled = catch(|| self.handle(job, &mut progress));
            self.queue.set_busy(false);
            if self.queue.retired() {
                // Replaced while stuck: what it finished late is stored (the controller has
                // abandoned it, so nothing is typed); the new worker has the rest.
                break;
            }
            if let Err(msg) = handled {
                tracing::error!("transcription job crashed: {msg}");
                match rescue {
                    Some(rescue) => self.fail(rescue, &msg),
                    None => {
                        let _ = self.to_controller.send(Input::Notice(format!(
                            "a background transcription job crashed ({msg}); dictation goes on"
                        )));
                    }
                }
            }
        }
    }

    fn handle(&mut self, job: Job, progress: &mut HashMap<u64, Progress>) {
        match job {
            Job::Prepare => self.prepare(),
            Job::Chunk {
                utt,
                start,
                end,
                samples,
                commit,
                profile,
                context: around,
            } => {
                self.engine.set_profile(profile);
                if !commit && !self.queue.begin_speculation(utt, end) {
                    tracing::debug!(utt, start, end, "speculation skipped: superseded");
                    return;
                }
                let t0 = Instant::now();
                let p = progress.entry(utt).or_default();
                let context = p.words.text();
                // Only a speculation may be stopped: a commit's text is final.
                let flag = (!commit).then(|| self.queue.abort.clone());
                if let Some(t) = self.engine.resilient_mut() {
                    t.primary_mut().set_abort(flag);
                }
                let result = catch(|| self.engine.transcribe_segment(&samples, &context))
                    .unwrap_or_else(|msg| Err(Error::Transcribe(format!("crashed: {msg}"))));
                if let Some(t) = self.engine.resilient_mut() {
                    t.primary_mut().set_abort(None);
                }
                // Stale: a later job made it useless (its text is dropped). Aborted: whisper
                // actually stopped on the flag, rather than finishing first.
                let stale = !commit && self.queue.end_speculation();
                let aborted = matches!(&result, Err(e) if crate::stt::is_aborted(e));
                p.passes.push(Pass {
                    start,
                    end,
                    commit,
                    began: t0,
                    ended: Instant::now(),
                    aborted,
                });
                if stale || aborted {
                    tracing::debug!(
                        utt,
                        start,
                        end,
                        aborted,
                        ms = ms_since(t0),
                        "speculation dropped: stale"
                    );
                    return;
                }
                match result {
                    Ok(seg) => {
                        p.chunks += 1;
                        // The words as the row will have them (snippets, replacements), so
                        // the pieces cleaned while speaking still fit the text at the release.
                        let words = match seg.rewriter.as_ref().filter(|r| !r.is_empty()) {
                            Some(r) => r.apply(&seg.text, false).text.trim().to_string(),
                            None => seg.text.clone(),
                        };
                        if commit {
                            p.words.push(seg.piece());
                            crate::dictation::live_clean::on_commit(
                                &mut p.live_clean,
                                &self.engine,
                                &words,
                                around.as_ref(),
                            );
                            p.segments.push(seg);
                            p.speculation = None;
                        } else {
                            crate::dictation::live_clean::on_speculation(
                                &mut p.live_clean,
                                &self.engine,
                                &words,
                                around.as_ref(),
                            );
                            p.speculation = Some((start, end, seg));
                        }
                        // The words so far, for the `partial` event: text already computed,
                        // no whisper work. Jobs run in order and a stale speculation returned
                        // above, so what is sent here is never older than what was sent
                        // before it.
                        if self.engine.config.dictation.live_words {
                            let speculative = p
                                .speculation
                                .as_ref()
                                .map(|(_, _, s)| s.text.clone())
                                .unwrap_or_default();
                            let _ = self.to_controller.send(Input::Partial {
                                seq: utt,
                                committed: p.words.text(),
                                speculative,
                            });
                        }
                    }
                    // The release will redo this stretch as part of the tail (a committed
                    // chunk that failed is not recorded, so the tail starts before it).
                    Err(e) => tracing::warn!("streamed chunk failed: {e}"),
                }
                tracing::debug!(utt, start, end, commit, ms = ms_since(t0), "chunk");
            }
            Job::Finish(finish) => {
                tracing::debug!(
                    utt = finish.seq,
                    waited_ms = ms_since(finish.release_at),
                    committed = finish.committed,
                    speculation_end = ?finish.speculation_end,
                    "finish"
                );
                let p = progress.remove(&finish.seq).unwrap_or_default();
                self.finish(*finish, p);
            }
            Job::Forget(utt) => {
                progress.remove(&utt);
            }
            // Its work was done in `Queue::push` (the running speculation was stopped).
            Job::Stale(_) => {}
            Job::Reconfigure(config) => self.reconfigure(*config),
        }
    }

    /// The utterance's job crashed: keep its audio, fail its row with the reason, and let
    /// the injector complete it (nothing is typed).
    fn fail(&mut self, rescue: Rescue, msg: &str) {
        let Rescue {
            seq,
            mut entry,
            samples,
            release_at,
            profile,
            edit,
        } = rescue;
        let kept = self.keep_failed_audio(seq, &mut entry, &samples);
        let message = format!("transcription crashed ({msg}); {kept}");
        entry.outcome = Outcome::Error;
        entry.error_kind = Some("panic".into());
        entry.error = Some(message.clone());
        entry.release_to_text_ms = Some(ms_since(release_at));
        let _ = self.to_controller.send(Input::Notice(message));
        let _ = self.to_injector.send(InjectorMsg::Type(Box::new(Typed {
            seq,
            entry,
            release_at,
            release: None,
            commands: Vec::new(),
            profile,
            hands_free: false,
            edit,
        })));
    }

    /// Keeps the audio of an utterance that produced no text in the spool (whatever
    /// `keep_audio` says: it is the only copy of the dictation). Returns what to tell the user.
    fn keep_failed_audio(&self, seq: u64, entry: &mut Entry, samples: &[f32]) -> String {
        if let (Some(path), Some(id)) = (&entry.audio_path, entry.id) {
            return format!("{} (also at {path})", crate::store::spool::retry_hint(id));
        }
        let spool = crate::store::spool::Spool::for_history(self.rows.path());
        match spool.keep(entry.id, seq, samples) {
            Ok(file) => {
                entry.audio_path = Some(file.display().to_string());
                match entry.id {
                    Some(id) => crate::store::spool::retry_hint(id),
                    None => format!("its audio is kept at {}", file.display()),
                }
            }
            Err(e) => format!("its audio could not be kept: {e}"),
        }
    }

    fn prepare(&mut self) {
        match self.engine.ensure_model() {
            Ok(Some((load, warm))) => {
                self.pending_load = Some((load, warm));
                let (device, plan) = self
                    .engine
                    .plan
                    .as_ref()
                    .map(|p| (p.device.clone(), p.reason.clone()))
                    .unwrap_or_default();
                let _ = self.to_controller.send(Input::ModelLoaded {
                    load_ms: load,
                    warmup_ms: warm,
                    device,
                    plan,
                });
            }
            Ok(None) => {}
            Err(e) => {
                let _ = self.to_controller.send(Input::Problem(e.to_string()));
            }
        }
    }

    /// Every 10 s while speech is on the GPU: warn above 70 % VRAM, move speech to the CPU
    /// above 85 % (never the LLM).
    fn watch_vram(&mut self, monitor: &mut VramMonitor, last: &mut Instant) {
        if last.elapsed() < Duration::from_secs(10) {
            return;
        }
        *last = Instant::now();
        let Some(t) = self.engine.resilient_mut() else {
            return;
        };
        if !t.on_gpu() {
            return;
        }
        match monitor.check(&NvmlProbe) {
            Verdict::Fine => {}
            Verdict::Warn(message) => {
                let _ = self.to_controller.send(Input::Notice(message));
            }
            Verdict::MoveSpeechToCpu(message) => {
                let note = match t.move_to_cpu() {
                    Ok(()) => message,
                    Err(e) => format!("{message}; moving it failed: {e}"),
                };
                let _ = self.to_controller.send(Input::Notice(note));
            }
        }
    }

    fn maybe_unload(&mut self, last_work: &mut Instant) {
        let minutes = self.engine.config.dictation.idle_unload_min;
        if minutes <= 0.0 || !self.engine.model_loaded() {
            return;
        }
        if last_work.elapsed() >= Duration::from_secs_f64(minutes * 60.0) {
            self.engine.unload_model();
            let _ = self.to_controller.send(Input::Notice(format!(
                "speech model unloaded after {minutes} idle minutes; it reloads on the next key press"
            )));
            *last_work = Instant::now();
        }
    }

    fn reconfigure(&mut self, config: Config) {
        let model_changed = config.stt.model != self.engine.config.stt.model
            || config.stt.use_gpu != self.engine.config.stt.use_gpu;
        let llm_changed = config.llm != self.engine.config.llm;
        match self.engine.reconfigure(config) {
            Ok(Some(warm)) if !warm.ok => {
                let _ = self.to_controller.send(Input::Notice(format!(
                    "LLM warm-up failed: {}",
                    warm.warnings.join("; ")
                )));
            }
            Ok(_) => {}
            Err(e) => {
                let _ = self.to_controller.send(Input::Problem(e.to_string()));
            }
        }
        if model_changed {
            self.engine.unload_model();
            self.prepare();
        } else if llm_changed {
            // The LLM's VRAM changed: plan again (speech moves to the CPU rather than
            // pushing the LLM out).
            if let Some(plan) = self.engine.replan() {
                tracing::info!("speech on {}: {}", plan.device, plan.reason);
            }
        }
    }

    /// Ends an utterance: its tail, its finished row (stored), then the injector types it.
    fn finish(&mut self, f: Finish, mut p: Progress) {
        let Finish {
            seq,
            mut entry,
            samples,
            committed,
            speculation_end,
            release_at,
            mut timings,
            profile,
            before_post_roll,
            hands_free,
            edit,
            context,
        } = f;
        self.engine.set_profile(profile.clone());
        self.note_audio(&mut entry, &mut timings, &samples);
        let (tail, release) = self.tail(
            &mut p,
            &mut entry,
            &samples,
            committed,
            speculation_end,
            release_at,
        );
        let release = ReleasePath {
            typed_before_post_roll: before_post_roll,
            ..release
        };
        let live = p.live_clean.take();
        self.build_row(seq, &mut entry, &mut timings, &samples, p, tail);
        let commands = self.split_commands(&mut entry, &profile);
        // The first words go out while the last are cleaned; the raw words are in history
        // before any of them is typed.
        let to_injector = self.to_injector.clone();
        let rows = self.rows.clone();
        let mut early = |raw: &Entry, text: &str| {
            if let Err(e) = rows.apply(RowUpdate::Transcribed(raw)) {
                tracing::warn!("could not store the raw words before typing them: {e}");
            }
            let _ = to_injector.send(InjectorMsg::Part(Box::new(Part {
                seq,
                id: raw.id,
                text: format!("{text} "),
                release_at,
                profile: profile.clone(),
                audio_ms: raw.audio_ms,
            })));
        };
        self.clean(
            &mut entry,
            &mut timings,
            &profile,
            live,
            &mut early,
            context,
        );
        entry.release_to_text_ms = Some(ms_since(release_at));
        if let Err(e) = rows.apply(RowUpdate::Cleaned(&entry)) {
            let _ = self
                .to_controller
                .send(Input::Notice(format!("could not store the dictation: {e}")));
        }
        let _ = self.to_injector.send(InjectorMsg::Type(Box::new(Typed {
            seq,
            entry,
            release_at,
            release: Some(release),
            commands,
            profile,
            hands_free,
            edit,
        })));
    }

    /// The utterance's length, a model load done for it, and its audio when kept.
    fn note_audio(&mut self, entry: &mut Entry, timings: &mut StageTimings, samples: &[f32]) {
        entry.audio_ms = Some((samples.len() as u64 * 1000 / crate::SAMPLE_RATE as u64) as i64);
        if let Some((load, warm)) = self.pending_load.take() {
            timings.model_load = Some(load);
            timings.warmup = Some(warm);
            entry.model_load_ms = Some(load);
            entry.warmup_ms = Some(warm);
        }
        if self.engine.config.history.keep_audio {
            let audio = crate::audio::Pcm16k {
                samples: samples.to_vec(),
            };
            self.engine.keep_audio(&audio, entry);
        }
    }

    /// The tail (`release::tail_pass`): the speculation's text when it still covers
    /// everything after the last commit, else a pass over it now; and what the release
    /// waited for.
    fn tail(
        &mut self,
        p: &mut Progress,
        entry: &mut Entry,
        samples: &[f32],
        committed: usize,
        speculation_end: Option<usize>,
        release_at: Instant,
    ) -> (crate::Result<Segment>, ReleasePath) {
        let speculation = p.speculation.take();
        let pass = release::tail_pass(
            speculation.as_ref().map(|(start, end, _)| *start..*end),
            committed,
            speculation_end,
            samples.len(),
        );
        let reused = matches!(pass, TailPass::Reuse(_));
        let path = release_path(
            &p.passes,
            release_at,
            reused.then_some((committed, speculation_end)),
        );
        let tail = match (pass, speculation) {
            (TailPass::Reuse(_), Some((_, _, seg))) => {
                entry.tail_stt_ms = Some(0.0);
                Ok(seg)
            }
            (TailPass::Reuse(range) | TailPass::Transcribe(range), _) => {
                // The tail's words will be new: a cleanup guessed from the speculation's
                // is useless and would hold a core while whisper transcribes.
                if let Some(session) = &p.live_clean {
                    session.drop_guess();
                }
                let context = p.words.text();
                let t0 = Instant::now();
                let r = catch(|| {
                    fault::point("stt_panic");
                    fault::point("stt_hang");
                    self.engine.transcribe_segment(&samples[range], &context)
                })
                .unwrap_or_else(|msg| {
                    Err(Error::Transcribe(format!(
                        "the speech stage crashed ({msg})"
                    )))
                });
                entry.tail_stt_ms = Some(ms_since(t0));
                if r.is_ok() {
                    p.chunks += 1;
                }
                r
            }
        };
        (tail, path)
    }

    /// The finished row from the chunks and the tail (`store::row::Words`, as a file's
    /// pieces): a failed tail still delivers what the committed chunks hold; with nothing,
    /// the audio is kept so the dictation is not lost.
    fn build_row(
        &mut self,
        seq: u64,
        entry: &mut Entry,
        timings: &mut StageTimings,
        samples: &[f32],
        mut p: Progress,
        tail: crate::Result<Segment>,
    ) {
        for seg in &p.segments {
            seg.apply_to(entry, timings);
        }
        let error = match tail {
            Ok(seg) => {
                seg.apply_to(entry, timings);
                p.words.push(seg.piece());
                None
            }
            Err(e) => Some(e),
        };
        entry.chunks = Some(p.chunks);
        p.words.into_row(entry);
        if let Some(e) = error {
            let mut message = format!("transcription failed: {e}");
            let outcome = if entry.outcome == Outcome::NoSpeech {
                let kept = self.keep_failed_audio(seq, entry, samples);
                message = format!("{message}; {kept}");
                Outcome::Error
            } else {
                Outcome::Ok
            };
            pipeline::fail_row(entry, &e, outcome, message.clone());
            let _ = self.to_controller.send(Input::Notice(message));
        }
    }

    /// Voice commands, matched on the transcript before any cleanup: what is left is the
    /// row's text to type (and to clean); the commands are done after it.
    fn split_commands(&self, entry: &mut Entry, profile: &Profile) -> Vec<crate::commands::Spoken> {
        if entry.outcome != Outcome::Ok {
            return Vec::new();
        }
        // A per-app profile may turn commands off (or on) for its windows.
        let commands = crate::commands::CommandsConfig {
            enabled: profile.commands_enabled(self.engine.config.commands.enabled),
            ..self.engine.config.commands.clone()
        };
        let parsed = crate::commands::parse(entry.text.as_deref().unwrap_or(""), &commands);
        entry.commands = parsed.names_json();
        entry.text = Some(parsed.text);
        parsed.commands
    }

    /// The LLM cleanup (any problem is recorded and the raw text kept; a crash too), then
    /// the profile's last word on the text (a terminal's command without a final ".").
    fn clean(
        &self,
        entry: &mut Entry,
        timings: &mut StageTimings,
        profile: &Profile,
        live: Option<crate::dictation::live_clean::Session>,
        early: &mut dyn FnMut(&Entry, &str),
        context: Option<Arc<crate::dictation::llm_context::PressRead>>,
    ) {
        let text = entry.text.clone().unwrap_or_default();
        // Taken only when the LLM will see the words: a silent or failed utterance waits
        // for no read. The same decision as the cleanup while speaking's (`for_engine`).
        let context = match context.filter(|_| entry.outcome == Outcome::Ok && !text.is_empty()) {
            Some(read) => {
                let url = profile.applied_to(&self.engine.config).llm.url;
                let (context, note) = crate::dictation::llm_context::for_llm(
                    Some(&read),
                    &self.engine.config.context,
                    &url,
                );
                entry.llm_context = note;
                context
            }
            None => None,
        };
        let cleaned = catch(|| {
            if entry.outcome == Outcome::Ok && text.is_empty() {
                return;
            }
            if entry.outcome == Outcome::Ok && self.engine.cleaner().is_some() {
                fault::point("llm_panic");
            }
            crate::dictation::live_clean::clean_entry(
                live,
                &self.engine,
                entry,
                timings,
                early,
                context.as_ref(),
            );
        });
        if let Err(msg) = cleaned {
            entry.text = Some(text);
            entry.llm_outcome = Some("failed".into());
            let message = format!("the LLM stage crashed ({msg}); the raw transcript was kept");
            entry.llm_error = Some(message.clone());
            let _ = self.to_controller.send(Input::Notice(message));
        }
        if entry.outcome == Outcome::Ok {
            if let Some(t) = entry.text.as_deref() {
                let finished = profile.finish_text(t);
                if finished != t {
                    entry.text = Some(finished);
                }
            }
        }
    }
}

/// What the release waited for, from the passes over the utterance. `reused` is the
/// (start, end) of the speculation whose text became the tail, if one did.
fn release_path(
    passes: &[Pass],
    release_at: Instant,
    reused: Option<(usize, Option<usize>)>,
) -> ReleasePath {
    let mut r = ReleasePath {
        passes: passes.len() as u32,
        ..ReleasePath::default()
    };
    let used = |p: &Pass| {
        p.commit || (!p.aborted && reused.is_some_and(|(s, e)| p.start == s && Some(p.end) == e))
    };
    // The reused speculation is the last pass over its stretch.
    let tail = passes.iter().rposition(|p| !p.commit && used(p));
    for (i, p) in passes.iter().enumerate() {
        let rel = |t: Instant| {
            if t >= release_at {
                t.duration_since(release_at).as_secs_f64() * 1000.0
            } else {
                -(release_at.duration_since(t).as_secs_f64() * 1000.0)
            }
        };
        if Some(i) == tail {
            r.tail_pass_start_ms = Some(rel(p.began));
            r.tail_pass_ms = Some(p.ended.duration_since(p.began).as_secs_f64() * 1000.0);
            continue;
        }
        if p.ended <= release_at {
            r.stopped_before_release += u32::from(p.aborted);
            continue;
        }
        if used(p) {
            continue;
        }
        let from = p.began.max(release_at);
        r.stale_ms_after_release += p.ended.duration_since(from).as_secs_f64() * 1000.0;
        if p.aborted {
            r.stale_passes_aborted += 1;
        } else {
            r.stale_passes_completed += 1;
        }
    }
    r
}

/// What it takes to start a transcription worker: at start-up, and again when one is stuck.
pub(crate) struct Seed {
    pub model_dirs: Vec<std::path::PathBuf>,
    pub audio_dir: Option<std::path::PathBuf>,
    /// The row owner's handle, a clone for each worker.
    pub rows: Rows,
    pub to_injector: mpsc::Sender<InjectorMsg>,
    pub to_controller: mpsc::Sender<Input>,
    pub shared: Arc<Shared>,
}

impl Seed {
    /// Starts a worker on `queue` with its own engine (the model is loaded by the queue's
    /// first job, `Prepare`). Returns the model file, or with a speech server and no local
    /// model installed (a thin client, [`crate::pipeline::no_local_fallback`]), the server's.
    pub(crate) fn spawn(&self, config: &Config, queue: Arc<Queue>) -> Result<String, String> {
        let mut engine = Engine::new(config.clone(), self.model_dirs.clone());
        engine.audio_dir = self.audio_dir.clone();
        let model_name = match engine.model_path() {
            Ok(path) => path.display().to_string(),
            Err(_) if crate::pipeline::no_local_fallback(config, &self.model_dirs).is_some() => {
                format!("{} at {}", config.stt.remote_model, config.stt.url)
            }
            Err(e) => return Err(e.to_string()),
        };
        let worker = Worker {
            engine,
            rows: self.rows.clone(),
            queue: queue.clone(),
            to_injector: self.to_injector.clone(),
            to_controller: self.to_controller.clone(),
            shared: self.shared.clone(),
            pending_load: None,
        };
        // Queued before the worker starts, so its first job is the load.
        queue.push(Job::Prepare);
        std::thread::Builder::new()
            .name("dictum-worker".into())
            .spawn(move || {
                let mut worker = worker;
                if let Ok(Some(warm)) = worker.engine.enable_llm() {
                    if !warm.ok {
                        let _ = worker.to_controller.send(Input::Notice(format!(
                            "LLM warm-up failed ({}); dictations are typed uncleaned until it answers",
                            warm.warnings.join("; ")
                        )));
                    }
                }
                worker.run_warm()
            })
            .map_err(|e| format!("cannot start the transcription thread: {e}"))?;
        Ok(model_name)
    }
}

#[cfg(test)]
mod tests;
