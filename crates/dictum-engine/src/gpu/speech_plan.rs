//! Where the speech model runs in this build: the one place the engine (`Engine::plan_for`)
//! and the model measurement (`models::measure`) ask.
//!
//! - A `cuda` build asks NVML and the VRAM planner (`planner.rs`), the LLM's resident memory
//!   subtracted first.
//! - A `vulkan` build asks the Vulkan loader and the Vulkan planner (`vulkan_planner.rs`):
//!   a discrete GPU first, never a CPU-type device (lavapipe) unless forced. The device it
//!   picks is handed to the speech worker as `GGML_VK_VISIBLE_DEVICES` ([`vulkan_device`]):
//!   whisper.cpp's own default would skip an integrated GPU beside a discrete one and every
//!   CPU-type device.
//! - A CPU build plans the CPU.
//!
//! `DICTUM_GPU_PLAN=force` loads on the GPU whatever the plan says (to test the fallback on a
//! real GPU, or speech on lavapipe).

use super::planner::{self, Plan, PlanSettings, Tier};
use super::vulkan_planner::{self, VulkanPlanSettings};
use super::{GpuProbe, GpuStatus, NvmlProbe};
use std::sync::atomic::{AtomicU32, Ordering};

/// The GPU backend compiled into this build, if any.
pub const BACKEND: Option<&str> = if cfg!(feature = "cuda") {
    Some("cuda")
} else if cfg!(feature = "vulkan") {
    Some("vulkan")
} else {
    None
};

#[cfg(all(feature = "cuda", feature = "vulkan"))]
compile_error!("build with either the `cuda` or the `vulkan` feature, not both");

const NO_DEVICE: u32 = u32::MAX;
/// The Vulkan device (the loader's index) the last plan chose.
static VULKAN_DEVICE: AtomicU32 = AtomicU32::new(NO_DEVICE);

/// The Vulkan device index the last plan chose, for the speech worker's
/// `GGML_VK_VISIBLE_DEVICES`.
pub fn vulkan_device() -> Option<u32> {
    match VULKAN_DEVICE.load(Ordering::Relaxed) {
        NO_DEVICE => None,
        i => Some(i),
    }
}

fn forced() -> bool {
    std::env::var("DICTUM_GPU_PLAN").is_ok_and(|v| v == "force")
}

/// Plans the model `name` (a file of `file_bytes`) with `llm_resident_bytes` of the GPU
/// already taken by the LLM.
pub fn plan(use_gpu: bool, name: &str, file_bytes: u64, llm_resident_bytes: u64) -> Plan {
    if cfg!(feature = "vulkan") {
        return plan_vulkan(use_gpu, name, file_bytes);
    }
    let settings = PlanSettings {
        use_gpu,
        ..PlanSettings::default()
    };
    let status = if settings.cuda_built && settings.use_gpu {
        NvmlProbe.probe()
    } else {
        GpuStatus::NoGpu {
            reason: "not asked".into(),
        }
    };
    let tiers = [Tier {
        name: name.to_string(),
        file_bytes,
    }];
    let plan = planner::plan(&settings, &status, llm_resident_bytes, &tiers);
    if settings.cuda_built && settings.use_gpu && forced() {
        return Plan {
            device: "cuda:0".into(),
            reason: format!(
                "forced by DICTUM_GPU_PLAN=force (the plan said: {} on {})",
                plan.reason, plan.device
            ),
            ..plan
        };
    }
    plan
}

fn plan_vulkan(use_gpu: bool, name: &str, file_bytes: u64) -> Plan {
    let settings = VulkanPlanSettings::from_env(use_gpu);
    let status = if use_gpu {
        super::vulkan::probe()
    } else {
        super::vulkan::VulkanStatus::NoVulkan {
            reason: "not asked".into(),
        }
    };
    let vk = vulkan_planner::plan(&settings, &status, file_bytes);
    let index = vk
        .device
        .strip_prefix("vulkan:")
        .and_then(|i| i.parse::<u32>().ok());
    VULKAN_DEVICE.store(index.unwrap_or(NO_DEVICE), Ordering::Relaxed);
    Plan {
        reason: match (&vk.device_name, index) {
            (Some(dev), Some(_)) => format!("{dev}: {}", vk.reason),
            _ => vk.reason,
        },
        device: vk.device,
        model: name.to_string(),
        budget_bytes: None,
        need_bytes: index.map(|_| vulkan_planner::need_bytes(file_bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_build_without_use_gpu_plans_the_cpu() {
        let p = plan(false, "tiny.en-q8_0", 44 << 20, 0);
        assert_eq!(p.device, "cpu");
        assert!(!p.on_gpu());
        assert_eq!(p.model, "tiny.en-q8_0");
    }
}
