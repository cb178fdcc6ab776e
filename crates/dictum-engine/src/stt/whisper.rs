//! The whisper transcriber: one model loaded once per process, one reusable decoding state,
//! warmed up before the first real utterance, and an encoder window sized to the utterance.

use super::model_file::{check_model_file, ModelInfo};
use super::pass::{audio_ctx_for, SttOptions, SttOutput, TimedText, Window};
use super::priority::Stop;
use super::suspect::{keep_redo, suspect};
use super::worker_process::{self, WorkerProcess};
use crate::gpu::speech_plan;
use crate::timing::{ms_since, timed};
use crate::{Error, Result, SAMPLE_RATE};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use whisper_rs::{
    FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters, WhisperState,
};

/// Where the model runs: in this process, or in a worker process (the GPU; see
/// `worker_process.rs`).
enum Backend {
    InProcess {
        // `state` borrows nothing from `ctx` at the type level (whisper-rs keeps an Arc), but
        // keep ctx alive explicitly for clarity; it also names the special tokens.
        ctx: WhisperContext,
        state: WhisperState,
    },
    Worker(WorkerProcess),
}

pub struct Transcriber {
    backend: Backend,
    pub model_path: PathBuf,
    pub model_name: String,
    pub info: ModelInfo,
    pub device: String,
    pub load_ms: f64,
    pub warmup_ms: Option<f64>,
    /// Raised by another thread to stop the decode under way (a live pass made stale by new
    /// speech or by the release); whisper checks it between graph nodes. In-process only.
    abort: Option<Arc<AtomicBool>>,
    /// A background pass's stop (a file's: cancelled, or a dictation needs the cores); unlike
    /// `abort` it leaves the redo of a suspect pass as it is. In-process only.
    stop: Option<Stop>,
}

/// The message of a decode stopped through [`Transcriber::set_abort`].
pub const ABORTED: &str = "aborted: the pass was made stale";

/// The message of a decode stopped through [`Transcriber::set_stop`].
pub const STOPPED: &str = "stopped: the file was cancelled or a dictation went first";

/// Upper bound on tokens for an utterance: generous for real speech (people say at most
/// ~4 words/s), but it stops a decoder that has started repeating itself.
fn max_tokens_for(samples: usize) -> i32 {
    let secs = samples as f64 / SAMPLE_RATE as f64;
    (24.0 + secs * 10.0).ceil() as i32
}

/// True when whisper's text stops well before the audio does (its last segment ends over 2 s
/// before the end, and there was text): tiny models end a decode at a pause and drop what
/// follows. Silence at the end is rare here (the VAD trims it), so this is redone.
fn ended_early(out: &SttOutput, samples: usize) -> bool {
    let audio_ms = (samples as u64 * 1000) / SAMPLE_RATE as u64;
    !out.text.is_empty() && out.end_ms.is_some_and(|end| end + 2000 < audio_ms)
}

/// The GPU devices (discrete or integrated) ggml's backends offer in this process: what
/// whisper.cpp picks from with `use_gpu`.
fn gpu_devices() -> usize {
    use whisper_rs::whisper_rs_sys as sys;
    // SAFETY: ggml's device registry calls: no arguments but indices below the count it gave;
    // the registry initialises itself on the first call and lives for the process.
    unsafe {
        (0..sys::ggml_backend_dev_count())
            .filter(|&i| {
                let t = sys::ggml_backend_dev_type(sys::ggml_backend_dev_get(i));
                t == sys::ggml_backend_dev_type_GGML_BACKEND_DEVICE_TYPE_GPU
                    || t == sys::ggml_backend_dev_type_GGML_BACKEND_DEVICE_TYPE_IGPU
            })
            .count()
    }
}

impl Transcriber {
    /// Checks the file, then loads it. `use_gpu` matters only in a `cuda` or `vulkan` build;
    /// on the GPU the model runs in a worker process, so a GPU failure cannot end this one.
    pub fn load(model_path: &Path, use_gpu: bool) -> Result<Transcriber> {
        let gpu = speech_plan::BACKEND.is_some() && use_gpu;
        if !worker_process::wanted(gpu) {
            return Transcriber::load_in_process(model_path, gpu);
        }
        let start = Instant::now();
        let info = check_model_file(model_path)?;
        let worker = WorkerProcess::spawn(model_path, gpu)?;
        Ok(Transcriber {
            backend: Backend::Worker(worker),
            model_path: model_path.to_path_buf(),
            model_name: file_name(model_path),
            info,
            device: match speech_plan::BACKEND {
                Some(backend) if gpu => backend.into(),
                _ => "cpu-worker".into(),
            },
            load_ms: ms_since(start),
            warmup_ms: None,
            abort: None,
            stop: None,
        })
    }

    /// Loads the model into this process.
    pub fn load_in_process(model_path: &Path, gpu: bool) -> Result<Transcriber> {
        whisper_rs::install_logging_hooks();
        // The load sampler's window is full by the first real pass.
        super::cpu_share::start_sampling();
        let start = Instant::now();
        let info = check_model_file(model_path)?;
        // whisper.cpp quietly runs on the CPU when the backend offers no GPU device (no driver,
        // a bad GGML_VK_VISIBLE_DEVICES): then this is a failed GPU load, so the caller falls
        // back on purpose and the device says "cpu", not a GPU the text never saw.
        if gpu && gpu_devices() == 0 {
            return Err(Error::ModelLoad {
                path: model_path.to_path_buf(),
                reason: format!(
                    "whisper.cpp's {} backend found no usable GPU device (see `dictum doctor`)",
                    speech_plan::BACKEND.unwrap_or("GPU")
                ),
            });
        }
        let mut params = WhisperContextParameters::default();
        params.use_gpu(gpu);
        let path_str = model_path.to_str().ok_or_else(|| Error::ModelLoad {
            path: model_path.to_path_buf(),
            reason: "the path is not valid UTF-8; move the model to a plain path".into(),
        })?;
        let ctx =
            WhisperContext::new_with_params(path_str, params).map_err(|e| Error::ModelLoad {
                path: model_path.to_path_buf(),
                reason: format!("{e}; the file may be damaged or not a whisper.cpp model"),
            })?;
        let state = ctx.create_state().map_err(|e| Error::ModelLoad {
            path: model_path.to_path_buf(),
            reason: format!("could not allocate decoder state: {e}"),
        })?;
        Ok(Transcriber {
            backend: Backend::InProcess { ctx, state },
            model_path: model_path.to_path_buf(),
            model_name: file_name(model_path),
            info,
            device: match speech_plan::BACKEND {
                Some(backend) if gpu => backend.into(),
                _ => "cpu".into(),
            },
            load_ms: ms_since(start),
            warmup_ms: None,
            abort: None,
            stop: None,
        })
    }

    /// Runs one short decode so the first real utterance does not pay for buffer allocation
    /// and cold caches. Returns the milliseconds spent.
    pub fn warm_up(&mut self, opts: &SttOptions) -> Result<f64> {
        // Half a second of faint noise: exercises encoder and decoder without producing text.
        let mut seed = 0x2545_f491_u32;
        let noise: Vec<f32> = (0..SAMPLE_RATE as usize / 2)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                (seed as f32 / u32::MAX as f32 - 0.5) * 1e-3
            })
            .collect();
        // The smallest window: every weight is touched and every buffer allocated, for a
        // fraction of a real utterance's cost.
        let opts = SttOptions {
            window: Some(Window { margin: 0, min: 64 }),
            ..opts.clone()
        };
        let (res, ms) = timed(|| self.decode(&noise, &opts, opts.window));
        res?;
        self.warmup_ms = Some(ms);
        Ok(ms)
    }

    /// Transcribes one utterance. With a sized window, a pass that is suspect by whisper's own
    /// signals or its text (`suspect.rs`: low confidence, a loop's compression ratio, words
    /// where whisper heard no speech, a stutter, a phrase said back to back), or that ended
    /// well before the audio, is redone with the full window (whisper's reference decode, with
    /// its temperature fallback), and the better of the two is kept (`suspect::keep_redo`).
    /// The redo costs a few hundred milliseconds; a stutter typed costs the user's words.
    ///
    /// A pass that can be stopped ([`Transcriber::set_abort`]: the live path's speculation)
    /// fails with [`GAVE_UP`] instead: a speculation is only a head start, the release
    /// transcribes its stretch anew anyway (and checks it the same way), and the redo would
    /// hold the worker just when the release comes.
    pub fn transcribe(&mut self, pcm: &[f32], opts: &SttOptions) -> Result<SttOutput> {
        let start = Instant::now();
        let first = self.decode(pcm, opts, opts.window)?;
        let why = if first.audio_ctx == 0 || self.abort_raised() {
            None
        } else {
            suspect(&first, pcm.len())
                .map(|s| s.to_string())
                .or_else(|| {
                    ended_early(&first, pcm.len())
                        .then(|| "the text ends over 2 s before the audio".to_string())
                })
        };
        let Some(why) = why else {
            return Ok(SttOutput {
                ms: ms_since(start),
                ..first
            });
        };
        if self.abort.is_some() {
            tracing::debug!(
                "window {} pass suspect ({why}); a speculation is dropped, not redone",
                first.audio_ctx,
            );
            return Err(Error::Transcribe(GAVE_UP.into()));
        }
        tracing::debug!(
            "window {} pass suspect ({why}); redoing with the full window",
            first.audio_ctx,
        );
        let second = self.decode(pcm, opts, None)?;
        let kept = if keep_redo(&first, &second, pcm.len()) {
            second
        } else {
            tracing::debug!("the full window's pass was no better; the first is kept");
            first
        };
        Ok(SttOutput {
            redone_full: true,
            suspect: Some(why),
            ms: ms_since(start),
            ..kept
        })
    }

    /// A flag that, once raised, stops the decode under way (checked between whisper's graph
    /// nodes, so within a few ms); the call then fails with [`ABORTED`]. Lower it before the
    /// next decode. Ignored by the worker-process backend.
    pub fn set_abort(&mut self, flag: Option<Arc<AtomicBool>>) {
        self.abort = flag;
    }

    /// A background pass's stop ([`Stop`]): once raised, the decode under way ends within a
    /// few ms and the call fails with [`STOPPED`] (see [`is_stopped`]). Ignored by the
    /// worker-process backend (a file on the GPU then yields between its pieces only).
    pub fn set_stop(&mut self, stop: Option<Stop>) {
        self.stop = stop;
    }

    /// True when the flag given to [`Transcriber::set_abort`] is raised.
    pub fn abort_raised(&self) -> bool {
        self.abort
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Why the worker process stopped, when the model ran in one that has.
    pub fn worker_stopped(&self) -> Option<&str> {
        match &self.backend {
            Backend::Worker(w) => w.stopped(),
            Backend::InProcess { .. } => None,
        }
    }

    /// True when the worker process was stopped for not answering in time (not a crash).
    pub fn worker_stalled(&self) -> bool {
        matches!(&self.backend, Backend::Worker(w) if w.stalled())
    }

    /// One decode with the given window (no redo of a suspect pass); also the worker's unit
    /// of work.
    pub(super) fn decode(
        &mut self,
        pcm: &[f32],
        opts: &SttOptions,
        window: Option<Window>,
    ) -> Result<SttOutput> {
        if opts.translate && self.info.is_english_only() {
            // The file's own vocabulary says so (whatever its name): refused here, at load
            // (the warm-up decodes with the same options) or at the utterance a profile
            // turned translation on for.
            return Err(Error::ModelLoad {
                path: self.model_path.clone(),
                reason: crate::config::stt::translate_refusal(&self.model_name),
            });
        }
        match &mut self.backend {
            Backend::InProcess { ctx, state } => {
                let eot = ctx.token_eot();
                let watch = Watch {
                    abort: self.abort.as_deref(),
                    stop: self.stop.as_ref(),
                };
                decode_in(state, eot, pcm, opts, window, watch)
            }
            Backend::Worker(w) => w.decode(pcm, opts, window),
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What may stop a decode: a live pass's abort flag, a background pass's stop.
#[derive(Clone, Copy, Default)]
struct Watch<'a> {
    abort: Option<&'a AtomicBool>,
    stop: Option<&'a Stop>,
}

/// What whisper's abort callback reads: what another thread raises, and which of them
/// actually stopped whisper (one raised after the last check leaves a finished decode).
struct AbortWatch<'a> {
    watch: Watch<'a>,
    aborted: AtomicBool,
    stopped: AtomicBool,
}

/// whisper's abort callback: true stops the decode. `data` is the `AbortWatch` given by
/// `decode_in`.
unsafe extern "C" fn abort_requested(data: *mut c_void) -> bool {
    // SAFETY: `decode_in` passes a pointer to an `AbortWatch` that outlives the decode.
    let watch = unsafe { &*(data as *const AbortWatch) };
    if watch.watch.abort.is_some_and(|f| f.load(Ordering::Relaxed)) {
        watch.aborted.store(true, Ordering::Relaxed);
        return true;
    }
    if watch.watch.stop.is_some_and(Stop::raised) {
        watch.stopped.store(true, Ordering::Relaxed);
        return true;
    }
    false
}

/// The message of a speculation whose sized window's pass was suspect: dropped, not redone
/// with the full window ([`Transcriber::transcribe`]).
pub const GAVE_UP: &str = "a speculation's sized window gave a suspect pass; dropped";

/// True when `e` is a decode stopped through [`Transcriber::set_abort`], or a speculation
/// dropped instead of redone ([`GAVE_UP`]): either way the pass left nothing to use and
/// nothing went wrong.
pub fn is_aborted(e: &Error) -> bool {
    matches!(e, Error::Transcribe(m) if m == ABORTED || m == GAVE_UP || m == STOPPED)
}

/// True when `e` is a decode stopped through [`Transcriber::set_stop`].
pub fn is_stopped(e: &Error) -> bool {
    matches!(e, Error::Transcribe(m) if m == STOPPED)
}

/// One whisper decode. `eot`: the end-of-text token; ids from it on are special tokens
/// (timestamps, language, task), left out of the confidence and the token count.
fn decode_in(
    state: &mut WhisperState,
    eot: i32,
    pcm: &[f32],
    opts: &SttOptions,
    window: Option<Window>,
    watch: Watch<'_>,
) -> Result<SttOutput> {
    let start = Instant::now();
    let audio_ctx = window.map_or(0, |w| audio_ctx_for(pcm.len(), w));
    // The full window is whisper's reference decode: greedy, and on a failed decode its
    // temperature fallback with 5 candidates, as whisper-cli does (the candidates cost only
    // when a decode fails). The sized window has no fallback (below).
    let best_of = if audio_ctx > 0 { 1 } else { 5 };
    let mut params = FullParams::new(SamplingStrategy::Greedy { best_of });
    let threads = if opts.adapt_threads {
        let (threads, others) = super::cpu_share::threads_for_pass(opts.threads);
        if threads < opts.threads {
            tracing::debug!(
                threads,
                others = format!("{others:.2}"),
                "whisper takes fewer threads: other work keeps cores busy"
            );
        }
        threads
    } else {
        opts.threads.max(1)
    };
    params.set_n_threads(threads as i32);
    let language = if opts.language == "auto" || opts.language.is_empty() {
        None
    } else {
        Some(opts.language.as_str())
    };
    params.set_language(language);
    params.set_detect_language(false);
    params.set_translate(opts.translate);
    params.set_no_context(true);
    params.set_print_progress(false);
    params.set_print_realtime(false);
    params.set_print_special(false);
    params.set_print_timestamps(false);
    params.set_suppress_blank(true);
    params.set_suppress_nst(true);
    params.set_temperature(0.0);
    params.set_audio_ctx(audio_ctx);
    params.set_max_tokens(max_tokens_for(pcm.len()));
    if audio_ctx > 0 {
        // Timestamp tokens are kept in the sized window: without them a window under ~768
        // frames makes whisper loop on its own output (corpus WER 71 % at 384 frames, 9.3 %
        // with them; examples/pass_cost.rs). No temperature fallback on the fast path: a
        // failed decode is caught by `suspect.rs` (or by ending early, see
        // `Transcriber::transcribe`) and redone once with the full window instead of up to
        // five times at rising temperatures.
        params.set_temperature_inc(0.0);
    }
    if !opts.initial_prompt.is_empty() {
        params.set_initial_prompt(&opts.initial_prompt);
    }
    // whisper.cpp needs at least ~1 s of audio; pad short clips with silence.
    let min = SAMPLE_RATE as usize + SAMPLE_RATE as usize / 10;
    let padded;
    let pcm = if pcm.len() < min {
        padded = [pcm, &vec![0.0; min - pcm.len()]].concat();
        &padded[..]
    } else {
        pcm
    };
    let watch = (watch.abort.is_some() || watch.stop.is_some()).then(|| AbortWatch {
        watch,
        aborted: AtomicBool::new(false),
        stopped: AtomicBool::new(false),
    });
    if let Some(w) = &watch {
        // SAFETY: `watch` outlives `state.full` below (it lives to the end of this call), and
        // the callback only touches it atomically.
        unsafe {
            params.set_abort_callback(Some(abort_requested));
            params.set_abort_callback_user_data(w as *const AbortWatch as *mut c_void);
        }
    }
    let done = state.full(params, pcm);
    if let Some(w) = &watch {
        if w.aborted.load(Ordering::Relaxed) {
            return Err(Error::Transcribe(ABORTED.into()));
        }
        if w.stopped.load(Ordering::Relaxed) {
            return Err(Error::Transcribe(STOPPED.into()));
        }
    }
    done.map_err(|e| Error::Transcribe(e.to_string()))?;
    let mut text = String::new();
    let mut no_speech_prob = 0.0f32;
    let mut end_ms = None;
    let mut segments: Vec<TimedText> = Vec::new();
    let (mut tokens, mut logprob_sum) = (0u32, 0.0f64);
    for segment in state.as_iter() {
        no_speech_prob = no_speech_prob.max(segment.no_speech_probability());
        for i in 0..segment.n_tokens() {
            let Some(token) = segment.get_token(i) else {
                continue;
            };
            let data = token.token_data();
            if data.id < eot {
                tokens += 1;
                logprob_sum += f64::from(data.plog);
            }
        }
        // Centiseconds.
        end_ms = u64::try_from(segment.end_timestamp()).ok().map(|t| t * 10);
        let piece = segment
            .to_str_lossy()
            .map_err(|e| Error::Transcribe(e.to_string()))?;
        let start = u64::try_from(segment.start_timestamp()).map_or(0, |t| t * 10);
        if !piece.trim().is_empty() {
            segments.push(TimedText {
                start_ms: start,
                end_ms: end_ms.unwrap_or(start).max(start),
                text: piece.trim().to_string(),
            });
        }
        text.push_str(&piece);
    }
    let lang_id = state.full_lang_id_from_state();
    let language = whisper_rs::get_lang_str(lang_id)
        .map(str::to_string)
        .unwrap_or_else(|| opts.language.clone());
    Ok(SttOutput {
        text: text.trim().to_string(),
        language,
        no_speech_prob,
        audio_ctx,
        redone_full: false,
        suspect: None,
        avg_logprob: (tokens > 0).then(|| (logprob_sum / f64::from(tokens)) as f32),
        tokens,
        end_ms,
        segments,
        ms: ms_since(start),
        threads,
    })
}
