//! Which Vulkan device speech would run on, and why (pure; the probe is `vulkan.rs`).
//!
//! A discrete GPU first, then an integrated one, then a virtual one; among equals the one with
//! the most memory to spend. A CPU-type device (lavapipe/llvmpipe, SwiftShader) is never chosen
//! unless forced (`DICTUM_GPU_PLAN=force`): it runs the same arithmetic on the same cores as
//! whisper's CPU code, through a software GPU. A device must hold the model: its budget
//! (`VK_EXT_memory_budget`, else 70 % of its device-local heaps) against the model file plus
//! whisper.cpp's buffers (25 % + 192 MiB, as the CUDA planner counts them, without the CUDA
//! runtime).

use super::vulkan::{DeviceType, VulkanDevice, VulkanStatus};
use serde::Serialize;

const MIB: u64 = 1024 * 1024;

/// Share of a device's device-local heaps planned for when the driver gives no budget.
pub const HEAP_SHARE: f64 = 0.7;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VulkanPlanSettings {
    /// `stt.use_gpu`.
    pub use_gpu: bool,
    /// `DICTUM_GPU_PLAN=force`: take the best device even if it is CPU-type or too small.
    pub force: bool,
    /// Whether this binary has whisper.cpp's Vulkan backend.
    pub vulkan_built: bool,
}

/// Whether this build has whisper.cpp's Vulkan backend (the `vulkan` feature). Without it the
/// plan still says which device the dictum-vulkan build would take.
pub const VULKAN_BUILT: bool = cfg!(feature = "vulkan");

impl VulkanPlanSettings {
    /// `stt.use_gpu` from the config, `DICTUM_GPU_PLAN=force` from the environment.
    pub fn from_env(use_gpu: bool) -> VulkanPlanSettings {
        VulkanPlanSettings {
            use_gpu,
            force: std::env::var("DICTUM_GPU_PLAN").is_ok_and(|v| v == "force"),
            vulkan_built: VULKAN_BUILT,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VulkanPlan {
    /// "cpu" or "vulkan:N".
    pub device: String,
    pub reason: String,
    /// The device the plan looked at last (the chosen one, or the best one refused).
    pub device_name: Option<String>,
}

/// VRAM a whisper model needs on a Vulkan device.
pub fn need_bytes(file_bytes: u64) -> u64 {
    file_bytes + file_bytes / 4 + 192 * MIB
}

/// What the plan may spend on `d`.
pub fn budget(d: &VulkanDevice) -> u64 {
    d.budget_bytes
        .unwrap_or((d.device_local_bytes as f64 * HEAP_SHARE) as u64)
}

fn preference(t: DeviceType) -> u8 {
    match t {
        DeviceType::Discrete => 4,
        DeviceType::Integrated => 3,
        DeviceType::Virtual => 2,
        DeviceType::Other => 1,
        DeviceType::Cpu => 0,
    }
}

/// Picks a device for a model file of `model_bytes`, or the CPU, with the reason.
pub fn plan(settings: &VulkanPlanSettings, status: &VulkanStatus, model_bytes: u64) -> VulkanPlan {
    let cpu = |reason: String, name: Option<&VulkanDevice>| VulkanPlan {
        device: "cpu".into(),
        reason,
        device_name: name.map(|d| d.name.clone()),
    };
    if !settings.use_gpu {
        return cpu("stt.use_gpu = false in the config".into(), None);
    }
    let devices = match status {
        VulkanStatus::NoVulkan { reason } => return cpu(reason.clone(), None),
        VulkanStatus::Devices { devices } => devices,
    };
    let mut ranked: Vec<&VulkanDevice> = devices.iter().collect();
    ranked.sort_by_key(|d| std::cmp::Reverse((preference(d.device_type), budget(d))));
    let Some(best) = ranked.first().copied() else {
        return cpu("no Vulkan device".into(), None);
    };
    let need = need_bytes(model_bytes);
    let not_built = |d: &VulkanDevice| {
        cpu(
            format!(
                "{} ({}) could run speech, but this build has no Vulkan backend (the dictum-vulkan build has it)",
                d.name,
                d.device_type.describe()
            ),
            Some(d),
        )
    };
    if settings.force {
        if !settings.vulkan_built {
            return not_built(best);
        }
        return VulkanPlan {
            device: format!("vulkan:{}", best.index),
            reason: format!(
                "forced by DICTUM_GPU_PLAN=force: {} ({}), needs {} MiB, budget {} MiB",
                best.name,
                best.device_type.describe(),
                need / MIB,
                budget(best) / MIB
            ),
            device_name: Some(best.name.clone()),
        };
    }
    if best.device_type == DeviceType::Cpu {
        let names: Vec<&str> = ranked.iter().map(|d| d.name.as_str()).collect();
        return cpu(
            format!(
                "the only Vulkan device{} ({}) {} CPU-type (a software GPU such as lavapipe): whisper's own CPU code is faster, so speech runs on the CPU (DICTUM_GPU_PLAN=force {})",
                if names.len() > 1 { "s" } else { "" },
                names.join(", "),
                if names.len() > 1 { "are" } else { "is" },
                if settings.vulkan_built {
                    "uses it anyway"
                } else {
                    "would use it in a build with the Vulkan backend"
                }
            ),
            Some(best),
        );
    }
    let Some(fit) = ranked
        .iter()
        .copied()
        .filter(|d| d.device_type != DeviceType::Cpu)
        .find(|d| need <= budget(d))
    else {
        return cpu(
            format!(
                "the model needs {} MiB and {} has a budget of {} MiB; speech runs on the CPU",
                need / MIB,
                best.name,
                budget(best) / MIB
            ),
            Some(best),
        );
    };
    if !settings.vulkan_built {
        return not_built(fit);
    }
    let why = if std::ptr::eq(fit, best) {
        format!("the best Vulkan device, {}", fit.device_type.describe())
    } else {
        format!(
            "{} has no room ({} MiB budget), {} has",
            best.name,
            budget(best) / MIB,
            fit.device_type.describe()
        )
    };
    VulkanPlan {
        device: format!("vulkan:{}", fit.index),
        reason: format!(
            "{}: {why}; needs {} MiB, budget {} MiB",
            fit.name,
            need / MIB,
            budget(fit) / MIB
        ),
        device_name: Some(fit.name.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1024 * MIB;

    fn dev(index: u32, name: &str, t: DeviceType, local: u64, budget: Option<u64>) -> VulkanDevice {
        VulkanDevice {
            index,
            name: name.into(),
            device_type: t,
            api_version: "1.3.0".into(),
            device_local_bytes: local,
            budget_bytes: budget,
        }
    }

    fn built() -> VulkanPlanSettings {
        VulkanPlanSettings {
            use_gpu: true,
            force: false,
            vulkan_built: true,
        }
    }

    fn lavapipe() -> VulkanDevice {
        dev(
            0,
            "llvmpipe (LLVM 15.0.6, 256 bits)",
            DeviceType::Cpu,
            24 * GIB,
            None,
        )
    }

    #[test]
    fn scenarios() {
        let base = 82 * MIB;
        let igpu = dev(
            0,
            "Intel(R) UHD Graphics 620",
            DeviceType::Integrated,
            8 * GIB,
            Some(6 * GIB),
        );
        let dgpu = dev(
            1,
            "AMD Radeon RX 7600",
            DeviceType::Discrete,
            8 * GIB,
            Some(7 * GIB),
        );
        let full_dgpu = dev(
            1,
            "AMD Radeon RX 580",
            DeviceType::Discrete,
            4 * GIB,
            Some(100 * MIB),
        );
        struct Case {
            name: &'static str,
            devices: Vec<VulkanDevice>,
            settings: VulkanPlanSettings,
            device: &'static str,
            reason_has: &'static str,
        }
        let cases = vec![
            Case {
                name: "lavapipe only: the CPU, with the reason",
                devices: vec![lavapipe()],
                settings: built(),
                device: "cpu",
                reason_has: "CPU-type",
            },
            Case {
                name: "lavapipe forced",
                devices: vec![lavapipe()],
                settings: VulkanPlanSettings {
                    force: true,
                    ..built()
                },
                device: "vulkan:0",
                reason_has: "DICTUM_GPU_PLAN=force",
            },
            Case {
                name: "discrete over integrated",
                devices: vec![
                    igpu.clone(),
                    dgpu.clone(),
                    dev(2, "llvmpipe", DeviceType::Cpu, 64 * GIB, None),
                ],
                settings: built(),
                device: "vulkan:1",
                reason_has: "discrete GPU",
            },
            Case {
                name: "a full discrete card: the integrated GPU",
                devices: vec![igpu.clone(), full_dgpu.clone()],
                settings: built(),
                device: "vulkan:0",
                reason_has: "has no room",
            },
            Case {
                name: "integrated GPU, no Vulkan build",
                devices: vec![igpu.clone()],
                settings: VulkanPlanSettings {
                    vulkan_built: false,
                    ..built()
                },
                device: "cpu",
                reason_has: "no Vulkan backend",
            },
            Case {
                name: "GPU off in the config",
                devices: vec![dgpu.clone()],
                settings: VulkanPlanSettings {
                    use_gpu: false,
                    ..built()
                },
                device: "cpu",
                reason_has: "use_gpu = false",
            },
            Case {
                name: "nothing has room",
                devices: vec![full_dgpu.clone()],
                settings: built(),
                device: "cpu",
                reason_has: "budget of 100 MiB",
            },
        ];
        for c in cases {
            let status = VulkanStatus::Devices { devices: c.devices };
            let p = plan(&c.settings, &status, base);
            assert_eq!(p.device, c.device, "{}: {p:?}", c.name);
            assert!(p.reason.contains(c.reason_has), "{}: {}", c.name, p.reason);
        }
    }

    #[test]
    fn no_loader_is_the_cpu_with_the_probe_reason() {
        let status = VulkanStatus::NoVulkan {
            reason: "no Vulkan loader (libvulkan.so.1: not found)".into(),
        };
        let p = plan(&built(), &status, 82 * MIB);
        assert_eq!(p.device, "cpu");
        assert!(p.reason.contains("no Vulkan loader"), "{}", p.reason);
    }

    #[test]
    fn without_a_budget_extension_the_heap_share_counts() {
        let d = dev(0, "iGPU", DeviceType::Integrated, 10 * GIB, None);
        assert_eq!(budget(&d), 7 * GIB);
        assert_eq!(need_bytes(100 * MIB), 100 * MIB + 25 * MIB + 192 * MIB);
    }
}
