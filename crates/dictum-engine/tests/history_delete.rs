//! Forgetting for real (issue 12, items 4 and 8): a deleted dictation's text is no longer in
//! any of SQLite's files (database, WAL, SHM: grepped byte for byte), its audio is gone,
//! "delete all" and retention (also as the daily thread) take audio with them; fresh
//! databases opened by 8 connections at once all migrate once; a damaged database is moved
//! aside and a fresh one started, a locked one never is.

use dictum_engine::store::{retention, Entry, History, Outcome, Query, Source, MIGRATION_FILES};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const SECRET: &str = "the quokka zanzibar passphrase is marmalade seventeen";
const SECRET_WORD: &str = "zanzibar";

fn files_of(db: &Path) -> Vec<PathBuf> {
    ["", "-wal", "-shm"]
        .iter()
        .map(|s| {
            let mut p = db.as_os_str().to_owned();
            p.push(s);
            PathBuf::from(p)
        })
        .collect()
}

/// Which of the database's files contain `needle`, and the total bytes grepped.
fn grep(db: &Path, needle: &str) -> (Vec<String>, usize) {
    let mut hits = Vec::new();
    let mut total = 0;
    for f in files_of(db) {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        total += bytes.len();
        if bytes
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
        {
            hits.push(f.display().to_string());
        }
    }
    (hits, total)
}

fn entry(text: &str, created_at_ms: i64) -> Entry {
    let mut e = Entry::new(Source::Mic);
    e.outcome = Outcome::Ok;
    e.raw_text = Some(text.to_lowercase());
    e.text = Some(text.to_string());
    e.window_title = Some(format!("window of {text}"));
    if created_at_ms != 0 {
        e.created_at_ms = created_at_ms;
    }
    e
}

/// A kept recording for `e` in `<dir>/audio/<id>.wav` (the bytes only need to exist).
fn keep_audio(history: &History, e: &mut Entry, dir: &Path) -> PathBuf {
    let audio = dir.join("audio");
    std::fs::create_dir_all(&audio).expect("audio dir");
    let file = audio.join(format!("{}.wav", e.id.expect("inserted")));
    std::fs::write(&file, b"RIFF....WAVE").expect("wav");
    e.audio_path = Some(file.display().to_string());
    history.update(e).expect("update");
    file
}

fn seed(history: &History, n: usize) {
    for i in 0..n {
        let mut e = entry(
            &format!("ordinary dictation number {i} about the weekly report"),
            0,
        );
        history.insert(&mut e).expect("insert");
    }
}

#[test]
fn a_deleted_sentence_is_in_no_file_and_its_audio_is_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.sqlite3");
    let history = History::open(&db).expect("open");
    // Another idle connection, as the daemon's worker and injector hold.
    let other = History::open(&db).expect("second connection");
    seed(&history, 40);
    let mut secret = entry(SECRET, 0);
    history.insert(&mut secret).expect("insert");
    let wav = keep_audio(&history, &mut secret, dir.path());
    seed(&history, 40);
    // Into the database file proper (as an automatic checkpoint does), then touched again so
    // the WAL holds copies too.
    rusqlite::Connection::open(&db)
        .and_then(|c| c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())))
        .expect("checkpoint");
    secret.llm_ms = Some(1.0);
    history.update(&secret).expect("update");
    let (before, _) = grep(&db, SECRET);
    assert_eq!(before.len(), 2, "in the database and the WAL: {before:?}");
    assert!(
        !before.is_empty(),
        "the test cannot fail: the sentence is not in the files before deletion"
    );

    let t = Instant::now();
    assert_eq!(
        history.delete(&[secret.id.expect("id")]).expect("delete"),
        1
    );
    let took = t.elapsed();
    let (after, total) = grep(&db, SECRET);
    assert!(
        after.is_empty(),
        "the deleted sentence is still in {after:?}"
    );
    let (word, _) = grep(&db, SECRET_WORD);
    assert!(word.is_empty(), "a deleted word is still in {word:?}");
    let (title, _) = grep(&db, &format!("window of {SECRET}"));
    assert!(title.is_empty(), "the window title is still in {title:?}");
    assert!(!wav.exists(), "its audio is still there");
    assert_eq!(
        std::fs::metadata(files_of(&db)[1].as_path())
            .map(|m| m.len())
            .unwrap_or(0),
        0,
        "WAL truncated"
    );
    eprintln!("delete + scrub: {took:?}, {total} bytes grepped");

    // The rest is intact and still searchable, from both connections.
    let hits = |h: &History, q: &str| {
        h.list(&Query {
            limit: 0,
            search: Some(q.into()),
        })
        .expect("search")
        .len()
    };
    assert_eq!(hits(&history, "weekly report"), 80);
    assert_eq!(hits(&other, "weekly report"), 80);
    assert_eq!(hits(&other, SECRET_WORD), 0);
    assert!(history.get(secret.id.expect("id")).expect("get").is_none());
    // Deleting nothing, or ids that do not exist, is fine.
    assert_eq!(history.delete(&[]).expect("none"), 0);
    assert_eq!(history.delete(&[987_654]).expect("missing"), 0);
}

#[test]
fn delete_all_takes_every_row_and_every_recording() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.sqlite3");
    let history = History::open(&db).expect("open");
    seed(&history, 10);
    let mut kept = Vec::new();
    for text in [SECRET, "another private thought"] {
        let mut e = entry(text, 0);
        history.insert(&mut e).expect("insert");
        kept.push(keep_audio(&history, &mut e, dir.path()));
    }
    // A recording whose row is already gone, and a file that is not Dictum's.
    let orphan = dir.path().join("audio/999.wav");
    std::fs::write(&orphan, b"RIFF").expect("orphan");
    let foreign = dir.path().join("audio/notes.txt");
    std::fs::write(&foreign, b"mine").expect("foreign");

    assert_eq!(history.delete_all().expect("delete all"), 12);
    assert!(history.list(&Query::default()).expect("list").is_empty());
    for f in kept.iter().chain([&orphan]) {
        assert!(!f.exists(), "{} still there", f.display());
    }
    assert!(foreign.exists(), "only Dictum's recordings are deleted");
    let (hits, _) = grep(&db, SECRET);
    assert!(hits.is_empty(), "{hits:?}");
    // And the history keeps working.
    let mut e = entry("after the purge", 0);
    history.insert(&mut e).expect("insert after");
    assert_eq!(history.list(&Query::default()).expect("list").len(), 1);
}

#[test]
fn retention_deletes_old_rows_with_their_audio_and_runs_as_a_daily_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.sqlite3");
    let history = History::open(&db).expect("open");
    let day = 86_400_000;
    let now = dictum_engine::store::now_ms();
    let mut old_audio = Vec::new();
    for (i, age_days) in [40, 31, 29, 1].iter().enumerate() {
        let mut e = entry(&format!("dictation {i} {SECRET}"), now - age_days * day);
        history.insert(&mut e).expect("insert");
        let wav = keep_audio(&history, &mut e, dir.path());
        if *age_days > 30 {
            old_audio.push(wav);
        }
    }
    assert_eq!(history.apply_retention(0).expect("off"), 0);
    assert_eq!(history.apply_retention(30).expect("30 days"), 2);
    for wav in &old_audio {
        assert!(!wav.exists(), "{} outlived its row", wav.display());
    }
    let left = history.list(&Query::default()).expect("list");
    assert_eq!(left.len(), 2);
    for e in &left {
        assert!(Path::new(e.audio_path.as_deref().expect("audio")).exists());
    }

    // The thread: a pass at start (here: 1 of the 2 left is older than 2 days), then stops
    // at once although the next pass is a day away.
    let handle = retention::spawn_daily(db.clone(), 2);
    let deadline = Instant::now() + Duration::from_secs(20);
    while handle.passes() == 0 {
        assert!(Instant::now() < deadline, "no retention pass at start");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(handle.removed(), 1);
    let t = Instant::now();
    handle.stop();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "stop took {:?}",
        t.elapsed()
    );
    assert_eq!(history.list(&Query::default()).expect("list").len(), 1);

    // Repeated passes: a row that ages past the limit goes at the next one.
    let mut e = entry("soon too old", now - 3 * day);
    let handle = retention::spawn_every(db.clone(), 2, Duration::from_millis(50));
    let deadline = Instant::now() + Duration::from_secs(20);
    while handle.passes() < 2 {
        assert!(Instant::now() < deadline, "no second pass");
        std::thread::sleep(Duration::from_millis(10));
    }
    history.insert(&mut e).expect("insert");
    let seen = handle.passes();
    while handle.passes() < seen + 2 {
        assert!(Instant::now() < deadline, "no later pass");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(handle);
    assert!(history.get(e.id.expect("id")).expect("get").is_none());

    // 0 days: retention off, no thread.
    assert!(!retention::spawn_daily(db, 0).is_running());
}

#[test]
fn eight_connections_opening_a_fresh_database_at_once_all_succeed() {
    for round in 0..5 {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join(format!("fresh-{round}/history.sqlite3"));
        let barrier = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (db, barrier) = (db.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let h = History::open(&db).map_err(|e| format!("thread {i}: {e}"))?;
                    let mut e = entry(&format!("from thread {i}"), 0);
                    h.insert(&mut e).map_err(|e| format!("thread {i}: {e}"))?;
                    h.schema_version().map_err(|e| e.to_string())
                })
            })
            .collect();
        for t in threads {
            let version = t.join().expect("thread").expect("open");
            assert_eq!(version, MIGRATION_FILES.len(), "round {round}");
        }
        let h = History::open(&db).expect("open");
        assert_eq!(h.list(&Query::default()).expect("list").len(), 8);
    }
}

fn corrupt_siblings(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().contains(".corrupt-"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_file_that_is_not_a_database_is_moved_aside_and_a_fresh_one_started() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.sqlite3");
    let garbage = b"this is not a database at all, just text ".repeat(200);
    std::fs::write(&db, &garbage).expect("garbage");

    let err = History::open(&db).err().expect("plain open refuses it");
    assert!(err.to_string().contains("not a database"), "{err}");
    assert!(
        corrupt_siblings(dir.path()).is_empty(),
        "plain open moves nothing"
    );

    let (history, recovered) = History::open_or_recover(&db).expect("recover");
    let recovered = recovered.expect("a notice for the user");
    let name = recovered
        .moved_to
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    // history.sqlite3.corrupt-YYYYMMDD-HHMMSS
    let stamp = name
        .strip_prefix("history.sqlite3.corrupt-")
        .expect("named after the database");
    assert_eq!(stamp.len(), 15, "{name}");
    assert!(
        stamp[..8].bytes().all(|b| b.is_ascii_digit())
            && &stamp[8..9] == "-"
            && stamp[9..].bytes().all(|b| b.is_ascii_digit()),
        "{name}"
    );
    assert_eq!(std::fs::read(&recovered.moved_to).expect("kept"), garbage);

    let message = recovered.to_string();
    assert!(
        message.contains("moved to") && message.contains("new, empty history"),
        "{message}"
    );
    assert!(!message.contains('\n'));
    assert_eq!(
        history.schema_version().expect("version"),
        MIGRATION_FILES.len()
    );
    let mut e = entry("first words in the new history", 0);
    history.insert(&mut e).expect("works");
    drop(history);
    // A healthy database is left alone.
    let (_h, again) = History::open_or_recover(&db).expect("reopen");
    assert!(again.is_none());
    assert_eq!(corrupt_siblings(dir.path()).len(), 1);
}

#[test]
fn a_malformed_database_and_its_wal_are_moved_aside() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.sqlite3");
    {
        let history = History::open(&db).expect("open");
        seed(&history, 300);
    }
    // Clobber every page after the first (the schema page survives: the file still opens).
    let mut bytes = std::fs::read(&db).expect("read");
    assert!(bytes.len() > 8192, "{}", bytes.len());
    for (i, b) in bytes[4096..].iter_mut().enumerate() {
        *b = (i * 131 % 251) as u8;
    }
    std::fs::write(&db, &bytes).expect("write");

    let (history, recovered) = History::open_or_recover(&db).expect("recover");
    let recovered = recovered.expect("malformed is detected");
    eprintln!("{recovered}");
    // SQLite names the damage by what it trips over first ("malformed", or a broken FTS
    // table's "vtable constructor failed"), which depends on the page layout.
    assert!(
        ["malformed", "vtable constructor failed", "not a database"]
            .iter()
            .any(|r| recovered.reason.contains(r)),
        "{recovered}"
    );
    assert_eq!(std::fs::read(&recovered.moved_to).expect("kept"), bytes);
    assert_eq!(history.list(&Query::default()).expect("list").len(), 0);
}

#[test]
fn a_locked_database_is_an_error_and_is_never_moved() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.sqlite3");
    // Another program holds an exclusive lock on a rollback-journal database (WAL mode
    // cannot be entered, nothing can be read).
    let holder = rusqlite::Connection::open(&db).expect("open");
    holder
        .execute_batch(
            "PRAGMA journal_mode = DELETE; CREATE TABLE t (x); INSERT INTO t VALUES (1);
             BEGIN EXCLUSIVE; INSERT INTO t VALUES (2);",
        )
        .expect("lock");
    let t = Instant::now();
    let err = History::open_or_recover(&db).err().expect("locked");
    eprintln!("after {:?}: {err}", t.elapsed());
    assert!(err.to_string().contains("locked"), "{err}");
    assert!(corrupt_siblings(dir.path()).is_empty(), "moved aside");
    holder.execute_batch("COMMIT").expect("commit");
    let n: i64 = holder
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .expect("still the same database");
    assert_eq!(n, 2);
}
