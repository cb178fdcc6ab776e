//! The types that cross between dictation's threads and its callers, in a leaf that imports
//! nothing from the threads (issue 39): what a sink reports after typing a text.

#[derive(Debug, Clone, Default)]
pub struct SinkReport {
    pub method: String,
    pub error: Option<String>,
    /// Ms from the call until the text was handed over (last key sent, or the paste chord),
    /// when the sink does more afterwards (paste: restoring the clipboard).
    pub handed_over_ms: Option<f64>,
    /// The window that received the text, when the sink knows it.
    pub app_class: Option<String>,
    pub window_title: Option<String>,
    /// Characters delivered (a trailing space included), when the sink knows.
    pub chars: Option<usize>,
}
