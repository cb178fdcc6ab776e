//! Which catalog model this machine can afford, from timed passes (`measure.rs` times them; the
//! rule here is pure and driven with fake measurements in its tests).
//!
//! What the user waits for at the key-up of a push-to-talk dictation is not a whole pass over
//! the dictation. While the key is held, the live path transcribes each stretch at the pause
//! that ends it and makes stretches of at least `commit_min_ms` (6 s by default) final
//! (docs/ARCHITECTURE.md, "Live dictation"); what is left at the release is the last stretch,
//! at most about `commit_min_ms` + 1 s of speech, and its pass is often under way before the
//! key goes up (a speculation starts at 48 ms of silence). So the model is:
//!
//! - **tail pass** = a pass over `min(dictation, commit_min + 1 s)` of speech, taken as if it
//!   started at the key-up (the head start the speculation usually gets is not counted: this
//!   is the p95, not the median);
//! - **key-up → text p95** = tail pass + 15 ms (hotkey, typing the first character: the
//!   outside-vs-daemon gap measured 3–15 ms, docs/PERFORMANCE.md);
//! - **file real-time factor** = a 10 s pass over its audio (pieces of files are ≥ 10 s, and
//!   longer ones spread whisper's fixed cost thinner, so this errs on the slow side).
//!
//! A pass's cost is taken as `fixed + per_second × seconds`, fitted through two measured
//! passes (3.0 s of speech, and 10.4 s). For comparison, the live benchmark on a 2-core EPYC
//! (docs/PERFORMANCE.md, 10–11 s dictations with 3 s commits, key released 100 ms after the
//! last word) measured p95 213 ms (tiny.en-q8_0) and 227 ms (base-q8_0).
//!
//! A model that was not measured (not installed) is estimated from the nearest measured one,
//! scaled by [`relative_cost`]; such rows say so, and the choice tells the user to measure
//! again once it is downloaded.

use super::catalog::{CatalogModel, CATALOG};
use serde::Serialize;
use ts_rs::TS;

/// One timed whisper pass.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, TS)]
#[ts(export, rename = "TimedPass")]
pub struct Pass {
    /// Length of the audio transcribed.
    pub audio_ms: f64,
    /// Wall time of the pass (the fastest of the runs).
    pub ms: f64,
}

impl Pass {
    /// Milliseconds of whisper per second of audio.
    pub fn ms_per_audio_s(&self) -> f64 {
        self.ms * 1000.0 / self.audio_ms.max(1.0)
    }
}

/// What one installed model cost on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct Measurement {
    /// Catalog name (`tiny.en-q8_0`).
    pub model: String,
    /// Where it ran (`cpu`, `cuda`, …: the plan's device).
    pub device: String,
    pub threads: u32,
    /// A pass over a few seconds of speech (a release's tail).
    pub tail: Pass,
    /// A pass over a 10 s dictation.
    pub long: Pass,
}

impl Measurement {
    /// `(fixed ms, ms per second of audio)` through the two passes; a measurement whose long
    /// pass is not longer than its tail counts as all fixed cost.
    pub fn cost_line(&self) -> (f64, f64) {
        let span = (self.long.audio_ms - self.tail.audio_ms) / 1000.0;
        let per_s = if span > 0.5 {
            ((self.long.ms - self.tail.ms) / span).max(0.0)
        } else {
            0.0
        };
        let fixed = (self.tail.ms - per_s * self.tail.audio_ms / 1000.0).max(0.0);
        (fixed, per_s)
    }
}

/// What the choice must meet.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, rename = "RecommendTargets")]
pub struct Targets {
    /// Key-up → text, 95th percentile (default 300 ms).
    pub release_p95_ms: f64,
    /// The dictation the p95 is for (default 10 s).
    pub dictation_s: f64,
    /// Whisper time per second of file audio (default 0.5).
    pub file_rtf: f64,
    /// `[dictation] commit_min_ms` in seconds: what the live path makes final while the key is
    /// held.
    pub commit_min_s: f64,
    /// Hotkey + typing the first character.
    pub overhead_ms: f64,
}

impl Default for Targets {
    fn default() -> Self {
        Targets {
            release_p95_ms: 300.0,
            dictation_s: 10.0,
            file_rtf: 0.5,
            commit_min_s: f64::from(
                crate::config::dictation::DictationConfig::default().commit_min_ms,
            ) / 1000.0,
            overhead_ms: 15.0,
        }
    }
}

impl Targets {
    /// Seconds of speech the release's pass covers: the last stretch, not yet final.
    pub fn tail_s(&self) -> f64 {
        self.dictation_s.min(self.commit_min_s + 1.0)
    }
}

/// Whisper's cost by size relative to tiny, whisper.cpp on a CPU (encoder and decoder work;
/// large-v3-turbo has large's encoder and 4 decoder layers). Measured here: base 1.6–2.1×
/// tiny (docs/PERFORMANCE.md); the larger sizes follow their parameter counts.
pub fn relative_cost(size: &str) -> f64 {
    match size {
        "tiny" => 1.0,
        "base" => 1.9,
        "small" => 5.5,
        "medium" => 15.0,
        _ => 12.0,
    }
}

/// Unquantized (f16) files cost more on a CPU than the q8_0/q5 ones.
fn quant_cost(m: &CatalogModel) -> f64 {
    if m.quant.is_some() {
        1.0
    } else {
        1.3
    }
}

/// Published word error rate in percent (LibriSpeech test-clean, the Whisper paper; turbo:
/// OpenAI's statement that it is close to large-v2).
pub fn published_wer(size: &str, english_only: bool) -> f64 {
    match (size, english_only) {
        ("tiny", true) => 5.6,
        ("tiny", false) => 7.6,
        ("base", true) => 4.2,
        ("base", false) => 5.0,
        ("small", true) => 3.1,
        ("small", false) => 3.4,
        ("medium", true) => 3.1,
        ("medium", false) => 2.9,
        _ => 2.7,
    }
}

/// Where a row's numbers come from.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, rename = "RecommendBasis")]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Basis {
    /// Timed on this machine.
    Measured,
    /// Not installed: `from`'s timing × `factor`.
    Estimated { from: String, factor: f64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, rename = "RecommendVerdict")]
pub enum Verdict {
    Fits,
    ReleaseTooSlow,
    FilesTooSlow,
    BothTooSlow,
}

impl Verdict {
    pub fn describe(self) -> &'static str {
        match self {
            Verdict::Fits => "fits",
            Verdict::ReleaseTooSlow => "release too slow",
            Verdict::FilesTooSlow => "files too slow",
            Verdict::BothTooSlow => "too slow",
        }
    }
}

/// One candidate with the numbers behind its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, rename = "RecommendRow")]
pub struct Row {
    pub model: String,
    pub installed: bool,
    pub basis: Basis,
    /// Whisper ms per second of audio (the 10 s pass).
    pub ms_per_audio_s: f64,
    /// Predicted key-up → text p95 for the target dictation.
    pub release_p95_ms: f64,
    /// Predicted real-time factor of file transcription.
    pub file_rtf: f64,
    pub wer_pct: f64,
    /// 1 = the most accurate candidate.
    #[ts(type = "number")]
    pub accuracy_rank: usize,
    pub verdict: Verdict,
}

/// The recommended model with the table behind the choice (`dictum models recommend`, the
/// setup window, the settings panel's "Measure again").
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct Recommendation {
    /// The recommended catalog model.
    pub model: String,
    pub reason: String,
    /// Its numbers are an estimate: download it and measure again.
    pub estimated: bool,
    pub installed: bool,
    pub device: String,
    pub targets: Targets,
    /// Every candidate, most accurate first.
    pub rows: Vec<Row>,
    pub measurements: Vec<Measurement>,
}

fn predict(fixed: f64, per_s: f64, targets: &Targets) -> (f64, f64, f64) {
    let release = fixed + per_s * targets.tail_s() + targets.overhead_ms;
    // Whisper ms for a 10 s dictation over its 10 s.
    let ms_per_s = (fixed + per_s * 10.0) / 10.0;
    (ms_per_s, release, ms_per_s / 1000.0)
}

/// The most accurate candidate that meets `targets`, with the table behind the choice. `None`
/// when nothing was measured. `installed` holds the catalog names present in the models
/// folder; `english` admits the English-only (`.en`) models.
pub fn recommend(
    measurements: &[Measurement],
    installed: &[String],
    english: bool,
    targets: &Targets,
) -> Option<Recommendation> {
    let measured: Vec<(&CatalogModel, &Measurement)> = measurements
        .iter()
        .filter_map(|m| CATALOG.iter().find(|c| c.name == m.model).map(|c| (c, m)))
        .collect();
    if measured.is_empty() {
        return None;
    }
    let is_installed = |name: &str| installed.iter().any(|n| n == name);
    let mut candidates: Vec<&CatalogModel> = CATALOG
        .iter()
        .filter(|c| english || !c.english_only)
        .filter(|c| {
            c.quant == Some("q8_0")
                || is_installed(c.name)
                || measured.iter().any(|(m, _)| m.name == c.name)
        })
        .collect();
    // Most accurate first; among equals the full-precision and q8_0 files transcribe alike,
    // so the installed one, then the smaller download.
    candidates.sort_by(|a, b| {
        let key = |c: &CatalogModel| {
            (
                published_wer(c.size, c.english_only),
                u8::from(c.quant.is_some_and(|q| q.starts_with("q5"))),
                u8::from(!is_installed(c.name)),
                c.published.bytes,
            )
        };
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let cost = |c: &CatalogModel| relative_cost(c.size) * quant_cost(c);
    let rows: Vec<Row> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (basis, fixed, per_s) = match measured.iter().find(|(m, _)| m.name == c.name) {
                Some((_, m)) => {
                    let (f, s) = m.cost_line();
                    (Basis::Measured, f, s)
                }
                None => {
                    // The measured model nearest in cost (ratio closest to 1).
                    let (from, m) = measured
                        .iter()
                        .min_by(|(a, _), (b, _)| {
                            let d = |x: &CatalogModel| (cost(c) / cost(x)).ln().abs();
                            d(a).partial_cmp(&d(b)).unwrap_or(std::cmp::Ordering::Equal)
                        })
                        .copied()
                        .unwrap_or(measured[0]);
                    let factor = cost(c) / cost(from);
                    let (f, s) = m.cost_line();
                    (
                        Basis::Estimated {
                            from: from.name.to_string(),
                            factor: (factor * 100.0).round() / 100.0,
                        },
                        f * factor,
                        s * factor,
                    )
                }
            };
            let (ms_per_audio_s, release_p95_ms, file_rtf) = predict(fixed, per_s, targets);
            let verdict = match (
                release_p95_ms <= targets.release_p95_ms,
                file_rtf <= targets.file_rtf,
            ) {
                (true, true) => Verdict::Fits,
                (false, true) => Verdict::ReleaseTooSlow,
                (true, false) => Verdict::FilesTooSlow,
                (false, false) => Verdict::BothTooSlow,
            };
            Row {
                model: c.name.to_string(),
                installed: is_installed(c.name),
                basis,
                ms_per_audio_s,
                release_p95_ms,
                file_rtf,
                wer_pct: published_wer(c.size, c.english_only),
                accuracy_rank: i + 1,
                verdict,
            }
        })
        .collect();
    let fits = rows.iter().position(|r| r.verdict == Verdict::Fits);
    let (pick, reason) = match fits {
        Some(i) => {
            let r = &rows[i];
            let mut why = format!(
                "the most accurate model that keeps key-up → text p95 at {:.0} ms (≤ {:.0} ms for a {:.0} s dictation) and files at {:.2}× real time (≤ {:.2}×)",
                r.release_p95_ms,
                targets.release_p95_ms,
                targets.dictation_s,
                r.file_rtf,
                targets.file_rtf
            );
            if let Some(better) = rows[..i].last() {
                why.push_str(&format!(
                    "; the more accurate {} would take {:.0} ms at the release and {:.2}× on files",
                    better.model, better.release_p95_ms, better.file_rtf
                ));
            }
            (i, why)
        }
        None => {
            let i = rows
                .iter()
                .enumerate()
                .min_by(|(_, a), (_, b)| {
                    a.release_p95_ms
                        .partial_cmp(&b.release_p95_ms)
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .map_or(0, |(i, _)| i);
            (
                i,
                format!(
                    "no model meets the targets here (key-up → text p95 ≤ {:.0} ms, files ≤ {:.2}× real time); {} is the fastest: {:.0} ms at the release, {:.2}× on files",
                    targets.release_p95_ms,
                    targets.file_rtf,
                    rows[i].model,
                    rows[i].release_p95_ms,
                    rows[i].file_rtf
                ),
            )
        }
    };
    let chosen = &rows[pick];
    let estimated = matches!(chosen.basis, Basis::Estimated { .. });
    let mut reason = reason;
    if let Basis::Estimated { from, factor } = &chosen.basis {
        reason.push_str(&format!(
            " (an estimate: {from}'s measured time × {factor}; download it and measure again)"
        ));
    }
    Some(Recommendation {
        model: chosen.model.clone(),
        reason,
        estimated,
        installed: chosen.installed,
        device: measured[0].1.device.clone(),
        targets: targets.clone(),
        rows: rows.clone(),
        measurements: measurements.to_vec(),
    })
}

/// The table `dictum models recommend` prints.
pub fn table(rec: &Recommendation) -> String {
    let mut out = format!(
        "{:<22} {:>9} {:>14} {:>9} {:>6} {:>5}  {:<17} basis\n",
        "model", "ms/s", "release p95", "file RTF", "WER", "rank", "verdict"
    );
    for r in &rec.rows {
        let basis = match &r.basis {
            Basis::Measured => "measured".to_string(),
            Basis::Estimated { from, factor } => format!("estimate: {from} × {factor}"),
        };
        out.push_str(&format!(
            "{:<22} {:>9.0} {:>11.0} ms {:>8.2}× {:>5.1}% {:>5}  {:<17} {basis}{}\n",
            r.model,
            r.ms_per_audio_s,
            r.release_p95_ms,
            r.file_rtf,
            r.wer_pct,
            r.accuracy_rank,
            r.verdict.describe(),
            if r.installed { ", installed" } else { "" }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine where a pass costs `fixed` ms plus `per_s` ms per second of audio.
    fn machine(model: &str, device: &str, fixed: f64, per_s: f64) -> Measurement {
        let pass = |audio_ms: f64| Pass {
            audio_ms,
            ms: fixed + per_s * audio_ms / 1000.0,
        };
        Measurement {
            model: model.into(),
            device: device.into(),
            threads: 2,
            tail: pass(4000.0),
            long: pass(10_000.0),
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_slow_and_a_fast_machine_pick_different_models() {
        let t = Targets::default();
        let installed = names(&["tiny.en-q8_0"]);
        // Default 6 s commits: the tail is 7 s.
        // Slow: tiny's tail pass 100 + 7 × 25 = 275 ms → 290 ms p95; base (×1.9) 537 ms.
        let slow = recommend(
            &[machine("tiny.en-q8_0", "cpu", 100.0, 25.0)],
            &installed,
            true,
            &t,
        )
        .expect("measured");
        assert_eq!(slow.model, "tiny.en-q8_0", "{}", table(&slow));
        assert!(!slow.estimated);
        assert!(slow.reason.contains("base-q8_0"), "{}", slow.reason);
        // Fast: 40 + 7 × 8 = 96 ms for tiny; base 197 ms fits, small (×5.5) 543 ms does not.
        let fast = recommend(
            &[machine("tiny.en-q8_0", "cpu", 40.0, 8.0)],
            &installed,
            true,
            &t,
        )
        .expect("measured");
        assert_eq!(fast.model, "base.en-q8_0", "{}", table(&fast));
        assert!(fast.estimated && fast.reason.contains("measure again"));
        let small = fast
            .rows
            .iter()
            .find(|r| r.model == "small.en-q8_0")
            .expect("small row");
        assert_eq!(small.verdict, Verdict::ReleaseTooSlow);
    }

    #[test]
    fn a_gpu_like_machine_picks_the_largest() {
        let rec = recommend(
            &[machine("tiny.en-q8_0", "cuda", 6.0, 1.0)],
            &names(&["tiny.en-q8_0"]),
            true,
            &Targets::default(),
        )
        .expect("measured");
        assert_eq!(rec.model, "large-v3-turbo-q8_0", "{}", table(&rec));
        assert_eq!(rec.rows[0].model, rec.model, "the most accurate row");
        assert_eq!(rec.device, "cuda");
    }

    #[test]
    fn a_measured_model_uses_its_own_numbers_and_others_the_nearest() {
        // base measured slower than its size suggests: its own figure decides, not tiny's × 1.9.
        let ms = [
            machine("tiny.en-q8_0", "cpu", 50.0, 10.0),
            machine("base-q8_0", "cpu", 200.0, 30.0),
        ];
        let rec = recommend(
            &ms,
            &names(&["tiny.en-q8_0", "base-q8_0"]),
            false,
            &Targets::default(),
        )
        .expect("measured");
        assert!(
            rec.rows.iter().all(|r| !r.model.contains(".en")),
            "not English"
        );
        let base = rec.rows.iter().find(|r| r.model == "base-q8_0").unwrap();
        assert_eq!(base.basis, Basis::Measured);
        // 200 + 30 × 7 + 15
        assert!((base.release_p95_ms - 425.0).abs() < 1e-6, "{base:?}");
        assert_eq!(base.verdict, Verdict::ReleaseTooSlow);
        let small = rec.rows.iter().find(|r| r.model == "small-q8_0").unwrap();
        assert!(
            matches!(&small.basis, Basis::Estimated { from, .. } if from == "base-q8_0"),
            "{small:?}"
        );
        assert_eq!(rec.model, "tiny-q8_0", "{}", table(&rec));
    }

    #[test]
    fn nothing_fits_gives_the_fastest_and_says_so() {
        let rec = recommend(
            &[machine("tiny.en-q8_0", "cpu", 400.0, 80.0)],
            &names(&["tiny.en-q8_0"]),
            true,
            &Targets::default(),
        )
        .expect("measured");
        assert_eq!(rec.model, "tiny.en-q8_0");
        assert!(rec.reason.contains("no model meets"), "{}", rec.reason);
        assert!(recommend(&[], &[], true, &Targets::default()).is_none());
    }

    #[test]
    fn the_tail_is_the_uncommitted_stretch_not_the_dictation() {
        let t = Targets {
            commit_min_s: 3.0,
            ..Targets::default()
        };
        assert_eq!(t.tail_s(), 4.0);
        assert_eq!(Targets::default().tail_s(), 7.0, "6 s commits by default");
        let short = Targets {
            dictation_s: 2.0,
            ..Targets::default()
        };
        assert_eq!(short.tail_s(), 2.0);
        let m = machine("tiny.en-q8_0", "cpu", 100.0, 20.0);
        let (fixed, per_s) = m.cost_line();
        assert!((fixed - 100.0).abs() < 1e-9 && (per_s - 20.0).abs() < 1e-9);
    }
}
