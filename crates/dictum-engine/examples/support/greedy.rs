//! The whisper decoding parameters the measuring examples (`pass_cost`, `tail_pass`) share:
//! greedy, English, as the engine decodes a pass. Included with `#[path]`.

use whisper_rs::{FullParams, SamplingStrategy};

/// Greedy decoding on `threads` threads over an encoder window of `audio_ctx` frames (0: the
/// whole 30 s): English, no context from earlier passes, nothing printed, non-speech and blank
/// tokens suppressed, temperature 0.
pub fn greedy<'a, 'b>(threads: i32, audio_ctx: i32) -> FullParams<'a, 'b> {
    let mut p = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
    p.set_n_threads(threads);
    p.set_language(Some("en"));
    p.set_no_context(true);
    p.set_print_progress(false);
    p.set_print_realtime(false);
    p.set_print_timestamps(false);
    p.set_suppress_nst(true);
    p.set_suppress_blank(true);
    p.set_temperature(0.0);
    p.set_audio_ctx(audio_ctx);
    p
}
