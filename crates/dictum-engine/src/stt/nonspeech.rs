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

/// What whisper says for silence and noise (its training data's subtitles): `you`,
/// `thank you`, `thanks for watching`... Measured here: 3 s of digital silence gives `you`,
/// noise captured through PulseAudio gives `You`.
const SILENCE_PHRASES: &[&str] = &[
    "you",
    "thank you",
    "thank you very much",
    "thanks",
    "thanks for watching",
    "thank you for watching",
    "thanks for listening",
    "please subscribe",
    "subscribe",
    "bye",
    "bye bye",
    "so",
    "oh",
    "hmm",
    "the end",
];

/// True when `text` is one of whisper's stock outputs for silence and the audio gives no
/// reason to believe it was said: whisper itself thinks there was no speech, or the VAD heard
/// too little of it for a phrase of that length.
pub fn is_silence_phrase(text: &str, speech_ms: i64, no_speech_prob: f32) -> bool {
    let norm: String = text
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == '\'')
        .collect::<String>()
        .to_lowercase();
    let norm = norm.split_whitespace().collect::<Vec<_>>().join(" ");
    if !SILENCE_PHRASES.contains(&norm.as_str()) {
        return false;
    }
    // ~150 ms of clear speech per word is the least a real "thank you" has.
    let words = norm.split(' ').count() as i64;
    no_speech_prob >= 0.4 || speech_ms < 400 + 150 * words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stock_silence_phrases_are_caught_only_without_evidence_of_speech() {
        assert!(is_silence_phrase("You", 250, 0.1));
        assert!(is_silence_phrase(" Thank you.", 2000, 0.8));
        assert!(is_silence_phrase("Thanks for watching!", 300, 0.0));
        // Said clearly, it is typed.
        assert!(!is_silence_phrase("Thank you.", 1200, 0.05));
        // Not a stock phrase.
        assert!(!is_silence_phrase("Send it", 100, 0.9));
    }

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
