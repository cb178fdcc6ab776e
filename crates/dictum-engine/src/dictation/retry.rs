//! Retrying a dictation whose text did not reach a window (queue full, crashed or failed
//! transcription, typing failure, a killed Dictum): its kept audio (the spool's, else
//! `audio_path`) is transcribed again with the configured model and backend, the row is
//! updated, and the caller delivers the text (`dictum history --retry`, the history window's
//! Retry button) and then calls [`delivered`], which deletes the spool audio.
//!
//! A retry types text only: voice commands in it are not done (the words were not heard
//! live, in the window they were meant for).

use crate::dictation::messages::SinkReport;
use crate::pipeline::Engine;
use crate::store::row::{RowUpdate, RowWriter};
use crate::store::spool::{self, Spool};
use crate::store::{format_utc, now_ms, Entry, History};
use crate::timing::StageTimings;
use std::path::{Path, PathBuf};

/// The audio row `entry` can be retried from: its spool file, else its kept audio file.
pub fn audio_of(history: &History, entry: &Entry) -> Option<PathBuf> {
    let id = entry.id?;
    Spool::for_history(history.path()).audio_of(id).or_else(|| {
        entry
            .audio_path
            .as_deref()
            .map(PathBuf::from)
            .filter(|p| p.is_file())
    })
}

/// Whether `entry` can be retried: its text was not delivered and its audio is kept.
pub fn retryable(history: &History, entry: &Entry) -> bool {
    spool::undelivered(entry) && audio_of(history, entry).is_some()
}

/// Transcribes row `id`'s kept audio again with `engine` (its model is loaded as needed) and
/// stores the new text on the row, with a note that it was retried. Returns the row.
pub fn transcribe(history: &History, engine: &mut Engine, id: i64) -> Result<Entry, String> {
    let mut entry = history
        .get(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no entry #{id} (see the ids with `dictum history`)"))?;
    if !spool::undelivered(&entry) {
        return Err(format!(
            "#{id} was delivered already; nothing to retry (its text is in `dictum history`)"
        ));
    }
    let path = audio_of(history, &entry).ok_or_else(|| {
        format!(
            "#{id} has no kept audio to retry from (the spool keeps undelivered audio for 7 \
             days; older audio is deleted)"
        )
    })?;
    let samples = spool::read_audio(&path).map_err(|e| e.to_string())?;
    engine.ensure_model().map_err(|e| e.to_string())?;
    let seg = engine
        .transcribe_segment(&samples, "")
        .map_err(|e| format!("the retry failed too: {e} (the audio is still kept)"))?;
    let mut timings = StageTimings::default();
    seg.apply_to(&mut entry, &mut timings);
    let before = match (&entry.error_kind, &entry.error) {
        (Some(kind), Some(e)) => format!("; before: {kind}: {e}"),
        (_, Some(e)) => format!("; before: {e}"),
        _ => String::new(),
    };
    seg.into_row_text(&mut entry);
    entry.audio_ms = Some((samples.len() as u64 * 1000 / crate::SAMPLE_RATE as u64) as i64);
    entry.error_kind = Some("retried".into());
    entry.error = Some(format!(
        "retried from its kept audio at {}{before}",
        &format_utc(now_ms())[..19]
    ));
    entry.inject_method = None;
    entry.inject_error = None;
    entry.commands = None;
    RowWriter::new(history)
        .apply(RowUpdate::Retried(&entry))
        .map_err(|e| e.to_string())?;
    Ok(entry)
}

/// Records how the retried text was delivered; once it was, the spool audio is deleted (or,
/// with `keep_audio_dir` (history.keep_audio on), moved there as `<id>.wav`).
pub fn delivered(
    history: &History,
    entry: &mut Entry,
    report: &SinkReport,
    keep_audio_dir: Option<&Path>,
) -> Result<(), String> {
    settle(history.path(), entry, report, keep_audio_dir);
    RowWriter::new(history)
        .apply(RowUpdate::Delivered(entry))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// [`delivered`] before the row is written: how the text went into `entry`, and its spool
/// audio (of the history at `db`) deleted or kept once delivered. The daemon writes the row
/// through its row owner.
pub fn settle(db: &Path, entry: &mut Entry, report: &SinkReport, keep_audio_dir: Option<&Path>) {
    entry.inject_method = Some(report.method.clone());
    entry.inject_error = report.error.clone();
    if let Some(id) = entry.id.filter(|_| !spool::undelivered(entry)) {
        let spool = Spool::for_history(db);
        let in_spool = entry
            .audio_path
            .as_deref()
            .is_none_or(|p| spool.holds(Path::new(p)));
        if in_spool {
            entry.audio_path = None;
            if let (Some(dir), Ok(Some(wav))) = (keep_audio_dir, spool.seal(id)) {
                let kept = dir.join(format!("{id}.wav"));
                let moved = crate::paths::create_private_dir_all(dir).and_then(|_| {
                    std::fs::rename(&wav, &kept).or_else(|_| std::fs::copy(&wav, &kept).map(|_| ()))
                });
                if moved.is_ok() {
                    entry.audio_path = Some(kept.display().to_string());
                }
            }
        }
        spool.remove(id);
    }
}
