//! The private tokio runtime the portal code runs on: one worker thread, started on first use
//! and kept (zbus's connection tasks and the shortcut listener live on it). Callers are plain
//! threads; [`run`] blocks them until the future ends or the time limit passes.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::runtime::{Handle, Runtime};

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

pub(crate) fn runtime() -> Result<&'static Runtime, String> {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("dictum-portal")
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the portal runtime ({e}); check thread limits"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Runs `fut` on the portal runtime and waits for it, at most `limit` (None: time ran out or the
/// runtime could not start). Safe to call from inside another tokio runtime (the tray app):
/// it then waits on a scoped helper thread instead of blocking that runtime's executor.
pub(crate) fn run<F>(limit: Duration, fut: F) -> Option<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = runtime().ok()?;
    let wait = async move { tokio::time::timeout(limit, fut).await.ok() };
    if Handle::try_current().is_ok() {
        std::thread::scope(|s| s.spawn(|| rt.block_on(wait)).join().ok().flatten())
    } else {
        rt.block_on(wait)
    }
}

/// [`run`] for fallible futures: a time-out becomes an error that names `what`.
pub(crate) fn run_result<F, T>(limit: Duration, what: &str, fut: F) -> Result<T, String>
where
    F: Future<Output = Result<T, String>> + Send,
    T: Send,
{
    runtime()?;
    match run(limit, fut) {
        Some(r) => r,
        None => Err(format!(
            "the desktop portal did not answer {what} within {} s; check that xdg-desktop-portal and your desktop's backend are running",
            limit.as_secs_f32()
        )),
    }
}
