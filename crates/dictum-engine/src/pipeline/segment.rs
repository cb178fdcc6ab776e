//! One stretch of audio through the VAD and whisper (a live chunk, a live tail, a file's
//! piece): [`Segment`], what whisper made of it, and how its timings and facts go into a row.

use super::engine::{Engine, NO_LOCAL_FALLBACK};
use crate::audio::Pcm16k;
use crate::config::SttBackend;
use crate::snippets::Rewriter;
use crate::store::row::{rewritten, Piece};
use crate::store::{Entry, Outcome};
use crate::stt::{is_silence_phrase, strip_nonspeech, TimedText};
use crate::timing::{ms_since, timed, StageTimings};
use crate::vad::{self, Detector};
use crate::{Error, Result};
use std::sync::Arc;
use std::time::Instant;

/// What whisper made of one stretch of audio (a file, or a chunk of a live utterance).
#[derive(Debug, Clone, Default)]
pub struct Segment {
    /// The words, annotations like `(water splashing)` removed; empty = no speech.
    pub text: String,
    /// Whisper's own output.
    pub raw: String,
    pub vad_ms: f64,
    pub speech_ms: i64,
    /// Whisper time (0 when the VAD found no speech and whisper did not run).
    pub stt_ms: f64,
    /// Whisper's own probability that there was no speech.
    pub no_speech_prob: f32,
    pub language: Option<String>,
    pub model: Option<String>,
    pub device: Option<String>,
    /// Set when the GPU failed and the segment was redone on the CPU.
    pub fallback: Option<String>,
    /// (load ms, warm-up ms) when this segment had to load the model.
    pub model_load: Option<(f64, f64)>,
    /// Where whisper stopped when speech went on after it (sample index in the audio given):
    /// it sometimes ends a long stretch at a pause. Set for full-window pieces only.
    pub uncovered_from: Option<usize>,
    /// Whisper's segments, times in ms from the start of the audio given (the VAD trim
    /// added back); a speech server's answer is one segment over the speech. Empty when
    /// there is no text. Kept for files (subtitles); a live utterance's halves
    /// ([`Segment::append`]) do not carry them.
    pub timed: Vec<TimedText>,
    /// "openai" when the speech server's answer was used, "local" otherwise.
    pub backend: Option<String>,
    /// Why the local model stood in for the speech server (with the server's answer when it
    /// was judged not a transcript: kept, see [`kept_answer`]).
    pub stt_fallback: Option<String>,
    /// `stt_fallback` holds an answer the server gave (each one is kept in the row).
    pub server_answer_kept: bool,
    /// Speech server: round trip minus the server's reported time, and that time.
    pub upload_ms: Option<f64>,
    pub server_ms: Option<f64>,
    /// The snippets and replacements of the engine that made this segment, applied when
    /// the row's text is made ([`Words::into_row`], [`Segment::into_row_text`]).
    pub rewriter: Option<Arc<Rewriter>>,
}

impl Segment {
    /// What the row keeps of this segment ([`crate::store::row::Words::push`]).
    pub fn piece(&self) -> Piece<'_> {
        Piece {
            text: &self.text,
            raw: &self.raw,
            rewriter: self.rewriter.as_ref(),
        }
    }

    /// Adds what whisper made of the rest of the same stretch (see
    /// [`Engine::transcribe_segment`]): its text after this one, its time on top. The speech
    /// found was already counted over the whole stretch.
    fn append(&mut self, rest: Segment) {
        for (to, from) in [(&mut self.text, &rest.text), (&mut self.raw, &rest.raw)] {
            if !from.trim().is_empty() {
                if !to.is_empty() {
                    to.push(' ');
                }
                to.push_str(from.trim());
            }
        }
        self.vad_ms += rest.vad_ms;
        self.stt_ms += rest.stt_ms;
        self.no_speech_prob = self.no_speech_prob.min(rest.no_speech_prob);
        self.uncovered_from = rest.uncovered_from;
        self.fallback = self.fallback.take().or(rest.fallback);
        self.model_load = self.model_load.or(rest.model_load);
    }

    /// Makes this segment the row's words: its text and raw text, and the outcome they give
    /// (no text: no speech). Call after [`Segment::apply_to`].
    pub fn into_row_text(self, entry: &mut Entry) {
        let text = rewritten(self.rewriter.as_ref(), self.text, entry);
        entry.outcome = if text.is_empty() {
            Outcome::NoSpeech
        } else {
            Outcome::Ok
        };
        entry.raw_text = Some(self.raw);
        entry.text = Some(text);
    }

    /// Copies the timings and facts (not the text) into a history row.
    pub fn apply_to(&self, entry: &mut Entry, timings: &mut StageTimings) {
        timings.vad = Some(timings.vad.unwrap_or(0.0) + self.vad_ms);
        entry.vad_ms = timings.vad;
        entry.speech_ms = Some(entry.speech_ms.unwrap_or(0) + self.speech_ms);
        if let Some((load, warm)) = self.model_load {
            timings.model_load = Some(load);
            timings.warmup = Some(warm);
            entry.model_load_ms = Some(load);
            entry.warmup_ms = Some(warm);
        }
        if self.stt_ms > 0.0 {
            timings.stt = Some(timings.stt.unwrap_or(0.0) + self.stt_ms);
            entry.stt_ms = timings.stt;
        }
        if let Some(m) = &self.model {
            entry.model = Some(m.clone());
        }
        if let Some(l) = &self.language {
            entry.language = Some(l.clone());
        }
        if let Some(d) = &self.device {
            entry.device = Some(d.clone());
        }
        if let Some(note) = &self.fallback {
            entry.error_kind = Some("gpu_fallback".into());
            entry.error = Some(note.clone());
        }
        if let Some(b) = &self.backend {
            entry.stt_backend = Some(match entry.stt_backend.take() {
                Some(old) if old != *b && old.split('+').all(|o| o != b) => format!("{old}+{b}"),
                Some(old) => old,
                None => b.clone(),
            });
        }
        if let Some(why) = &self.stt_fallback {
            match &mut entry.stt_fallback {
                None => entry.stt_fallback = Some(why.clone()),
                // Every answer the server gave and the local model replaced stays in the row.
                Some(old) if self.server_answer_kept && !old.contains(why.as_str()) => {
                    old.push_str(" | ");
                    old.push_str(why);
                }
                Some(_) => {}
            }
        }
        if let Some(ms) = self.upload_ms {
            entry.stt_upload_ms = Some(entry.stt_upload_ms.unwrap_or(0.0) + ms);
        }
        if let Some(ms) = self.server_ms {
            entry.stt_server_ms = Some(entry.stt_server_ms.unwrap_or(0.0) + ms);
        }
    }
}

/// Characters of a rejected server answer kept in the row: minutes of speech (at 5 words/s,
/// ~6 characters a word, 10 minutes is 18 000), not the 1 MiB a server may send.
const KEPT_ANSWER_CHARS: usize = 20_000;

/// A rejected server answer as the row keeps it: control characters dropped, cut at
/// [`KEPT_ANSWER_CHARS`] with "…".
pub(super) fn kept_answer(answer: &str) -> String {
    let clean = crate::text_safety::strip_control(answer, false);
    let mut kept: String = clean.chars().take(KEPT_ANSWER_CHARS).collect();
    if clean.chars().nth(KEPT_ANSWER_CHARS).is_some() {
        kept.push('…');
    }
    kept
}

/// The last `n` characters of `s`, starting at a word boundary.
fn tail_chars(s: &str, n: usize) -> &str {
    let s = s.trim();
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    let start = s.char_indices().nth(count - n).map_or(0, |(i, _)| i);
    let cut = &s[start..];
    cut.find(' ').map_or(cut, |i| cut[i + 1..].trim_start())
}

impl Engine {
    /// VAD → whisper on 16 kHz mono audio; fills `entry` and `timings`.
    pub fn run_pcm(
        &mut self,
        pcm: &Pcm16k,
        entry: &mut Entry,
        timings: &mut StageTimings,
    ) -> Result<()> {
        entry.audio_ms.get_or_insert(pcm.duration_ms() as i64);
        self.keep_audio(pcm, entry);
        let seg = self.transcribe_segment(&pcm.samples, "")?;
        seg.apply_to(entry, timings);
        seg.into_row_text(entry);
        Ok(())
    }

    /// VAD → whisper on one stretch of 16 kHz mono audio. `context` is the text said just
    /// before it (earlier chunks of the same utterance): whisper gets it as its prompt, after
    /// the vocabulary, so words and casing carry across chunk boundaries.
    ///
    /// Whisper (tiny especially) can end its text at a pause and drop the sentences after it
    /// without saying so (its one segment's timestamps then span the whole stretch). People
    /// dictate 2–3 words a second; under one a second over 6 s of speech, the stretch is
    /// transcribed again in two halves cut at its quietest point, kept if they say more.
    /// Measured: a live 10.7 s stretch ("ask what you can do for your country" + 0.4 s +
    /// a 7 s sentence) came back as its first 8 words.
    pub fn transcribe_segment(&mut self, samples: &[f32], context: &str) -> Result<Segment> {
        self.transcribe_checked(samples, context, 0)
    }

    fn transcribe_checked(
        &mut self,
        samples: &[f32],
        context: &str,
        depth: u32,
    ) -> Result<Segment> {
        let mut seg = self.transcribe_piece(samples, context, false)?;
        let rate = crate::SAMPLE_RATE as usize;
        let words = |s: &Segment| s.text.split_whitespace().count();
        let speech_s = seg.speech_ms as f64 / 1000.0;
        if depth >= 2
            || speech_s < 6.0
            || words(&seg) as f64 >= speech_s
            || samples.len() < 4 * rate
        {
            return Ok(seg);
        }
        let cut =
            crate::audio::cut::quietest_point(samples, samples.len() / 4, samples.len() * 3 / 4);
        let mut first = self.transcribe_checked(&samples[..cut], context, depth + 1)?;
        let before = format!("{context} {}", first.text);
        let second = self.transcribe_checked(&samples[cut..], before.trim(), depth + 1)?;
        let halves = words(&first) + words(&second);
        tracing::debug!(
            whole = words(&seg),
            halves,
            speech_s,
            "whisper's text was short for the speech; redone in two halves"
        );
        if halves > words(&seg) {
            first.append(second);
            first.speech_ms = seg.speech_ms;
            first.stt_ms += seg.stt_ms;
            first.vad_ms += seg.vad_ms;
            return Ok(first);
        }
        seg.stt_ms += first.stt_ms + second.stt_ms;
        seg.vad_ms += first.vad_ms + second.vad_ms;
        Ok(seg)
    }

    /// [`Engine::transcribe_segment`]; `full_window` forces whisper's full 30 s window
    /// (pieces of a long file: the sized window, a live-latency measure, can end the decode
    /// at the first pause of a long stretch).
    pub(super) fn transcribe_piece(
        &mut self,
        samples: &[f32],
        context: &str,
        full_window: bool,
    ) -> Result<Segment> {
        let (vad, vad_ms) = timed(|| vad::analyze(samples, &self.config.vad, Detector::Earshot));
        let mut seg = Segment {
            vad_ms,
            speech_ms: vad.speech_ms as i64,
            rewriter: Some(self.rewriter()),
            ..Segment::default()
        };
        if vad.no_speech {
            return Ok(seg);
        }
        let kept = &samples[vad.keep.clone()];
        let mut remote_ms = 0.0;
        let mut failed = None;
        if self.config.stt.backend == SttBackend::Openai {
            let t = Instant::now();
            let prompt = self.prompt_with(context);
            match self.try_remote(kept, &prompt) {
                Ok((out, model, host)) => {
                    self.fill_from_remote(&mut seg, out, model, host, &vad.keep, full_window);
                    return Ok(seg);
                }
                Err(fail) if !self.config.stt.fallback => {
                    let why = fail.why.clone();
                    return Err(fail.into_error(why));
                }
                Err(fail) => {
                    remote_ms = ms_since(t);
                    seg.stt_fallback = Some(match &fail.answer {
                        Some(answer) => format!(
                            "{}; transcribed locally; the server's answer: «{}»",
                            fail.why,
                            kept_answer(answer)
                        ),
                        None => format!("{}; transcribed locally", fail.why),
                    });
                    seg.server_answer_kept = fail.answer.is_some();
                    failed = Some(fail);
                }
            }
        }
        seg.backend = Some("local".into());
        seg.model_load = match (self.ensure_local_model(), failed) {
            (Ok(load), _) => load,
            // A thin client (speech server, no local model): the utterance fails, and the
            // caller keeps its audio for a retry.
            (Err(Error::ModelNotFound(_)), Some(fail)) => {
                let why = format!("{}; {NO_LOCAL_FALLBACK}", fail.why);
                return Err(fail.into_error(why));
            }
            (Err(e), Some(fail)) => {
                let why = format!(
                    "{}; the local model could not load to redo it: {e}",
                    fail.why
                );
                return Err(fail.into_error(why));
            }
            (Err(e), None) => return Err(e),
        };
        let mut opts = self.stt_options();
        if full_window {
            opts.window = None;
        }
        let context = tail_chars(context, 200);
        if !context.is_empty() {
            opts.initial_prompt = if opts.initial_prompt.is_empty() {
                context.to_string()
            } else {
                format!("{}. {context}", opts.initial_prompt)
            };
        }
        let transcriber = self
            .transcriber
            .as_mut()
            .ok_or_else(|| Error::Transcribe("model not loaded".into()))?;
        seg.model = Some(transcriber.primary().model_name.clone());
        transcriber.primary_mut().set_stop(self.stop.clone());
        let delivered = transcriber.transcribe(kept, &opts)?;
        seg.device = Some(delivered.device);
        seg.fallback = delivered.fallback;
        let out = delivered.output;
        if full_window {
            let covered = out
                .end_ms
                .map(|ms| vad.keep.start + (ms as usize) * crate::SAMPLE_RATE as usize / 1000);
            // More than 1.5 s of the kept audio after the last segment: look again there.
            let slack = crate::SAMPLE_RATE as usize * 3 / 2;
            seg.uncovered_from =
                covered.filter(|&c| c > vad.keep.start && c + slack < vad.keep.end);
        }
        seg.stt_ms = out.ms + remote_ms;
        seg.language = Some(out.language.clone());
        seg.no_speech_prob = out.no_speech_prob;
        seg.text = strip_nonspeech(&out.text);
        if is_silence_phrase(&seg.text, seg.speech_ms, out.no_speech_prob) {
            tracing::debug!(
                text = seg.text,
                speech_ms = seg.speech_ms,
                no_speech_prob = out.no_speech_prob,
                "whisper's stock phrase for silence dropped"
            );
            seg.text.clear();
        }
        if !seg.text.is_empty() {
            let ms = |i: usize| (i as u64 * 1000) / u64::from(crate::SAMPLE_RATE);
            let (trim_ms, kept_ms) = (ms(vad.keep.start), ms(kept.len()));
            // Whisper's times may run past the audio (it pads short stretches): kept inside.
            seg.timed = out
                .segments
                .iter()
                .filter_map(|t| {
                    let text = strip_nonspeech(&t.text);
                    let start = t.start_ms.min(kept_ms);
                    (!text.is_empty()).then(|| TimedText {
                        start_ms: start + trim_ms,
                        end_ms: t.end_ms.clamp(start, kept_ms) + trim_ms,
                        text,
                    })
                })
                .collect();
        }
        seg.raw = out.text;
        Ok(seg)
    }

    /// whisper's prompt: the vocabulary, then the last 200 characters said before.
    fn prompt_with(&self, context: &str) -> String {
        let vocabulary = self.profile.vocabulary(&self.config).join(", ");
        let context = tail_chars(context, 200);
        match (vocabulary.is_empty(), context.is_empty()) {
            (_, true) => vocabulary,
            (true, false) => context.to_string(),
            (false, false) => format!("{vocabulary}. {context}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::row::tests::rules;
    use crate::store::Source;

    fn seg(text: &str, rewriter: Option<Arc<Rewriter>>) -> Segment {
        Segment {
            text: text.into(),
            raw: format!(" {text}"),
            rewriter,
            ..Segment::default()
        }
    }

    /// A retried dictation's one segment gets the rules; a segment made without rules keeps
    /// its words.
    #[test]
    fn a_segments_row_text_gets_replacements_and_snippets() {
        let mut entry = Entry::new(Source::Mic);
        seg("cooper netties", Some(rules())).into_row_text(&mut entry);
        assert_eq!(entry.text.as_deref(), Some("Kubernetes"));
        let mut entry = Entry::new(Source::Mic);
        seg("cooper netties", None).into_row_text(&mut entry);
        assert_eq!(entry.text.as_deref(), Some("cooper netties"));
    }
}
