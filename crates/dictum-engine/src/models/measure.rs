//! Timing installed models on this machine for the model choice (`recommend.rs`): each model is
//! loaded where the speech plan puts it (`gpu::speech_plan`: the GPU in a CUDA or Vulkan build
//! with room, else the CPU),
//! warmed up, and times real passes over two clips of real read speech compiled into the
//! engine (`assets/speech-3s.wav`, `assets/speech-7s.wav`), trimmed by the VAD as every
//! utterance is: 3.0 s (a release's tail; the VAD keeps its padding) and the two with 0.4 s
//! between, 10.4 s (a dictation). Nothing here needs the test assets or the network.
//! (The same 1.1 s clip said again and again made whisper loop: it wrote the phrase more often
//! than it was said, and the pass cost whatever the loop cost.)

use super::recommend::{Measurement, Pass};
use crate::config::{AudioCtxMode, Config};
use crate::gpu::speech_plan;
use crate::stt::{SttOptions, Transcriber, Window};
use crate::{Error, Result, SAMPLE_RATE};
use std::path::Path;
use std::time::Instant;

/// Speech clips to time passes over.
pub struct Clips {
    /// A few seconds: what is left to transcribe at a release.
    pub tail: Vec<f32>,
    /// ~10 s: a dictation, and the file path's cost per second.
    pub long: Vec<f32>,
}

const SPEECH_3S: &[u8] = include_bytes!("../../assets/speech-3s.wav");
const SPEECH_7S: &[u8] = include_bytes!("../../assets/speech-7s.wav");

fn decode(wav: &[u8]) -> Result<Vec<f32>> {
    let reader = hound::WavReader::new(std::io::Cursor::new(wav))
        .map_err(|e| Error::Transcribe(format!("a built-in timing clip is unreadable: {e}")))?;
    reader
        .into_samples::<i16>()
        .map(|s| s.map(|v| f32::from(v) / 32768.0))
        .collect::<std::result::Result<Vec<f32>, _>>()
        .map_err(|e| Error::Transcribe(format!("a built-in timing clip is unreadable: {e}")))
}

/// What whisper is given of `pcm`: the speech the VAD keeps, as for every utterance (untrimmed,
/// tiny.en looped on the 3 s clip's silence: "old-s-s-y-y-y…", then redid it with the full
/// window, three times the cost of the real pass).
fn trimmed(pcm: Vec<f32>) -> Vec<f32> {
    let vad = crate::vad::analyze(
        &pcm,
        &crate::config::VadConfig::default(),
        crate::vad::Detector::Earshot,
    );
    if vad.no_speech || vad.keep.is_empty() {
        return pcm;
    }
    pcm[vad.keep].to_vec()
}

/// The built-in clips, trimmed by the VAD: 3.0 s of speech, and 10.4 s (the 3.0 s clip, 0.4 s
/// of silence, the 7.1 s clip).
pub fn builtin_clips() -> Result<Clips> {
    let short = decode(SPEECH_3S)?;
    let mut long = short.clone();
    long.extend(std::iter::repeat_n(0.0f32, SAMPLE_RATE as usize * 2 / 5));
    long.extend(decode(SPEECH_7S)?);
    Ok(Clips {
        tail: trimmed(short),
        long: trimmed(long),
    })
}

/// The decode options dictation uses (the config's language, threads and window; no
/// vocabulary, which costs the same).
pub fn stt_options(config: &Config) -> SttOptions {
    SttOptions {
        language: config.stt.language.clone(),
        threads: config.threads(),
        window: match config.stt.audio_ctx {
            AudioCtxMode::Auto => Some(Window {
                margin: config.stt.audio_ctx_margin,
                min: config.stt.audio_ctx_min,
            }),
            AudioCtxMode::Full => None,
        },
        initial_prompt: String::new(),
        translate: false,
        adapt_threads: config.stt.adapt_threads,
    }
}

/// Whether the planner puts the model at `path` on the GPU (as `Engine::plan_for` decides).
fn plan_gpu(config: &Config, path: &Path) -> bool {
    speech_plan::plan(
        config.stt.use_gpu,
        &config.stt.model,
        std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        0,
    )
    .on_gpu()
}

/// The fastest run: other programs on the machine only ever add time to a pass, so the
/// fastest is the machine's own cost (the report gives the load average beside it).
fn fastest(v: &[f64]) -> f64 {
    v.iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .min(f64::MAX)
}

/// Loads `path` (catalog name `name`), warms it up and times `runs` passes over each clip
/// (the fastest counts). A model the GPU refuses is measured on the CPU.
pub fn measure(
    config: &Config,
    name: &str,
    path: &Path,
    clips: &Clips,
    runs: usize,
) -> Result<Measurement> {
    let opts = stt_options(config);
    let gpu = plan_gpu(config, path);
    let mut t = match Transcriber::load(path, gpu) {
        Ok(t) => t,
        Err(e) if gpu => {
            tracing::warn!("{name} did not load on the GPU ({e}); measuring it on the CPU");
            Transcriber::load_in_process(path, false)?
        }
        Err(e) => return Err(e),
    };
    t.warm_up(&opts)?;
    let mut time = |pcm: &[f32]| -> Result<Pass> {
        let mut times = Vec::with_capacity(runs.max(1));
        for _ in 0..runs.max(1) {
            let start = Instant::now();
            t.transcribe(pcm, &opts)?;
            times.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        Ok(Pass {
            audio_ms: pcm.len() as f64 * 1000.0 / SAMPLE_RATE as f64,
            ms: fastest(&times),
        })
    };
    let tail = time(&clips.tail)?;
    let long = time(&clips.long)?;
    Ok(Measurement {
        model: name.to_string(),
        device: t.device.clone(),
        threads: opts.threads,
        tail,
        long,
    })
}

/// Every installed catalog model the language admits, smallest first, found in `dirs` (the
/// first folder holding it wins).
pub fn installed(dirs: &[std::path::PathBuf], english: bool) -> Vec<(String, std::path::PathBuf)> {
    super::CATALOG
        .iter()
        .filter(|m| english || !m.english_only)
        .filter_map(|m| {
            dirs.iter()
                .map(|d| d.join(m.file))
                .find(|p| p.is_file())
                .map(|p| (m.name.to_string(), p))
        })
        .collect()
}

/// What [`measure_installed`] did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Outcome {
    pub measurements: Vec<Measurement>,
    /// Installed models not timed, and why (too slow to be worth it, or failed to load).
    pub skipped: Vec<(String, String)>,
    /// Every installed catalog model the language admits.
    pub installed: Vec<String>,
    /// The 1-minute load average before and after the timing (Linux), so a reader knows whether
    /// other programs competed for the CPU.
    pub load_before: Option<f64>,
    pub load_after: Option<f64>,
}

/// The 1-minute load average (`/proc/loadavg`), where there is one.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Times the installed models the language admits, cheapest first (`only`: just these, each
/// timed). Otherwise a model whose estimate from those already timed is over three times the
/// release target is not loaded (a medium model on two cores would take minutes); its row stays
/// an estimate.
/// `on_model` hears each model's name before it is timed.
pub fn measure_installed(
    config: &Config,
    dirs: &[std::path::PathBuf],
    targets: &super::recommend::Targets,
    runs: usize,
    only: &[String],
    on_model: &mut dyn FnMut(&str),
) -> Result<Outcome> {
    let english = config.stt.language == "en";
    let mut found = installed(dirs, english);
    let cost = |name: &str| {
        super::find(name).map_or(f64::MAX, |m| super::recommend::relative_cost(m.size))
    };
    found.sort_by(|a, b| {
        cost(&a.0)
            .partial_cmp(&cost(&b.0))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut out = Outcome {
        installed: found.iter().map(|(n, _)| n.clone()).collect(),
        load_before: load_average(),
        ..Outcome::default()
    };
    let clips = builtin_clips()?;
    for (name, path) in &found {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        // A model the user named is timed whatever its estimate.
        let estimate = if only.is_empty() {
            super::recommend::recommend(&out.measurements, &out.installed, english, targets)
                .and_then(|r| r.rows.into_iter().find(|r| &r.model == name))
        } else {
            None
        };
        if let Some(est) = estimate.filter(|r| r.release_p95_ms > 3.0 * targets.release_p95_ms) {
            out.skipped.push((
                name.clone(),
                format!(
                    "not timed: estimated at {:.0} ms at the release, over three times the target",
                    est.release_p95_ms
                ),
            ));
            continue;
        }
        on_model(name);
        match measure(config, name, path, &clips, runs) {
            Ok(m) => out.measurements.push(m),
            Err(e) => out
                .skipped
                .push((name.clone(), format!("could not be timed: {e}"))),
        }
    }
    out.load_after = load_average();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_clips_are_a_tail_and_a_dictation() {
        let c = builtin_clips().expect("clips");
        let secs = |v: &[f32]| v.len() as f64 / SAMPLE_RATE as f64;
        // Trimmed by the VAD: shorter than the files (3.0 s; 10.5 s), most of them kept.
        assert!((2.0..3.0).contains(&secs(&c.tail)), "{}", secs(&c.tail));
        assert!((8.5..10.5).contains(&secs(&c.long)), "{}", secs(&c.long));
        assert!(c.long.iter().any(|s| s.abs() > 0.05), "speech, not silence");
    }
}
