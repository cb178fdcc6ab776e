//! The pre-roll ring: a fixed-capacity ring of the most recent 16 kHz samples, so the word
//! spoken just before the key press is kept. Allocated once; pushing never allocates.

/// Fixed-capacity ring of the most recent samples.
pub(super) struct Ring {
    buf: Vec<f32>,
    /// Next write position.
    pos: usize,
    len: usize,
}

impl Ring {
    pub(super) fn new(cap: usize) -> Ring {
        Ring {
            buf: vec![0.0; cap],
            pos: 0,
            len: 0,
        }
    }

    pub(super) fn push(&mut self, samples: &[f32]) {
        let cap = self.buf.len();
        if cap == 0 {
            return;
        }
        let samples = &samples[samples.len().saturating_sub(cap)..];
        for &s in samples {
            self.buf[self.pos] = s;
            self.pos = (self.pos + 1) % cap;
        }
        self.len = (self.len + samples.len()).min(cap);
    }

    /// Appends the ring's contents, oldest first.
    pub(super) fn copy_into(&self, out: &mut Vec<f32>) {
        let cap = self.buf.len();
        let start = (self.pos + cap - self.len) % cap.max(1);
        for i in 0..self.len {
            out.push(self.buf[(start + i) % cap]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_most_recent_samples_in_order() {
        let mut r = Ring::new(4);
        r.push(&[1.0, 2.0]);
        let mut out = vec![];
        r.copy_into(&mut out);
        assert_eq!(out, [1.0, 2.0]);
        r.push(&[3.0, 4.0, 5.0]);
        out.clear();
        r.copy_into(&mut out);
        assert_eq!(out, [2.0, 3.0, 4.0, 5.0]);
        r.push(&[6.0, 7.0, 8.0, 9.0, 10.0, 11.0]);
        out.clear();
        r.copy_into(&mut out);
        assert_eq!(out, [8.0, 9.0, 10.0, 11.0]);
        let mut empty = Ring::new(0);
        empty.push(&[1.0]);
        out.clear();
        empty.copy_into(&mut out);
        assert!(out.is_empty());
    }
}
