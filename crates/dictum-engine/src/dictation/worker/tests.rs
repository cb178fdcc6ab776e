use super::*;
use std::sync::atomic::Ordering;

fn chunk(utt: u64, end: usize) -> Job {
    Job::Chunk {
        utt,
        start: 0,
        end,
        samples: Vec::new(),
        commit: false,
        profile: Profile::default_arc(),
        context: None,
    }
}

#[test]
fn a_job_that_makes_the_running_speculation_stale_raises_abort() {
    let q = Queue::default();
    assert!(q.begin_speculation(1, 16_000));
    // Another utterance's work does not touch it.
    q.push(chunk(2, 8_000));
    assert!(!q.abort.load(Ordering::Relaxed));
    // New speech in the same utterance (a later chunk) does.
    q.push(chunk(1, 32_000));
    assert!(q.abort.load(Ordering::Relaxed));
    assert!(q.end_speculation(), "reported as aborted");
    assert!(
        !q.abort.load(Ordering::Relaxed),
        "lowered for the next pass"
    );
    // Nothing runs: nothing is aborted.
    q.push(Job::Forget(1));
    assert!(!q.abort.load(Ordering::Relaxed));
}

#[test]
fn resumed_speech_stops_the_running_speculation() {
    let q = Queue::default();
    assert!(q.begin_speculation(1, 16_000));
    q.push(Job::Stale(2));
    assert!(!q.abort.load(Ordering::Relaxed), "another utterance's");
    // The voice again: the segmenter's `Stale`.
    q.push(Job::Stale(1));
    assert!(q.abort.load(Ordering::Relaxed));
    assert!(q.end_speculation());
    // Waiting in the queue, it also keeps a speculation queued before it from starting.
    assert!(!q.begin_speculation(1, 16_000));
}

#[test]
fn a_speculation_already_superseded_in_the_queue_does_not_start() {
    let q = Queue::default();
    q.push(chunk(1, 32_000));
    assert!(!q.begin_speculation(1, 16_000));
    assert!(q.begin_speculation(2, 16_000));
    q.push(Job::Forget(2));
    assert!(q.end_speculation());
}

fn pass(start: usize, end: usize, commit: bool, began: Instant, ms: u64, aborted: bool) -> Pass {
    Pass {
        start,
        end,
        commit,
        began,
        ended: began + Duration::from_millis(ms),
        aborted,
    }
}

#[test]
fn release_path_counts_only_stale_passes_after_the_release() {
    let t = Instant::now();
    let release = t + Duration::from_millis(1000);
    let passes = [
        // Done before the release: not counted.
        pass(0, 100, false, t, 300, false),
        // Stopped before the release (speech resumed).
        pass(0, 150, false, t + Duration::from_millis(400), 100, true),
        // Stale, running at the release, ran to its end: 500 ms waited for nothing.
        pass(0, 200, false, t + Duration::from_millis(700), 800, false),
        // Stale, stopped 50 ms after the release.
        pass(0, 300, false, t + Duration::from_millis(900), 150, true),
        // The tail: started 20 ms after the release.
        pass(0, 400, false, t + Duration::from_millis(1020), 300, false),
    ];
    let r = release_path(&passes, release, Some((0, Some(400))));
    assert_eq!(r.stale_passes_completed, 1);
    assert_eq!(r.stale_passes_aborted, 1);
    assert_eq!(r.stopped_before_release, 1);
    assert!((r.stale_ms_after_release - 550.0).abs() < 1.0, "{r:?}");
    assert!((r.tail_pass_start_ms.unwrap_or(f64::NAN) - 20.0).abs() < 1.0);
    assert!((r.tail_pass_ms.unwrap_or(f64::NAN) - 300.0).abs() < 1.0);
    assert_eq!(r.passes, 5);
}
