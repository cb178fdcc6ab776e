//! What subtitles are made from and made of: a timed segment and a cue.

/// One transcribed segment, times in milliseconds from the start of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub start_ms: u64,
    pub end_ms: u64,
    pub text: String,
}

/// One subtitle cue: one or two lines, shown from `start_ms` to `end_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cue {
    pub start_ms: u64,
    pub end_ms: u64,
    pub lines: Vec<String>,
}
