//! The runtime VRAM monitor: while speech runs on the GPU, look at the card now and then;
//! above the warn share tell the user (once per episode), above the act share move speech to
//! the CPU. The LLM is never the one pushed out: Dictum only ever gives up its own memory.

use super::{pressure, GpuProbe, GpuStatus, Pressure};

/// What to do after a look at the card.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Fine,
    /// Tell the user (once until pressure drops again).
    Warn(String),
    /// Free Dictum's VRAM: move the speech model to the CPU.
    MoveSpeechToCpu(String),
}

pub struct VramMonitor {
    pub warn_share: f64,
    pub act_share: f64,
    warned: bool,
}

impl Default for VramMonitor {
    fn default() -> Self {
        VramMonitor {
            warn_share: 0.70,
            act_share: 0.85,
            warned: false,
        }
    }
}

impl VramMonitor {
    /// Looks at the card the speech model is on (the first one).
    pub fn check(&mut self, probe: &dyn GpuProbe) -> Verdict {
        let gpus = match probe.probe() {
            GpuStatus::Gpus { gpus } => gpus,
            // The driver went away or errs: nothing on the card can be trusted; the
            // transcriber's own fallback redoes any utterance that fails.
            GpuStatus::NoGpu { .. } | GpuStatus::Error { .. } => return Verdict::Fine,
        };
        let Some(gpu) = gpus.first() else {
            return Verdict::Fine;
        };
        match pressure(gpu, self.warn_share, self.act_share) {
            Pressure::Ok => {
                self.warned = false;
                Verdict::Fine
            }
            Pressure::Warn if self.warned => Verdict::Fine,
            Pressure::Warn => {
                self.warned = true;
                Verdict::Warn(format!(
                    "GPU memory is {:.0} % used ({}); above {:.0} % speech moves to the CPU",
                    gpu.used_share() * 100.0,
                    gpu.describe(),
                    self.act_share * 100.0
                ))
            }
            Pressure::Act => Verdict::MoveSpeechToCpu(format!(
                "GPU memory is {:.0} % used ({}); speech moved to the CPU to leave the LLM its memory",
                gpu.used_share() * 100.0,
                gpu.describe()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuSnapshot;

    struct Fixed(GpuStatus);
    impl GpuProbe for Fixed {
        fn probe(&self) -> GpuStatus {
            self.0.clone()
        }
    }

    fn card(used_gib: f64, total_gib: f64) -> Fixed {
        let g = 1024.0 * 1024.0 * 1024.0;
        Fixed(GpuStatus::Gpus {
            gpus: vec![GpuSnapshot {
                index: 0,
                name: "Test GPU".into(),
                driver: "1".into(),
                total_bytes: (total_gib * g) as u64,
                used_bytes: (used_gib * g) as u64,
                free_bytes: ((total_gib - used_gib) * g) as u64,
                this_process_bytes: 0,
                ollama_bytes: 0,
                processes: Vec::new(),
            }],
        })
    }

    #[test]
    fn warns_once_then_acts_and_rearms_when_pressure_drops() {
        let mut m = VramMonitor::default();
        assert_eq!(m.check(&card(4.0, 8.0)), Verdict::Fine);
        assert!(matches!(m.check(&card(6.0, 8.0)), Verdict::Warn(_)));
        assert_eq!(m.check(&card(6.0, 8.0)), Verdict::Fine, "warned once");
        assert!(matches!(
            m.check(&card(7.5, 8.0)),
            Verdict::MoveSpeechToCpu(_)
        ));
        assert_eq!(m.check(&card(3.0, 8.0)), Verdict::Fine);
        assert!(matches!(m.check(&card(6.0, 8.0)), Verdict::Warn(_)));
    }

    #[test]
    fn no_gpu_or_driver_error_is_not_an_alarm() {
        let mut m = VramMonitor::default();
        let none = Fixed(GpuStatus::NoGpu {
            reason: "no NVIDIA GPU".into(),
        });
        assert_eq!(m.check(&none), Verdict::Fine);
        let err = Fixed(GpuStatus::Error {
            message: "NVML: unknown error".into(),
        });
        assert_eq!(m.check(&err), Verdict::Fine);
    }
}
