//! The LLM cleanup stage (in progress): config section, prompt and guard.

pub mod config;
pub mod guard;
pub mod prompt;
