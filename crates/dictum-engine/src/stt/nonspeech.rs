//! Whisper marks sounds it cannot transcribe with bracketed annotations — `[BLANK_AUDIO]`,
//! `(water splashing)`, `*music*`, `♪` — which must never be typed into someone's document.

/// Removes non-speech annotations and collapses whitespace. Returns the words that are left.
pub fn strip_nonspeech(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth_round = 0u32;
    let mut depth_square = 0u32;
    let mut in_star = false;
    for c in text.chars() {
        match c {
            '(' => depth_round += 1,
            ')' if depth_round > 0 => depth_round -= 1,
            '[' => depth_square += 1,
            ']' if depth_square > 0 => depth_square -= 1,
            '*' => in_star = !in_star,
            '♪' | '♫' => {}
            _ if depth_round == 0 && depth_square == 0 && !in_star => out.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = out.split_whitespace().collect();
    let joined = words.join(" ");
    // Whatever is left must contain a letter or digit to be speech.
    if joined.chars().any(char::is_alphanumeric) {
        joined
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_are_removed() {
        assert_eq!(strip_nonspeech(" (water splashing)"), "");
        assert_eq!(strip_nonspeech("[BLANK_AUDIO]"), "");
        assert_eq!(strip_nonspeech(" ♪ *music* ♪ "), "");
        assert_eq!(strip_nonspeech(" - ..."), "");
        assert_eq!(
            strip_nonspeech(" [coughs] Send it now. (laughs)"),
            "Send it now."
        );
    }

    #[test]
    fn ordinary_text_is_kept() {
        assert_eq!(
            strip_nonspeech(" And so, my fellow Americans,  ask not."),
            "And so, my fellow Americans, ask not."
        );
    }
}
