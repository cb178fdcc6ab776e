//! After a crash: rows a dead process left `pending` become `interrupted` (their audio kept
//! when it exists), and one dictation process at a time owns a history database.
//!
//! Who may mark what:
//! - only a long-running dictation process (the `dictum run` daemon, the tray) marks rows,
//!   once at start, and only while it holds the database's [`InstanceLock`];
//! - `mic` rows are written only by a lock holder, so with the lock in hand every `pending`
//!   `mic` row older than this process belongs to a process that is gone;
//! - `file` rows are written by `dictum transcribe`, which takes no lock and may run beside
//!   the daemon for hours (a long meeting): they are marked only when no `dictum transcribe`
//!   process is running for this user (read from `/proc`) and no file queue runs in this
//!   process (the tray's Transcribe window, [`FilesInProcess`]); otherwise they are left for
//!   the next start.

use super::{History, Outcome};

use super::row::{Applied, RowUpdate, RowWriter};
use crate::Result;
use rusqlite::params;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The single-instance lock of a history database: an exclusive `flock` on
/// `<database>.lock`, released by the kernel when the process ends (a crash included).
pub struct InstanceLock {
    _file: File,
    path: PathBuf,
}

impl InstanceLock {
    /// Takes the lock for the database at `db`, or says who holds it.
    #[cfg(unix)]
    pub fn acquire(db: &Path) -> std::result::Result<InstanceLock, String> {
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let mut path = db.as_os_str().to_owned();
        path.push(".lock");
        let path = PathBuf::from(path);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::paths::create_private_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|e| format!("cannot open the lock file {}: {e}", path.display()))?;
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() {
                    "another Dictum".to_string()
                } else {
                    format!("another Dictum (pid {holder})")
                };
                return Err(format!(
                    "{who} is already running dictation with {}; use that one (`dictum ctl \
                     toggle`, the tray) or quit it first (`dictum ctl quit`)",
                    db.display()
                ));
            }
            return Err(format!("cannot lock {}: {err}", path.display()));
        }
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = writeln!(file, "{}", std::process::id());
        let _ = file.flush();
        Ok(InstanceLock { _file: file, path })
    }

    #[cfg(not(unix))]
    pub fn acquire(db: &Path) -> std::result::Result<InstanceLock, String> {
        let mut path = db.as_os_str().to_owned();
        path.push(".lock");
        let path = PathBuf::from(path);
        let file =
            File::create(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Ok(InstanceLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// What [`mark_interrupted`] did.
/// File queues alive in this process (`filejobs`): their `pending` rows are live.
static FILE_QUEUES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Held by a file queue for as long as it lives: while any is held, start-up recovery in
/// this process leaves `pending` file rows alone (the queue may have made one just before the
/// dictation started).
#[derive(Debug)]
pub struct FilesInProcess(());

impl FilesInProcess {
    pub fn hold() -> FilesInProcess {
        FILE_QUEUES.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        FilesInProcess(())
    }
}

impl Drop for FilesInProcess {
    fn drop(&mut self) {
        FILE_QUEUES.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Rows marked `interrupted`.
    pub interrupted: usize,
    /// Of those, rows whose audio is kept.
    pub with_audio: usize,
    /// `pending` file rows left alone because a `dictum transcribe` is running.
    pub left_to_live_transcribe: usize,
}

impl Recovered {
    /// One line for the user, when there is anything to say.
    pub fn message(&self) -> Option<String> {
        (self.interrupted > 0).then(|| {
            format!(
                "{} dictation(s) left unfinished by an earlier Dictum that stopped (crash or \
                 kill) are marked `interrupted` in history ({} with audio kept: `dictum history` \
                 lists them; `dictum history --retry ID` redoes one)",
                self.interrupted, self.with_audio
            )
        })
    }
}

/// Marks `pending` rows created before `started_ms` as `interrupted` (see the module docs for
/// which). A row's audio is its `audio_path`, or `audio_dir/{id}.wav` when that file exists.
/// Call only while holding the database's [`InstanceLock`].
pub fn mark_interrupted(
    history: &History,
    started_ms: i64,
    audio_dir: Option<&Path>,
) -> Result<Recovered> {
    let transcribe_running = FILE_QUEUES.load(std::sync::atomic::Ordering::Acquire) > 0
        || live_transcribe_pids().next().is_some();
    let mut stmt = history
        .conn
        .prepare(
            "SELECT id, source, audio_path FROM dictations \
             WHERE outcome = 'pending' AND created_at_ms < ?1",
        )
        .map_err(|e| history.err(e))?;
    let rows: Vec<(i64, String, Option<String>)> = stmt
        .query_map(params![started_ms], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(|e| history.err(e))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| history.err(e))?;
    drop(stmt);
    let mut done = Recovered::default();
    let spool = super::spool::Spool::for_history(history.path());
    for (id, source, audio_path) in rows {
        if source == "file" && transcribe_running {
            done.left_to_live_transcribe += 1;
            continue;
        }
        // The audio: a kept file, else what the live recording streamed to the spool (made
        // a WAV now), else the audio folder's copy.
        let audio = audio_path
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .or_else(|| match spool.seal(id) {
                Ok(wav) => wav,
                Err(e) => {
                    tracing::warn!("spool: the audio of dictation #{id} cannot be recovered: {e}");
                    None
                }
            })
            .or_else(|| audio_dir.map(|d| d.join(format!("{id}.wav"))))
            .filter(|p| p.is_file());
        let message = match &audio {
            Some(p) => format!(
                "Dictum stopped (crash or kill) before this dictation was finished; {} (at {})",
                super::spool::retry_hint(id),
                p.display()
            ),
            None => "Dictum stopped (crash or kill) before this dictation was finished; its \
                     audio was not kept"
                .to_string(),
        };
        let audio = audio.map(|p| p.display().to_string());
        if fail_if_pending(
            history,
            id,
            Outcome::Interrupted,
            "interrupted",
            &message,
            audio.as_deref(),
        )? {
            done.interrupted += 1;
            done.with_audio += usize::from(audio.is_some());
        }
    }
    Ok(done)
}

/// Sets row `id`'s outcome, error and (when given) audio path, only if it is still `pending`
/// (a late result written meanwhile is never overwritten). Returns whether it changed.
pub fn fail_if_pending(
    history: &History,
    id: i64,
    outcome: Outcome,
    kind: &str,
    message: &str,
    audio_path: Option<&str>,
) -> Result<bool> {
    let gave_up = RowUpdate::GaveUp {
        outcome,
        kind,
        message,
        audio_path,
    };
    match RowWriter::new(history).update(id, gave_up) {
        Ok(applied) => Ok(applied == Applied::Written),
        // Deleted meanwhile: nothing to mark.
        Err(_) if history.get(id)?.is_none() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Pids of this user's running `dictum transcribe` processes (other than this one).
fn live_transcribe_pids() -> impl Iterator<Item = u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(move |e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            if pid == me {
                return None;
            }
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            is_dictum_transcribe(&cmdline).then_some(pid)
        })
}

/// True for the command line (NUL-separated) of `dictum ... transcribe ...`.
fn is_dictum_transcribe(cmdline: &[u8]) -> bool {
    let mut args = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned());
    let Some(exe) = args.next() else {
        return false;
    };
    let name = Path::new(&exe)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name == "dictum" && args.any(|a| a == "transcribe")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{now_ms, Entry, Source};

    fn row(history: &History, source: Source, outcome: Outcome, at: i64) -> i64 {
        let mut e = Entry::new(source);
        e.outcome = outcome;
        e.created_at_ms = at;
        history.insert(&mut e).expect("insert")
    }

    #[test]
    fn crashed_rows_become_interrupted_with_their_audio_and_live_ones_stay() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("history.sqlite3");
        let audio = dir.path().join("audio");
        std::fs::create_dir_all(&audio).expect("audio dir");
        let history = History::open(&db).expect("open");
        let started = now_ms();
        let old_mic = row(&history, Source::Mic, Outcome::Pending, started - 60_000);
        let old_mic_no_audio = row(&history, Source::Mic, Outcome::Pending, started - 50_000);
        let done = row(&history, Source::Mic, Outcome::Ok, started - 40_000);
        let ours = row(&history, Source::Mic, Outcome::Pending, started + 1);
        crate::audio::write_wav_16k(&audio.join(format!("{old_mic}.wav")), &[0.0; 160])
            .expect("wav");
        let got = mark_interrupted(&history, started, Some(&audio)).expect("mark");
        assert_eq!(got.interrupted, 2, "{got:?}");
        assert_eq!(got.with_audio, 1, "{got:?}");
        let get = |id| history.get(id).expect("get").expect("row");
        let a = get(old_mic);
        assert_eq!(a.outcome, Outcome::Interrupted);
        assert_eq!(a.error_kind.as_deref(), Some("interrupted"));
        assert!(a
            .audio_path
            .as_deref()
            .unwrap_or("")
            .ends_with(&format!("{old_mic}.wav")));
        assert!(a
            .error
            .as_deref()
            .unwrap_or("")
            .contains(&format!("dictum history --retry {old_mic}")));
        let b = get(old_mic_no_audio);
        assert_eq!(b.outcome, Outcome::Interrupted);
        assert!(b.audio_path.is_none());
        assert_eq!(get(done).outcome, Outcome::Ok);
        assert_eq!(
            get(ours).outcome,
            Outcome::Pending,
            "this process's own row"
        );
        // Filtered and listed as a status of its own.
        let listed = history.list(&crate::store::Query::default()).expect("list");
        assert_eq!(
            listed
                .iter()
                .filter(|e| e.outcome == Outcome::Interrupted)
                .count(),
            2
        );
        // A second pass finds nothing.
        let again = mark_interrupted(&history, started, Some(&audio)).expect("mark");
        assert_eq!(again.interrupted, 0);
        assert!(got.message().is_some() && again.message().is_none());
    }

    #[test]
    fn a_recording_killed_mid_utterance_becomes_a_spool_wav_on_its_row() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("history.sqlite3");
        let history = History::open(&db).expect("open");
        let started = now_ms();
        let id = row(&history, Source::Mic, Outcome::Pending, started - 1_000);
        let spool = crate::store::spool::Spool::for_history(&db);
        let mut live = spool.live(Some(id), 0).expect("live");
        live.sync(&vec![0.25; crate::store::spool::FLUSH_SAMPLES * 2]);
        // SIGKILL: the writer is never closed.
        std::mem::forget(live);
        let got = mark_interrupted(&history, started, None).expect("mark");
        assert_eq!((got.interrupted, got.with_audio), (1, 1), "{got:?}");
        let e = history.get(id).expect("get").expect("row");
        assert_eq!(e.outcome, Outcome::Interrupted);
        let wav = spool.wav_path(id);
        assert_eq!(
            e.audio_path.as_deref(),
            Some(wav.display().to_string().as_str())
        );
        let samples = crate::store::spool::read_audio(&wav).expect("a readable wav");
        assert!(
            samples.len() >= crate::store::spool::FLUSH_SAMPLES * 2 - 1,
            "{}",
            samples.len()
        );
        assert!(!spool.pcm_path(id).exists());
        assert!(e.error.as_deref().unwrap_or("").contains("--retry"));
    }

    #[test]
    fn a_late_result_is_never_overwritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        let history = History::open(&dir.path().join("h.sqlite3")).expect("open");
        let id = row(&history, Source::Mic, Outcome::Ok, 1);
        let changed =
            fail_if_pending(&history, id, Outcome::Error, "timeout", "late", None).expect("ok");
        assert!(!changed);
        assert_eq!(
            history.get(id).expect("get").expect("row").outcome,
            Outcome::Ok
        );
    }

    #[test]
    fn transcribe_command_lines_are_recognised() {
        assert!(is_dictum_transcribe(
            b"/usr/bin/dictum\0transcribe\0a.wav\0"
        ));
        assert!(is_dictum_transcribe(b"dictum\0--json\0transcribe\0"));
        assert!(!is_dictum_transcribe(b"/usr/bin/dictum\0run\0"));
        assert!(!is_dictum_transcribe(b"vim\0transcribe\0"));
        assert!(!is_dictum_transcribe(b""));
    }

    #[test]
    fn a_second_instance_is_refused_and_the_lock_dies_with_its_holder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("history.sqlite3");
        let first = InstanceLock::acquire(&db).expect("first");
        let second = InstanceLock::acquire(&db);
        let err = second.err().expect("refused");
        assert!(
            err.contains(&format!("pid {}", std::process::id())) && err.contains("dictum ctl quit"),
            "{err}"
        );
        drop(first);
        InstanceLock::acquire(&db).expect("free again");
    }
}
