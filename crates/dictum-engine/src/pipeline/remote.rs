//! The speech server (`stt.backend = "openai"`) as the engine uses it: one utterance through
//! the circuit breaker, its answer judged and turned into a segment, and the reason the local
//! model stands in when it fails (docs/REMOTE.md).

use super::engine::{no_local_fallback, Engine};
use super::segment::{kept_answer, Segment};
use crate::stt::remote::{Gate, RemoteError, RemoteOutput, RemoteStt};
use crate::stt::{degenerate, is_silence_phrase, strip_nonspeech};
use crate::Error;
use std::time::Instant;

impl Engine {
    /// The speech server's client, built on first use.
    pub fn remote(&mut self) -> std::result::Result<&mut RemoteStt, RemoteError> {
        let built = self
            .remote
            .get_or_insert_with(|| RemoteStt::new(&self.config.stt));
        built.as_mut().map_err(|e| e.clone())
    }

    /// One utterance to the speech server, through the breaker: Ok with (answer, model, host),
    /// or Err with the one-line reason the local model has to do it (and the server's answer
    /// when it was judged not a transcript).
    pub(super) fn try_remote(
        &mut self,
        samples: &[f32],
        prompt: &str,
    ) -> std::result::Result<(RemoteOutput, String, String), RemoteFailure> {
        let language = self.profile.source_language(&self.config).to_string();
        let task = self.profile.task(&self.config);
        let then = match no_local_fallback(&self.config, &self.model_dirs) {
            Some(_) => "no local model to redo it",
            None => "transcribing locally",
        };
        let remote = self
            .remote()
            .map_err(|e| RemoteFailure::new(e.to_string()))?;
        remote.set_language(&language);
        remote.set_task(task);
        if let Gate::Open { remaining, reason } = remote.breaker.gate(Instant::now()) {
            return Err(RemoteFailure::new(format!(
                "the speech server is skipped for {:.1} s more after: {reason}",
                remaining.as_secs_f64()
            )));
        }
        let mut answer = None;
        let result = remote.transcribe(samples, prompt).and_then(|out| {
            match degenerate(&out.text, samples.len()) {
                Some(why) => {
                    answer = Some(out.text);
                    Err(RemoteError::Garbage(why.to_string()))
                }
                None => Ok(out),
            }
        });
        match result {
            Ok(out) => {
                remote.breaker.success();
                Ok((out, remote.model().to_string(), remote.host()))
            }
            Err(e) => {
                let why = e.to_string();
                // The answer's words only at debug level (the row keeps them).
                tracing::warn!("{}; {then}", e.without_words());
                tracing::debug!("speech server: {why}");
                remote.breaker.failure(&why, Instant::now());
                Err(RemoteFailure { why, answer })
            }
        }
    }

    /// Fills a segment from the server's answer, as the local path does from whisper's.
    pub(super) fn fill_from_remote(
        &self,
        seg: &mut Segment,
        out: RemoteOutput,
        model: String,
        host: String,
        keep: &std::ops::Range<usize>,
        full_window: bool,
    ) {
        seg.backend = Some("openai".into());
        seg.model = Some(model);
        seg.device = Some(format!("server {host}"));
        seg.stt_ms = out.round_trip_ms;
        seg.upload_ms = out.upload_ms;
        seg.server_ms = out.server_ms;
        let configured = self.profile.source_language(&self.config);
        seg.language = if configured != "auto" {
            Some(configured.to_string())
        } else {
            out.language.clone()
        };
        if full_window {
            let covered = out.end_ms.map(|ms| {
                // The server's number: saturating, whatever it claims.
                let at = usize::try_from(ms).unwrap_or(usize::MAX);
                keep.start
                    .saturating_add(at.saturating_mul(crate::SAMPLE_RATE as usize) / 1000)
            });
            let slack = crate::SAMPLE_RATE as usize * 3 / 2;
            seg.uncovered_from = covered.filter(|&c| c > keep.start && c + slack < keep.end);
        }
        seg.no_speech_prob = out.no_speech_prob;
        seg.text = strip_nonspeech(&out.text);
        if is_silence_phrase(&seg.text, seg.speech_ms, out.no_speech_prob) {
            seg.text.clear();
        }
        if !seg.text.is_empty() {
            // The server gives no segment times here: one segment over the speech sent.
            let ms = |i: usize| (i as u64 * 1000) / u64::from(crate::SAMPLE_RATE);
            seg.timed = vec![crate::stt::TimedText {
                start_ms: ms(keep.start),
                end_ms: ms(keep.end),
                text: seg.text.clone(),
            }];
        }
        seg.raw = out.text;
    }
}

/// Why the speech server's answer was not used: the one-line reason, and the answer itself
/// when the server gave one that was judged not a transcript.
pub(super) struct RemoteFailure {
    pub(super) why: String,
    pub(super) answer: Option<String>,
}

impl RemoteFailure {
    fn new(why: String) -> RemoteFailure {
        RemoteFailure { why, answer: None }
    }

    /// The utterance's error, carrying the answer (if any) for the row.
    pub(super) fn into_error(self, why: String) -> Error {
        match self.answer {
            Some(answer) => Error::AnswerRejected {
                why,
                answer: kept_answer(&answer),
            },
            None => Error::Transcribe(why),
        }
    }
}
