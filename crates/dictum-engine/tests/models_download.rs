//! Model downloads against real sources: a local folder, and a small HTTP/1.1 server on
//! 127.0.0.1 (Range support, and a switch that cuts the connection part-way) serving the real
//! test model. Interrupt + resume, cancel + resume, wrong checksum, server without Range.

mod common;

use dictum_engine::models::download::{
    download, download_model, DownloadOutcome, DownloadProgress, DownloadSpec, ModelSource,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TINY: &str = "ggml-tiny.en-q8_0.bin";

struct Server {
    base: String,
    /// Cut each connection after this many body bytes (u64::MAX = never).
    cut_after: Arc<AtomicU64>,
    honour_range: Arc<AtomicBool>,
    /// Pause after each 64 KiB of body, in ms (a slow link).
    chunk_delay_ms: Arc<AtomicU64>,
    /// Range headers seen, in order ("" = none).
    ranges: Arc<std::sync::Mutex<Vec<String>>>,
    requests: Arc<AtomicUsize>,
}

/// Serves the files of `dir` by name with HTTP/1.1, one response per connection.
async fn serve(dir: PathBuf) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let cut_after = Arc::new(AtomicU64::new(u64::MAX));
    let honour_range = Arc::new(AtomicBool::new(true));
    let ranges = Arc::new(std::sync::Mutex::new(Vec::new()));
    let requests = Arc::new(AtomicUsize::new(0));
    let chunk_delay_ms = Arc::new(AtomicU64::new(0));
    let (c, h, r, n, dl) = (
        cut_after.clone(),
        honour_range.clone(),
        ranges.clone(),
        requests.clone(),
        chunk_delay_ms.clone(),
    );
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let (dir, c, h, r, n, dl) = (
                dir.clone(),
                c.clone(),
                h.clone(),
                r.clone(),
                n.clone(),
                dl.clone(),
            );
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if sock.read(&mut b).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(b[0]);
                }
                n.fetch_add(1, Ordering::SeqCst);
                let head = String::from_utf8_lossy(&head).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let range = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("range: bytes=")
                            .map(|v| v.trim().to_string())
                    })
                    .unwrap_or_default();
                r.lock().expect("lock").push(range.clone());
                let file = dir.join(path.trim_start_matches('/'));
                let Ok(data) = tokio::fs::read(&file).await else {
                    let _ = sock
                        .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                        .await;
                    return;
                };
                let total = data.len() as u64;
                let from: u64 = range
                    .split('-')
                    .next()
                    .and_then(|f| f.parse().ok())
                    .unwrap_or(0);
                let (status, body, extra) = if !range.is_empty() && h.load(Ordering::SeqCst) {
                    if from >= total {
                        let _ = sock
                            .write_all(format!("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{total}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").as_bytes())
                            .await;
                        return;
                    }
                    (
                        "206 Partial Content",
                        &data[from as usize..],
                        format!("Content-Range: bytes {from}-{}/{total}\r\n", total - 1),
                    )
                } else {
                    ("200 OK", &data[..], String::new())
                };
                let header = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{extra}Accept-Ranges: bytes\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                if sock.write_all(header.as_bytes()).await.is_err() {
                    return;
                }
                let cut = c.load(Ordering::SeqCst).min(body.len() as u64) as usize;
                for chunk in body[..cut].chunks(64 * 1024) {
                    if sock.write_all(chunk).await.is_err() {
                        return;
                    }
                    let pause = dl.load(Ordering::SeqCst);
                    if pause > 0 {
                        tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
                    }
                }
                let _ = sock.flush().await;
                // Dropping the socket here with bytes missing = connection lost mid-body.
            });
        }
    });
    Server {
        base: format!("http://{addr}/"),
        cut_after,
        honour_range,
        chunk_delay_ms,
        ranges,
        requests,
    }
}

fn models_dir() -> PathBuf {
    common::assets().join("models")
}

fn sha256_of(p: &std::path::Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(p).expect("read")))
}

fn collect() -> (
    Arc<std::sync::Mutex<Vec<DownloadProgress>>>,
    impl FnMut(&DownloadProgress) + Send,
) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    (seen, move |p: &DownloadProgress| {
        s.lock().expect("lock").push(p.clone())
    })
}

/// The test asset's own size and SHA-256 (`shared/models/SHA256SUMS`). These files were
/// converted locally, so the catalog's published checksums do not apply to them (see
/// `the_catalog_refuses_files_that_are_not_the_published_ones`).
fn asset_spec(file: &str) -> DownloadSpec {
    let sums = std::fs::read_to_string(models_dir().join("SHA256SUMS")).expect("SHA256SUMS");
    let line = sums
        .lines()
        .find(|l| l.ends_with(file))
        .unwrap_or_else(|| panic!("{file} not in SHA256SUMS"));
    let sha = line.split_whitespace().next().expect("sum");
    DownloadSpec {
        file: file.into(),
        expected_bytes: Some(
            std::fs::metadata(models_dir().join(file))
                .expect("asset")
                .len(),
        ),
        expected_sha256: Some(sha.into()),
        expected_sha1: None,
        deadline: None,
    }
}

async fn fetch(
    base: &str,
    spec: &DownloadSpec,
    dest: &std::path::Path,
    cancel: &AtomicBool,
    cb: &mut (dyn FnMut(&DownloadProgress) + Send),
) -> dictum_engine::Result<DownloadOutcome> {
    download(&ModelSource::parse(base)?, spec, dest, cancel, cb).await
}

/// The tiny test model, checked against its own size and SHA-256.
async fn fetch_tiny(
    base: &str,
    dest: &std::path::Path,
    cancel: &AtomicBool,
    cb: &mut (dyn FnMut(&DownloadProgress) + Send),
) -> dictum_engine::Result<DownloadOutcome> {
    fetch(base, &asset_spec(TINY), dest, cancel, cb).await
}

#[tokio::test]
async fn the_catalog_refuses_files_that_are_not_the_published_ones() {
    // The test assets carry the public files' names but other bytes: tiny.en-q8_0 is 17 bytes
    // shorter than the published file, base-q8_0 has its exact size and other contents. Asked
    // for by catalog name, both must be refused and deleted, with the reason.
    let dest = tempfile::tempdir().expect("tempdir");
    let cancel = AtomicBool::new(false);
    let base = format!("file://{}", models_dir().display());
    let (_, mut cb) = collect();
    let err = download_model(&base, "tiny.en-q8_0", dest.path(), &cancel, &mut cb)
        .await
        .expect_err("not the published file");
    assert!(
        err.to_string()
            .contains("is 43550778 bytes, expected 43550795"),
        "{err}"
    );
    let (seen, mut cb) = collect();
    let err = download_model(&base, "base-q8_0", dest.path(), &cancel, &mut cb)
        .await
        .expect_err("not the published file");
    let msg = err.to_string();
    assert!(
        msg.contains("SHA-256")
            && msg.contains("c577b9a86e7e048a0b7eada054f4dd79a56bbfa911fbdacf900ac5b567cbb7d9")
            && msg.contains(
                &asset_spec("ggml-base-q8_0.bin")
                    .expected_sha256
                    .expect("sum")
            ),
        "{msg}"
    );
    assert_eq!(std::fs::read_dir(dest.path()).expect("dir").count(), 0);
    assert_eq!(
        seen.lock().expect("lock").last().map(|p| p.phase.clone()),
        Some("failed".into())
    );
}

#[tokio::test]
async fn from_a_local_folder_with_progress_and_sha256() {
    let dest = tempfile::tempdir().expect("tempdir");
    let (seen, mut cb) = collect();
    let cancel = AtomicBool::new(false);
    let out = fetch(
        &format!("file://{}", models_dir().display()),
        &asset_spec(TINY),
        dest.path(),
        &cancel,
        &mut cb,
    )
    .await
    .expect("download");
    let DownloadOutcome::Completed {
        path,
        bytes,
        verified_by,
        ..
    } = out
    else {
        panic!("not completed: {out:?}")
    };
    assert_eq!(bytes, 43_550_778);
    assert_eq!(verified_by, "sha256");
    assert_eq!(PathBuf::from(&path), dest.path().join(TINY));
    assert!(!dest.path().join(format!("{TINY}.part")).exists());
    let seen = seen.lock().expect("lock");
    assert!(seen.iter().any(|p| p.phase == "verifying"));
    assert_eq!(seen.last().map(|p| p.phase.as_str()), Some("done"));
    assert!(seen.windows(2).all(|w| w[0].downloaded <= w[1].downloaded));
    assert_eq!(
        seen.last().map(|p| (p.downloaded, p.total)),
        Some((bytes, Some(bytes)))
    );
}

#[tokio::test]
async fn http_interrupted_then_resumed_with_range() {
    let server = serve(models_dir()).await;
    let dest = tempfile::tempdir().expect("tempdir");
    let cancel = AtomicBool::new(false);
    server.cut_after.store(10_000_000, Ordering::SeqCst);
    let (_, mut cb) = collect();
    let err = fetch_tiny(&server.base, dest.path(), &cancel, &mut cb)
        .await
        .expect_err("connection cut");
    assert!(err.to_string().contains("resume"), "{err}");
    let part = dest.path().join(format!("{TINY}.part"));
    let kept = std::fs::metadata(&part).expect("part kept").len();
    assert_eq!(kept, 10_000_000);
    assert!(!dest.path().join(TINY).exists());

    server.cut_after.store(u64::MAX, Ordering::SeqCst);
    let (seen, mut cb) = collect();
    let out = fetch_tiny(&server.base, dest.path(), &cancel, &mut cb)
        .await
        .expect("resumed");
    assert!(
        matches!(out, DownloadOutcome::Completed { ref verified_by, .. } if verified_by == "sha256"),
        "{out:?}"
    );
    assert_eq!(
        server.ranges.lock().expect("lock").clone(),
        vec![String::new(), "10000000-".to_string()]
    );
    assert_eq!(seen.lock().expect("lock")[0].resumed_from, 10_000_000);
    assert_eq!(
        sha256_of(&dest.path().join(TINY)),
        sha256_of(&models_dir().join(TINY))
    );
    assert!(!part.exists());
}

#[tokio::test]
async fn http_cancel_keeps_the_part_and_a_server_without_range_restarts() {
    let server = serve(models_dir()).await;
    // A slow link (about 1.3 s for the file), so progress reports come while bytes arrive.
    server.chunk_delay_ms.store(2, Ordering::SeqCst);
    let dest = tempfile::tempdir().expect("tempdir");
    let cancel = AtomicBool::new(false);
    // Cancel from the progress callback once 5 MB are in.
    let flag = &cancel;
    let mut cb = |p: &DownloadProgress| {
        if p.downloaded >= 5_000_000 {
            flag.store(true, Ordering::SeqCst);
        }
    };
    let out = fetch_tiny(&server.base, dest.path(), &cancel, &mut cb)
        .await
        .expect("cancelled cleanly");
    let DownloadOutcome::Cancelled { partial_bytes } = out else {
        panic!("{out:?}")
    };
    assert!(
        (5_000_000..43_550_778).contains(&partial_bytes),
        "{partial_bytes}"
    );
    let part = dest.path().join(format!("{TINY}.part"));
    assert_eq!(std::fs::metadata(&part).expect("part").len(), partial_bytes);

    // A server that ignores Range answers 200 with the whole file: start over, still correct.
    server.honour_range.store(false, Ordering::SeqCst);
    server.chunk_delay_ms.store(0, Ordering::SeqCst);
    cancel.store(false, Ordering::SeqCst);
    let (_, mut cb) = collect();
    let out = fetch_tiny(&server.base, dest.path(), &cancel, &mut cb)
        .await
        .expect("restarted");
    assert!(
        matches!(
            out,
            DownloadOutcome::Completed {
                bytes: 43_550_778,
                ..
            }
        ),
        "{out:?}"
    );
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
    assert_eq!(
        sha256_of(&dest.path().join(TINY)),
        sha256_of(&models_dir().join(TINY))
    );
}

#[tokio::test]
async fn wrong_checksum_deletes_the_file_and_says_so() {
    let server = serve(models_dir()).await;
    let dest = tempfile::tempdir().expect("tempdir");
    let spec = DownloadSpec {
        file: TINY.into(),
        expected_sha256: Some("00".repeat(32)),
        expected_bytes: Some(43_550_778),
        expected_sha1: None,
        deadline: None,
    };
    let (seen, mut cb) = collect();
    let err = download(
        &ModelSource::parse(&server.base).expect("source"),
        &spec,
        dest.path(),
        &AtomicBool::new(false),
        &mut cb,
    )
    .await
    .expect_err("checksum mismatch");
    let msg = err.to_string();
    assert!(msg.contains("SHA-256") && msg.contains("d243ee7b"), "{msg}");
    assert!(!dest.path().join(TINY).exists());
    assert!(!dest.path().join(format!("{TINY}.part")).exists());
    assert_eq!(
        seen.lock().expect("lock").last().map(|p| p.phase.clone()),
        Some("failed".into())
    );
}

#[tokio::test]
async fn without_a_checksum_length_and_structure_are_verified() {
    // A spec with no checksum (a file the user names by path on a mirror) passes by length +
    // ggml structure; a non-model file fails and is deleted. A catalog name the source lacks is
    // an HTTP 404 that says so.
    let src = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        models_dir().join("ggml-base-q8_0.bin"),
        src.path().join("ggml-base.en-q8_0.bin"),
    )
    .expect("copy");
    std::fs::write(
        src.path().join("ggml-small.bin"),
        b"<html>not a model</html>",
    )
    .expect("write");
    let server = serve(src.path().to_path_buf()).await;
    let dest = tempfile::tempdir().expect("tempdir");
    let cancel = AtomicBool::new(false);
    let unchecked = |file: &str| DownloadSpec {
        file: file.into(),
        expected_bytes: None,
        expected_sha256: None,
        expected_sha1: None,
        deadline: None,
    };
    let (_, mut cb) = collect();
    let out = fetch(
        &server.base,
        &unchecked("ggml-base.en-q8_0.bin"),
        dest.path(),
        &cancel,
        &mut cb,
    )
    .await
    .expect("verified by structure");
    assert!(
        matches!(out, DownloadOutcome::Completed { ref verified_by, .. } if verified_by == "size+structure"),
        "{out:?}"
    );
    let err = fetch(
        &server.base,
        &unchecked("ggml-small.bin"),
        dest.path(),
        &cancel,
        &mut cb,
    )
    .await
    .expect_err("not a model");
    assert!(
        err.to_string().contains("not a valid whisper model"),
        "{err}"
    );
    assert!(!dest.path().join("ggml-small.bin").exists());
    let err = download_model(&server.base, "tiny", dest.path(), &cancel, &mut cb)
        .await
        .expect_err("404");
    assert!(err.to_string().contains("HTTP 404"), "{err}");
}

#[tokio::test]
async fn a_download_past_its_deadline_stops_keeps_the_part_and_resumes() {
    // A slow link (64 KiB every 50 ms ≈ 1.3 MB/s: 33 s for the file) against a 1 s deadline.
    let server = serve(models_dir()).await;
    server.chunk_delay_ms.store(50, Ordering::SeqCst);
    let dest = tempfile::tempdir().expect("tempdir");
    let cancel = AtomicBool::new(false);
    let mut spec = asset_spec(TINY);
    spec.deadline = Some(std::time::Duration::from_secs(1));
    let started = std::time::Instant::now();
    let (_, mut cb) = collect();
    let err = fetch(&server.base, &spec, dest.path(), &cancel, &mut cb)
        .await
        .expect_err("deadline")
        .to_string();
    let took = started.elapsed().as_secs_f64();
    assert!(
        err.contains("deadline of 1 s") && err.contains("resume"),
        "{err}"
    );
    assert!(took < 3.0, "stopped after {took:.1} s");
    let part = dest.path().join(format!("{TINY}.part"));
    let kept = std::fs::metadata(&part).expect("part kept").len();
    assert!(kept > 0 && kept < 43_550_778, "{kept}");

    // Later, on a fast link and the size-derived deadline: resumed where it stopped.
    server.chunk_delay_ms.store(0, Ordering::SeqCst);
    spec.deadline = None;
    assert_eq!(
        spec.deadline(),
        dictum_engine::models::download::deadline_for(Some(43_550_778))
    );
    let (seen, mut cb) = collect();
    let out = fetch(&server.base, &spec, dest.path(), &cancel, &mut cb)
        .await
        .expect("resumed");
    assert!(matches!(out, DownloadOutcome::Completed { .. }), "{out:?}");
    assert_eq!(seen.lock().expect("lock")[0].resumed_from, kept);
    assert_eq!(
        sha256_of(&dest.path().join(TINY)),
        sha256_of(&models_dir().join(TINY))
    );
}
