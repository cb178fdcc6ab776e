//! Measuring accuracy: text normalization and word error rate, shared by the tests and
//! `dictum bench`. Normalization: lowercase, punctuation removed, numbers written as words,
//! common abbreviations spelled out, fillers kept (they are words the speaker said).

/// Lowercases, spells numbers and abbreviations out, strips punctuation; returns words.
pub fn normalize(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    // Dotted initialisms ("p.m.", "u.s.") become one word before punctuation goes.
    let lower: Vec<String> = lower
        .split_whitespace()
        .map(|t| {
            let core = t.trim_end_matches([',', ';', ':', '!', '?']);
            let letters: Vec<&str> = core.split('.').filter(|p| !p.is_empty()).collect();
            if letters.len() > 1 && letters.iter().all(|p| p.chars().count() == 1) {
                letters.concat()
            } else {
                t.to_string()
            }
        })
        .collect();
    let lower = lower.join(" ");
    let mut spaced = String::with_capacity(lower.len());
    for c in lower.chars() {
        match c {
            '\'' | '’' => {}
            c if c.is_alphanumeric() => spaced.push(c),
            _ => spaced.push(' '),
        }
    }
    let mut words = Vec::new();
    for w in spaced.split_whitespace() {
        if let Ok(n) = w.parse::<u64>() {
            words.extend(number_words(n).split(' ').map(str::to_string));
            continue;
        }
        let w = match w {
            "mr" => "mister",
            "mrs" => "missus",
            "dr" => "doctor",
            "okay" => "ok",
            other => other,
        };
        words.push(w.to_string());
    }
    words
}

/// English words for a number (up to the trillions).
pub fn number_words(n: u64) -> String {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    fn below_thousand(n: u64, out: &mut Vec<String>) {
        if n >= 100 {
            out.push(ONES[(n / 100) as usize].into());
            out.push("hundred".into());
        }
        let r = n % 100;
        if r >= 20 {
            out.push(TENS[(r / 10) as usize].into());
            if !r.is_multiple_of(10) {
                out.push(ONES[(r % 10) as usize].into());
            }
        } else if r > 0 || n == 0 {
            out.push(ONES[r as usize].into());
        }
    }
    if n == 0 {
        return "zero".into();
    }
    let mut out = Vec::new();
    for (scale, name) in [
        (1_000_000_000_000u64, "trillion"),
        (1_000_000_000, "billion"),
        (1_000_000, "million"),
        (1_000, "thousand"),
    ] {
        if !(n / scale).is_multiple_of(1000) {
            below_thousand(n / scale % 1000, &mut out);
            out.push(name.into());
        }
    }
    if !n.is_multiple_of(1000) {
        below_thousand(n % 1000, &mut out);
    }
    out.join(" ")
}

/// Word-level edit distance between two word sequences.
pub fn edit_distance<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, x) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(x != y);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Errors and reference length, to sum over a corpus.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WerCount {
    pub errors: usize,
    pub words: usize,
}

impl WerCount {
    pub fn of(reference: &str, hypothesis: &str) -> WerCount {
        let r = normalize(reference);
        let h = normalize(hypothesis);
        WerCount {
            errors: edit_distance(&r, &h),
            words: r.len(),
        }
    }

    pub fn plus(self, other: WerCount) -> WerCount {
        WerCount {
            errors: self.errors + other.errors,
            words: self.words + other.words,
        }
    }

    pub fn rate(&self) -> f64 {
        if self.words == 0 {
            return if self.errors == 0 { 0.0 } else { 1.0 };
        }
        self.errors as f64 / self.words as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization() {
        assert_eq!(
            normalize("Go forward 10 meters."),
            ["go", "forward", "ten", "meters"]
        );
        assert_eq!(
            normalize("Mr. John's 3 p.m."),
            ["mister", "johns", "three", "pm"]
        );
        assert_eq!(number_words(1999), "one thousand nine hundred ninety nine");
        assert_eq!(number_words(40_000_012), "forty million twelve");
    }

    #[test]
    fn wer() {
        let w = WerCount::of("ask not what your country", "Ask not, what our country!");
        assert_eq!(
            w,
            WerCount {
                errors: 1,
                words: 5
            }
        );
        assert_eq!(WerCount::of("", "").rate(), 0.0);
        assert_eq!(WerCount::of("", "you").rate(), 1.0);
        assert_eq!(edit_distance(&[1, 2, 3], &[2, 3, 4]), 2);
    }
}
