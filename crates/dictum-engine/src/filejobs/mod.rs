//! Files transcribed in the background of a running face: the tray app's "Transcribe a
//! file…" window (its menu entry, a drop on the window, `dictum-tray --transcribe FILE…`).
//! One thread takes the queue in order, each file through the same pipeline as `dictum
//! transcribe` (its row, its pieces cut in pauses, its segments), and tells the face every
//! change as a [`JobView`]. Cancel stops the pass under way through whisper's abort callback
//! and keeps what was done; a dictation in the same process goes first
//! ([`crate::stt::priority`]): the file's pass stops at the press and its piece is redone
//! once the words are typed.

mod view;

pub use view::{JobDefaults, JobOptions, JobState, JobView, SaveFormat, SavedFile};

use crate::config::{Config, SttTask};
use crate::pipeline::Engine;
use crate::store::recovery::FilesInProcess;
use crate::store::{History, Outcome};
use crate::stt::priority::Stop;
use crate::stt::TimedText;
use crate::subtitles;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

/// A file's pieces in the window: a minute of audio each, so the text arrives often and a
/// dictation that stops a piece costs at most a minute's pass (the CLI's default is two).
pub const PIECE_S: u32 = 60;

/// The file types the built-in decoders read (`audio/decode.rs`); ffmpeg reads the rest.
pub const BUILT_IN: &[&str] = &[
    "wav", "flac", "mp3", "m4a", "mp4", "aac", "ogg", "oga", "webm", "mkv", "mka", "alac",
];

/// What the queue's thread needs from its face.
pub struct Setup {
    /// The config in force, read when a file starts (its `[stt]` is the default model and
    /// language).
    pub config: Box<dyn Fn() -> Config + Send>,
    pub model_dirs: Vec<PathBuf>,
    /// Where kept audio goes (`history.keep_audio`).
    pub audio_dir: Option<PathBuf>,
    pub history_path: PathBuf,
    /// Told every change of a file (a new one, a piece done, the end); called on the queue's
    /// thread, or on the caller's for [`FileJobs::add`] and [`FileJobs::cancel`].
    pub changed: Box<dyn Fn(&JobView) + Send + Sync>,
}

struct Job {
    view: JobView,
    options: JobOptions,
    cancel: Arc<AtomicBool>,
    /// Whisper's segments, times from the start of the file, for Save as SRT/VTT.
    segments: Vec<TimedText>,
    /// The text is an LLM cleanup (its subtitles lay it over the segments).
    cleaned: bool,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    next: u32,
    quit: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
    changed: Box<dyn Fn(&JobView) + Send + Sync>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes job `id` with `f` and tells the face; false when there is no such job.
    fn update(&self, id: u32, f: impl FnOnce(&mut Job)) -> bool {
        let view = {
            let mut q = self.lock();
            let Some(job) = q.jobs.iter_mut().find(|j| j.view.id == id) else {
                return false;
            };
            f(job);
            job.view.clone()
        };
        (self.changed)(&view);
        true
    }
}

/// The queue of files and the thread that transcribes them.
pub struct FileJobs {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Start-up recovery in this process leaves this queue's `pending` rows alone.
    _rows_live: FilesInProcess,
}

impl FileJobs {
    /// Starts the queue's thread (idle until a file is added).
    pub fn start(setup: Setup) -> std::io::Result<FileJobs> {
        let Setup {
            config,
            model_dirs,
            audio_dir,
            history_path,
            changed,
        } = setup;
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            changed,
        });
        let runner = Runner {
            shared: shared.clone(),
            config,
            model_dirs,
            audio_dir,
            history_path,
            engine: None,
        };
        let thread = std::thread::Builder::new()
            .name("dictum-files".into())
            .spawn(move || runner.run())?;
        Ok(FileJobs {
            shared,
            thread: Some(thread),
            _rows_live: FilesInProcess::hold(),
        })
    }

    /// Queues `paths` with `options` resolved against `config` (the dictation's model and
    /// language where the options say none). A path that is no readable file is listed as
    /// failed at once, saying why.
    pub fn add(&self, paths: &[PathBuf], options: &JobOptions, config: &Config) -> Vec<JobView> {
        let model = options
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| config.stt.model.clone());
        let language = options
            .language
            .clone()
            .filter(|l| !l.trim().is_empty())
            .unwrap_or_else(|| config.stt.language.clone());
        let translate = options.translate || config.stt.task == SttTask::Translate;
        let mut added = Vec::new();
        {
            let mut q = self.shared.lock();
            for path in paths {
                q.next += 1;
                let mut view = JobView {
                    id: q.next,
                    path: path.display().to_string(),
                    name: path.file_name().map_or_else(
                        || path.display().to_string(),
                        |n| n.to_string_lossy().into(),
                    ),
                    state: JobState::Queued,
                    done_ms: 0,
                    total_ms: 0,
                    elapsed_ms: 0.0,
                    remaining_ms: None,
                    text: String::new(),
                    entry_id: None,
                    error: None,
                    note: None,
                    waiting_for_dictation: false,
                    model: model.clone(),
                    language: language.clone(),
                    translate,
                };
                if let Some(why) = not_a_file(path) {
                    view.state = JobState::Failed;
                    view.error = Some(why);
                }
                added.push(view.clone());
                q.jobs.push(Job {
                    view,
                    options: JobOptions {
                        model: Some(model.clone()),
                        language: Some(language.clone()),
                        translate,
                    },
                    cancel: Arc::default(),
                    segments: Vec::new(),
                    cleaned: false,
                });
            }
        }
        self.shared.wake.notify_all();
        for view in &added {
            (self.shared.changed)(view);
        }
        added
    }

    /// Every file of the queue, oldest first.
    pub fn list(&self) -> Vec<JobView> {
        self.shared
            .lock()
            .jobs
            .iter()
            .map(|j| j.view.clone())
            .collect()
    }

    /// Stops file `id`: a queued one never starts; a running one stops within a few ms (its
    /// pieces done are kept, in the window and its history row). False when it had ended.
    pub fn cancel(&self, id: u32) -> bool {
        let mut stopped = false;
        self.shared.update(id, |job| match job.view.state {
            JobState::Queued => {
                job.view.state = JobState::Cancelled;
                job.view.note = Some("cancelled before it started".into());
                stopped = true;
            }
            JobState::Running => {
                // The window says so at once, with the pieces done (what the row will
                // keep); the pass under way ends at whisper's next look at the flag (after
                // each encoder window and each decoder step), then the row is written.
                job.cancel.store(true, Ordering::Relaxed);
                job.view.state = JobState::Cancelled;
                job.view.waiting_for_dictation = false;
                job.view.note = Some("cancelled: the text so far is kept".into());
                stopped = true;
            }
            _ => {}
        });
        stopped
    }

    /// Takes an ended file off the list (its history row stays); a running one must be
    /// cancelled first. False when there is no such ended file.
    pub fn remove(&self, id: u32) -> bool {
        let mut q = self.shared.lock();
        let Some(at) = q.jobs.iter().position(|j| j.view.id == id) else {
            return false;
        };
        if matches!(q.jobs[at].view.state, JobState::Running | JobState::Queued) {
            return false;
        }
        q.jobs.remove(at);
        true
    }

    /// File `id`'s text so far.
    pub fn text(&self, id: u32) -> Option<String> {
        let q = self.shared.lock();
        q.jobs
            .iter()
            .find(|j| j.view.id == id)
            .map(|j| j.view.text.clone())
    }

    /// File `id` as `format`: its text, or its subtitles (the usual layout, as `dictum
    /// transcribe --format srt` writes them) once it has ended with some.
    pub fn render(&self, id: u32, format: SaveFormat) -> Result<String, String> {
        let q = self.shared.lock();
        let job = q
            .jobs
            .iter()
            .find(|j| j.view.id == id)
            .ok_or_else(|| format!("no file #{id} in the list"))?;
        if format == SaveFormat::Txt {
            if job.view.text.trim().is_empty() {
                return Err(format!("{} has no text to save", job.view.name));
            }
            let mut text = job.view.text.clone();
            text.push('\n');
            return Ok(text);
        }
        if matches!(job.view.state, JobState::Queued | JobState::Running) {
            return Err(format!(
                "{} is still being transcribed: its subtitles can be saved once it ends (or is cancelled)",
                job.view.name
            ));
        }
        if job.segments.is_empty() {
            return Err(format!(
                "{} has no timed words to make subtitles of",
                job.view.name
            ));
        }
        let cues = subtitles::cues_for(
            job.segments.iter().map(Into::into).collect(),
            Some(&job.view.text),
            job.cleaned,
            Some(job.view.total_ms).filter(|&ms| ms > 0),
        );
        Ok(match format {
            SaveFormat::Srt => subtitles::to_srt(&cues),
            _ => subtitles::to_vtt(&cues),
        })
    }

    /// `talk.mp3` → `talk.srt`, beside nothing: the name Save as proposes.
    pub fn save_name(&self, id: u32, format: SaveFormat) -> Option<(PathBuf, String)> {
        let q = self.shared.lock();
        let job = q.jobs.iter().find(|j| j.view.id == id)?;
        let path = Path::new(&job.view.path);
        let stem = path
            .file_stem()
            .map_or_else(|| "transcript".into(), |s| s.to_string_lossy().into_owned());
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Some((dir, format!("{stem}.{}", format.extension())))
    }
}

impl Drop for FileJobs {
    fn drop(&mut self) {
        {
            let mut q = self.shared.lock();
            q.quit = true;
            for job in &q.jobs {
                job.cancel.store(true, Ordering::Relaxed);
            }
        }
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Why `path` cannot be transcribed before any decoder looks at it.
fn not_a_file(path: &Path) -> Option<String> {
    if !path.is_absolute() {
        return Some(format!("{}: give the file's full path", path.display()));
    }
    match std::fs::metadata(path) {
        Err(e) => Some(format!("{}: {e}", path.display())),
        Ok(m) if m.is_dir() => Some(format!(
            "{} is a folder: add the files in it",
            path.display()
        )),
        Ok(_) => None,
    }
}

/// The queue's thread: one file at a time, the engine kept while files of the same model
/// follow each other, dropped (its memory freed) when the queue runs dry.
struct Runner {
    shared: Arc<Shared>,
    config: Box<dyn Fn() -> Config + Send>,
    model_dirs: Vec<PathBuf>,
    audio_dir: Option<PathBuf>,
    history_path: PathBuf,
    engine: Option<Engine>,
}

/// Makes the calling thread (and the threads whisper starts from it) the last to get a
/// core: a dictation's passes then run at once even while a file's pass is still on its way
/// to whisper's next look at the stop (after an encoder window). A file alone still gets
/// every idle core.
fn run_in_the_background() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain system calls on this thread's own id.
        let rc = unsafe {
            libc::setpriority(
                libc::PRIO_PROCESS,
                libc::gettid() as libc::id_t,
                BACKGROUND_NICE,
            )
        };
        if rc != 0 {
            tracing::debug!(
                "could not lower the file queue's priority: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// The file queue's nice value (Linux: per thread, inherited by the threads it starts).
pub const BACKGROUND_NICE: i32 = 19;

impl Runner {
    fn run(mut self) {
        run_in_the_background();
        while let Some((id, path, options, cancel)) = self.next() {
            self.transcribe(id, &path, &options, cancel);
        }
    }

    /// Waits for the next queued file and marks it running; None once the queue is dropped.
    fn next(&mut self) -> Option<(u32, PathBuf, JobOptions, Arc<AtomicBool>)> {
        let mut q = self.shared.lock();
        loop {
            if q.quit {
                return None;
            }
            if let Some(job) = q.jobs.iter_mut().find(|j| j.view.state == JobState::Queued) {
                job.view.state = JobState::Running;
                let picked = (
                    job.view.id,
                    PathBuf::from(&job.view.path),
                    job.options.clone(),
                    job.cancel.clone(),
                );
                let view = job.view.clone();
                drop(q);
                (self.shared.changed)(&view);
                return Some(picked);
            }
            // Nothing to do: the model's memory goes back until the next file.
            self.engine = None;
            q = self.shared.wake.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn engine_for(&mut self, options: &JobOptions) -> &mut Engine {
        let mut config = (self.config)();
        if let Some(model) = &options.model {
            config.stt.model = model.clone();
        }
        if let Some(language) = &options.language {
            config.stt.language = language.clone();
        }
        config.stt.task = if options.translate {
            SttTask::Translate
        } else {
            SttTask::Transcribe
        };
        // A recording's text is kept as whisper wrote it: an LLM cleanup is for a
        // dictation's few sentences (its context is a few thousand tokens), not an hour.
        config.llm.enabled = false;
        let reuse = self
            .engine
            .as_ref()
            .is_some_and(|e| e.config.stt.model == config.stt.model);
        if !reuse {
            self.engine = None;
        }
        let engine = self.engine.get_or_insert_with(|| {
            let mut e = Engine::new(config.clone(), self.model_dirs.clone());
            e.audio_dir = self.audio_dir.clone();
            e.file_piece_s = PIECE_S;
            e
        });
        engine.config = config;
        engine
    }

    fn transcribe(&mut self, id: u32, path: &Path, options: &JobOptions, cancel: Arc<AtomicBool>) {
        let start = Instant::now();
        let history = match History::open(&self.history_path) {
            Ok(h) => h,
            Err(e) => {
                self.shared.update(id, |job| {
                    job.view.state = JobState::Failed;
                    job.view.error = Some(e.to_string());
                });
                return;
            }
        };
        let shared = self.shared.clone();
        let shared_wait = self.shared.clone();
        let engine = self.engine_for(options);
        engine.set_stop(Some(Stop::new(cancel.clone(), true)));
        let mut on_progress = |p: &crate::pipeline::FileProgress, added: &[TimedText]| {
            shared.update(id, |job| {
                job.view.done_ms = p.done_ms;
                job.view.total_ms = p.total_ms;
                job.view.elapsed_ms = p.elapsed_ms;
                job.view.remaining_ms = Some(p.remaining_ms());
                for t in added {
                    let words = t.text.trim();
                    if !words.is_empty() {
                        if !job.view.text.is_empty() {
                            job.view.text.push(' ');
                        }
                        job.view.text.push_str(words);
                    }
                }
                job.segments.extend(added.iter().cloned());
            });
        };
        let mut on_wait = |waiting: bool| {
            shared_wait.update(id, |job| job.view.waiting_for_dictation = waiting);
        };
        let mut hooks = crate::pipeline::FileHooks {
            progress: &mut on_progress,
            waiting: &mut on_wait,
        };
        let done = engine.transcribe_file_hooked(&history, path, &mut hooks);
        engine.set_stop(None);
        let elapsed = start.elapsed().as_secs_f64() * 1000.0;
        self.shared.update(id, |job| {
            job.view.elapsed_ms = elapsed;
            job.view.remaining_ms = Some(0.0);
            job.view.waiting_for_dictation = false;
            match done {
                Err(e) => {
                    job.view.state = JobState::Failed;
                    job.view.error = Some(e.to_string());
                }
                Ok(u) => {
                    job.view.entry_id = u.entry.id;
                    job.view.text = u.entry.text.clone().unwrap_or_default();
                    job.segments = u.segments;
                    job.cleaned = u.entry.llm_outcome.as_deref() == Some("cleaned");
                    if let Some(ms) = u.entry.audio_ms.and_then(|ms| u64::try_from(ms).ok()) {
                        job.view.total_ms = job.view.total_ms.max(ms);
                    }
                    job.view.state = if u.cancelled {
                        JobState::Cancelled
                    } else if u.error.is_some() {
                        JobState::Failed
                    } else {
                        JobState::Done
                    };
                    if !u.cancelled && u.error.is_none() {
                        job.view.done_ms = job.view.total_ms;
                    }
                    job.view.error = u.error.map(|e| e.to_string());
                    job.view.note = match (&u.truncated, u.entry.outcome) {
                        (Some(why), _) => Some(format!(
                            "transcribed in part ({why}); the text before is kept"
                        )),
                        (None, Outcome::NoSpeech) => Some("no speech in this file".into()),
                        _ => None,
                    };
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> (FileJobs, Arc<Mutex<Vec<JobView>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let told = seen.clone();
        let jobs = FileJobs::start(Setup {
            config: Box::new(Config::default),
            model_dirs: Vec::new(),
            audio_dir: None,
            history_path: PathBuf::from("/nonexistent/history.sqlite3"),
            changed: Box::new(move |v| told.lock().expect("seen").push(v.clone())),
        })
        .expect("start");
        (jobs, seen)
    }

    #[test]
    fn what_is_no_file_fails_at_once_and_says_why() {
        let (jobs, seen) = queue();
        let dir = tempfile::tempdir().expect("tempdir");
        let added = jobs.add(
            &[PathBuf::from("talk.mp3"), dir.path().to_path_buf()],
            &JobOptions::default(),
            &Config::default(),
        );
        assert_eq!(added.len(), 2);
        assert!(added.iter().all(|v| v.state == JobState::Failed));
        assert!(added[0]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("full path")));
        assert!(added[1]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("folder")));
        assert_eq!(seen.lock().expect("seen").len(), 2, "each one told");
        // Ended: removable, not cancellable; nothing to save.
        assert!(!jobs.cancel(added[0].id));
        assert!(jobs.render(added[0].id, SaveFormat::Txt).is_err());
        assert!(jobs.remove(added[0].id));
        assert_eq!(jobs.list().len(), 1);
    }

    #[test]
    fn options_fall_back_to_the_dictations_model_and_language() {
        let (jobs, _) = queue();
        let mut config = Config::default();
        config.stt.model = "base-q8_0".into();
        config.stt.language = "de".into();
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("gone.wav");
        let v = &jobs.add(
            std::slice::from_ref(&missing),
            &JobOptions::default(),
            &config,
        )[0];
        assert_eq!(
            (v.model.as_str(), v.language.as_str(), v.translate),
            ("base-q8_0", "de", false)
        );
        let chosen = JobOptions {
            model: Some("tiny.en-q8_0".into()),
            language: Some("en".into()),
            translate: true,
        };
        let v = &jobs.add(&[missing], &chosen, &config)[0];
        assert_eq!(
            (v.model.as_str(), v.language.as_str(), v.translate),
            ("tiny.en-q8_0", "en", true)
        );
        assert_eq!(
            jobs.save_name(v.id, SaveFormat::Srt),
            Some((dir.path().to_path_buf(), "gone.srt".into()))
        );
    }
}
