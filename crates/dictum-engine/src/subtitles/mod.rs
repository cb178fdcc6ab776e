//! Subtitles from a transcript's timed segments (issue 40): cues laid out by the usual
//! conventions, written as SRT or WebVTT (`format.rs`), with the two-line wrapping in
//! `wrap.rs`, and the two shapes in `cue.rs`.
//!
//! The conventions ([`Layout::default`]): at most 42 characters a line and two lines a cue,
//! a cue shown 1–7 s, cues never overlap, and a cue ends where the speech does: at a pause
//! between segments always, at a sentence end once the cue has been up for its minimum time,
//! and when the next word would not fit, preferably at the last sentence or clause end.
//!
//! Input is whisper's segments, already shifted to the file's time (the caller adds a piece's
//! offset and the VAD trim). Whisper times segments, not words: a word's time inside its
//! segment is interpolated by its share of the segment's characters. That is good enough to
//! break cues inside a long segment; a cue that starts at a segment starts at its time.
//!
//! Pure: no I/O. The text is untrusted (whatever whisper or a speech server wrote): control
//! characters are dropped and each format escapes what its parsers would read as markup.

mod cue;
mod format;
mod retext;
mod wrap;

pub use cue::{Cue, Segment};
pub use format::{to_srt, to_vtt};
pub use retext::retext;
pub use wrap::wrap;

/// A transcript's cues with the usual layout ([`Layout::default`]): its segments, or its
/// cleaned text over their times ([`for_text`]), inside `duration_ms`. `dictum transcribe
/// --format srt`, `dictum history --export x.srt` and the tray's Save as all write these.
pub fn cues_for(
    segments: Vec<Segment>,
    text: Option<&str>,
    cleaned: bool,
    duration_ms: Option<u64>,
) -> Vec<Cue> {
    layout(
        &for_text(segments, text, cleaned),
        &Layout::default(),
        duration_ms,
    )
}

/// How cues are laid out.
/// The segments a transcript's subtitles are made from: whisper's, or, when its text is a
/// cleanup of them (`cleaned`: the LLM rewrote it), that text laid over their times
/// ([`retext`]). `dictum transcribe --format srt` and `dictum history --export x.srt` both.
pub fn for_text(segments: Vec<Segment>, text: Option<&str>, cleaned: bool) -> Vec<Segment> {
    match text {
        Some(text) if cleaned && !text.trim().is_empty() => retext(&segments, text),
        _ => segments,
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// Characters (not bytes) a line holds at most; a single longer word gets a line alone.
    pub max_line_chars: usize,
    /// Lines a cue holds at most.
    pub max_lines: usize,
    /// A cue stays up at least this long where the next one leaves room.
    pub min_ms: u64,
    /// A cue is never up longer.
    pub max_ms: u64,
    /// A silence between segments at least this long ends a cue, mid-sentence or not.
    pub pause_ms: u64,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            max_line_chars: 42,
            max_lines: 2,
            min_ms: 1_000,
            max_ms: 7_000,
            pause_ms: 500,
        }
    }
}

/// A word with its interpolated time and what follows it.
#[derive(Debug)]
struct Word {
    text: String,
    start_ms: u64,
    end_ms: u64,
    /// Ends with `.`, `?`, `!` or `…` (a closing quote or bracket after it allowed).
    sentence_end: bool,
    /// Ends with `,`, `;`, `:` or a dash.
    clause_end: bool,
    /// The last word before a silence of at least `pause_ms`, or of the transcript.
    pause_after: bool,
}

/// Lays `segments` out as cues. `duration_ms`, when known, keeps the last cue inside the file.
/// Segments without words give nothing; the cues come in time order, without overlap.
pub fn layout(segments: &[Segment], layout: &Layout, duration_ms: Option<u64>) -> Vec<Cue> {
    let words = words_of(segments, layout);
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let end = cue_end(&words, i, layout);
        spans.push((i, end));
        i = end + 1;
    }
    let mut cues: Vec<Cue> = spans
        .iter()
        .map(|&(a, b)| {
            let text = join(&words[a..=b]);
            Cue {
                start_ms: words[a].start_ms,
                end_ms: words[b].end_ms.max(words[a].start_ms),
                lines: wrap(&text, layout.max_line_chars, layout.max_lines)
                    .unwrap_or_else(|| vec![text.clone()]),
            }
        })
        .collect();
    settle_times(&mut cues, layout, duration_ms);
    cues
}

/// The words of every segment, control characters dropped, each with a time interpolated
/// inside its segment by its share of the characters.
fn words_of(segments: &[Segment], layout: &Layout) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    let mut ordered: Vec<&Segment> = segments.iter().collect();
    ordered.sort_by_key(|s| s.start_ms);
    for seg in ordered {
        let clean: String = seg
            .text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let parts: Vec<&str> = clean.split_whitespace().collect();
        if parts.is_empty() {
            continue;
        }
        if let Some(last) = words.last_mut() {
            if seg.start_ms.saturating_sub(last.end_ms) >= layout.pause_ms {
                last.pause_after = true;
            }
        }
        let end_ms = seg.end_ms.max(seg.start_ms);
        let span = end_ms - seg.start_ms;
        let weights: Vec<u64> = parts.iter().map(|p| p.chars().count() as u64 + 1).collect();
        let total: u64 = weights.iter().sum();
        let mut before = 0u64;
        for (part, weight) in parts.iter().zip(&weights) {
            let start = seg.start_ms + span * before / total;
            before += weight;
            let end = seg.start_ms + span * before / total;
            words.push(Word {
                text: (*part).to_string(),
                start_ms: start,
                end_ms: end,
                sentence_end: ends_sentence(part),
                clause_end: ends_clause(part),
                pause_after: false,
            });
        }
    }
    if let Some(last) = words.last_mut() {
        last.pause_after = true;
    }
    words
}

fn ends_sentence(word: &str) -> bool {
    let core = word.trim_end_matches(['"', '\'', ')', ']', '»', '”', '’']);
    core.ends_with(['.', '?', '!', '…'])
}

fn ends_clause(word: &str) -> bool {
    word.ends_with([',', ';', ':', '—', '–'])
}

fn join(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The index of the last word of the cue that starts at word `first`.
fn cue_end(words: &[Word], first: usize, layout: &Layout) -> usize {
    let mut last = first;
    let mut overflowed = false;
    for k in first..words.len() {
        if k > first {
            let fits_text = wrap(
                &join(&words[first..=k]),
                layout.max_line_chars,
                layout.max_lines,
            )
            .is_some();
            let fits_time = words[k].end_ms.saturating_sub(words[first].start_ms) <= layout.max_ms;
            if !fits_text || !fits_time {
                overflowed = true;
                break;
            }
        }
        last = k;
        let w = &words[k];
        let shown = w.end_ms.saturating_sub(words[first].start_ms);
        if w.pause_after || (w.sentence_end && shown >= layout.min_ms) {
            return k;
        }
    }
    if !overflowed {
        return last;
    }
    // The next word does not fit: end at the last sentence end, or else the last clause end,
    // when that keeps a fair part of the cue (a third, two fifths of its characters); else
    // here.
    let chars = |to: usize| join(&words[first..=to]).chars().count();
    let full = chars(last);
    let best = |pick: fn(&Word) -> bool, fifteenths: usize| {
        (first..last)
            .rev()
            .find(|&k| pick(&words[k]) && chars(k) * 15 >= full * fifteenths)
    };
    best(|w| w.sentence_end, 5)
        .or_else(|| best(|w| w.clause_end, 6))
        .unwrap_or(last)
}

/// Minimum and maximum display times, without overlapping the next cue or passing the file's
/// end.
fn settle_times(cues: &mut [Cue], layout: &Layout, duration_ms: Option<u64>) {
    for i in 0..cues.len() {
        let next_start = cues.get(i + 1).map(|c| c.start_ms);
        let cue = &mut cues[i];
        let mut end = cue.end_ms.max(cue.start_ms + layout.min_ms);
        end = end.min(cue.start_ms + layout.max_ms);
        if let Some(next) = next_start {
            end = end.min(next);
        }
        if let Some(total) = duration_ms {
            end = end.min(total.max(cue.start_ms));
        }
        cue.end_ms = end.max(cue.start_ms);
    }
}

#[cfg(test)]
mod tests;
