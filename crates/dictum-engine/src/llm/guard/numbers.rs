//! Numbers as values: spoken and written forms of one quantity become the same token.
//!
//! - spoken numbers are parsed ("one hundred and twenty three" → 123, "twenty five thousand"
//!   → 25000, "nineteen ninety nine" → 19 99, ordinals "twenty third" → 23);
//! - numbers next to each other with only spaces, `-`, `/`, `.` or `:` between them form one
//!   group, written without the joiners: "five five five one two three four" and
//!   "555-1234" are both `5551234`; `.` stays (a decimal point, an IP address: "ten dot zero
//!   dot zero dot one" = "10.0.0.1"), spoken "point"/"dot" between numbers is a `.`;
//! - a scale word after a group multiplies it ("1.5 million" = 1500000);
//! - times: a group with am/pm becomes 24-hour `H:MM` ("three pm" = "3 PM" = "15:00"); a
//!   written `H:MM` without am/pm is `H:MM` when it can only be 24-hour (H > 12 or 0), else
//!   the digits ("3:30" = "three thirty" = `330`, "3:00" = "three o'clock" = `3`);
//! - currency signs and `%` become words after the number ("$123" = "123 dollars").

/// A spoken number word's value and class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spoken {
    Unit(u64),
    Teen(u64),
    Tens(u64),
    Hundred,
    Scale(u64),
}

pub fn spoken(word: &str) -> Option<Spoken> {
    use Spoken::*;
    const UNITS: [(&str, &str); 10] = [
        ("zero", "zeroth"),
        ("one", "first"),
        ("two", "second"),
        ("three", "third"),
        ("four", "fourth"),
        ("five", "fifth"),
        ("six", "sixth"),
        ("seven", "seventh"),
        ("eight", "eighth"),
        ("nine", "ninth"),
    ];
    const TEENS: [(&str, &str); 10] = [
        ("ten", "tenth"),
        ("eleven", "eleventh"),
        ("twelve", "twelfth"),
        ("thirteen", "thirteenth"),
        ("fourteen", "fourteenth"),
        ("fifteen", "fifteenth"),
        ("sixteen", "sixteenth"),
        ("seventeen", "seventeenth"),
        ("eighteen", "eighteenth"),
        ("nineteen", "nineteenth"),
    ];
    const TENS: [(&str, &str); 8] = [
        ("twenty", "twentieth"),
        ("thirty", "thirtieth"),
        ("forty", "fortieth"),
        ("fifty", "fiftieth"),
        ("sixty", "sixtieth"),
        ("seventy", "seventieth"),
        ("eighty", "eightieth"),
        ("ninety", "ninetieth"),
    ];
    let find = |table: &[(&str, &str)]| {
        table
            .iter()
            .position(|(a, b)| *a == word || *b == word)
            .map(|i| i as u64)
    };
    if let Some(i) = find(&UNITS) {
        return Some(Unit(i));
    }
    if let Some(i) = find(&TEENS) {
        return Some(Teen(10 + i));
    }
    if let Some(i) = find(&TENS) {
        return Some(Tens(20 + 10 * i));
    }
    match word {
        "hundred" | "hundredth" => Some(Hundred),
        "thousand" | "thousandth" => Some(Scale(1_000)),
        "million" | "millionth" => Some(Scale(1_000_000)),
        "billion" | "billionth" => Some(Scale(1_000_000_000)),
        _ => None,
    }
}

/// Parses a run of spoken number words into values (a new value starts where the words
/// cannot continue the last one: "five five" is 5, 5; "twenty three" is 23). `digits_only`
/// (after a spoken decimal point) reads each word as its own value and stops at scales.
/// Returns the values and how many words were used.
pub fn parse_spoken(words: &[&str], digits_only: bool) -> (Vec<u64>, usize) {
    #[derive(PartialEq, Clone, Copy)]
    enum Last {
        None,
        Unit,
        Teen,
        Tens,
        Hundred,
        Scale,
    }
    let mut values = Vec::new();
    let (mut total, mut small, mut last) = (0u64, 0u64, Last::None);
    let mut used = 0;
    let flush = |values: &mut Vec<u64>, total: &mut u64, small: &mut u64, last: &mut Last| {
        if *last != Last::None {
            values.push(total.saturating_add(*small));
        }
        (*total, *small, *last) = (0, 0, Last::None);
    };
    for (i, w) in words.iter().enumerate() {
        if *w == "and" {
            // "one hundred and twenty", "two thousand and five".
            let next_is_number = words
                .get(i + 1)
                .and_then(|n| spoken(n))
                .is_some_and(|s| !matches!(s, Spoken::Hundred | Spoken::Scale(_)));
            if matches!(last, Last::Hundred | Last::Scale) && next_is_number && !digits_only {
                used = i + 1;
                continue;
            }
            break;
        }
        let Some(s) = spoken(w) else { break };
        if digits_only {
            match s {
                Spoken::Unit(v) | Spoken::Teen(v) | Spoken::Tens(v) => values.push(v),
                _ => break,
            }
            used = i + 1;
            continue;
        }
        match s {
            Spoken::Unit(v) => {
                if matches!(last, Last::Unit | Last::Teen) {
                    flush(&mut values, &mut total, &mut small, &mut last);
                }
                small += v;
                last = Last::Unit;
            }
            Spoken::Teen(v) | Spoken::Tens(v) => {
                if matches!(last, Last::Unit | Last::Teen | Last::Tens) {
                    flush(&mut values, &mut total, &mut small, &mut last);
                }
                small += v;
                last = if matches!(s, Spoken::Teen(_)) {
                    Last::Teen
                } else {
                    Last::Tens
                };
            }
            Spoken::Hundred => {
                if matches!(last, Last::Unit | Last::Teen | Last::Tens) && small < 100 {
                    small *= 100;
                } else {
                    flush(&mut values, &mut total, &mut small, &mut last);
                    small = 100;
                }
                last = Last::Hundred;
            }
            Spoken::Scale(scale) => {
                let fits = total == 0 || total >= scale.saturating_mul(1000);
                if last == Last::None || !fits || (last == Last::Scale && small == 0) {
                    flush(&mut values, &mut total, &mut small, &mut last);
                    small = 1;
                }
                total = total.saturating_add(small.saturating_mul(scale));
                small = 0;
                last = Last::Scale;
            }
        }
        used = i + 1;
    }
    flush(&mut values, &mut total, &mut small, &mut last);
    (values, used)
}

/// One number group: its values and the joiner before each value after the first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Group {
    pub atoms: Vec<String>,
    /// `seps[i]` joins `atoms[i]` and `atoms[i + 1]`: `.`, `:`, `-`, `/` or ` `.
    pub seps: Vec<char>,
}

/// What follows a group and changes its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Suffix {
    None,
    Am,
    Pm,
    OClock,
    Scale(u64),
}

/// The canonical text of a group (see the module doc); None means "not a valid time" and
/// the suffix is not consumed.
pub fn canonical(group: &Group, suffix: Suffix) -> Option<String> {
    let num = |s: &str| s.parse::<u64>().ok();
    match suffix {
        Suffix::Am | Suffix::Pm => {
            let (h, m) = match group.atoms.as_slice() {
                [h] => (num(h)?, 0),
                [h, m] if matches!(group.seps[0], ':' | ' ' | '.') => (num(h)?, num(m)?),
                _ => return None,
            };
            if !(1..=12).contains(&h) || m > 59 {
                return None;
            }
            let h24 = h % 12 + if suffix == Suffix::Pm { 12 } else { 0 };
            Some(format!("{h24}:{m:02}"))
        }
        Suffix::OClock => match group.atoms.as_slice() {
            [h] => Some(num(h)?.to_string()),
            _ => None,
        },
        Suffix::Scale(scale) => {
            let plain = plain(group);
            let value: f64 = plain.parse().ok()?;
            let v = value * scale as f64;
            (v.fract() == 0.0 && v < 1e18).then(|| format!("{}", v as u64))
        }
        Suffix::None => {
            if let ([h, m], [':']) = (group.atoms.as_slice(), group.seps.as_slice()) {
                let (h, mm) = (num(h)?, num(m)?);
                if h > 12 || h == 0 {
                    return Some(format!("{h}:{mm:02}"));
                }
                if mm == 0 {
                    return Some(h.to_string());
                }
            }
            Some(plain(group))
        }
    }
}

/// The atoms concatenated, keeping `.` and dropping the other joiners.
fn plain(group: &Group) -> String {
    let mut s = String::new();
    for (i, a) in group.atoms.iter().enumerate() {
        if i > 0 && group.seps[i - 1] == '.' {
            s.push('.');
        }
        s.push_str(a);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<u64> {
        let w: Vec<&str> = s.split(' ').collect();
        parse_spoken(&w, false).0
    }

    #[test]
    fn spoken_numbers_parse_to_values() {
        assert_eq!(p("one hundred and twenty three"), [123]);
        assert_eq!(p("twenty five thousand"), [25_000]);
        assert_eq!(p("five five five one"), [5, 5, 5, 1]);
        assert_eq!(p("nineteen ninety nine"), [19, 99]);
        assert_eq!(p("two million three hundred thousand"), [2_300_000]);
        assert_eq!(p("twenty third"), [23]);
        assert_eq!(p("thousand"), [1000]);
        assert_eq!(p("three thirty"), [3, 30]);
    }

    #[test]
    fn groups_become_canonical_values() {
        let g = |atoms: &[&str], seps: &[char]| Group {
            atoms: atoms.iter().map(|s| s.to_string()).collect(),
            seps: seps.to_vec(),
        };
        let c = |gr: &Group, s| canonical(gr, s).unwrap_or_default();
        assert_eq!(c(&g(&["3"], &[]), Suffix::Pm), "15:00");
        assert_eq!(c(&g(&["15", "00"], &[':']), Suffix::None), "15:00");
        assert_eq!(c(&g(&["3", "30"], &[' ']), Suffix::Pm), "15:30");
        assert_eq!(c(&g(&["3", "30"], &[':']), Suffix::None), "330");
        assert_eq!(c(&g(&["3", "00"], &[':']), Suffix::None), "3");
        assert_eq!(c(&g(&["555", "1234"], &['-']), Suffix::None), "5551234");
        assert_eq!(
            c(&g(&["10", "0", "0", "1"], &['.', '.', '.']), Suffix::None),
            "10.0.0.1"
        );
        assert_eq!(
            c(&g(&["1", "5"], &['.']), Suffix::Scale(1_000_000)),
            "1500000"
        );
        assert_eq!(canonical(&g(&["13"], &[]), Suffix::Pm), None);
    }
}
