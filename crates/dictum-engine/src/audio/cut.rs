//! Where to cut a long recording into pieces whisper can take one at a time: in the quietest
//! stretch of a search range, so no word is split between two pieces.

/// Frame length for the energy measure: 20 ms at 16 kHz.
const FRAME: usize = 320;
/// The quiet stretch looked for: 400 ms (20 frames), longer than the gap between two words.
const QUIET_FRAMES: usize = 20;

/// The sample index in `from..to` at the middle of the quietest 400 ms of `samples` there
/// (least energy). A range shorter than that, or out of bounds, is clamped; the result is
/// always within `from..=to` and never past `samples.len()`.
pub fn quietest_point(samples: &[f32], from: usize, to: usize) -> usize {
    let to = to.min(samples.len());
    let from = from.min(to);
    let frames: Vec<f64> = samples[from..to]
        .chunks(FRAME)
        .map(|f| f.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>())
        .collect();
    if frames.len() <= QUIET_FRAMES {
        return from + (to - from) / 2;
    }
    let mut window: f64 = frames[..QUIET_FRAMES].iter().sum();
    let (mut best, mut best_start) = (window, 0);
    for start in 1..=frames.len() - QUIET_FRAMES {
        window += frames[start + QUIET_FRAMES - 1] - frames[start - 1];
        // Strictly less: on ties (digital silence) the earliest stretch wins, so pieces
        // stay close to the target length.
        if window < best - 1e-12 {
            best = window;
            best_start = start;
        }
    }
    (from + (best_start + QUIET_FRAMES / 2) * FRAME).min(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(n: usize, amp: f32) -> Vec<f32> {
        (0..n).map(|i| (i as f32 * 0.07).sin() * amp).collect()
    }

    #[test]
    fn cuts_in_the_gap_between_two_loud_stretches() {
        let mut s = tone(16_000 * 3, 0.5);
        let gap_start = s.len();
        s.extend(std::iter::repeat_n(0.0, 16_000 / 2));
        let gap_end = s.len();
        s.extend(tone(16_000 * 3, 0.5));
        let cut = quietest_point(&s, 16_000, s.len() - 16_000);
        assert!(
            (gap_start..gap_end).contains(&cut),
            "cut at {cut}, gap is {gap_start}..{gap_end}"
        );
    }

    #[test]
    fn prefers_the_quieter_of_two_gaps() {
        let mut s = tone(16_000, 0.5);
        s.extend(tone(8_000, 0.05)); // a soft stretch
        s.extend(tone(16_000, 0.5));
        let silent = s.len();
        s.extend(std::iter::repeat_n(0.0, 8_000));
        s.extend(tone(16_000, 0.5));
        let cut = quietest_point(&s, 0, s.len());
        assert!((silent..silent + 8_000).contains(&cut), "cut at {cut}");
    }

    #[test]
    fn short_or_odd_ranges_stay_in_bounds() {
        let s = tone(1000, 0.3);
        assert_eq!(quietest_point(&s, 0, 0), 0);
        assert_eq!(quietest_point(&s, 500, 100), 100);
        let c = quietest_point(&s, 0, 10_000);
        assert!(c <= s.len());
        assert!(quietest_point(&[], 5, 9) == 0);
    }
}
