//! Another text on the same times: the LLM's cleaned text laid over whisper's timed segments
//! (`dictum transcribe --clean --format srt`).

use super::cue::Segment;

/// `text`'s words spread over `segments` in proportion to the words each segment had: the
/// cleaned text keeps whisper's timing as closely as a word count can say. Segments that end
/// up without words are left out; without any segment (or words), nothing.
pub fn retext(segments: &[Segment], text: &str) -> Vec<Segment> {
    let new: Vec<&str> = text.split_whitespace().collect();
    let counts: Vec<usize> = segments
        .iter()
        .map(|s| s.text.split_whitespace().count())
        .collect();
    let old: usize = counts.iter().sum();
    if old == 0 || new.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut before = 0usize;
    let mut taken = 0usize;
    for (seg, &n) in segments.iter().zip(&counts) {
        before += n;
        let upto = (before * new.len() + old / 2) / old;
        let upto = upto.clamp(taken, new.len());
        if upto > taken {
            out.push(Segment {
                start_ms: seg.start_ms,
                end_ms: seg.end_ms,
                text: new[taken..upto].join(" "),
            });
        }
        taken = upto;
    }
    if taken < new.len() {
        if let Some(last) = out.last_mut() {
            for w in &new[taken..] {
                last.text.push(' ');
                last.text.push_str(w);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(a: u64, b: u64, t: &str) -> Segment {
        Segment {
            start_ms: a,
            end_ms: b,
            text: t.into(),
        }
    }

    #[test]
    fn every_word_lands_once_in_order_on_the_old_times() {
        let segs = [
            seg(0, 1000, "um so i think"),
            seg(1500, 3000, "we should meet tomorrow"),
        ];
        let out = retext(&segs, "So, I think we should meet tomorrow.");
        let joined: Vec<&str> = out.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(joined.join(" "), "So, I think we should meet tomorrow.");
        assert_eq!(out[0].start_ms, 0);
        assert_eq!(out.last().map(|s| s.end_ms), Some(3000));
        assert!(retext(&[], "text").is_empty());
        assert!(retext(&segs, "").is_empty());
    }
}
