//! Model downloads: from an `http(s)://` base URL (the models' public home, or a mirror) or a
//! local folder (`/path` or `file:///path`). The bytes go to `FILE.part` in the models folder;
//! an interrupted or cancelled download resumes from there (HTTP `Range`, or a seek in the
//! local file). When the last byte is in, the file is verified — exact length, SHA-256 and
//! SHA-1 as the catalog records them (computed in one pass while the bytes arrive); a spec with
//! no checksum gets the server's length and the ggml structure check — and only then renamed
//! into place, atomically. A file that fails verification is deleted, never kept.
//!
//! Bounds: a download stops as soon as more bytes arrive than the catalog size (or, for a
//! file the catalog does not list, [`MAX_UNLISTED_BYTES`]), and it has an overall deadline
//! ([`deadline_for`]: 2 minutes plus the size at [`MIN_RATE_BYTES_PER_S`], or the spec's own);
//! past it the partial file is kept for a resume. The HTTP client is [`crate::net`]'s:
//! redirects to other hosts are followed (the public home redirects to its CDN; every byte is
//! checked against the catalog's checksums) but never from https down to http.

use super::catalog;
use crate::{Error, Result};
use serde::Serialize;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use ts_rs::TS;

/// Largest file downloaded when the spec gives no size (the largest catalog model is ~3.1 GB).
pub const MAX_UNLISTED_BYTES: u64 = 4 << 30;
/// The slowest transfer rate the derived deadline allows for: 50 kB/s.
pub const MIN_RATE_BYTES_PER_S: u64 = 50_000;

/// The overall deadline of a download of `bytes` (unknown: [`MAX_UNLISTED_BYTES`]): 2 minutes
/// plus the time to fetch it at [`MIN_RATE_BYTES_PER_S`].
pub fn deadline_for(bytes: Option<u64>) -> Duration {
    let bytes = bytes.unwrap_or(MAX_UNLISTED_BYTES);
    Duration::from_secs(120 + bytes / MIN_RATE_BYTES_PER_S)
}

/// The `models.base_url` check lives with the section (`config/models.rs`).
pub use crate::config::models::check_base_url;

/// Where model files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// Base URL ending in `/`; the file name is appended.
    Http(String),
    /// A folder holding the model files.
    Dir(PathBuf),
}

impl ModelSource {
    /// `http://…` / `https://…` → HTTP; `file:///dir` or a path → local folder.
    pub fn parse(base: &str) -> Result<ModelSource> {
        let base = base.trim();
        if base.is_empty() {
            return Err(Error::Download(
                "the model base URL is empty; use https://huggingface.co/ggerganov/whisper.cpp/resolve/main/, a mirror, or a local folder".into(),
            ));
        }
        let lower = base.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            check_base_url(base).map_err(Error::Download)?;
            let mut url = base.to_string();
            if !url.ends_with('/') {
                url.push('/');
            }
            return Ok(ModelSource::Http(url));
        }
        let path = match base.strip_prefix("file://") {
            Some(rest) => PathBuf::from(rest),
            None if lower.contains("://") => {
                return Err(Error::Download(format!(
                    "unsupported model base URL {base}: use http://, https://, file:// or a folder path"
                )))
            }
            None => PathBuf::from(base),
        };
        if !path.is_dir() {
            return Err(Error::Download(format!(
                "model folder {} does not exist; point the base URL at a folder holding the ggml files, or at an http(s) mirror",
                path.display()
            )));
        }
        Ok(ModelSource::Dir(path))
    }
}

/// What to fetch and how to check it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadSpec {
    pub file: String,
    pub expected_bytes: Option<u64>,
    pub expected_sha256: Option<String>,
    /// whisper.cpp publishes SHA-1s for its models; checked too when known.
    pub expected_sha1: Option<String>,
    /// Overall deadline; None = [`deadline_for`] the expected size.
    pub deadline: Option<Duration>,
}

impl DownloadSpec {
    /// The most bytes this download may bring: the expected size, else [`MAX_UNLISTED_BYTES`].
    pub fn max_bytes(&self) -> u64 {
        self.expected_bytes.unwrap_or(MAX_UNLISTED_BYTES)
    }

    /// When the download must be over, from its start.
    pub fn deadline(&self) -> Duration {
        self.deadline
            .unwrap_or_else(|| deadline_for(self.expected_bytes))
    }
}

impl DownloadSpec {
    /// The spec for a catalog model (name or file name): its published size and checksums.
    pub fn for_model(name: &str) -> Result<DownloadSpec> {
        let model = catalog::find(name).ok_or_else(|| {
            Error::Download(format!(
                "unknown model `{name}`; pick one from the catalog (`dictum models list`, or the tray app's Models settings)"
            ))
        })?;
        let p = model.published;
        Ok(DownloadSpec {
            file: model.file.to_string(),
            expected_bytes: Some(p.bytes),
            expected_sha256: Some(p.sha256.to_string()),
            expected_sha1: Some(p.sha1.to_string()),
            deadline: None,
        })
    }
}

/// SHA-256 and SHA-1 of the same bytes, computed in one pass.
#[derive(Clone, Default)]
struct Digests {
    sha256: Sha256,
    sha1: Sha1,
}

impl Digests {
    fn update(&mut self, bytes: &[u8]) {
        self.sha256.update(bytes);
        self.sha1.update(bytes);
    }

    fn finish(self) -> (String, String) {
        (
            hex::encode(self.sha256.finalize()),
            hex::encode(self.sha1.finalize()),
        )
    }
}

/// Reported while bytes arrive (at most every 100 ms, plus the first and the last).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct DownloadProgress {
    pub file: String,
    /// Bytes in `FILE.part` so far (resumed bytes included).
    #[ts(type = "number")]
    pub downloaded: u64,
    /// Full length when known.
    #[ts(type = "number | null")]
    pub total: Option<u64>,
    /// Bytes that were already there when this download started.
    #[ts(type = "number")]
    pub resumed_from: u64,
    /// "downloading", "verifying", "done", "cancelled", "failed".
    pub phase: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "status", rename_all = "snake_case")]
#[ts(export)]
pub enum DownloadOutcome {
    Completed {
        path: String,
        #[ts(type = "number")]
        bytes: u64,
        sha256: String,
        /// What matched: "sha256+sha1" (a catalog model), "sha256" or "sha1" (a spec with one
        /// checksum), "size+structure" (a spec with none: length and ggml structure checked).
        verified_by: String,
    },
    /// Stopped by the cancel flag; the `.part` file stays for a later resume.
    Cancelled {
        #[ts(type = "number")]
        partial_bytes: u64,
    },
}

/// Downloads catalog model `name` from `base` into `dest_dir`.
pub async fn download_model(
    base: &str,
    name: &str,
    dest_dir: &Path,
    cancel: &AtomicBool,
    progress: &mut (dyn FnMut(&DownloadProgress) + Send),
) -> Result<DownloadOutcome> {
    let source = ModelSource::parse(base)?;
    let spec = DownloadSpec::for_model(name)?;
    download(&source, &spec, dest_dir, cancel, progress).await
}

struct Reporter<'a> {
    progress: &'a mut (dyn FnMut(&DownloadProgress) + Send),
    state: DownloadProgress,
    last: Option<Instant>,
}

impl Reporter<'_> {
    fn report(&mut self, downloaded: u64, force: bool) {
        self.state.downloaded = downloaded;
        let due = self
            .last
            .is_none_or(|t| t.elapsed() >= Duration::from_millis(100));
        if force || due {
            self.last = Some(Instant::now());
            (self.progress)(&self.state);
        }
    }

    fn phase(&mut self, phase: &str) {
        self.state.phase = phase.to_string();
        let d = self.state.downloaded;
        self.report(d, true);
    }
}

/// Downloads `spec.file` from `source` into `dest_dir` (see the module doc).
pub async fn download(
    source: &ModelSource,
    spec: &DownloadSpec,
    dest_dir: &Path,
    cancel: &AtomicBool,
    progress: &mut (dyn FnMut(&DownloadProgress) + Send),
) -> Result<DownloadOutcome> {
    if spec.file.contains('/') || spec.file.contains('\\') || spec.file.starts_with('.') {
        return Err(Error::Download(format!(
            "invalid model file name {}",
            spec.file
        )));
    }
    let io = |what: &str, p: &Path, e: std::io::Error| {
        Error::Download(format!(
            "cannot {what} {}: {e}; check the models folder is writable and has free space",
            p.display()
        ))
    };
    crate::paths::create_private_dir_all(dest_dir).map_err(|e| io("create", dest_dir, e))?;
    let final_path = dest_dir.join(&spec.file);
    let part_path = dest_dir.join(format!("{}.part", spec.file));
    let mut start = tokio::fs::metadata(&part_path)
        .await
        .map(|m| m.len())
        .unwrap_or(0);
    if let Some(expected) = spec.expected_bytes {
        if start > expected {
            // Longer than the real file: not a prefix of it; start over.
            start = 0;
        }
    }
    let mut reporter = Reporter {
        progress,
        state: DownloadProgress {
            file: spec.file.clone(),
            downloaded: start,
            total: spec.expected_bytes,
            resumed_from: start,
            phase: "downloading".into(),
        },
        last: None,
    };

    // Hash what is already there, then append.
    let mut hasher = Digests::default();
    let mut options = tokio::fs::OpenOptions::new();
    options.create(true).read(true).write(true).truncate(false);
    #[cfg(unix)]
    options.mode(crate::paths::PRIVATE_FILE_MODE);
    let mut part = options
        .open(&part_path)
        .await
        .map_err(|e| io("open", &part_path, e))?;
    if start > 0 {
        hash_prefix(&mut part, start, &mut hasher)
            .await
            .map_err(|e| io("read", &part_path, e))?;
    } else {
        part.set_len(0)
            .await
            .map_err(|e| io("truncate", &part_path, e))?;
    }
    reporter.report(start, true);

    let fetched = match source {
        ModelSource::Http(base) => {
            fetch_http(
                base,
                spec,
                start,
                &mut part,
                &mut hasher,
                cancel,
                &mut reporter,
            )
            .await?
        }
        ModelSource::Dir(dir) => {
            fetch_dir(
                dir,
                spec,
                start,
                &mut part,
                &mut hasher,
                cancel,
                &mut reporter,
            )
            .await?
        }
    };
    part.flush().await.map_err(|e| io("write", &part_path, e))?;
    part.sync_all()
        .await
        .map_err(|e| io("sync", &part_path, e))?;
    drop(part);
    let (written, total) = match fetched {
        Fetched::Cancelled(n) => {
            reporter.state.downloaded = n;
            reporter.phase("cancelled");
            return Ok(DownloadOutcome::Cancelled { partial_bytes: n });
        }
        Fetched::Done { written, total } => (written, total),
    };

    reporter.phase("verifying");
    let fail = |reporter: &mut Reporter<'_>, msg: String| {
        let _ = std::fs::remove_file(&part_path);
        reporter.phase("failed");
        Err(Error::Download(msg))
    };
    let (sha, sha1) = hasher.finish();
    let want_len = spec.expected_bytes.or(total);
    if let Some(want) = want_len {
        if written != want {
            return fail(
                &mut reporter,
                format!(
                    "{} is {written} bytes, expected {want}; the partial file was deleted. Download it again; if it fails again the mirror does not serve the published file",
                    spec.file
                ),
            );
        }
    }
    let mut verified = Vec::new();
    for (kind, want, got) in [
        ("SHA-256", &spec.expected_sha256, &sha),
        ("SHA-1", &spec.expected_sha1, &sha1),
    ] {
        let Some(want) = want else { continue };
        if !want.eq_ignore_ascii_case(got) {
            return fail(
                &mut reporter,
                format!(
                    "{} failed its {kind} check (expected {want}, got {got}); the file was deleted. Download it again; if it fails again the mirror serves a different file",
                    spec.file
                ),
            );
        }
        verified.push(kind.to_ascii_lowercase().replace('-', ""));
    }
    if verified.is_empty() {
        if let Err(e) = crate::stt::check_model_file(&part_path) {
            return fail(
                &mut reporter,
                format!(
                    "{} is not a valid whisper model ({e}); the file was deleted, check the base URL points at whisper.cpp ggml files",
                    spec.file
                ),
            );
        }
        verified.push("size+structure".into());
    }
    let verified_by = verified.join("+");
    tokio::fs::rename(&part_path, &final_path)
        .await
        .map_err(|e| io("rename into", &final_path, e))?;
    reporter.phase("done");
    Ok(DownloadOutcome::Completed {
        path: final_path.display().to_string(),
        bytes: written,
        sha256: sha,
        verified_by,
    })
}

enum Fetched {
    Done { written: u64, total: Option<u64> },
    Cancelled(u64),
}

async fn hash_prefix(
    part: &mut tokio::fs::File,
    len: u64,
    hasher: &mut Digests,
) -> std::io::Result<()> {
    part.seek(std::io::SeekFrom::Start(0)).await?;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let want = buf.len().min(left as usize);
        let n = part.read(&mut buf[..want]).await?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        left -= n as u64;
    }
    part.set_len(len).await?;
    part.seek(std::io::SeekFrom::Start(len)).await?;
    Ok(())
}

async fn fetch_http(
    base: &str,
    spec: &DownloadSpec,
    mut start: u64,
    part: &mut tokio::fs::File,
    hasher: &mut Digests,
    cancel: &AtomicBool,
    reporter: &mut Reporter<'_>,
) -> Result<Fetched> {
    let url = format!("{base}{}", spec.file);
    let began = Instant::now();
    let deadline = spec.deadline();
    let limit = spec.max_bytes();
    let client = crate::net::client_for(&url, &crate::net::Policy::download())
        .map_err(|e| Error::Download(e.to_string()))?;
    let mut req = client.get(&url);
    if start > 0 {
        req = req.header(reqwest::header::RANGE, format!("bytes={start}-"));
    }
    let late = |written: u64| {
        Error::Download(format!(
            "download of {} did not finish within its deadline of {} s ({} bytes so far, the partial file is kept); start it again to resume, or use a faster mirror",
            spec.file,
            deadline.as_secs(),
            written
        ))
    };
    let mut resp = match tokio::time::timeout(deadline, req.send()).await {
        Err(_) => return Err(late(start)),
        Ok(r) => r.map_err(|e| {
            Error::Download(format!(
                "cannot reach {url}: {}; check the network or point the base URL at a mirror or local folder",
                reqwest_reason(&e)
            ))
        })?,
    };
    let status = resp.status();
    let total = match status.as_u16() {
        206 => {
            let range = resp
                .headers()
                .get(reqwest::header::CONTENT_RANGE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let (from, total) = parse_content_range(range).ok_or_else(|| {
                Error::Download(format!("{url} answered a resume with a bad Content-Range `{range}`"))
            })?;
            if from != start {
                return Err(Error::Download(format!(
                    "{url} resumed at byte {from}, asked for {start}; delete {}.part and download again",
                    spec.file
                )));
            }
            total
        }
        200 => {
            if start > 0 {
                // The server ignored the Range: start over.
                start = 0;
                *hasher = Digests::default();
                part.set_len(0)
                    .await
                    .and(part.seek(std::io::SeekFrom::Start(0)).await.map(|_| ()))
                    .map_err(|e| Error::Download(format!("cannot truncate the partial file: {e}")))?;
                reporter.state.resumed_from = 0;
            }
            resp.content_length()
        }
        416 if start > 0 => {
            // Nothing left to send: the partial file is already complete (or wrong, which
            // verification will tell).
            return Ok(Fetched::Done {
                written: start,
                total: None,
            });
        }
        _ => {
            return Err(Error::Download(format!(
                "{url} answered HTTP {status}; check the base URL (it must serve whisper.cpp's ggml files by name)"
            )))
        }
    };
    if let Some(t) = total.filter(|t| *t > limit) {
        return Err(too_big(spec, t, limit));
    }
    if reporter.state.total.is_none() {
        reporter.state.total = total;
    }
    let mut written = start;
    reporter.report(written, true);
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Ok(Fetched::Cancelled(written));
        }
        if began.elapsed() > deadline {
            let _ = part.flush().await;
            return Err(late(written));
        }
        let chunk = match tokio::time::timeout(Duration::from_millis(200), resp.chunk()).await {
            Err(_) => continue, // no bytes yet: look at the cancel flag again
            Ok(Ok(Some(chunk))) => chunk,
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                let _ = part.flush().await;
                return Err(Error::Download(format!(
                    "download of {} stopped after {written} bytes ({e}); start it again to resume from there",
                    spec.file
                )));
            }
        };
        if written + chunk.len() as u64 > limit {
            return Err(Fetched::oversized(part, spec, limit).await);
        }
        part.write_all(&chunk)
            .await
            .map_err(|e| Error::Download(format!("cannot write {}.part: {e}", spec.file)))?;
        hasher.update(&chunk);
        written += chunk.len() as u64;
        reporter.report(written, false);
    }
    Ok(Fetched::Done { written, total })
}

fn too_big(spec: &DownloadSpec, bytes: u64, limit: u64) -> Error {
    Error::Download(format!(
        "{} would be {bytes} bytes, more than the {limit} bytes it should have; nothing more was downloaded. Check the base URL (it must serve whisper.cpp's ggml files by name)",
        spec.file
    ))
}

impl Fetched {
    /// More bytes came than the file may have: the partial file is no prefix of the real one
    /// (emptied; the caller deletes it on error), and the error says so.
    async fn oversized(part: &mut tokio::fs::File, spec: &DownloadSpec, limit: u64) -> Error {
        let _ = part.set_len(0).await;
        Error::Download(format!(
            "the server sent more than the {limit} bytes {} should have; Dictum stopped and discarded the partial file. Check the base URL (it must serve whisper.cpp's ggml files by name)",
            spec.file
        ))
    }
}

/// The innermost cause of a reqwest error (the redirect refusal, "connection refused").
fn reqwest_reason(e: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut reason = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        reason = s.to_string();
        source = s.source();
    }
    crate::net::snippet(&reason, crate::net::SNIPPET_CHARS)
}

async fn fetch_dir(
    dir: &Path,
    spec: &DownloadSpec,
    start: u64,
    part: &mut tokio::fs::File,
    hasher: &mut Digests,
    cancel: &AtomicBool,
    reporter: &mut Reporter<'_>,
) -> Result<Fetched> {
    let src_path = dir.join(&spec.file);
    let mut src = tokio::fs::File::open(&src_path).await.map_err(|e| {
        Error::Download(format!(
            "cannot open {}: {e}; the folder must hold the model files by their ggml-*.bin names",
            src_path.display()
        ))
    })?;
    let total = src.metadata().await.map(|m| m.len()).ok();
    if let Some(t) = total.filter(|t| *t > spec.max_bytes()) {
        return Err(too_big(spec, t, spec.max_bytes()));
    }
    if reporter.state.total.is_none() {
        reporter.state.total = total;
    }
    src.seek(std::io::SeekFrom::Start(start))
        .await
        .map_err(|e| Error::Download(format!("cannot seek in {}: {e}", src_path.display())))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut written = start;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Ok(Fetched::Cancelled(written));
        }
        let n = src
            .read(&mut buf)
            .await
            .map_err(|e| Error::Download(format!("cannot read {}: {e}", src_path.display())))?;
        if n == 0 {
            break;
        }
        part.write_all(&buf[..n])
            .await
            .map_err(|e| Error::Download(format!("cannot write {}.part: {e}", spec.file)))?;
        hasher.update(&buf[..n]);
        written += n as u64;
        reporter.report(written, false);
    }
    Ok(Fetched::Done { written, total })
}

/// `bytes FROM-TO/TOTAL` → (FROM, Some(TOTAL)); `*` total → None.
fn parse_content_range(v: &str) -> Option<(u64, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes")?.trim();
    let (range, total) = rest.split_once('/')?;
    let (from, _) = range.split_once('-')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    Some((from.trim().parse().ok()?, total))
}

/// Deletes an installed model and any partial download of it; returns whether anything was there.
pub fn delete_model(dir: &Path, name: &str) -> Result<bool> {
    let model =
        catalog::find(name).ok_or_else(|| Error::Download(format!("unknown model `{name}`")))?;
    let mut any = false;
    for p in [
        dir.join(model.file),
        dir.join(format!("{}.part", model.file)),
    ] {
        match std::fs::remove_file(&p) {
            Ok(()) => any = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::Download(format!(
                    "cannot delete {}: {e}",
                    p.display()
                )))
            }
        }
    }
    Ok(any)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse() {
        assert_eq!(
            ModelSource::parse("https://example.org/m").expect("http"),
            ModelSource::Http("https://example.org/m/".into())
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().display().to_string();
        assert_eq!(
            ModelSource::parse(&format!("file://{d}")).expect("file"),
            ModelSource::Dir(dir.path().to_path_buf())
        );
        assert_eq!(
            ModelSource::parse(&d).expect("dir"),
            ModelSource::Dir(dir.path().to_path_buf())
        );
        assert!(ModelSource::parse("ftp://x/").is_err());
        assert!(ModelSource::parse("/no/such/folder").is_err());
        assert!(ModelSource::parse(" ").is_err());
    }

    #[test]
    fn deadlines_and_base_urls() {
        // 2 min + size at 50 kB/s: 43.5 MB → 991 s; unknown size → the 4 GiB bound's time.
        assert_eq!(deadline_for(Some(43_550_795)).as_secs(), 120 + 871);
        assert_eq!(deadline_for(Some(0)).as_secs(), 120);
        assert!(deadline_for(None) > deadline_for(Some(3_100_000_000)));
        assert!(check_base_url("https://huggingface.co/x/").is_ok());
        assert!(check_base_url("/srv/models").is_ok());
        assert!(check_base_url("file:///srv/models").is_ok());
        assert!(check_base_url("ftp://x/").is_err());
        assert!(check_base_url("").is_err());
        let e = check_base_url("https://u:p@mirror/").expect_err("creds");
        assert!(e.contains("password") && !e.contains("api_key_env"), "{e}");
    }

    #[test]
    fn content_range() {
        assert_eq!(
            parse_content_range("bytes 10-99/100"),
            Some((10, Some(100)))
        );
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, None)));
        assert_eq!(parse_content_range("items 1-2/3"), None);
    }

    #[test]
    fn specs_come_from_the_catalog() {
        let s = DownloadSpec::for_model("tiny.en-q8_0").expect("known");
        assert_eq!(s.expected_bytes, Some(43_550_795));
        assert_eq!(
            s.expected_sha1.as_deref(),
            Some("802d6668e7d411123e672abe4cb6c18f12306abb")
        );
        let s = DownloadSpec::for_model("ggml-small.bin").expect("by file name");
        assert_eq!(s.expected_bytes, Some(487_601_967));
        assert_eq!(
            s.expected_sha256.as_deref(),
            Some("1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b")
        );
        assert!(DownloadSpec::for_model("huge").is_err());
    }

    #[test]
    fn both_digests_in_one_pass() {
        let mut d = Digests::default();
        d.update(b"ab");
        d.update(b"c");
        assert_eq!(
            d.finish(),
            (
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_string(),
                "a9993e364706816aba3e25717850c26c9cd0d89d".to_string()
            )
        );
    }
}
