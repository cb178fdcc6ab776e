//! The strict judgement of a speech server's answer: only text that certainly is not a
//! transcript of its audio (a loop the audio cannot hold, far too many words) is thrown away.
//! A server's answer is the user's words until shown otherwise, and throwing it away loses
//! text; so real repetitive speech (anaphora, lists, counting, "no, no, no") must pass here.
//! A *local* whisper pass is judged generously instead (`suspect.rs`): redoing it costs a
//! few hundred milliseconds, never words.

use crate::SAMPLE_RATE;

/// Why a text cannot be the transcript of the audio it came with ([`degenerate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Degenerate {
    /// More words than anyone says in that time.
    TooManyWords { words: usize, audio_ms: u64 },
    /// One phrase said back to back more often than the audio's length allows: whisper's
    /// looping failure ("Thank you. Thank you. …", "the the the …", "old-s-s-y-y-y…").
    Loop {
        phrase: String,
        times: usize,
        audio_ms: u64,
    },
}

impl std::fmt::Display for Degenerate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Degenerate::TooManyWords { words, audio_ms } => write!(
                f,
                "too many words for the audio: {words} words in {:.1} s of speech",
                *audio_ms as f64 / 1000.0
            ),
            Degenerate::Loop {
                phrase,
                times,
                audio_ms,
            } => write!(
                f,
                "repetitive text: `{}` {times} times in a row in {:.1} s of speech",
                crate::net::snippet(phrase, 60),
                *audio_ms as f64 / 1000.0
            ),
        }
    }
}

/// Most words a person says per second, with a margin (dictation is 2–3 words/s, fast
/// speech 4): a run of repeats holding more than this for the audio's length was not said.
const LOOP_WORDS_PER_S: f64 = 4.5;
/// Words allowed on top of the rate (short clips: "no, no, no" in half a second).
const LOOP_SLACK_WORDS: f64 = 2.0;
/// Longest phrase (in words) looked for repeating back to back: whisper loops on a word, a
/// short phrase or a whole sentence.
const LOOP_MAX_PHRASE: usize = 48;

/// Output that cannot be a transcript of `samples` of speech: far too many words for the
/// time, or one phrase repeated back to back more than the time allows (whisper's looping
/// failure). People repeat themselves too — rhetoric ("it was the best of times, it was the
/// worst of times"), lists ("apples, pears, apples, pears"), counting, "no, no, no" — but
/// each repeat they say takes time in the audio, while a loop is written far beyond it. So
/// the judgement is the longest back-to-back run of one phrase (1 to 48 words, hyphens
/// splitting words: "old-s-s-y-y-y" is a loop of `y`), degenerate when
/// - the run holds more words than can be said in the audio (4.5 words/s, + 2), or
/// - a phrase of two or more words is said five or more times in a row and the whole text is
///   more than a brisk 3 words/s (+ 2).
///
/// One judgement for whisper's output (redone with the full window) and for a speech
/// server's answer (the local model redoes it).
pub fn degenerate(text: &str, samples: usize) -> Option<Degenerate> {
    let words: Vec<String> = text
        .split(|c: char| c.is_whitespace() || c == '-')
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let secs = samples as f64 / SAMPLE_RATE as f64;
    let audio_ms = (secs * 1000.0) as u64;
    if words.len() as f64 > 3.0 + secs * 5.0 {
        return Some(Degenerate::TooManyWords {
            words: words.len(),
            audio_ms,
        });
    }
    let said_in_time = LOOP_SLACK_WORDS + secs * LOOP_WORDS_PER_S;
    let brisk = 2.0 + secs * 3.0;
    let mut worst: Option<(usize, usize, usize)> = None; // (start, phrase words, run words)
    let n = words.len();
    for p in 1..=(n / 2).min(LOOP_MAX_PHRASE) {
        // `same` consecutive positions i with words[i] == words[i + p]: the `same + p` words
        // from `i + 1 - same` repeat with period p.
        let mut same = 0usize;
        for i in 0..n - p {
            if words[i] == words[i + p] {
                same += 1;
            } else {
                same = 0;
            }
            let run = same + p;
            let times = run / p;
            if times < 2 {
                continue;
            }
            let too_long = run as f64 > said_in_time;
            let too_often = p >= 2 && times >= 5 && n as f64 > brisk;
            if (too_long || too_often) && worst.is_none_or(|(_, _, r)| run > r) {
                worst = Some((i + 1 - same, p, run));
            }
        }
    }
    worst.map(|(start, p, run)| Degenerate::Loop {
        phrase: words[start..start + p].join(" "),
        times: run / p,
        audio_ms,
    })
}

/// [`degenerate`] as a yes/no.
pub fn looks_degenerate(text: &str, samples: usize) -> bool {
    degenerate(text, samples).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DICKENS: &str = "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of Light, it was the season of Darkness, it was the spring of hope, it was the winter of despair, we had everything before us, we had nothing before us, we were all going direct to Heaven, we were all going direct the other way.";

    /// Real speech that repeats itself passes; whisper's loops (collected from tiny on the
    /// corpus and from whisper-server) do not.
    #[test]
    fn degenerate_output_is_recognised() {
        let s = |secs: f64| (secs * SAMPLE_RATE as f64) as usize;
        let counting = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty";
        let speech: &[(&str, f64)] = &[
            // The reading that was thrown away as a loop (44 s, whisper-server's answer).
            (DICKENS, 44.0),
            ("Go forward ten meters.", 2.0),
            ("Apples, pears, apples, pears.", 5.0),
            (counting, 8.0),
            ("No, no, no.", 1.0),
            ("No, no, no, no, no, I said no!", 3.0),
            ("Very, very, very good.", 2.0),
            ("Ha ha ha ha.", 2.0),
            ("Thank you. Thank you.", 2.0),
            ("We want more, we want more, we want more!", 5.0),
            ("We shall fight on the beaches, we shall fight on the landing grounds, we shall fight in the fields and in the streets.", 9.0),
            ("A well-known, so-so, old-fashioned twenty-one-year-old plan.", 3.75),
            ("", 1.0),
        ];
        for (text, secs) in speech {
            assert_eq!(degenerate(text, s(*secs)), None, "{text:?} over {secs} s");
        }
        let sentence = "I will send you the report before the meeting tomorrow. ";
        let long_loops: &[(String, f64)] = &[
            ("Thank you. ".repeat(30), 3.0),
            ("the ".repeat(200), 10.0),
            (sentence.repeat(15), 8.0),
            ("word ".repeat(30), 2.0),
            (
                "He was not an old-s-s-y-y-y-y-y-y-y-y-y-y-y-y-y-y-y-y-y-y-y-y-y-y-y".into(),
                3.75,
            ),
        ];
        for (text, secs) in long_loops {
            assert!(
                degenerate(text, s(*secs)).is_some(),
                "{text:?} over {secs} s"
            );
            assert!(looks_degenerate(text, s(*secs)));
        }
        // Loops short enough for the overall word rate, caught as loops.
        let loop_of = |text: &str, secs: f64| match degenerate(text, s(secs)) {
            Some(Degenerate::Loop { phrase, times, .. }) => (phrase, times),
            other => panic!("{text:?} over {secs} s: {other:?}"),
        };
        assert_eq!(
            loop_of(
                "go forward 10 meters. Go forward 10 meters, go forward 10 meters",
                2.0
            ),
            ("go forward 10 meters".into(), 3)
        );
        assert_eq!(
            loop_of(
                "Front, left, left, front, left, left, front, left, left,",
                1.375
            ),
            ("front left left".into(), 3)
        );
        // A real whisper loop the strict rule lets through (three repeats fit the time): the
        // local rule (`suspect.rs`) redoes it; a server's answer like it is kept.
        assert_eq!(
            degenerate(
                "And so my fellow Americans ask not what your country can do for you for you for you. Ask what you can do for your country.",
                s(11.0)
            ),
            None
        );
        // A real start, then the decoder loops on a short phrase until its token cap.
        let tail = format!(
            "{} {}",
            "So the plan for next week is to finish the draft, send it to the team and then wait for their comments on it.",
            "Thank you. ".repeat(6)
        );
        assert_eq!(loop_of(&tail, 10.0), ("thank you".into(), 6));
        // The reason reads as one line.
        let why = degenerate(&"Thank you. ".repeat(6), s(1.0))
            .expect("loop")
            .to_string();
        assert!(why.contains("words in 1.0 s"), "{why}");
        let why = degenerate("go go go go go go go go go go go go go", s(2.0))
            .expect("loop")
            .to_string();
        assert_eq!(
            why,
            "repetitive text: `go` 13 times in a row in 2.0 s of speech"
        );
    }
}
