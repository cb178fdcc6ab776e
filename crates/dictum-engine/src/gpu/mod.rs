//! GPU awareness: what the NVIDIA card has and who uses it (`probe`), and where the speech
//! model should run given that (`planner`). On a machine without the NVIDIA driver the probe
//! says so once and everything runs on the CPU: no crash, no error spam.

pub mod monitor;
mod nvml;
pub mod planner;
pub mod speech_plan;
pub mod vulkan;
pub mod vulkan_planner;

pub use nvml::NvmlProbe;

use serde::Serialize;

const MIB: u64 = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuProcess {
    pub pid: u32,
    pub name: String,
    pub used_bytes: u64,
}

/// One GPU at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuSnapshot {
    pub index: u32,
    pub name: String,
    pub driver: String,
    pub total_bytes: u64,
    pub used_bytes: u64,
    pub free_bytes: u64,
    /// What this process holds on the card.
    pub this_process_bytes: u64,
    /// What Ollama (any process named `ollama*`) holds on the card.
    pub ollama_bytes: u64,
    pub processes: Vec<GpuProcess>,
}

impl GpuSnapshot {
    pub fn used_share(&self) -> f64 {
        if self.total_bytes == 0 {
            return 0.0;
        }
        self.used_bytes as f64 / self.total_bytes as f64
    }

    pub fn describe(&self) -> String {
        format!(
            "{} (driver {}): {} MiB used of {} MiB ({} MiB free); Dictum {} MiB, Ollama {} MiB",
            self.name,
            self.driver,
            self.used_bytes / MIB,
            self.total_bytes / MIB,
            self.free_bytes / MIB,
            self.this_process_bytes / MIB,
            self.ollama_bytes / MIB
        )
    }
}

/// What a probe found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum GpuStatus {
    /// No NVIDIA driver / library, or no device: the CPU path runs.
    NoGpu {
        reason: String,
    },
    Gpus {
        gpus: Vec<GpuSnapshot>,
    },
    /// The driver answered with an error (it may recover); treat as no GPU for now.
    Error {
        message: String,
    },
}

/// Something that can look at the GPUs: NVML in the product, a table in tests.
pub trait GpuProbe {
    fn probe(&self) -> GpuStatus;
}

/// Memory pressure on a card, for the runtime monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pressure {
    Ok,
    /// Above the warn share (default 70 %): tell the user.
    Warn,
    /// Above the act share (default 85 %): free caches, move speech to CPU, never the LLM.
    Act,
}

pub fn pressure(snapshot: &GpuSnapshot, warn_share: f64, act_share: f64) -> Pressure {
    let share = snapshot.used_share();
    if share > act_share {
        Pressure::Act
    } else if share > warn_share {
        Pressure::Warn
    } else {
        Pressure::Ok
    }
}
