//! What Dictum knows of the place the words go (issue 41): the rules that fit a dictation into
//! the text around the caret (`join.rs`), and reading that text through accessibility
//! (`atspi/`: AT-SPI on Linux, bounded and fail-closed; not yet used by live dictation).

pub mod atspi;
pub mod join;

pub use atspi::{read_around_caret, Caret, Read, Target};
pub use join::{join, Around};
