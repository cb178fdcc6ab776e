//! The VRAM planner: decides, before the speech model loads (and on every model or backend
//! change), whether it goes on the GPU, which tier, or the CPU, and says why.
//!
//! Budget = `budget_share` of the card's VRAM, minus what the LLM keeps resident (Ollama's
//! `/api/ps` `size_vram`) and what other processes hold, never more than is free. A model fits
//! when its file size plus an activation margin is within budget. The LLM is never planned out:
//! its resident memory is subtracted first.

use super::{GpuSnapshot, GpuStatus};
use serde::Serialize;

const MIB: u64 = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tier {
    pub name: String,
    pub file_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanSettings {
    /// Share of total VRAM Dictum and the LLM together may plan for (default 0.7).
    pub budget_share: f64,
    pub use_gpu: bool,
    /// Whether this binary was built with the `cuda` feature.
    pub cuda_built: bool,
}

impl Default for PlanSettings {
    fn default() -> Self {
        PlanSettings {
            budget_share: 0.7,
            use_gpu: true,
            cuda_built: cfg!(feature = "cuda"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// "cpu", "cuda:N" or "vulkan:N".
    pub device: String,
    /// The model tier to load.
    pub model: String,
    pub reason: String,
    pub budget_bytes: Option<u64>,
    pub need_bytes: Option<u64>,
}

impl Plan {
    pub fn on_gpu(&self) -> bool {
        self.device.starts_with("cuda") || self.device.starts_with("vulkan")
    }
}

/// What the CUDA runtime takes in the process before any model: the context, cuBLAS's handle
/// and workspace, ggml's kernels. Measured on an H100 80 GB (driver 580, CUDA 13.0; the GPU
/// otherwise empty): the whole process held 933 MiB with tiny.en-q8_0 and 997 MiB with
/// base-q8_0, of which weights + buffers (below) explain 244 and 290 MiB: 689 and 708 MiB
/// are the runtime. Contexts are smaller on GPUs with fewer SMs, so this errs on the safe side.
pub const CUDA_RUNTIME_BYTES: u64 = 720 * MIB;

/// VRAM a whisper model needs on a GPU: the CUDA runtime, the weights, and compute buffers
/// (KV cache, encoder activations), which grow with the model; 25 % + 192 MiB covers
/// whisper.cpp's buffers up to large-v3.
pub fn need_bytes(file_bytes: u64) -> u64 {
    CUDA_RUNTIME_BYTES + file_bytes + file_bytes / 4 + 192 * MIB
}

/// What the planner may spend on `gpu`, given the LLM's resident bytes.
pub fn budget_bytes(gpu: &GpuSnapshot, share: f64, llm_resident_bytes: u64) -> u64 {
    let llm = llm_resident_bytes.max(gpu.ollama_bytes);
    let others = gpu
        .used_bytes
        .saturating_sub(gpu.this_process_bytes)
        .saturating_sub(llm);
    let share_budget = ((gpu.total_bytes as f64 * share) as u64)
        .saturating_sub(llm)
        .saturating_sub(others);
    let reachable = gpu.free_bytes + gpu.this_process_bytes;
    share_budget.min(reachable)
}

/// Picks device and tier. `tiers` is the configured model first, then acceptable fallbacks
/// (smaller or more quantized), best first.
pub fn plan(
    settings: &PlanSettings,
    status: &GpuStatus,
    llm_resident_bytes: u64,
    tiers: &[Tier],
) -> Plan {
    let preferred = tiers.first().map(|t| t.name.clone()).unwrap_or_default();
    let cpu = |reason: String| Plan {
        device: "cpu".into(),
        model: preferred.clone(),
        reason,
        budget_bytes: None,
        need_bytes: None,
    };
    if !settings.cuda_built {
        return cpu(
            "this build has no CUDA support (rebuild with `--features cuda` to use an NVIDIA GPU)"
                .into(),
        );
    }
    if !settings.use_gpu {
        return cpu("stt.use_gpu = false in the config".into());
    }
    let gpu = match status {
        GpuStatus::NoGpu { reason } => return cpu(reason.clone()),
        GpuStatus::Error { message } => {
            return cpu(format!(
                "{message}; using the CPU until the GPU answers again"
            ))
        }
        GpuStatus::Gpus { gpus } => match gpus.iter().max_by_key(|g| g.free_bytes) {
            Some(g) => g,
            None => return cpu("no NVIDIA GPU".into()),
        },
    };
    let budget = budget_bytes(gpu, settings.budget_share, llm_resident_bytes);
    for (i, tier) in tiers.iter().enumerate() {
        let need = need_bytes(tier.file_bytes);
        if need <= budget {
            let reason = if i == 0 {
                format!(
                    "{} needs {} MiB, budget {} MiB on {}",
                    tier.name,
                    need / MIB,
                    budget / MIB,
                    gpu.name
                )
            } else {
                format!(
                    "{} needs {} MiB but the budget is {} MiB on {} (LLM resident {} MiB); using the smaller tier {} ({} MiB)",
                    preferred,
                    need_bytes(tiers[0].file_bytes) / MIB,
                    budget / MIB,
                    gpu.name,
                    llm_resident_bytes.max(gpu.ollama_bytes) / MIB,
                    tier.name,
                    need / MIB
                )
            };
            return Plan {
                device: format!("cuda:{}", gpu.index),
                model: tier.name.clone(),
                reason,
                budget_bytes: Some(budget),
                need_bytes: Some(need),
            };
        }
    }
    let need = tiers.first().map(|t| need_bytes(t.file_bytes));
    Plan {
        budget_bytes: Some(budget),
        need_bytes: need,
        ..cpu(format!(
            "no model tier fits the GPU budget of {} MiB on {} (LLM resident {} MiB); speech runs on the CPU",
            budget / MIB,
            gpu.name,
            llm_resident_bytes.max(gpu.ollama_bytes) / MIB
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{pressure, GpuProbe, Pressure};

    const GIB: u64 = 1024 * MIB;

    /// A fake NVML: returns what the scenario says.
    struct FakeProbe(GpuStatus);
    impl GpuProbe for FakeProbe {
        fn probe(&self) -> GpuStatus {
            self.0.clone()
        }
    }

    fn card(total: u64, used: u64, ollama: u64) -> GpuStatus {
        GpuStatus::Gpus {
            gpus: vec![GpuSnapshot {
                index: 0,
                name: format!("Test GPU {} GB", total / GIB),
                driver: "999.1".into(),
                total_bytes: total,
                used_bytes: used,
                free_bytes: total - used,
                this_process_bytes: 0,
                ollama_bytes: ollama,
                processes: vec![],
            }],
        }
    }

    fn tier(name: &str, mib: u64) -> Tier {
        Tier {
            name: name.into(),
            file_bytes: mib * MIB,
        }
    }

    fn gpu_settings() -> PlanSettings {
        PlanSettings {
            budget_share: 0.7,
            use_gpu: true,
            cuda_built: true,
        }
    }

    #[test]
    fn scenarios() {
        let big = tier("large-v3", 3686); // the 3.6 GB model from the field report
        let turbo = tier("large-v3-turbo", 1624);
        let turbo_q8 = tier("large-v3-turbo-q8_0", 874);
        let small_q8 = tier("small.en-q8_0", 252);
        struct Case {
            name: &'static str,
            status: GpuStatus,
            llm: u64,
            tiers: Vec<Tier>,
            device: &'static str,
            model: &'static str,
            reason_has: &'static str,
        }
        let cases = vec![
            Case {
                name: "4 GB card, 3.6 GB model, no fallback tier",
                status: card(4 * GIB, 300 * MIB, 0),
                llm: 0,
                tiers: vec![big.clone()],
                device: "cpu",
                model: "large-v3",
                reason_has: "no model tier fits",
            },
            Case {
                name: "4 GB card, 3.6 GB model, quantized tier available",
                status: card(4 * GIB, 300 * MIB, 0),
                llm: 0,
                tiers: vec![big.clone(), turbo_q8.clone(), small_q8.clone()],
                device: "cuda:0",
                model: "large-v3-turbo-q8_0",
                reason_has: "smaller tier",
            },
            Case {
                name: "8 GB card shared with a 4.3 GB resident LLM",
                status: card(8 * GIB, 4403 * MIB, 4403 * MIB),
                llm: 4403 * MIB,
                tiers: vec![turbo.clone(), turbo_q8.clone(), small_q8.clone()],
                device: "cuda:0",
                // 70 % of 8 GiB − 4403 MiB = 1331 MiB; turbo-q8_0 needs 2004 MiB with the CUDA
                // runtime, small.en-q8_0 1227 MiB.
                model: "small.en-q8_0",
                reason_has: "LLM resident 4403 MiB",
            },
            Case {
                name: "24 GB card",
                status: card(24 * GIB, 1024 * MIB, 0),
                llm: 4403 * MIB,
                tiers: vec![big.clone(), turbo_q8.clone()],
                device: "cuda:0",
                model: "large-v3",
                reason_has: "budget",
            },
            Case {
                name: "no GPU",
                status: GpuStatus::NoGpu {
                    reason: "no NVIDIA GPU (the NVIDIA driver's NVML library is not installed)"
                        .into(),
                },
                llm: 0,
                tiers: vec![small_q8.clone()],
                device: "cpu",
                model: "small.en-q8_0",
                reason_has: "no NVIDIA GPU",
            },
            Case {
                name: "NVML error mid-run",
                status: GpuStatus::Error {
                    message: "NVML could not read GPU 0: Unknown".into(),
                },
                llm: 0,
                tiers: vec![small_q8.clone()],
                device: "cpu",
                model: "small.en-q8_0",
                reason_has: "using the CPU",
            },
        ];
        for c in cases {
            let status = FakeProbe(c.status).probe();
            let p = plan(&gpu_settings(), &status, c.llm, &c.tiers);
            assert_eq!(p.device, c.device, "{}: {p:?}", c.name);
            assert_eq!(p.model, c.model, "{}: {p:?}", c.name);
            assert!(p.reason.contains(c.reason_has), "{}: {}", c.name, p.reason);
            if p.on_gpu() {
                // The plan leaves the LLM where it is.
                let budget = p.budget_bytes.unwrap_or(0);
                assert!(p.need_bytes.unwrap_or(u64::MAX) <= budget, "{}", c.name);
            }
        }
    }

    #[test]
    fn need_covers_what_an_h100_measured() {
        // Whole-process VRAM measured with the cuda build (docs/PERFORMANCE.md).
        for (file_bytes, measured_mib) in [(43_550_778, 933), (81_768_585, 997)] {
            let need = need_bytes(file_bytes) / MIB;
            assert!(
                (measured_mib..measured_mib + 64).contains(&need),
                "{file_bytes}: {need}"
            );
        }
    }

    #[test]
    fn the_llm_is_never_planned_out() {
        // 8 GB card, LLM holds 5.5 GB: 70 % of 8 GB minus 5.5 GB leaves nothing for speech.
        let status = card(8 * GIB, 5632 * MIB, 5632 * MIB);
        let p = plan(
            &gpu_settings(),
            &status,
            5632 * MIB,
            &[tier("tiny.en-q8_0", 42)],
        );
        assert_eq!(p.device, "cpu", "{p:?}");
    }

    #[test]
    fn builds_without_cuda_or_with_gpu_disabled_plan_cpu() {
        let status = card(24 * GIB, 0, 0);
        let tiers = [tier("base-q8_0", 78)];
        let no_cuda = PlanSettings {
            cuda_built: false,
            ..gpu_settings()
        };
        assert!(plan(&no_cuda, &status, 0, &tiers)
            .reason
            .contains("--features cuda"));
        let off = PlanSettings {
            use_gpu: false,
            ..gpu_settings()
        };
        assert_eq!(plan(&off, &status, 0, &tiers).device, "cpu");
    }

    #[test]
    fn pressure_levels() {
        let GpuStatus::Gpus { gpus } = card(10 * GIB, 6 * GIB, 0) else {
            unreachable!()
        };
        assert_eq!(pressure(&gpus[0], 0.7, 0.85), Pressure::Ok);
        let GpuStatus::Gpus { gpus } = card(10 * GIB, 8 * GIB, 0) else {
            unreachable!()
        };
        assert_eq!(pressure(&gpus[0], 0.7, 0.85), Pressure::Warn);
        let GpuStatus::Gpus { gpus } = card(10 * GIB, 9 * GIB, 0) else {
            unreachable!()
        };
        assert_eq!(pressure(&gpus[0], 0.7, 0.85), Pressure::Act);
    }

    #[test]
    fn real_probe_on_this_machine_does_not_fail() {
        // CI machines have no NVIDIA driver: the probe must say so, not error or panic.
        match crate::gpu::NvmlProbe.probe() {
            GpuStatus::NoGpu { reason } => assert!(reason.contains("no NVIDIA GPU"), "{reason}"),
            GpuStatus::Gpus { gpus } => assert!(!gpus.is_empty()),
            GpuStatus::Error { message } => panic!("NVML error on a plain machine: {message}"),
        }
    }
}
