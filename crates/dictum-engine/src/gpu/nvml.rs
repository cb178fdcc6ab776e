//! The NVML probe (nvml-wrapper). NVML is loaded at run time, so this builds and runs on
//! machines without the NVIDIA driver; there it reports `NoGpu`.

use super::{GpuProbe, GpuProcess, GpuSnapshot, GpuStatus};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;

#[derive(Debug, Default)]
pub struct NvmlProbe;

fn process_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn snapshot(nvml: &Nvml, index: u32, driver: &str) -> Result<GpuSnapshot, NvmlError> {
    let device = nvml.device_by_index(index)?;
    let memory = device.memory_info()?;
    let mut processes = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let compute = device.running_compute_processes().unwrap_or_default();
    let graphics = device.running_graphics_processes().unwrap_or_default();
    for p in compute.into_iter().chain(graphics) {
        if !seen.insert(p.pid) {
            continue;
        }
        let used_bytes = match p.used_gpu_memory {
            UsedGpuMemory::Used(b) => b,
            UsedGpuMemory::Unavailable => 0,
        };
        processes.push(GpuProcess {
            pid: p.pid,
            name: process_name(p.pid),
            used_bytes,
        });
    }
    let me = std::process::id();
    let this_process_bytes = processes
        .iter()
        .filter(|p| p.pid == me)
        .map(|p| p.used_bytes)
        .sum();
    let ollama_bytes = processes
        .iter()
        .filter(|p| p.name.starts_with("ollama"))
        .map(|p| p.used_bytes)
        .sum();
    Ok(GpuSnapshot {
        index,
        name: device.name()?,
        driver: driver.to_string(),
        total_bytes: memory.total,
        used_bytes: memory.used,
        free_bytes: memory.free,
        this_process_bytes,
        ollama_bytes,
        processes,
    })
}

impl GpuProbe for NvmlProbe {
    fn probe(&self) -> GpuStatus {
        let nvml = match Nvml::init() {
            Ok(n) => n,
            Err(NvmlError::LibloadingError(_)) | Err(NvmlError::LibraryNotFound) => {
                return GpuStatus::NoGpu {
                    reason: "no NVIDIA GPU (the NVIDIA driver's NVML library is not installed)"
                        .into(),
                }
            }
            Err(NvmlError::DriverNotLoaded) => {
                return GpuStatus::NoGpu {
                    reason: "no NVIDIA GPU (the NVIDIA driver is not loaded)".into(),
                }
            }
            Err(e) => {
                return GpuStatus::Error {
                    message: format!("NVML failed to start: {e}"),
                }
            }
        };
        let driver = nvml
            .sys_driver_version()
            .unwrap_or_else(|_| "unknown".into());
        let count = match nvml.device_count() {
            Ok(0) => {
                return GpuStatus::NoGpu {
                    reason: "no NVIDIA GPU (the driver sees no device)".into(),
                }
            }
            Ok(n) => n,
            Err(e) => {
                return GpuStatus::Error {
                    message: format!("NVML could not count devices: {e}"),
                }
            }
        };
        let mut gpus = Vec::new();
        for index in 0..count {
            match snapshot(&nvml, index, &driver) {
                Ok(s) => gpus.push(s),
                Err(e) => {
                    return GpuStatus::Error {
                        message: format!("NVML could not read GPU {index}: {e}"),
                    }
                }
            }
        }
        GpuStatus::Gpus { gpus }
    }
}
