//! Plausible history rows for tests, screenshots and the seeded-database app test: a fixed
//! pseudo-random sequence (same `seed` → same rows), spread over the days before `end_ms`.
//! Never used on a user's database by the app itself.

use super::{Entry, Outcome, Source};

const PHRASES: &[&str] = &[
    "Send the quarterly report to Maria by Friday.",
    "Let's move the stand-up to ten thirty tomorrow.",
    "The build is green again after the cache fix.",
    "Remind me to water the plants when I get home.",
    "Can you review the pull request for the tray icon?",
    "Fellow Americans, ask not what your country can do for you.",
    "Kubernetes rolled back the deployment at noon.",
    "Please book a table for four at seven.",
    "The latency budget for dictation is under three hundred milliseconds.",
    "Add milk, eggs and coffee to the shopping list.",
    "git commit dash m fix the flaky test",
    "We measured p95 at one hundred and twelve milliseconds.",
];

const APPS: &[&str] = &[
    "firefox",
    "code",
    "kitty",
    "slack",
    "thunderbird",
    "obsidian",
];

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn unit(&mut self) -> f64 {
        (self.next() % 1_000_000) as f64 / 1_000_000.0
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// `n` rows, oldest first, over the `days` days before `end_ms`.
pub fn entries(n: usize, days: u32, end_ms: i64, seed: u64) -> Vec<Entry> {
    let mut rng = Lcg(seed ^ 0x9e37_79b9_7f4a_7c15);
    let span = i64::from(days.max(1)) * 86_400_000;
    let step = (span / n.max(1) as i64).max(1);
    (0..n)
        .map(|i| {
            let mut e = Entry::new(Source::Mic);
            e.created_at_ms = end_ms - span + i as i64 * step + (rng.next() % step as u64) as i64;
            e.app_class = Some(rng.pick(APPS).to_string());
            e.window_title = Some(format!("{} window", e.app_class.as_deref().unwrap_or("")));
            e.model = Some("tiny.en-q8_0".into());
            e.device = Some("cpu".into());
            e.language = Some("en".into());
            let audio_ms = 800 + (rng.next() % 6000) as i64;
            e.audio_ms = Some(audio_ms);
            e.vad_ms = Some(3.0 + rng.unit() * 4.0);
            let roll = rng.unit();
            if roll < 0.07 {
                e.outcome = Outcome::NoSpeech;
                e.speech_ms = Some(0);
                e.raw_text = Some(String::new());
                e.text = Some(String::new());
                e.total_ms = Some(10.0 + rng.unit() * 10.0);
                return e;
            }
            if roll < 0.10 {
                e.outcome = Outcome::Error;
                e.error_kind = Some("model_not_found".into());
                e.error = Some(
                    "model `base-q8_0` is not installed; download it in Settings → Models".into(),
                );
                e.total_ms = Some(2.0 + rng.unit());
                return e;
            }
            e.outcome = Outcome::Ok;
            e.speech_ms = Some(audio_ms - 300);
            let phrase = rng.pick(PHRASES);
            let raw = phrase
                .trim_end_matches('.')
                .replace([',', '?'], "")
                .to_lowercase();
            e.raw_text = Some(format!("um {raw}"));
            let stt = 90.0 + audio_ms as f64 * 0.04 + rng.unit() * 60.0;
            e.stt_ms = Some(stt);
            let inject = 4.0 + rng.unit() * 20.0;
            e.inject_ms = Some(inject);
            let llm_roll = rng.unit();
            let mut llm = 0.0;
            if llm_roll < 0.75 {
                let reloaded = rng.unit() < 0.02;
                llm = 120.0 + rng.unit() * 140.0 + if reloaded { 1800.0 } else { 0.0 };
                e.llm_ms = Some(llm);
                e.llm_backend = Some("ollama".into());
                e.llm_model = Some("llama3.2:3b".into());
                e.llm_tokens_per_sec = Some(55.0 + rng.unit() * 30.0);
                e.llm_reloaded = Some(reloaded);
                if llm_roll < 0.70 {
                    e.llm_outcome = Some("cleaned".into());
                    e.text = Some(phrase.to_string());
                } else {
                    e.llm_outcome = Some("rejected".into());
                    e.llm_reject_reason = Some("output adds words that were not dictated".into());
                    e.text = e.raw_text.clone();
                }
            } else {
                e.llm_outcome = Some("disabled".into());
                e.text = e.raw_text.clone();
            }
            e.total_ms = Some(stt + llm + inject + 8.0);
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn deterministic_and_ordered() {
        let a = super::entries(500, 10, 1_800_000_000_000, 7);
        let b = super::entries(500, 10, 1_800_000_000_000, 7);
        assert_eq!(
            a.iter()
                .map(|e| (e.created_at_ms, e.text.clone()))
                .collect::<Vec<_>>(),
            b.iter()
                .map(|e| (e.created_at_ms, e.text.clone()))
                .collect::<Vec<_>>()
        );
        assert!(a
            .windows(2)
            .all(|w| w[0].created_at_ms <= w[1].created_at_ms));
        assert!(a.iter().all(|e| e.created_at_ms < 1_800_000_000_000));
        let no_speech = a
            .iter()
            .filter(|e| e.outcome == super::Outcome::NoSpeech)
            .count();
        assert!((10..80).contains(&no_speech), "{no_speech}");
    }
}
