//! [`Pcm16k`], the engine's audio: mono 16 kHz f32 samples, from the microphone or a file.

/// Mono 16 kHz f32 samples in [-1, 1].
#[derive(Debug, Clone, Default)]
pub struct Pcm16k {
    pub samples: Vec<f32>,
}

impl Pcm16k {
    pub fn duration_ms(&self) -> u64 {
        (self.samples.len() as u64 * 1000) / crate::SAMPLE_RATE as u64
    }
}
