//! First run: the setup window (`welcome`) opens at start while no speech model is usable. It
//! recommends a model from this machine: once any model is installed, by timing real passes
//! with it (`first_run_info` with `measure`: the engine's `models::measure` and
//! `models::recommend`, the same rule as `dictum models recommend`); before that, from the
//! hardware `dictum doctor` sees (CPU cores, NVIDIA GPU and its free VRAM, whether this build has
//! CUDA), said to be unmeasured. It downloads the choice (the settings panel's resumable,
//! checksummed download) or imports a ggml `.bin` already on disk, then lets the user pick and
//! try the hotkey. Commands here are granted to the welcome window only
//! (`capabilities/welcome.json`).

use crate::state::AppState;
use dictum_engine::gpu::{GpuProbe, GpuStatus, NvmlProbe};
use dictum_engine::models::recommend::{
    published_wer, relative_cost, Basis, Recommendation, Targets,
};
use dictum_engine::models::{self, CatalogModel, ModelStatus};
use serde::Serialize;
use std::path::Path;
use tauri::State;

type Res<T> = Result<T, String>;

/// One catalog model with what the setup window shows about it.
#[derive(Serialize, Clone)]
pub struct ModelChoice {
    #[serde(flatten)]
    pub status: ModelStatus,
    /// "English" or "99 languages".
    pub languages: &'static str,
    /// Estimated seconds of whisper time for 10 s of speech on this machine's CPU.
    pub est_sec_per_10s: f64,
    /// Published word error rate (LibriSpeech test-clean, Whisper paper; turbo: OpenAI's
    /// statement that it is close to large-v2), in percent.
    pub wer_pct: f64,
    /// From the timing, when there was one: predicted key-up → text p95 (ms) for a 10 s
    /// dictation, file real-time factor, and where the figures come from ("measured", or
    /// "estimate from tiny.en-q8_0 × 1.9").
    pub release_p95_ms: Option<f64>,
    pub file_rtf: Option<f64>,
    pub basis: Option<String>,
}

#[derive(Serialize)]
pub struct FirstRunInfo {
    /// `0.1.0 (CPU)`: the version and build features, as `dictum --version` says them.
    pub version: String,
    pub cores: usize,
    /// The GPU as the planner sees it, e.g. "NVIDIA H100 80GB, 79.1 GiB free", or why none.
    pub gpu: String,
    pub cuda_build: bool,
    /// A usable model is configured and present (the setup can be closed).
    pub model_ready: bool,
    pub recommended: String,
    pub reason: String,
    /// The recommendation comes from timing installed models on this machine (else from the
    /// core count and GPU, unmeasured).
    pub measured: bool,
    /// What the timing did or why there was none (models timed, load average, skipped ones).
    pub measure_note: String,
    pub models: Vec<ModelChoice>,
    pub models_dir: String,
    pub hotkey: String,
    /// The microphone a dictation opens, as the desktop names it (`[dictation]
    /// input_device`, or the audio server's default source), or why it is unknown.
    pub microphone: String,
    /// Set when it is a Bluetooth headset's: what keeping it open costs, in the words of
    /// `[dictation] microphone` (the engine's `bluetooth_tradeoff`, as `dictum doctor` says
    /// it).
    pub bluetooth_note: Option<String>,
    /// `[dictation] microphone` ("auto", "always", "on_demand").
    pub microphone_mode: String,
}

/// The microphone line of the setup window: which input, and the Bluetooth trade-off when it
/// is a headset's. Asked of the audio server (a few ms; bounded so a frozen server cannot
/// hold the window).
async fn microphone_line(
    d: &dictum_engine::config::dictation::DictationConfig,
) -> (String, Option<String>) {
    use dictum_engine::audio::mic_policy::bluetooth_tradeoff;
    let configured = d.input_device.clone();
    let asked = tauri::async_runtime::spawn_blocking(move || {
        dictum_engine::audio::capture::dictation_input(&configured)
    });
    let found = match tokio::time::timeout(std::time::Duration::from_secs(2), asked).await {
        Ok(Ok(found)) => found,
        Ok(Err(e)) => Err(format!("the question failed: {e}")),
        Err(_) => Err("the audio server did not answer within 2 s".to_string()),
    };
    match found {
        Ok(i) => {
            let note = i.bluetooth.then(|| {
                bluetooth_tradeoff(
                    dictum_engine::dictation::microphone::mic_mode(d),
                    &i.description,
                )
            });
            (i.description, note)
        }
        Err(why) => (format!("not known yet ({why})"), None),
    }
}

/// Seconds of whisper time for 10 s of speech: tiny.en-q8_0 took 221 ms for jfk.wav (11 s) on
/// 8 threads (docs/PERFORMANCE.md), scaled by size and by the threads this machine has.
fn estimate(model: &CatalogModel, cores: usize) -> f64 {
    let threads = cores.clamp(1, 8) as f64;
    let quant = if model.quant.is_some() { 1.0 } else { 1.3 };
    0.2 * relative_cost(model.size) * quant * 8.0 / threads
}

/// The model to suggest without a timing (no model installed yet), and why.
pub fn recommend(
    cores: usize,
    gpu_free: Option<u64>,
    cuda_build: bool,
    english: bool,
) -> (String, String) {
    // The planner's need for the turbo q8_0 file plus the CUDA runtime (docs/GPU.md: 720 MiB).
    let turbo_bytes =
        models::find("large-v3-turbo-q8_0").map_or(u64::MAX / 4, |m| m.published.bytes);
    let turbo_need = dictum_engine::gpu::planner::need_bytes(turbo_bytes) + 720 * 1024 * 1024;
    if let Some(free) = gpu_free {
        if cuda_build && free >= turbo_need {
            return (
                "large-v3-turbo-q8_0".into(),
                format!(
                    "your NVIDIA GPU has {:.1} GiB free: the most accurate model runs fast there",
                    free as f64 / 1_073_741_824.0
                ),
            );
        }
    }
    let (name, why) = if cores >= 8 {
        (
            "small",
            format!("{cores} CPU cores: a small model answers in about a second"),
        )
    } else if cores >= 4 {
        (
            "base",
            format!("{cores} CPU cores: base is accurate and still quick"),
        )
    } else {
        (
            "tiny",
            format!("{cores} CPU cores: the tiny model keeps dictation under a second"),
        )
    };
    let name = if english {
        format!("{name}.en-q8_0")
    } else {
        format!("{name}-q8_0")
    };
    let why = match gpu_free {
        Some(_) if !cuda_build => {
            format!(
                "{why} (this build runs speech on the CPU; the dictum-cuda package uses the GPU)"
            )
        }
        _ => why,
    };
    (name, why)
}

/// The configured model resolves where dictation looks for it (`$DICTUM_MODELS_DIR`, then the
/// models folder: `paths::model_dirs`, as the pipeline and `dictum doctor` do).
fn model_ready(state: &AppState) -> bool {
    match dictum_engine::paths::model_dirs() {
        Ok(dirs) => models::resolve(&state.config().stt.model, &dirs).is_ok(),
        Err(_) => false,
    }
}

/// Whether the setup window should open at start: no usable model.
pub fn needed(state: &AppState) -> bool {
    !model_ready(state)
}

/// Times the installed models (the cheap ones: see `models::measure::measure_installed`) and
/// recommends from the figures. `None` with the reason when nothing could be timed. `on_model`
/// hears each model's name before it is timed. Also the settings panel's "Measure again"
/// (`remeasure.rs`).
pub(crate) fn measured_recommendation(
    config: &dictum_engine::config::Config,
    on_model: &mut dyn FnMut(&str),
) -> (Option<Recommendation>, String) {
    let dirs = match dictum_engine::paths::model_dirs() {
        Ok(d) => d,
        Err(e) => return (None, format!("not measured: {e}")),
    };
    let targets = Targets {
        commit_min_s: f64::from(config.dictation.commit_min_ms) / 1000.0,
        ..Targets::default()
    };
    let outcome =
        match models::measure::measure_installed(config, &dirs, &targets, 3, &[], on_model) {
            Ok(o) => o,
            Err(e) => return (None, format!("not measured: {e}")),
        };
    let english = config.stt.language == "en";
    let rec =
        models::recommend::recommend(&outcome.measurements, &outcome.installed, english, &targets);
    let mut note = if outcome.measurements.is_empty() {
        "not measured yet: no model is installed to time; download one (the smallest is quick) and measure".to_string()
    } else {
        format!(
            "timed here on {}: {}",
            outcome.measurements[0].device,
            outcome
                .measurements
                .iter()
                .map(|m| format!(
                    "{} {:.0} ms per second of audio",
                    m.model,
                    m.long.ms_per_audio_s()
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if let (Some(before), Some(after)) = (outcome.load_before, outcome.load_after) {
        note.push_str(&format!(" (load average {before:.1} → {after:.1})"));
    }
    for (name, why) in &outcome.skipped {
        note.push_str(&format!("; {name}: {why}"));
    }
    (rec, note)
}

/// Hardware, catalog and the recommendation. With `measure`, the installed models are timed
/// first (seconds per model; the window asks without it first so it opens at once).
#[tauri::command]
pub async fn first_run_info(
    state: State<'_, AppState>,
    measure: Option<bool>,
) -> Res<FirstRunInfo> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cuda_build = dictum_engine::BUILD_FEATURES == "CUDA";
    let (gpu, gpu_free) = match NvmlProbe.probe() {
        GpuStatus::Gpus { gpus } if !gpus.is_empty() => {
            let g = &gpus[0];
            (
                format!(
                    "{}, {:.1} GiB free",
                    g.name,
                    g.free_bytes as f64 / 1_073_741_824.0
                ),
                Some(g.free_bytes),
            )
        }
        GpuStatus::NoGpu { reason } => (format!("none — {reason}"), None),
        GpuStatus::Error { message } => (format!("not usable now — {message}"), None),
        GpuStatus::Gpus { .. } => ("none".to_string(), None),
    };
    let config = state.config();
    let english = config.stt.language == "en";
    let (measured, measure_note) = if measure.unwrap_or(false) {
        let c = config.clone();
        // One timing at a time, this window's or the settings panel's (`remeasure.rs`).
        tauri::async_runtime::spawn_blocking(move || {
            match crate::remeasure::Busy::claim(&crate::remeasure::MEASURING) {
                Ok(_busy) => measured_recommendation(&c, &mut |name| {
                    tracing::info!("welcome: timing {name}")
                }),
                Err(why) => (None, format!("not measured: {why}")),
            }
        })
        .await
        .map_err(|e| format!("the timing stopped: {e}"))?
    } else {
        (
            None,
            "not measured yet: the recommendation is from the core count".to_string(),
        )
    };
    let (recommended, reason) = match &measured {
        Some(rec) => (rec.model.clone(), rec.reason.clone()),
        None => recommend(cores, gpu_free, cuda_build, english),
    };
    let (microphone, bluetooth_note) = microphone_line(&config.dictation).await;
    let dir = state.models_dir()?;
    let statuses = models::catalog(&dir, &config.stt.model);
    let choices = statuses
        .into_iter()
        .filter_map(|s| {
            let m = models::find(&s.name)?;
            // The setup offers the q8_0 files (half the size, same transcripts) and what is
            // already installed; the settings panel lists every variant.
            if m.quant != Some("q8_0") && !s.installed && s.name != recommended {
                return None;
            }
            let row = measured
                .as_ref()
                .and_then(|r| r.rows.iter().find(|row| row.model == s.name));
            Some(ModelChoice {
                release_p95_ms: row.map(|r| r.release_p95_ms),
                file_rtf: row.map(|r| r.file_rtf),
                basis: row.map(|r| match &r.basis {
                    Basis::Measured => "measured".to_string(),
                    Basis::Estimated { from, factor } => format!("estimate from {from} × {factor}"),
                }),
                languages: if m.english_only {
                    "English"
                } else {
                    "99 languages"
                },
                // The timing's figure when there is one (a 10 s dictation's whisper time).
                est_sec_per_10s: row
                    .map_or_else(|| estimate(m, cores), |r| r.ms_per_audio_s / 100.0),
                wer_pct: published_wer(m.size, m.english_only),
                status: s,
            })
        })
        .collect();
    Ok(FirstRunInfo {
        version: format!(
            "{} ({})",
            env!("CARGO_PKG_VERSION"),
            dictum_engine::BUILD_FEATURES
        ),
        cores,
        gpu,
        cuda_build,
        model_ready: model_ready(&state),
        recommended,
        reason,
        measured: measured.is_some(),
        measure_note,
        models: choices,
        models_dir: dir.display().to_string(),
        hotkey: config.dictation.hotkey.clone(),
        microphone,
        bluetooth_note,
        microphone_mode: config.dictation.microphone.as_str().to_string(),
    })
}

/// Imports a whisper model file already on disk (offline machines): checks its structure,
/// copies it into the models folder (same file name) and makes it the default.
#[tauri::command]
pub async fn import_model(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    path: String,
) -> Res<String> {
    let src = Path::new(path.trim());
    if !src.is_absolute() {
        return Err(
            "give the model file's full path, e.g. /home/me/Downloads/ggml-base.en.bin".into(),
        );
    }
    dictum_engine::stt::check_model_file(src)
        .map_err(|e| format!("{} is not a whisper ggml model: {e}", src.display()))?;
    let name = src
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.ends_with(".bin") && !n.starts_with('.'))
        .ok_or_else(|| format!("{} is not a .bin file", src.display()))?
        .to_string();
    let dir = state.models_dir()?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let dest = dir.join(&name);
    if dest != src {
        let tmp = dir.join(format!("{name}.import"));
        std::fs::copy(src, &tmp)
            .and_then(|_| std::fs::rename(&tmp, &dest))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("cannot copy the model into {}: {e}", dir.display())
            })?;
    }
    // A catalog file name is stored by its catalog name, anything else by its file name.
    let chosen = models::CATALOG
        .iter()
        .find(|m| m.file == name)
        .map_or(name.clone(), |m| m.name.to_string());
    let mut config = state.config();
    config.stt.model = crate::commands::checked_model_choice(&chosen, &dir)?;
    crate::commands::save(&app, &state, config)?;
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recommendation_follows_the_hardware() {
        assert_eq!(recommend(2, None, false, true).0, "tiny.en-q8_0");
        assert_eq!(recommend(4, None, false, false).0, "base-q8_0");
        assert_eq!(recommend(16, None, false, true).0, "small.en-q8_0");
        let gib = 1_073_741_824;
        assert_eq!(
            recommend(16, Some(20 * gib), true, true).0,
            "large-v3-turbo-q8_0"
        );
        // A GPU too full for turbo, or a CPU-only build: the CPU choice, and the reason says why.
        assert_eq!(recommend(2, Some(gib / 2), true, true).0, "tiny.en-q8_0");
        let (name, why) = recommend(2, Some(20 * gib), false, true);
        assert_eq!(name, "tiny.en-q8_0");
        assert!(why.contains("dictum-cuda"), "{why}");
        for (name, _) in [
            recommend(2, None, false, true),
            recommend(16, Some(20 * gib), true, false),
        ] {
            assert!(
                models::find(&name).is_some(),
                "{name} is not in the catalog"
            );
        }
    }

    #[test]
    fn estimates_grow_with_size_and_shrink_with_cores() {
        let tiny = models::find("tiny.en-q8_0").unwrap();
        let small = models::find("small.en-q8_0").unwrap();
        assert!(estimate(small, 2) > estimate(tiny, 2));
        assert!(estimate(tiny, 8) < estimate(tiny, 2));
        assert!((estimate(tiny, 8) - 0.2).abs() < 1e-9);
    }
}
