//! whisper's threads under real load (`stt/cpu_share.rs`): with a busy loop on every core, a
//! pass gets one thread; a local request Dictum has in flight counts as a busy core at once.
//! A test binary of its own, so the load it measures is other processes', not its neighbours'
//! in the same process (which the sampler subtracts as its own).

use dictum_engine::stt::cpu_share::{start_sampling, threads_for_pass, LocalWork};
use std::time::Duration;

#[cfg(target_os = "linux")]
#[test]
fn busy_cores_leave_whisper_one_thread() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    if cores < 2 {
        eprintln!("one core: nothing to share");
        return;
    }
    start_sampling();
    let hogs: Vec<_> = (0..cores)
        .map(|_| {
            std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .expect("start a busy loop")
        })
        .collect();
    // Longer than the sampler's window (250 ms).
    std::thread::sleep(Duration::from_millis(600));
    let (threads, others) = threads_for_pass(cores);
    for mut h in hogs {
        let _ = h.kill();
        let _ = h.wait();
    }
    assert_eq!(
        threads, 1,
        "other programs keep {others:.2} of {cores} cores busy"
    );

    let work = LocalWork::start();
    let (threads, others) = threads_for_pass(cores);
    drop(work);
    assert!(
        others >= 1.0,
        "a local request counts as a busy core: {others}"
    );
    assert!(
        threads < cores,
        "{threads} threads with a local request on {cores} cores"
    );
}
