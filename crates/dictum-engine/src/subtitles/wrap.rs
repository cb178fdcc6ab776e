//! A cue's text on at most `max_lines` lines of at most `max_chars` characters, the lines
//! as even as the words allow, a break after punctuation preferred.

/// The lines, or `None` when the text does not fit. A single word longer than a line fits
/// alone on its own (a cue must show it somehow); with other words it does not fit.
pub fn wrap(text: &str, max_chars: usize, max_lines: usize) -> Option<Vec<String>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return Some(Vec::new());
    }
    if words.len() == 1 {
        return Some(vec![words[0].to_string()]);
    }
    let len = |ws: &[&str]| ws.iter().map(|w| w.chars().count()).sum::<usize>() + ws.len() - 1;
    if len(&words) <= max_chars {
        return Some(vec![words.join(" ")]);
    }
    if max_lines < 2 {
        return None;
    }
    // Two lines (more are never needed at 42 characters and 7 s): the split with the most even
    // lines, a line that ends in punctuation counted as 8 characters more even.
    let mut best: Option<(usize, usize)> = None;
    for cut in 1..words.len() {
        let (a, b) = (len(&words[..cut]), len(&words[cut..]));
        if a > max_chars || b > max_chars {
            continue;
        }
        let bonus = if words[cut - 1].ends_with(['.', ',', '?', '!', ';', ':']) {
            8
        } else {
            0
        };
        let score = a.abs_diff(b).saturating_sub(bonus);
        if best.is_none_or(|(_, s)| score < s) {
            best = Some((cut, score));
        }
    }
    if let Some((cut, _)) = best {
        return Some(vec![words[..cut].join(" "), words[cut..].join(" ")]);
    }
    if max_lines >= 3 {
        // Only when asked for more than two lines: greedy filling.
        let mut lines: Vec<String> = Vec::new();
        for w in words {
            match lines.last_mut() {
                Some(l) if l.chars().count() + 1 + w.chars().count() <= max_chars => {
                    l.push(' ');
                    l.push_str(w);
                }
                _ => lines.push(w.to_string()),
            }
        }
        return (lines.len() <= max_lines && lines.iter().all(|l| l.chars().count() <= max_chars))
            .then_some(lines);
    }
    None
}
