//! The `partial` event: the words of the dictation being recorded, as the worker has them
//! (`Input::Partial`, sent after each committed stretch and each speculation that was not
//! made stale). Published only while that dictation is recorded, numbered 1, 2, 3… within
//! it, and never twice the same words.

use super::{Controller, Live};
use crate::dictation::{Event, Partial};
use std::time::{Duration, Instant};

/// What was published for the dictation being recorded.
pub(super) struct Published {
    /// The press (hands-free: when speech opened the dictation).
    since: Instant,
    /// Partials published so far (the last one's number).
    count: u64,
    /// The last one's (committed, speculative) words.
    last: Option<(String, String)>,
}

impl Published {
    /// For a dictation whose capture started `press_to_capture_ms` after the press.
    pub(super) fn new(press_to_capture_ms: Option<f64>) -> Published {
        let now = Instant::now();
        let lag = Duration::from_secs_f64(press_to_capture_ms.unwrap_or(0.0).max(0.0) / 1000.0);
        Published {
            since: now.checked_sub(lag).unwrap_or(now),
            count: 0,
            last: None,
        }
    }

    /// The next event for these words, or None when they are what was published last.
    fn next(&mut self, live_seq: u64, id: Option<i64>, words: (String, String)) -> Option<Partial> {
        if self.last.as_ref() == Some(&words) {
            return None;
        }
        self.count += 1;
        let (committed, speculative) = words.clone();
        self.last = Some(words);
        Some(Partial {
            seq: self.count,
            dictation: live_seq,
            id,
            committed,
            speculative,
            ms: self.since.elapsed().as_secs_f64() * 1000.0,
        })
    }
}

/// The event for words of utterance `seq`, if `live` is that utterance and still streamed.
fn for_live(live: &mut Live, seq: u64, words: (String, String)) -> Option<Partial> {
    // Another utterance (this one was released: its `dictation` event may be next), or a
    // worker that was replaced (stuck) finishing a job late.
    if live.seq != seq || live.progress_lost {
        return None;
    }
    live.partial.next(live.seq, live.entry.id, words)
}

impl Controller {
    pub(super) fn partial(&mut self, seq: u64, committed: String, speculative: String) {
        let Some(live) = self.live.as_mut() else {
            return;
        };
        if let Some(p) = for_live(live, seq, (committed, speculative)) {
            let _ = self.events.send(Event::Partial(p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(c: &str, s: &str) -> (String, String) {
        (c.to_string(), s.to_string())
    }

    #[test]
    fn numbers_go_up_and_the_same_words_are_not_published_twice() {
        let mut p = Published::new(Some(5.0));
        let a = p.next(3, Some(7), words("", "hello")).map(|e| e.seq);
        let same = p.next(3, Some(7), words("", "hello")).map(|e| e.seq);
        let b = p.next(3, Some(7), words("hello world", "")).map(|e| e.seq);
        assert_eq!((a, same, b), (Some(1), None, Some(2)));
    }

    #[test]
    fn the_event_carries_the_dictation_and_its_words() {
        let mut p = Published::new(None);
        let Some(e) = p.next(4, None, words("one two", "three")) else {
            panic!("new words must be published");
        };
        assert_eq!(
            (
                e.dictation,
                e.id,
                e.committed.as_str(),
                e.speculative.as_str()
            ),
            (4, None, "one two", "three")
        );
        assert!(e.ms >= 0.0);
    }
}
