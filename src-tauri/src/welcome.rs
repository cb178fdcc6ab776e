//! First run: the setup window (`welcome`) opens at start while no speech model is usable. It
//! recommends a model from the hardware `dictum doctor` sees (CPU cores, NVIDIA GPU and its free
//! VRAM, whether this build has CUDA), downloads it (the settings panel's resumable, checksummed
//! download) or imports a ggml `.bin` already on disk, then lets the user pick and try the
//! hotkey. Commands here are granted to the welcome window only (`capabilities/welcome.json`).

use crate::state::AppState;
use dictum_engine::gpu::{GpuProbe, GpuStatus, NvmlProbe};
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
    pub models: Vec<ModelChoice>,
    pub models_dir: String,
    pub hotkey: String,
}

/// Relative whisper cost per size (tiny = 1): encoder + decoder work, whisper.cpp on a CPU.
fn relative_cost(size: &str) -> f64 {
    match size {
        "tiny" => 1.0,
        "base" => 1.9,
        "small" => 5.5,
        "medium" => 15.0,
        _ => 12.0, // large-v3-turbo: large's encoder, 4 decoder layers
    }
}

/// Published WER (LibriSpeech test-clean) by size and language set.
fn published_wer(size: &str, english_only: bool) -> f64 {
    match (size, english_only) {
        ("tiny", true) => 5.6,
        ("tiny", false) => 7.6,
        ("base", true) => 4.2,
        ("base", false) => 5.0,
        ("small", true) => 3.1,
        ("small", false) => 3.4,
        ("medium", true) => 3.1,
        ("medium", false) => 2.9,
        _ => 2.7,
    }
}

/// Seconds of whisper time for 10 s of speech: tiny.en-q8_0 took 221 ms for jfk.wav (11 s) on
/// 8 threads (docs/PERFORMANCE.md), scaled by size and by the threads this machine has.
fn estimate(model: &CatalogModel, cores: usize) -> f64 {
    let threads = cores.clamp(1, 8) as f64;
    let quant = if model.quant.is_some() { 1.0 } else { 1.3 };
    0.2 * relative_cost(model.size) * quant * 8.0 / threads
}

/// The model to suggest, and why.
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

#[tauri::command]
pub async fn first_run_info(state: State<'_, AppState>) -> Res<FirstRunInfo> {
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
    let (recommended, reason) = recommend(cores, gpu_free, cuda_build, english);
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
            Some(ModelChoice {
                languages: if m.english_only {
                    "English"
                } else {
                    "99 languages"
                },
                est_sec_per_10s: estimate(m, cores),
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
        models: choices,
        models_dir: dir.display().to_string(),
        hotkey: config.dictation.hotkey.clone(),
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
