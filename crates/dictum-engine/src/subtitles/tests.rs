use super::*;

fn seg(start_ms: u64, end_ms: u64, text: &str) -> Segment {
    Segment {
        start_ms,
        end_ms,
        text: text.to_string(),
    }
}

/// Every convention the layout promises, checked on any output.
fn assert_conventions(cues: &[Cue], l: &Layout, duration_ms: Option<u64>) {
    for (i, c) in cues.iter().enumerate() {
        assert!(!c.lines.is_empty() && c.lines.len() <= l.max_lines, "{c:?}");
        for line in &c.lines {
            let alone = !line.contains(' ');
            assert!(
                line.chars().count() <= l.max_line_chars || alone,
                "line over {} chars: {line:?}",
                l.max_line_chars
            );
        }
        assert!(c.end_ms > c.start_ms, "empty cue {c:?}");
        assert!(c.end_ms - c.start_ms <= l.max_ms, "cue over max: {c:?}");
        if let Some(next) = cues.get(i + 1) {
            assert!(c.end_ms <= next.start_ms, "overlap: {c:?} then {next:?}");
        }
        if let Some(d) = duration_ms {
            assert!(c.end_ms <= d, "past the end: {c:?}");
        }
    }
}

fn texts(cues: &[Cue]) -> Vec<String> {
    cues.iter().map(|c| c.lines.join(" / ")).collect()
}

#[test]
fn a_short_segment_is_one_cue_shown_at_least_a_second() {
    let l = Layout::default();
    let cues = layout(&[seg(2_000, 2_400, "Hello.")], &l, None);
    assert_eq!(
        cues,
        vec![Cue {
            start_ms: 2_000,
            end_ms: 3_000,
            lines: vec!["Hello.".into()],
        }]
    );
}

#[test]
fn the_minimum_time_never_runs_into_the_next_cue_or_past_the_file() {
    let l = Layout::default();
    // A pause between them: two cues; the first is held until the second starts.
    let cues = layout(
        &[seg(0, 300, "Yes."), seg(800, 1_100, "No.")],
        &l,
        Some(1_200),
    );
    assert_eq!(texts(&cues), ["Yes.", "No."]);
    assert_eq!((cues[0].start_ms, cues[0].end_ms), (0, 800));
    assert_eq!((cues[1].start_ms, cues[1].end_ms), (800, 1_200));
    // No pause: a sentence shorter than the minimum time shares its cue with the next.
    let cues = layout(&[seg(0, 300, "Yes."), seg(400, 700, "No.")], &l, None);
    assert_eq!(texts(&cues), ["Yes. No."]);
    assert_eq!((cues[0].start_ms, cues[0].end_ms), (0, 1_000));
}

#[test]
fn sentences_in_one_segment_become_their_own_cues() {
    let l = Layout::default();
    let cues = layout(
        &[seg(
            0,
            6_000,
            "The report is due on Wednesday. Please send it to Anna before noon.",
        )],
        &l,
        None,
    );
    assert_eq!(
        texts(&cues),
        [
            "The report is due on Wednesday.",
            "Please send it to Anna before noon."
        ]
    );
    assert_conventions(&cues, &l, None);
    // The second starts where its words are (interpolated), not at the segment's start.
    assert!(
        cues[1].start_ms > 2_000 && cues[1].start_ms < 3_500,
        "{cues:?}"
    );
}

#[test]
fn a_pause_between_segments_ends_a_cue_even_mid_sentence() {
    let l = Layout::default();
    let cues = layout(
        &[
            seg(0, 1_500, "and then we went"),
            seg(4_000, 5_000, "to the river"),
        ],
        &l,
        None,
    );
    assert_eq!(texts(&cues), ["and then we went", "to the river"]);
    assert_eq!(cues[1].start_ms, 4_000);
}

#[test]
fn a_long_sentence_is_cut_into_two_line_cues_at_a_comma_when_one_is_near() {
    let l = Layout::default();
    let text = "When the committee meets again next month, we will review every proposal that \
                arrived after the deadline, and the chair will write to each applicant with \
                the outcome and the reasons for it";
    let cues = layout(&[seg(10_000, 24_000, text)], &l, None);
    assert_conventions(&cues, &l, None);
    assert!(cues.len() >= 3, "{:?}", texts(&cues));
    // Every word is there, in order, once.
    let all: Vec<String> = cues.iter().flat_map(|c| c.lines.clone()).collect();
    assert_eq!(
        all.join(" "),
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    // The first cut is at the first comma's clause end or later, not mid-clause before it.
    assert!(
        cues[0].lines.join(" ").ends_with(','),
        "first cue should end at a clause: {:?}",
        texts(&cues)
    );
    assert_eq!(cues[0].start_ms, 10_000);
}

#[test]
fn a_cue_is_never_up_more_than_seven_seconds_even_for_slow_speech() {
    let l = Layout::default();
    // Eight words over 20 s: the text fits one line but not the time.
    let cues = layout(
        &[seg(0, 20_000, "one two three four five six seven eight")],
        &l,
        None,
    );
    assert!(cues.len() >= 3, "{:?}", texts(&cues));
    assert_conventions(&cues, &l, None);
}

#[test]
fn a_word_longer_than_a_line_gets_a_cue_line_of_its_own() {
    let l = Layout::default();
    let long = "Donaudampfschifffahrtsgesellschaftskapitänsmützenabzeichen";
    let cues = layout(&[seg(0, 3_000, &format!("the {long} is lost"))], &l, None);
    assert_conventions(&cues, &l, None);
    assert!(cues.iter().any(|c| c.lines.iter().any(|x| x == long)));
}

#[test]
fn empty_and_control_only_segments_give_no_cues() {
    let l = Layout::default();
    assert!(layout(&[], &l, None).is_empty());
    assert!(layout(&[seg(0, 1_000, "  \n\t\u{7}  ")], &l, None).is_empty());
}

#[test]
fn segments_out_of_order_are_laid_out_in_time_order() {
    let l = Layout::default();
    let cues = layout(
        &[seg(5_000, 6_000, "Second."), seg(0, 1_000, "First.")],
        &l,
        None,
    );
    assert_eq!(texts(&cues), ["First.", "Second."]);
}

#[test]
fn many_generated_transcripts_keep_every_convention() {
    // A small deterministic generator: segments of 1-30 words of 1-14 letters, some ending a
    // sentence or a clause, with gaps of 0-2 s, over lengths from 0.2 to 30 s.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let l = Layout::default();
    for _ in 0..300 {
        let mut t = 0;
        let mut segs = Vec::new();
        for _ in 0..(1 + next(6)) {
            let words: Vec<String> = (0..(1 + next(30)))
                .map(|_| {
                    let mut w: String = (0..(1 + next(14)))
                        .map(|_| (b'a' + next(26) as u8) as char)
                        .collect();
                    match next(10) {
                        0 => w.push('.'),
                        1 => w.push(','),
                        _ => {}
                    }
                    w
                })
                .collect();
            let len = 200 + next(30_000);
            segs.push(seg(t, t + len, &words.join(" ")));
            t += len + next(2_000);
        }
        let cues = layout(&segs, &l, Some(t));
        assert_conventions(&cues, &l, Some(t));
        let all: Vec<String> = cues.iter().flat_map(|c| c.lines.clone()).collect();
        let want: Vec<String> = segs.iter().map(|s| s.text.clone()).collect();
        assert_eq!(all.join(" "), want.join(" "), "a word lost or moved");
    }
}

#[test]
fn srt_numbers_cues_and_uses_commas_in_times() {
    let cues = vec![
        Cue {
            start_ms: 1_500,
            end_ms: 3_250,
            lines: vec!["Hello there,".into(), "general --> Kenobi.".into()],
        },
        Cue {
            start_ms: 61_000,
            end_ms: 62_000,
            lines: vec!["<b>bold</b> & more".into()],
        },
    ];
    assert_eq!(
        to_srt(&cues),
        "1\n00:00:01,500 --> 00:00:03,250\nHello there,\ngeneral -> Kenobi.\n\n\
         2\n00:01:01,000 --> 00:01:02,000\n<b>bold</b> & more\n\n"
    );
}

#[test]
fn vtt_has_its_header_dots_in_times_and_escapes_markup() {
    let cues = vec![Cue {
        start_ms: 0,
        end_ms: 1_000,
        lines: vec!["<b>bold</b> & more".into(), "a --> b".into()],
    }];
    assert_eq!(
        to_vtt(&cues),
        "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n&lt;b&gt;bold&lt;/b&gt; &amp; more\na -&gt; b\n\n"
    );
}

#[test]
fn a_cue_line_never_ends_the_cue_early() {
    // Control characters and a blank line inside the text: no empty line may appear inside a
    // cue (it would end it), and a cue whose lines are all blank still has one.
    let cues = vec![
        Cue {
            start_ms: 0,
            end_ms: 1_000,
            lines: vec!["one\u{0}".into(), "   ".into(), "two".into()],
        },
        Cue {
            start_ms: 1_000,
            end_ms: 2_000,
            lines: vec![" ".into()],
        },
    ];
    let srt = to_srt(&cues);
    assert_eq!(
        srt,
        "1\n00:00:00,000 --> 00:00:01,000\none\ntwo\n\n2\n00:00:01,000 --> 00:00:02,000\n…\n\n"
    );
}

#[test]
fn wrap_balances_two_lines_and_prefers_punctuation() {
    assert_eq!(
        wrap("short line", 42, 2),
        Some(vec!["short line".to_string()])
    );
    let two = wrap(
        "the quick brown fox jumps over the lazy dog and runs far away",
        42,
        2,
    )
    .expect("fits in two lines");
    assert_eq!(two.len(), 2);
    assert!(
        two[0].chars().count().abs_diff(two[1].chars().count()) <= 8,
        "{two:?}"
    );
    let punct = wrap("I went home, and then I slept well", 30, 2).expect("fits");
    assert_eq!(punct[0], "I went home,");
    assert_eq!(wrap(&"word ".repeat(30), 42, 2), None);
    assert_eq!(wrap(&"word ".repeat(10), 42, 1), None);
}
