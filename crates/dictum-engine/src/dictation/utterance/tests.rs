//! The stop/finish sequence through the utterance's own parts, on real speech (issue 39):
//! what is recorded, what the release decides, what the finish carries, what a cancel
//! leaves in the row, and the `partial` events.

use super::*;
use crate::dictation::segmenter::tests::speech;
use crate::store::Source;

/// Where the speech ends (the last sample above 0.3 % of full scale).
fn end_of_speech(clip: &[f32]) -> usize {
    clip.iter()
        .rposition(|v| v.abs() > 0.003)
        .map_or(clip.len(), |i| i + 1)
}

fn utterance(config: &Config) -> Utterance {
    let profile = crate::profile::Profiles::default().default_profile();
    Utterance::new(7, Entry::new(Source::Mic), profile, config, None, false)
}

fn config(streaming: bool, type_before_post_roll_ms: u32) -> Config {
    let mut c = Config::default();
    c.dictation.streaming = streaming;
    c.dictation.post_roll_ms = 300;
    c.dictation.type_before_post_roll_ms = type_before_post_roll_ms;
    c
}

#[test]
fn released_mid_speech_it_records_the_post_roll_and_speculates_meanwhile() {
    let c = config(true, 100);
    let clip = speech();
    // Released while a word is still being said (the latest cut the VAD hears as voiced):
    // the whole post-roll is recorded, with a speculation started meanwhile.
    let mut cut = end_of_speech(&clip);
    let mut u = loop {
        let mut u = utterance(&c);
        u.record(&clip[..cut]);
        if u.segmenter().trailing_silence_ms() == 0 || cut < 16_000 / 2 {
            break u;
        }
        cut -= 16_000 / 50;
    };
    let (rule, speculation) = u.release(&c);
    assert_eq!(
        rule.post_roll_ms, 300,
        "voiced at the release: the whole post-roll"
    );
    assert!(!rule.before_post_roll);
    let Some(Decision::Speculate { start, end }) = speculation else {
        panic!("a speculation over what was said must start at the release: {speculation:?}");
    };
    assert!(end > start);
    // The post-roll (silence) keeps the speculation valid, and the finish carries it.
    let mut all = u.buf.clone();
    all.extend(std::iter::repeat_n(0.0, 16_000 * 3 / 10));
    u.post_roll(&all);
    let n = all.len();
    let f = u.into_finish(all, Instant::now(), &c, false);
    assert_eq!((f.seq, f.samples.len(), f.before_post_roll), (7, n, false));
    assert_eq!(f.speculation_end, Some(end));
}

#[test]
fn released_after_a_silence_it_types_before_the_post_roll() {
    let c = config(true, 100);
    let clip = speech();
    let mut u = utterance(&c);
    // About 200 ms of silence after the last word, then the key goes up.
    u.record(&clip[..end_of_speech(&clip)]);
    let before = u.segmenter().trailing_silence_ms() as usize;
    u.record(&vec![0.0; 200usize.saturating_sub(before) * 16]);
    let (rule, _) = u.release(&c);
    assert!(
        rule.before_post_roll,
        "silent 200 ms ≥ 100 ms: typed before the post-roll"
    );
    assert!(
        rule.post_roll_ms < 300,
        "the silence counts towards the post-roll"
    );
}

#[test]
fn without_streaming_the_finish_has_no_progress_and_no_chunks_are_sent() {
    let c = config(false, 100);
    let clip = speech();
    let mut u = utterance(&c);
    let decisions = u.record(&clip);
    assert!(u.streamed_jobs(&c, decisions).is_empty());
    let (rule, speculation) = u.release(&c);
    assert!(!rule.speculate && speculation.is_none() && !rule.before_post_roll);
    let samples = u.take_samples();
    let f = u.into_finish(samples, Instant::now(), &c, false);
    assert_eq!((f.committed, f.speculation_end), (0, None));
}

#[test]
fn a_lost_worker_turns_streaming_off_for_the_rest_of_the_utterance() {
    let c = config(true, 100);
    let mut u = utterance(&c);
    assert!(u.streamed(&c));
    u.progress_lost = true;
    assert!(!u.streamed(&c));
    assert_eq!(u.partial(7, "a".into(), String::new()).map(|p| p.seq), None);
}

#[test]
fn jobs_carry_the_stretch_and_the_profile_and_stale_stops_the_speculation() {
    let c = config(true, 100);
    let u = utterance(&c);
    let samples: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let jobs = u.jobs(
        vec![
            Decision::Commit { start: 10, end: 20 },
            Decision::Speculate { start: 20, end: 30 },
            Decision::Stale,
        ],
        &samples,
    );
    let shape: Vec<String> = jobs
        .iter()
        .map(|j| match j {
            Job::Chunk {
                utt,
                start,
                end,
                samples,
                commit,
                ..
            } => format!("{utt}:{start}-{end}:{}:{commit}", samples[0]),
            Job::Stale(u) => format!("stale {u}"),
            _ => "other".into(),
        })
        .collect();
    assert_eq!(shape, ["7:10-20:10:true", "7:20-30:20:false", "stale 7"]);
}

#[test]
fn the_length_limit_is_reached_once() {
    let mut c = config(true, 100);
    c.dictation.max_utterance_s = 1;
    let mut u = utterance(&c);
    u.record(&[0.0; 8_000]);
    assert!(!u.reached_limit(&c));
    u.record(&[0.0; 8_000]);
    assert!(u.reached_limit(&c));
    u.record(&[0.0; 8_000]);
    assert!(!u.reached_limit(&c), "told once");
}

#[test]
fn a_cancelled_utterance_row_says_so_with_its_length() {
    let c = config(true, 100);
    let u = utterance(&c);
    let e = u.cancelled(16_000 * 2);
    assert_eq!(e.outcome, Outcome::Error);
    assert_eq!(e.error_kind.as_deref(), Some("cancelled"));
    assert_eq!(e.audio_ms, Some(2000));
}

#[test]
fn hands_free_end_keeps_the_trailing_silence_as_post_roll() {
    let c = config(true, 100);
    let clip = speech();
    let mut u = utterance(&c);
    u.record(&clip[..end_of_speech(&clip)]);
    let before = u.segmenter().trailing_silence_ms() as i64;
    u.record(&[0.0; 16_000 / 2]);
    u.end_hands_free(&c);
    let post = u.entry.post_roll_ms.unwrap_or(0) - before;
    assert!(
        (460..=540).contains(&post),
        "500 ms more silence, got {post}"
    );
}

#[test]
fn partial_numbers_go_up_and_the_same_words_are_not_published_twice() {
    let c = config(true, 100);
    let mut u = utterance(&c);
    let a = u.partial(7, String::new(), "hello".into()).map(|e| e.seq);
    let same = u.partial(7, String::new(), "hello".into()).map(|e| e.seq);
    let other = u.partial(8, "x".into(), String::new()).map(|e| e.seq);
    let b = u
        .partial(7, "hello world".into(), String::new())
        .map(|e| e.seq);
    assert_eq!((a, same, other, b), (Some(1), None, None, Some(2)));
}

#[test]
fn the_partial_event_carries_the_dictation_and_its_words() {
    let c = config(true, 100);
    let mut u = utterance(&c);
    let Some(e) = u.partial(7, "one two".into(), "three".into()) else {
        panic!("new words must be published");
    };
    assert_eq!(
        (
            e.dictation,
            e.id,
            e.committed.as_str(),
            e.speculative.as_str()
        ),
        (7, None, "one two", "three")
    );
    assert!(e.ms >= 0.0);
}
