//! Never lose an utterance to the GPU: a transcription that fails on the GPU (out of memory,
//! launch failure) is redone on the CPU and delivered. After `MAX_GPU_FAILURES` failures speech
//! stays on the CPU until restart and the user is told once. One retry per utterance, no storms.
//! A GPU worker that stalled (killed after its deadline, `worker_process.rs`) is replaced by a
//! fresh one before the next utterance; one that crashed means the card is contested, and
//! speech stays on the CPU.

use super::pass::{SttOptions, SttOutput};
use super::whisper::Transcriber;
use crate::{Error, Result};

/// GPU failures after which speech stays on the CPU for the rest of the process.
pub const MAX_GPU_FAILURES: u32 = 3;

pub struct ResilientTranscriber {
    primary: Transcriber,
    cpu: Option<Transcriber>,
    gpu_failures: u32,
    cpu_only: bool,
    /// Test seam: the next N decodes on the primary fail as a GPU would.
    simulated_gpu_faults: u32,
    /// Whether `primary` should be treated as a GPU (true for a CUDA device, or in tests).
    primary_is_gpu: bool,
    /// The primary's worker stalled and was killed: start a fresh one before the next decode.
    respawn: bool,
}

/// What happened, for the history row.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    pub output: SttOutput,
    /// Device that produced the text ("cpu", "cuda", "vulkan").
    pub device: String,
    /// Set when the GPU failed and the CPU redid the utterance.
    pub fallback: Option<String>,
}

impl ResilientTranscriber {
    pub fn new(primary: Transcriber) -> ResilientTranscriber {
        let primary_is_gpu = primary.device != "cpu";
        ResilientTranscriber {
            primary,
            cpu: None,
            gpu_failures: 0,
            cpu_only: false,
            simulated_gpu_faults: 0,
            primary_is_gpu,
            respawn: false,
        }
    }

    pub fn primary(&self) -> &Transcriber {
        &self.primary
    }

    pub fn primary_mut(&mut self) -> &mut Transcriber {
        &mut self.primary
    }

    /// Makes the next `n` decodes on the primary fail like a GPU out-of-memory, and treats the
    /// primary as a GPU. For tests of the fallback on machines without one.
    pub fn simulate_gpu_faults(&mut self, n: u32) {
        self.simulated_gpu_faults = n;
        self.primary_is_gpu = true;
    }

    /// True while the speech model runs on a GPU.
    pub fn on_gpu(&self) -> bool {
        self.primary_is_gpu && !self.cpu_only
    }

    /// Moves speech to the CPU for the rest of the process and frees the GPU copy of the
    /// model (VRAM pressure: the LLM keeps its memory).
    pub fn move_to_cpu(&mut self) -> Result<()> {
        if !self.primary_is_gpu {
            return Ok(());
        }
        let mut cpu = match self.cpu.take() {
            Some(t) => t,
            None => Transcriber::load_in_process(&self.primary.model_path, false)?,
        };
        cpu.device = "cpu".into();
        self.primary = cpu;
        self.primary_is_gpu = false;
        self.cpu_only = true;
        Ok(())
    }

    pub fn is_cpu_only(&self) -> bool {
        self.cpu_only
    }

    fn cpu(&mut self) -> Result<&mut Transcriber> {
        if self.cpu.is_none() {
            let mut t = Transcriber::load_in_process(&self.primary.model_path, false)?;
            t.device = "cpu".into();
            self.cpu = Some(t);
        }
        self.cpu
            .as_mut()
            .ok_or_else(|| Error::Transcribe("CPU transcriber missing".into()))
    }

    /// Replaces a stalled worker with a fresh one (same model, same device); speech stays on
    /// the CPU when that fails.
    fn respawn_primary(&mut self) {
        let gpu = crate::gpu::speech_plan::BACKEND == Some(self.primary.device.as_str());
        match Transcriber::load(&self.primary.model_path, gpu) {
            Ok(mut fresh) => {
                fresh.device = self.primary.device.clone();
                tracing::info!("a fresh speech worker replaced the one that stalled");
                self.primary = fresh;
            }
            Err(e) => {
                self.cpu_only = true;
                tracing::warn!(
                    "could not start a fresh speech worker ({e}); speech runs on the CPU until Dictum restarts"
                );
            }
        }
    }

    pub fn transcribe(&mut self, pcm: &[f32], opts: &SttOptions) -> Result<Delivered> {
        if !self.primary_is_gpu {
            let output = self.primary.transcribe(pcm, opts)?;
            return Ok(Delivered {
                output,
                device: self.primary.device.clone(),
                fallback: None,
            });
        }
        if self.respawn && !self.cpu_only {
            self.respawn = false;
            self.respawn_primary();
        }
        if !self.cpu_only {
            let attempt = if self.simulated_gpu_faults > 0 {
                self.simulated_gpu_faults -= 1;
                Err(Error::Transcribe(
                    "simulated GPU failure: CUDA error: out of memory".into(),
                ))
            } else {
                self.primary.transcribe(pcm, opts)
            };
            match attempt {
                Ok(output) => {
                    return Ok(Delivered {
                        output,
                        device: self.primary.device.clone(),
                        fallback: None,
                    })
                }
                // A pass stopped on purpose (made stale) is not a GPU failure.
                Err(e) if super::whisper::is_aborted(&e) => return Err(e),
                Err(e) => {
                    self.gpu_failures += 1;
                    if self.primary.worker_stalled() && self.gpu_failures < MAX_GPU_FAILURES {
                        // Stalled, not crashed: a fresh worker may well do; this utterance
                        // is redone on the CPU meanwhile.
                        self.respawn = true;
                        tracing::warn!("{e}; this dictation is redone on the CPU");
                    } else if let Some(why) = self.primary.worker_stopped() {
                        // The GPU worker crashed (whisper.cpp aborts when VRAM runs out):
                        // the card is contested, so speech stays on the CPU from now on.
                        self.cpu_only = true;
                        tracing::warn!("{why}; speech runs on the CPU until Dictum restarts");
                    } else if self.gpu_failures >= MAX_GPU_FAILURES {
                        self.cpu_only = true;
                        tracing::warn!(
                            "the GPU failed {} times; speech stays on the CPU until Dictum restarts (last error: {e})",
                            self.gpu_failures
                        );
                    }
                    let output = self.cpu()?.transcribe(pcm, opts)?;
                    return Ok(Delivered {
                        output,
                        device: "cpu".into(),
                        fallback: Some(format!("GPU failed ({e}); redone on the CPU")),
                    });
                }
            }
        }
        let output = self.cpu()?.transcribe(pcm, opts)?;
        Ok(Delivered {
            output,
            device: "cpu".into(),
            fallback: Some("speech pinned to the CPU after repeated GPU failures".into()),
        })
    }
}
