//! A file through the pipeline: its row inserted as `pending` before any stage runs and
//! completed at the end whatever happened (success, no speech, or an error with its message);
//! the audio decoded as a stream and transcribed in pieces cut at pauses, each with the text
//! before it as context, so memory stays flat and progress can be shown.

use super::engine::Engine;
use crate::audio;
use crate::llm::LlmReport;
use crate::store::row::{fail_row, RowState, RowUpdate, RowWriter, WholeRow, Words};
use crate::store::{Entry, History, Outcome, Source};
use crate::stt::TimedText;
use crate::timing::{ms_since, StageTimings};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How far the transcription of a long file has got.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileProgress {
    /// Audio transcribed so far, and in all (from the file's header).
    pub done_ms: u64,
    pub total_ms: u64,
    /// Pieces transcribed so far.
    pub pieces: usize,
    /// Wall time since the file was opened.
    pub elapsed_ms: f64,
}

impl FileProgress {
    /// The expected wall time still to go, from the pace so far.
    pub fn remaining_ms(&self) -> f64 {
        if self.done_ms == 0 {
            return 0.0;
        }
        let rest = self.total_ms.saturating_sub(self.done_ms) as f64;
        self.elapsed_ms / self.done_ms as f64 * rest
    }
}

/// The text of a file transcribed piece by piece.
#[derive(Default, Clone)]
struct PieceText {
    words: Words,
    /// Whisper's segments, times from the start of the file.
    segments: Vec<TimedText>,
    /// Time spent in VAD and whisper (the rest of the decoding loop is decoding).
    ms: f64,
}

impl PieceText {
    /// Transcribes the next piece, with the text so far as context (`full_window`: see
    /// [`Engine::transcribe_piece`]).
    fn add(
        &mut self,
        engine: &mut Engine,
        full_window: bool,
        samples: &[f32],
        offset: usize,
        entry: &mut Entry,
        timings: &mut StageTimings,
    ) -> Result<()> {
        let speech_before = entry.speech_ms.unwrap_or(0);
        let speech = self.add_checked(engine, full_window, samples, offset, entry, timings, 0)?;
        // Second looks re-analyse audio already counted: the piece's speech counts once.
        entry.speech_ms = Some(speech_before + speech);
        Ok(())
    }

    /// Whisper sometimes ends a long stretch at a pause and drops what follows (tiny.en does
    /// it on 10 to 20 s of several sentences). Two checks catch it: speech left after the
    /// last segment's end is transcribed on its own, and a text far too short for the speech
    /// in it (under 0.8 words per second of speech) is redone as two halves cut at the
    /// quietest point, kept if they say more. Returns the piece's speech ms. `offset`: where
    /// `samples` starts in the file (samples), for the segments' times.
    #[allow(clippy::too_many_arguments)]
    fn add_checked(
        &mut self,
        engine: &mut Engine,
        full_window: bool,
        samples: &[f32],
        offset: usize,
        entry: &mut Entry,
        timings: &mut StageTimings,
        depth: u32,
    ) -> Result<i64> {
        let rate = crate::SAMPLE_RATE as usize;
        let mut from = 0;
        let mut speech = None;
        for _ in 0..4 {
            let part = &samples[from..];
            let t = Instant::now();
            let seg = engine.transcribe_piece(part, &self.words.text(), full_window);
            self.ms += ms_since(t);
            let seg = seg?;
            seg.apply_to(entry, timings);
            speech.get_or_insert(seg.speech_ms);
            tracing::debug!(
                seconds = part.len() as f64 / rate as f64,
                speech_ms = seg.speech_ms,
                text = seg.text,
                "file piece transcribed"
            );
            let words = seg.text.split_whitespace().count() as f64;
            let too_short = words < seg.speech_ms as f64 / 1000.0 * 0.8 - 2.0;
            if full_window && too_short && depth < 2 && part.len() >= 4 * rate {
                let cut =
                    crate::audio::cut::quietest_point(part, part.len() / 4, part.len() * 3 / 4);
                let mut halves = PieceText {
                    words: Words {
                        texts: self.words.texts.clone(),
                        raws: Vec::new(),
                        rewriter: None,
                    },
                    segments: Vec::new(),
                    ms: 0.0,
                };
                let at = offset + from;
                halves.add_checked(engine, true, &part[..cut], at, entry, timings, depth + 1)?;
                halves.add_checked(
                    engine,
                    true,
                    &part[cut..],
                    at + cut,
                    entry,
                    timings,
                    depth + 1,
                )?;
                self.ms += halves.ms;
                let said = |t: &[String]| {
                    t.iter()
                        .map(|t| t.split_whitespace().count())
                        .sum::<usize>()
                };
                let more = said(&halves.words.texts[self.words.texts.len()..]);
                tracing::debug!(
                    whole = words,
                    halves = more,
                    "whisper's text was short for the speech; redone in two halves"
                );
                if more as f64 > words {
                    self.words.adopt(seg.rewriter.as_ref());
                    self.words.texts = halves.words.texts;
                    self.words.raws.extend(halves.words.raws);
                    self.segments.extend(halves.segments);
                    break;
                }
            }
            self.words.push(seg.piece());
            let shift = ((offset + from) as u64 * 1000) / rate as u64;
            self.segments.extend(seg.timed.iter().map(|t| TimedText {
                start_ms: t.start_ms + shift,
                end_ms: t.end_ms + shift,
                text: t.text.clone(),
            }));
            let Some(next) = seg.uncovered_from else {
                break;
            };
            tracing::debug!(
                at_s = (from + next) as f64 / rate as f64,
                "whisper stopped before the speech did; transcribing the rest"
            );
            from += next;
        }
        Ok(speech.unwrap_or(0))
    }
}

/// What a file's transcription yields beside the row.
#[derive(Default)]
struct FileText {
    segments: Vec<TimedText>,
    truncated: Option<String>,
    cancelled: bool,
}

/// What the caller of [`Engine::transcribe_file_hooked`] hears while a file is transcribed.
pub struct FileHooks<'a> {
    /// After each piece of a long file: how far it has got, and the segments that piece
    /// added (times from the start of the file).
    pub progress: &'a mut dyn FnMut(&FileProgress, &[TimedText]),
    /// `true` when the file starts waiting for a dictation ([`Engine::set_stop`] with
    /// `for_dictation`), `false` when it goes on.
    pub waiting: &'a mut dyn FnMut(bool),
}

/// What became of one piece.
enum PieceEnd {
    Done,
    /// The job's stop was cancelled: the piece was left out.
    Cancelled,
}

/// The error the decode loop stops with when the job is cancelled (never stored: the row
/// keeps the text so far, as a file cut short does).
const CANCELLED: &str = "cancelled: the text before is kept";

/// The outcome of one utterance, as stored in history, plus the error if there was one.
#[derive(Debug)]
pub struct Utterance {
    pub entry: Entry,
    pub timings: StageTimings,
    pub error: Option<Error>,
    /// The LLM cleanup, when the stage ran.
    pub llm: Option<LlmReport>,
    /// Whisper's segments, times in ms from the start of the file (files only).
    pub segments: Vec<TimedText>,
    /// Why the file was transcribed only in part (cut short, damaged after some point,
    /// cancelled), when it was: the text holds what came before (files only).
    pub truncated: Option<String>,
    /// The job was cancelled ([`Engine::set_stop`]) before the file's end.
    pub cancelled: bool,
}

impl Engine {
    /// Transcribes a file into `history`. Never returns without having stored the row
    /// (unless the database itself fails, which is the `Err`).
    pub fn transcribe_file(&mut self, history: &History, path: &Path) -> Result<Utterance> {
        self.transcribe_file_with(history, path, &mut |_| {})
    }

    /// [`Engine::transcribe_file`], calling `progress` after each piece of a file longer than
    /// [`Engine::file_piece_s`] (shorter files are one piece and report nothing).
    pub fn transcribe_file_with(
        &mut self,
        history: &History,
        path: &Path,
        progress: &mut dyn FnMut(&FileProgress),
    ) -> Result<Utterance> {
        let mut each = |p: &FileProgress, _: &[TimedText]| progress(p);
        let mut hooks = FileHooks {
            progress: &mut each,
            waiting: &mut |_| {},
        };
        self.transcribe_file_hooked(history, path, &mut hooks)
    }

    /// [`Engine::transcribe_file_with`], telling `hooks` each piece's segments and when the
    /// file waits for a dictation. With a stop ([`Engine::set_stop`]): a cancel ends the file
    /// at once (the pieces done are kept, the row says so), and a dictation stops the piece
    /// under way, which is redone once the dictation is typed.
    pub fn transcribe_file_hooked(
        &mut self,
        history: &History,
        path: &Path,
        hooks: &mut FileHooks<'_>,
    ) -> Result<Utterance> {
        let start = Instant::now();
        let mut entry = Entry::new(Source::File);
        entry.source_path = Some(path.display().to_string());
        entry.model = Some(self.config.stt.model.clone());
        entry.language = Some(self.config.stt.language.clone());
        let rows = RowWriter::new(history);
        rows.create(&mut entry, RowState::Started)?;

        let mut timings = StageTimings::default();
        let mut got = FileText::default();
        let result = self.run_file(path, &mut entry, &mut timings, &mut got, hooks);
        let llm = if result.is_ok() {
            // Cannot fail: any LLM problem is recorded in the row and the raw text is kept.
            self.clean_entry(&mut entry, &mut timings)
        } else {
            None
        };
        timings.total = Some(ms_since(start));
        entry.total_ms = timings.total;
        let error = match result {
            Ok(()) => None,
            Err(e) => {
                fail_row(&mut entry, &e, Outcome::Error, e.to_string());
                Some(e)
            }
        };
        rows.write(&mut entry, WholeRow::Cleaned)?;
        if let (Some(id), false) = (entry.id, got.segments.is_empty()) {
            // Kept for its subtitles later (`dictum history --export talk.srt`). The text is
            // stored already: a failure here costs only that, and says so.
            let segments: Vec<crate::subtitles::Segment> =
                got.segments.iter().map(Into::into).collect();
            if let Err(e) = rows.update(
                id,
                RowUpdate::Segments {
                    segments: &segments,
                },
            ) {
                tracing::warn!("entry {id}: its segments were not stored, so `dictum history --export` cannot write its subtitles: {e}");
            }
        }
        Ok(Utterance {
            entry,
            timings,
            error,
            llm,
            segments: got.segments,
            truncated: got.truncated,
            cancelled: got.cancelled,
        })
    }

    /// Transcribes one piece into `text`, as [`PieceText::add`] does, minding the stop: it
    /// waits while a dictation is under way, and a pass a dictation stopped is redone from
    /// the state before it; a cancel leaves the piece out.
    #[allow(clippy::too_many_arguments)]
    fn file_piece(
        &mut self,
        text: &mut PieceText,
        full_window: bool,
        samples: &[f32],
        offset: usize,
        entry: &mut Entry,
        timings: &mut StageTimings,
        hooks: &mut FileHooks<'_>,
    ) -> Result<PieceEnd> {
        loop {
            let Some(stop) = self.stop.clone() else {
                text.add(self, full_window, samples, offset, entry, timings)?;
                return Ok(PieceEnd::Done);
            };
            let mut told = false;
            stop.wait_for_dictation(&mut || {
                told = true;
                (hooks.waiting)(true);
            });
            if told {
                (hooks.waiting)(false);
            }
            if stop.cancelled() {
                return Ok(PieceEnd::Cancelled);
            }
            let before = (text.clone(), entry.clone(), timings.clone());
            match text.add(self, full_window, samples, offset, entry, timings) {
                Ok(()) => return Ok(PieceEnd::Done),
                Err(e) if crate::stt::is_stopped(&e) => {
                    let ms = text.ms;
                    (*text, *entry, *timings) = before;
                    // The stopped pass's time still counts as whisper's (the decode loop
                    // takes it out of the decoding time).
                    text.ms = ms;
                    tracing::debug!(
                        cancelled = stop.cancelled(),
                        "a file's piece was stopped; redone after the dictation unless cancelled"
                    );
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn run_file(
        &mut self,
        path: &Path,
        entry: &mut Entry,
        timings: &mut StageTimings,
        got: &mut FileText,
        hooks: &mut FileHooks<'_>,
    ) -> Result<()> {
        // Decoded, downmixed and resampled in one streaming pass (the header is checked
        // first: rate, size, duration cap); whisper takes the audio piece by piece as it
        // comes, so memory is one piece whatever the file's length.
        let start = Instant::now();
        let rate = crate::SAMPLE_RATE as usize;
        let piece_max = (self.file_piece_s.max(1) as usize).saturating_mul(rate);
        let piece_min = piece_max * 3 / 4;
        let mut pending: Vec<f32> = Vec::new();
        let mut text = PieceText::default();
        let mut done: u64 = 0;
        let mut total: u64 = 0;
        let mut pieces = 0usize;
        let mut kept = self.kept_audio_writer(entry);
        let mut cancelled = false;
        let decoded = audio::decode_file_16k_blocks(
            path,
            self.config.stt.max_file_s,
            &mut |block, expected| {
                total = expected;
                if let Some((writer, _)) = kept.as_mut() {
                    if let Err(e) = writer.write(block) {
                        tracing::warn!("could not keep the audio: {e}");
                        kept = None;
                    }
                }
                pending.extend_from_slice(block);
                while pending.len() >= piece_max {
                    let cut = audio::cut::quietest_point(&pending, piece_min, piece_max).max(1);
                    let had = text.segments.len();
                    let end = self.file_piece(
                        &mut text,
                        true,
                        &pending[..cut],
                        done as usize,
                        entry,
                        timings,
                        hooks,
                    )?;
                    if let PieceEnd::Cancelled = end {
                        cancelled = true;
                        return Err(Error::Transcribe(CANCELLED.into()));
                    }
                    pending.drain(..cut);
                    done += cut as u64;
                    pieces += 1;
                    (hooks.progress)(
                        &FileProgress {
                            done_ms: done * 1000 / rate as u64,
                            total_ms: (total * 1000 / rate as u64).max(done * 1000 / rate as u64),
                            pieces,
                            elapsed_ms: ms_since(start),
                        },
                        &text.segments[had..],
                    );
                }
                Ok(())
            },
        );
        let rate_ms = |samples: u64| samples * 1000 / rate as u64;
        if cancelled {
            // Stopped on purpose: the row keeps the pieces done, as a file cut short does.
            timings.decode = Some((ms_since(start) - text.ms).max(0.0));
            entry.decode_ms = timings.decode;
            entry.audio_ms = Some(rate_ms(total) as i64);
            got.cancelled = true;
            let why = cancelled_at(rate_ms(done), rate_ms(total));
            return self.finish_words(path, text, entry, got, Some(why));
        }
        let info = match decoded {
            Ok(info) => info,
            Err(e) => {
                timings.decode = Some((ms_since(start) - text.ms).max(0.0));
                entry.decode_ms = timings.decode;
                return Err(e);
            }
        };
        let resample_ms = info.resample.as_secs_f64() * 1000.0;
        timings.decode = Some((ms_since(start) - text.ms - resample_ms).max(0.0));
        entry.decode_ms = timings.decode;
        timings.resample = Some(resample_ms);
        entry.resample_ms = Some(resample_ms);
        entry.audio_ms = Some(info.duration_ms() as i64);
        if let Some((writer, file)) = kept {
            match writer.finish() {
                Ok(()) => entry.audio_path = Some(file.display().to_string()),
                Err(e) => tracing::warn!("could not keep audio in {}: {e}", file.display()),
            }
        }
        let long = pieces > 0;
        if !pending.is_empty() || pieces == 0 {
            let had = text.segments.len();
            let end = self.file_piece(
                &mut text,
                long,
                &pending,
                done as usize,
                entry,
                timings,
                hooks,
            )?;
            if let PieceEnd::Cancelled = end {
                got.cancelled = true;
                let why = cancelled_at(rate_ms(done), info.duration_ms());
                return self.finish_words(path, text, entry, got, Some(why));
            }
            done += pending.len() as u64;
            pieces += 1;
            if long {
                (hooks.progress)(
                    &FileProgress {
                        done_ms: rate_ms(done),
                        total_ms: rate_ms(done),
                        pieces,
                        elapsed_ms: ms_since(start),
                    },
                    &text.segments[had..],
                );
            }
        }
        self.finish_words(path, text, entry, got, info.truncated)
    }

    /// The pieces' words into the row, and why it holds only part of the file (cut short,
    /// damaged, cancelled) when it does.
    fn finish_words(
        &self,
        path: &Path,
        text: PieceText,
        entry: &mut Entry,
        got: &mut FileText,
        truncated: Option<String>,
    ) -> Result<()> {
        // A file of one piece keeps whisper's raw text as it came (untrimmed).
        let single_raw = match text.words.raws.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        };
        text.words.into_row(entry);
        if single_raw.is_some() {
            entry.raw_text = single_raw;
        }
        got.segments = text.segments;
        if let Some(why) = truncated {
            tracing::debug!("{}: transcribed in part: {why}", path.display());
            // The row says so, its outcome left as the words make it (the text is real).
            entry.error_kind = Some(
                if got.cancelled {
                    "cancelled"
                } else {
                    "audio_truncated"
                }
                .into(),
            );
            entry.error = Some(format!("transcribed in part: {why}"));
            got.truncated = Some(why);
        }
        Ok(())
    }

    /// Where a file's 16 kHz copy goes while it is decoded, when `history.keep_audio` is on.
    fn kept_audio_writer(&self, entry: &Entry) -> Option<(audio::WavWriter16k, PathBuf)> {
        if !self.config.history.keep_audio {
            return None;
        }
        let (dir, id) = (self.audio_dir.as_ref()?, entry.id?);
        let file = dir.join(format!("{id}.wav"));
        let writer = crate::paths::create_private_dir_all(dir)
            .and_then(|_| audio::WavWriter16k::create(&file));
        match writer {
            Ok(w) => Some((w, file)),
            Err(e) => {
                tracing::warn!("could not keep audio in {}: {e}", file.display());
                None
            }
        }
    }
}

/// The row's note of where a cancelled file stopped: "cancelled at 0:47 of 2:45".
fn cancelled_at(done_ms: u64, total_ms: u64) -> String {
    format!("cancelled at {} of {}", clock(done_ms), clock(total_ms))
}

/// `m:ss` (or `h:mm:ss`) of `ms`, for the row's note of where a file stopped.
fn clock(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}
