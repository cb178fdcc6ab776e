//! The spool: a private folder (`<data dir>/spool/`, 0700, files 0600) holding the audio of
//! every utterance whose text has not reached a window yet, whatever `history.keep_audio`
//! says, so that nothing said is lost to a full queue, a crashed or failed transcription, a
//! database that refuses writes, a failed typing or a killed process.
//!
//! - While an utterance is recorded its samples are streamed to `spool/<id>.pcm` (16 kHz mono
//!   16-bit little-endian, no header) by a [`LiveWriter`], written out at least every 0.5 s of
//!   audio: a process killed mid-utterance (SIGKILL, power cut excepted) leaves its audio
//!   behind, which the next start turns into `spool/<id>.wav` ([`Spool::seal`], called from
//!   `store::recovery`) and records on the row.
//! - An utterance whose text was delivered (typed or pasted) has its spool file deleted
//!   ([`Spool::settle`]); one whose text was not keeps it as `spool/<id>.wav`, and its row
//!   says how to retry it (`dictum history --retry <id>`, [`retry_hint`]).
//! - The spool is bounded: at most [`MAX_BYTES`] (the oldest files go first, each with a log
//!   line) and [`MAX_AGE`] (pruned at start and by the daily retention pass).

use super::{Entry, Outcome};
use crate::paths::{create_private_dir_all, create_private_file, make_private};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The spool never holds more than this (oldest files dropped first): about 9 hours of audio.
pub const MAX_BYTES: u64 = 1 << 30;
/// Spool files older than this are deleted.
pub const MAX_AGE: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// The live writer writes its samples out at least every this many samples (0.5 s).
pub const FLUSH_SAMPLES: usize = crate::SAMPLE_RATE as usize / 2;

/// What the row and the notice say about an utterance whose audio is in the spool.
pub fn retry_hint(id: i64) -> String {
    format!("its audio is kept for retry: `dictum history --retry {id}`")
}

/// The spool folder of the history database at `db`: `spool/` beside it (the data dir).
pub fn dir_for(db: &Path) -> PathBuf {
    db.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("spool")
}

#[derive(Debug, Clone)]
pub struct Spool {
    dir: PathBuf,
}

/// What [`Spool::prune`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub too_old: usize,
    pub over_size: usize,
    /// Bytes left in the spool.
    pub bytes_left: u64,
}

impl Spool {
    /// The spool of the history database at `db` (nothing is created yet).
    pub fn for_history(db: &Path) -> Spool {
        Spool { dir: dir_for(db) }
    }

    /// A spool in `dir` (tests).
    pub fn at(dir: PathBuf) -> Spool {
        Spool { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn name(id: Option<i64>, seq: u64) -> String {
        match id {
            Some(id) => id.to_string(),
            None => format!("unsaved-{}-{seq}", super::now_ms()),
        }
    }

    pub fn wav_path(&self, id: i64) -> PathBuf {
        self.dir.join(format!("{id}.wav"))
    }

    pub fn pcm_path(&self, id: i64) -> PathBuf {
        self.dir.join(format!("{id}.pcm"))
    }

    /// Whether `path` is a file of this spool.
    pub fn holds(&self, path: &Path) -> bool {
        path.parent() == Some(self.dir.as_path())
    }

    /// Starts streaming a live utterance to `<id>.pcm`.
    pub fn live(&self, id: Option<i64>, seq: u64) -> std::io::Result<LiveWriter> {
        create_private_dir_all(&self.dir)?;
        let path = self.dir.join(format!("{}.pcm", Spool::name(id, seq)));
        let file = create_private_file(&path)?;
        Ok(LiveWriter {
            file: Some(file),
            path,
            written: 0,
            pending: Vec::with_capacity(FLUSH_SAMPLES * 2),
        })
    }

    /// Keeps `samples` as `<id>.wav` (replacing the live `.pcm`), then holds the spool to its
    /// size bound. Returns the file.
    pub fn keep(&self, id: Option<i64>, seq: u64, samples: &[f32]) -> std::io::Result<PathBuf> {
        create_private_dir_all(&self.dir)?;
        let file = self.dir.join(format!("{}.wav", Spool::name(id, seq)));
        crate::audio::write_wav_16k(&file, samples)?;
        if let Some(id) = id {
            remove_quietly(&self.pcm_path(id));
        }
        self.prune(MAX_BYTES, MAX_AGE);
        Ok(file)
    }

    /// The spool audio of row `id` as a WAV: the live `.pcm` a dead (or finished) recording
    /// left is converted (and removed); an existing `.wav` is returned as it is. None when the
    /// spool has nothing for `id`.
    pub fn seal(&self, id: i64) -> std::io::Result<Option<PathBuf>> {
        let wav = self.wav_path(id);
        let pcm = self.pcm_path(id);
        if !pcm.is_file() {
            return Ok(wav.is_file().then_some(wav));
        }
        let samples = read_pcm(&pcm)?;
        crate::audio::write_wav_16k(&wav, &samples)?;
        remove_quietly(&pcm);
        Ok(Some(wav))
    }

    /// The spool file of row `id`, WAV or live PCM, if there is one.
    pub fn audio_of(&self, id: i64) -> Option<PathBuf> {
        [self.wav_path(id), self.pcm_path(id)]
            .into_iter()
            .find(|p| p.is_file())
    }

    /// Deletes row `id`'s spool files (its text was delivered, or it is gone).
    pub fn remove(&self, id: i64) {
        remove_quietly(&self.wav_path(id));
        remove_quietly(&self.pcm_path(id));
    }

    /// After an utterance's delivery was tried: a delivered one (or one with nothing to
    /// deliver: no speech, cancelled) loses its spool files; one whose text did not reach a
    /// window keeps its audio as a spool WAV, recorded on the row, and its row says how to
    /// retry it (in `inject_error` when its text exists but was not typed).
    pub fn settle(&self, entry: &mut Entry) {
        let Some(id) = entry.id else {
            return;
        };
        if !undelivered(entry) {
            self.remove(id);
            return;
        }
        // Audio kept elsewhere (history.keep_audio): that copy is the one to retry from.
        if let Some(kept) = entry.audio_path.as_deref().map(Path::new) {
            if kept.is_file() && !self.holds(kept) {
                remove_quietly(&self.pcm_path(id));
                return;
            }
        }
        match self.seal(id) {
            Ok(Some(wav)) => {
                entry.audio_path = Some(wav.display().to_string());
                let hint = retry_hint(id);
                let slot = if entry.outcome == Outcome::Ok {
                    &mut entry.inject_error
                } else {
                    &mut entry.error
                };
                if !slot.as_deref().unwrap_or("").contains("--retry") {
                    *slot = Some(match slot.take() {
                        Some(e) => format!("{e}; {hint}"),
                        None => hint,
                    });
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("spool: could not keep the audio of dictation #{id}: {e}"),
        }
    }

    /// Deletes spool files older than `max_age`, then the oldest while the spool holds more
    /// than `max_bytes`; each deletion is logged. A missing spool is fine.
    pub fn prune(&self, max_bytes: u64, max_age: Duration) -> Pruned {
        let mut done = Pruned::default();
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return done;
        };
        let _ = make_private(&self.dir);
        let now = SystemTime::now();
        let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for item in read.flatten() {
            let Ok(meta) = item.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(now);
            let path = item.path();
            if now.duration_since(modified).unwrap_or_default() > max_age {
                if std::fs::remove_file(&path).is_ok() {
                    tracing::info!(
                        "spool: deleted {} (older than {} days)",
                        path.display(),
                        max_age.as_secs() / 86_400
                    );
                    done.too_old += 1;
                }
                continue;
            }
            files.push((modified, meta.len(), path));
        }
        files.sort();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        for (_, len, path) in &files {
            if total <= max_bytes {
                break;
            }
            if std::fs::remove_file(path).is_ok() {
                tracing::warn!(
                    "spool: deleted {} (the spool is over its {} MiB bound; oldest first)",
                    path.display(),
                    max_bytes >> 20
                );
                total -= len;
                done.over_size += 1;
            }
        }
        done.bytes_left = total;
        done
    }
}

/// At the start of a dictation process (holding the history's lock, before crashed rows are
/// marked): rows the database refused last time are replayed from the journal, and the spool
/// is pruned (age, size). Returns what to tell the user.
pub fn at_start(history: &super::History) -> Vec<String> {
    let mut told = Vec::new();
    let journal = super::journal::Journal::for_history(history.path());
    match journal.replay(history) {
        Ok(r) if r.written + r.skipped > 0 => told.push(format!(
            "{} dictation(s) the history database refused earlier were written to it from {}",
            r.written,
            journal.path().display()
        )),
        Ok(_) => {}
        Err((r, why)) => told.push(format!(
            "{} dictation(s) in {} could not be written to the history database yet ({why}); \
             they are kept there and written once it accepts them",
            r.left,
            journal.path().display()
        )),
    }
    let pruned = Spool::for_history(history.path()).prune(MAX_BYTES, MAX_AGE);
    if pruned.too_old + pruned.over_size > 0 {
        tracing::info!(
            "spool: {} file(s) older than 7 days and {} over the size bound deleted",
            pruned.too_old,
            pruned.over_size
        );
    }
    told
}

/// Whether the row's text (or its audio's text) has not reached a window: a failed or
/// interrupted transcription, or text that was not typed. No speech, a cancel, and text
/// emptied on purpose (voice commands only) count as done.
pub fn undelivered(entry: &Entry) -> bool {
    let method = entry.inject_method.as_deref().unwrap_or("none");
    if method == "cancelled" {
        return false;
    }
    match entry.outcome {
        Outcome::NoSpeech => false,
        Outcome::Ok => {
            let empty = entry.text.as_deref().unwrap_or("").trim().is_empty();
            crate::inject::inject_failed(entry.inject_error.as_deref())
                || (!empty && matches!(method, "none" | "clipboard_only"))
        }
        Outcome::Error | Outcome::Interrupted | Outcome::Pending => true,
    }
}

/// Reads spool audio: a WAV, or a live `.pcm` (16-bit little-endian, 16 kHz mono).
pub fn read_audio(path: &Path) -> crate::Result<Vec<f32>> {
    if path.extension().is_some_and(|e| e == "pcm") {
        return read_pcm(path).map_err(|e| crate::Error::Store {
            path: path.to_path_buf(),
            reason: e.to_string(),
        });
    }
    Ok(crate::audio::decode_16k(path, 3600)?.samples)
}

fn read_pcm(path: &Path) -> std::io::Result<Vec<f32>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    // A torn last sample (killed mid-write) is dropped.
    Ok(bytes
        .chunks_exact(2)
        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / i16::MAX as f32)
        .collect())
}

fn remove_quietly(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("spool: could not delete {}: {e}", path.display()),
    }
}

/// Streams a live utterance's samples to its spool `.pcm` as they are captured. Call
/// [`LiveWriter::sync`] with the utterance's whole buffer each time it grows: what is new is
/// converted, and written out once half a second of it is waiting. A write error is logged
/// once and the writer stops (the dictation itself goes on).
pub struct LiveWriter {
    file: Option<std::fs::File>,
    path: PathBuf,
    /// Samples of the buffer converted so far.
    written: usize,
    pending: Vec<u8>,
}

impl LiveWriter {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes the samples of `buf` not seen yet; writes them out every 0.5 s of audio.
    pub fn sync(&mut self, buf: &[f32]) {
        if self.file.is_none() {
            return;
        }
        if let Some(new) = buf.get(self.written..) {
            for &s in new {
                let v = (s.clamp(-1.0, 1.0) * i16::MAX as f32).round() as i16;
                self.pending.extend_from_slice(&v.to_le_bytes());
            }
            self.written = buf.len();
        }
        if self.pending.len() >= FLUSH_SAMPLES * 2 {
            self.flush();
        }
    }

    /// The utterance is complete (`all`: every sample, post-roll included): the rest is
    /// written out and the file closed. The file stays until the text is delivered.
    pub fn finish(mut self, all: &[f32]) {
        self.sync(all);
        self.flush();
        self.file = None;
    }

    /// The utterance was cancelled: its file is deleted.
    pub fn discard(mut self) {
        self.file = None;
        self.pending.clear();
        remove_quietly(&self.path);
    }

    fn flush(&mut self) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        if self.pending.is_empty() {
            return;
        }
        if let Err(e) = file.write_all(&self.pending) {
            tracing::warn!(
                "spool: cannot write {} ({e}); this dictation's audio survives a crash only \
                 if the disk takes it again",
                self.path.display()
            );
            self.file = None;
        }
        self.pending.clear();
    }
}

impl Drop for LiveWriter {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("stat").permissions().mode() & 0o777
    }

    fn tone(n: usize) -> Vec<f32> {
        (0..n).map(|i| ((i as f32) * 0.05).sin() * 0.5).collect()
    }

    /// Restores the umask when dropped.
    struct Umask(libc::mode_t);
    impl Umask {
        fn set(m: libc::mode_t) -> Umask {
            // SAFETY: umask only swaps the process's creation mask.
            Umask(unsafe { libc::umask(m) })
        }
    }
    impl Drop for Umask {
        fn drop(&mut self) {
            // SAFETY: as above.
            unsafe {
                libc::umask(self.0);
            }
        }
    }

    #[test]
    fn spool_files_are_private_under_a_permissive_umask() {
        let _umask = Umask::set(0);
        let dir = tempfile::tempdir().expect("tempdir");
        let spool = Spool::for_history(&dir.path().join("history.sqlite3"));
        let mut live = spool.live(Some(7), 0).expect("live");
        live.sync(&tone(FLUSH_SAMPLES + 10));
        let pcm = live.path().to_path_buf();
        live.finish(&tone(FLUSH_SAMPLES + 20));
        let wav = spool.keep(Some(8), 1, &tone(100)).expect("keep");
        let sealed = spool.seal(7).expect("seal").expect("wav");
        assert!(!pcm.exists(), "the pcm is replaced by the wav");
        assert_eq!(mode(spool.dir()), 0o700);
        for f in [&wav, &sealed] {
            assert_eq!(mode(f), 0o600, "{}", f.display());
        }
    }

    #[test]
    fn a_writer_dropped_without_close_leaves_audio_that_recovery_turns_into_a_wav() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spool = Spool::at(dir.path().join("spool"));
        let audio = tone(FLUSH_SAMPLES * 3 + 123);
        let mut live = spool.live(Some(42), 0).expect("live");
        // Captured in small pieces, like the controller's pump.
        for end in (160..=audio.len()).step_by(160) {
            live.sync(&audio[..end]);
        }
        // A kill: no finish, no Drop.
        std::mem::forget(live);
        let on_disk = std::fs::metadata(spool.pcm_path(42)).expect("pcm").len() as usize / 2;
        assert!(
            on_disk >= audio.len() - FLUSH_SAMPLES,
            "at most 0.5 s is lost: {on_disk} of {}",
            audio.len()
        );
        let wav = spool.seal(42).expect("seal").expect("a wav");
        assert_eq!(wav, spool.wav_path(42));
        let back = read_audio(&wav).expect("read");
        assert_eq!(back.len(), on_disk);
        assert!((back[1000] - audio[1000]).abs() < 1e-3);
        assert!(!spool.pcm_path(42).exists());
        assert_eq!(spool.audio_of(42), Some(wav));
    }

    #[test]
    fn the_spool_is_held_to_its_size_oldest_first_and_its_age() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spool = Spool::at(dir.path().join("spool"));
        let mut files = Vec::new();
        for id in 1..=4 {
            files.push(spool.keep(Some(id), 0, &tone(16_000)).expect("keep"));
        }
        let size = std::fs::metadata(&files[0]).expect("stat").len();
        let ago = |days: u64| SystemTime::now() - Duration::from_secs(days * 86_400);
        // Oldest first: 1 is 3 days old, 2 two days, 3 one day, 4 now; 5 is 8 days old.
        for (i, f) in files.iter().take(3).enumerate() {
            let t = std::fs::File::options().write(true).open(f).expect("open");
            t.set_modified(ago(3 - i as u64)).expect("mtime");
        }
        let old = spool.keep(Some(5), 0, &tone(100)).expect("keep");
        std::fs::File::options()
            .write(true)
            .open(&old)
            .expect("open")
            .set_modified(ago(8))
            .expect("mtime");
        let got = spool.prune(size * 2, MAX_AGE);
        assert_eq!(got.too_old, 1, "{got:?}");
        assert_eq!(got.over_size, 2, "{got:?}");
        assert!(!old.exists() && !files[0].exists() && !files[1].exists());
        assert!(files[2].exists() && files[3].exists());
        assert_eq!(got.bytes_left, size * 2);
    }

    #[test]
    fn settle_deletes_delivered_audio_and_keeps_the_rest_with_a_retry_hint() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spool = Spool::at(dir.path().join("spool"));
        let mut typed = Entry::new(super::super::Source::Mic);
        typed.id = Some(1);
        typed.outcome = Outcome::Ok;
        typed.text = Some("hello".into());
        typed.inject_method = Some("xdotool".into());
        spool.live(Some(1), 0).expect("live").finish(&tone(500));
        spool.settle(&mut typed);
        assert_eq!(spool.audio_of(1), None, "delivered: deleted");

        // A Wayland paste says it is unconfirmed: delivered all the same, the row unchanged.
        let note = crate::inject::PASTE_UNCONFIRMED;
        let mut pasted = typed.clone();
        pasted.id = Some(4);
        pasted.inject_method = Some("virtual_keyboard_paste".into());
        pasted.inject_error = Some(note.into());
        spool.live(Some(4), 0).expect("live").finish(&tone(500));
        spool.settle(&mut pasted);
        assert_eq!(spool.audio_of(4), None, "pasted: deleted");
        assert_eq!(pasted.inject_error.as_deref(), Some(note));
        pasted.inject_error = Some(format!("{note}; the previous clipboard was not restored"));
        assert!(
            undelivered(&pasted),
            "more than the note is said: as before"
        );

        let mut failed = typed.clone();
        failed.id = Some(2);
        failed.inject_method = Some("none".into());
        failed.inject_error = Some("no display".into());
        spool.live(Some(2), 0).expect("live").finish(&tone(500));
        spool.settle(&mut failed);
        assert_eq!(
            failed.audio_path.as_deref(),
            Some(spool.wav_path(2).display().to_string().as_str())
        );
        let said = failed.inject_error.as_deref().unwrap_or("");
        assert!(said.contains("dictum history --retry 2"), "{said}");

        let mut silent = typed.clone();
        silent.id = Some(3);
        silent.outcome = Outcome::NoSpeech;
        spool.live(Some(3), 0).expect("live").finish(&tone(500));
        spool.settle(&mut silent);
        assert_eq!(spool.audio_of(3), None);
    }
}
