//! What Dictum knows of the place the words go (issue 41): for now the rules that fit a
//! dictation into the text around the caret (`join.rs`); reading that text through
//! accessibility comes with the feature.

pub mod join;

pub use join::{join, Around};
