//! `dictum bench accuracy`: Dictum's words against raw whisper's, on the same clips, in the
//! same run, and the gate `scripts/test` runs on them.
//!
//! The reference is outside Dictum: whisper.cpp's own `whisper-cli` (the version whisper-rs
//! builds, `scripts/whisper-cli`), same model, greedy decoding, same threads and language,
//! run on each clip file. Beside it:
//! - Dictum's file path: `dictum transcribe`'s own code (`Engine::transcribe_file_with`, VAD
//!   trim, sized window, suspect passes redone) on the same file;
//! - the live path: the clip fed as if spoken through the real segmenter, its commits and its
//!   release tail transcribed as the dictation worker does (`bench_live.rs`), the key released
//!   `tail` ms after the last word.
//!
//! The gate fails when, over the clips with speech, Dictum's file WER is worse than
//! whisper-cli's by more than `--max-file-gap` points, the live WER at any tail by more than
//! `--max-live-gap`, when any clip has a stutter or a phrase repeated back to back that its
//! reference does not have and whisper-cli did not write, or when words are typed for a clip
//! without speech. It prints a per-clip table of every difference.

use crate::bench_live::{self, Memo};
use dictum_engine::config::Config;
use dictum_engine::eval::{normalize, WerCount};
use dictum_engine::pipeline::Engine;
use dictum_engine::store::History;
use dictum_engine::stt::strip_nonspeech;
use dictum_engine::stt::suspect::{text_suspicion, Suspicion};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// A clip file with its reference text (empty: no speech, nothing may be typed).
pub struct Clip<'a> {
    pub name: String,
    pub path: PathBuf,
    pub reference: &'a str,
    pub samples: &'a [f32],
}

pub struct Options<'a> {
    /// whisper.cpp's `whisper-cli`.
    pub whisper_cli: &'a Path,
    /// Live releases, ms after the last word.
    pub tails: &'a [u32],
    /// Fail when the file WER exceeds whisper-cli's by more than this many points.
    pub max_file_gap: f64,
    /// Fail when a live WER exceeds whisper-cli's by more than this many points.
    pub max_live_gap: f64,
    /// Write every clip's texts here (TSV).
    pub details: Option<&'a Path>,
}

/// The report, and whether the gate passed.
pub struct Outcome {
    pub report: String,
    pub passed: bool,
}

/// A stutter or back-to-back repeat in `text` that the reference does not have.
pub fn repeat_error(text: &str, reference: &str) -> Option<String> {
    let why = text_suspicion(text)?;
    let said = |phrase: &str, times: usize| {
        let phrase = normalize(phrase).join(" ");
        let run = vec![phrase.as_str(); times].join(" ");
        format!(" {} ", normalize(reference).join(" ")).contains(&format!(" {run} "))
    };
    match &why {
        Suspicion::Repeat { phrase, times } if said(phrase, *times) => None,
        Suspicion::Stutter { word } if said(word, 1) => None,
        _ => Some(why.to_string()),
    }
}

/// whisper-cli's text for one file: greedy (`-bs 1`), no timestamps, the non-speech
/// annotations it writes ("[BLANK_AUDIO]", "(water splashing)") removed as Dictum removes them.
fn whisper_cli(
    cli: &Path,
    model: &str,
    clip: &Path,
    threads: u32,
    language: &str,
) -> anyhow::Result<String> {
    let out = Command::new(cli)
        .args(["-m", model, "-f"])
        .arg(clip)
        .args([
            "-t",
            &threads.to_string(),
            "-l",
            language,
            "-bs",
            "1",
            "-nt",
            "-np",
        ])
        .output()
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot run {}: {e} (build it with scripts/whisper-cli)",
                cli.display()
            )
        })?;
    if !out.status.success() {
        anyhow::bail!(
            "{} failed on {}: {}",
            cli.display(),
            clip.display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    let text: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    Ok(strip_nonspeech(&text.join(" ")))
}

/// The texts of one clip: whisper-cli, the file path, the live path at each tail (and the
/// whisper ms left after each release).
struct Texts {
    cli: String,
    file: String,
    live: Vec<String>,
    release_ms: Vec<f64>,
}

pub fn run(config: Config, clips: &[Clip], opts: &Options) -> anyhow::Result<Outcome> {
    // The same threads for every pass, whatever else runs: whisper's words can depend on the
    // thread count, and the gate must give the same verdict every time.
    let mut config = config;
    config.stt.adapt_threads = false;
    config.llm.enabled = false;
    let mut engine = Engine::new(config.clone(), vec![]);
    engine.ensure_model()?;
    let threads = engine.stt_options().threads;
    let model = engine
        .model_path()?
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("the model path is not UTF-8"))?
        .to_string();
    let language = match config.stt.language.as_str() {
        "" => "auto".to_string(),
        l => l.to_string(),
    };
    // A history of its own, removed at the end: the rows are the file path's, not the user's.
    let dir = std::env::temp_dir().join(format!("dictum-bench-accuracy-{}", std::process::id()));
    dictum_engine::paths::create_private_dir_all(&dir)?;
    let history = History::open(&dir.join("history.sqlite"))?;
    let result = measure(
        &mut engine,
        &history,
        &config,
        clips,
        opts,
        &model,
        &language,
        threads,
    );
    drop(history);
    let _ = std::fs::remove_dir_all(&dir);
    let all = result?;
    report(&config, clips, opts, &all, threads, &language)
}

impl Texts {
    /// Dictum's texts with their path's name: the file, then each live release.
    fn dictum_paths(&self, tails: &[u32]) -> Vec<(String, &String)> {
        let live = tails.iter().zip(&self.live);
        std::iter::once((String::from("file"), &self.file))
            .chain(live.map(|(tail, l)| (format!("live {tail}"), l)))
            .collect()
    }
}

/// Seconds spent in whisper-cli, the file path and the live path.
struct Spent {
    cli: f64,
    file: f64,
    live: f64,
}

#[allow(clippy::too_many_arguments)]
fn measure(
    engine: &mut Engine,
    history: &History,
    config: &Config,
    clips: &[Clip],
    opts: &Options,
    model: &str,
    language: &str,
    threads: u32,
) -> anyhow::Result<(Vec<Texts>, Spent)> {
    let mut all = Vec::new();
    let (mut cli_s, mut file_s, mut live_s) = (0.0, 0.0, 0.0);
    for c in clips {
        let t = Instant::now();
        let cli = whisper_cli(opts.whisper_cli, model, &c.path, threads, language)?;
        cli_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let utterance = engine.transcribe_file_with(history, &c.path, &mut |_| {})?;
        if let Some(e) = utterance.error {
            anyhow::bail!("dictum could not transcribe {}: {e}", c.path.display());
        }
        let file = utterance.entry.text.unwrap_or_default();
        file_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut memo = Memo::new();
        let mut live = Vec::new();
        let mut release_ms = Vec::new();
        for &tail in opts.tails {
            let l = bench_live::live_text(engine, &mut memo, config, c.samples, tail, true)?;
            live.push(l.text);
            release_ms.push(l.release_ms);
        }
        live_s += t.elapsed().as_secs_f64();
        eprintln!("dictum bench accuracy: {} done", c.name);
        all.push(Texts {
            cli,
            file,
            live,
            release_ms,
        });
    }
    Ok((
        all,
        Spent {
            cli: cli_s,
            file: file_s,
            live: live_s,
        },
    ))
}

fn report(
    config: &Config,
    clips: &[Clip],
    opts: &Options,
    (all, spent): &(Vec<Texts>, Spent),
    threads: u32,
    language: &str,
) -> anyhow::Result<Outcome> {
    let (cli_s, file_s, live_s) = (spent.cli, spent.file, spent.live);
    let mut out = String::new();
    let speech_s: f64 = clips
        .iter()
        .map(|c| c.samples.len() as f64 / 16_000.0)
        .sum();
    let _ = writeln!(
        out,
        "Model `{}`, {threads} threads, language `{language}`; {} clips, {speech_s:.0} s. \
         whisper-cli: greedy (`-bs 1`), its non-speech annotations removed. File: `dictum \
         transcribe`'s path. Live: released {} ms after the last word. Time: whisper-cli {cli_s:.0} s, \
         file {file_s:.0} s, live {live_s:.0} s.\n",
        config.stt.model,
        clips.len(),
        opts.tails.iter().map(|t| t.to_string()).collect::<Vec<_>>().join("/"),
    );
    let live_heads: Vec<String> = opts.tails.iter().map(|t| format!("live {t}")).collect();
    let _ = writeln!(
        out,
        "Clips where any path differs from whisper-cli (errors/words, then the texts):\n"
    );
    let _ = writeln!(
        out,
        "| clip | whisper-cli | file | {} | texts that differ |",
        live_heads.join(" | ")
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|{}---|",
        "---:|".repeat(opts.tails.len())
    );
    let mut cli_total = WerCount::default();
    let mut file_total = WerCount::default();
    let mut live_total = vec![WerCount::default(); opts.tails.len()];
    let mut failures = Vec::new();
    let mut rows = String::from("clip\tpath\terrors\twords\ttext\n");
    for (c, t) in clips.iter().zip(all) {
        let clean = |s: &str| s.replace(['\t', '\n', '|'], " ");
        let cli_w = WerCount::of(c.reference, &t.cli);
        let file_w = WerCount::of(c.reference, &t.file);
        let live_w: Vec<WerCount> = t
            .live
            .iter()
            .map(|l| WerCount::of(c.reference, l))
            .collect();
        let _ = writeln!(
            rows,
            "{}\tcli\t{}\t{}\t{}",
            c.name,
            cli_w.errors,
            cli_w.words,
            clean(&t.cli)
        );
        let _ = writeln!(
            rows,
            "{}\tfile\t{}\t{}\t{}",
            c.name,
            file_w.errors,
            file_w.words,
            clean(&t.file)
        );
        for ((tail, l), w) in opts.tails.iter().zip(&t.live).zip(&live_w) {
            let _ = writeln!(
                rows,
                "{}\tlive{tail}\t{}\t{}\t{}",
                c.name,
                w.errors,
                w.words,
                clean(l)
            );
        }
        if c.reference.trim().is_empty() {
            // No speech: nothing may be typed, whatever whisper-cli writes.
            for (path, text) in std::iter::once(("file", &t.file))
                .chain(opts.tails.iter().zip(&t.live).map(|(_, l)| ("live", l)))
            {
                if !text.trim().is_empty() {
                    failures.push(format!(
                        "{}: {path} typed «{text}» for a clip without speech",
                        c.name
                    ));
                }
            }
        } else {
            cli_total = cli_total.plus(cli_w);
            file_total = file_total.plus(file_w);
            for (i, w) in live_w.iter().enumerate() {
                live_total[i] = live_total[i].plus(*w);
            }
            let cli_repeat = repeat_error(&t.cli, c.reference);
            let texts = t.dictum_paths(opts.tails);
            for (path, text) in &texts {
                if let (Some(why), None) = (repeat_error(text, c.reference), &cli_repeat) {
                    failures.push(format!(
                        "{}: {path} has {why}, whisper-cli has none: «{text}»",
                        c.name
                    ));
                }
            }
        }
        let differs = file_w != cli_w || live_w.iter().any(|w| *w != cli_w);
        if differs {
            let norm = |s: &str| normalize(s).join(" ");
            let mut shown = vec![format!("cli: {}", clean(&t.cli))];
            let mut seen = vec![norm(&t.cli)];
            let texts = t.dictum_paths(opts.tails);
            for (path, text) in texts {
                if !seen.contains(&norm(text)) {
                    seen.push(norm(text));
                    shown.push(format!("{path}: {}", clean(text)));
                }
            }
            let cell = |w: &WerCount| format!("{}/{}", w.errors, w.words);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                c.name,
                cell(&cli_w),
                cell(&file_w),
                live_w.iter().map(cell).collect::<Vec<_>>().join(" | "),
                shown.join("<br>")
            );
        }
    }
    let pct = |w: WerCount| w.rate() * 100.0;
    let fmt = |w: WerCount| format!("{:.1} % ({}/{})", pct(w), w.errors, w.words);
    let _ = writeln!(
        out,
        "\nWER over the clips with speech (`eval.rs` normalizer):\n"
    );
    let _ = writeln!(out, "| path | WER | vs whisper-cli | gate |");
    let _ = writeln!(out, "|---|---:|---:|---|");
    let _ = writeln!(
        out,
        "| whisper-cli (raw whisper) | {} | | |",
        fmt(cli_total)
    );
    let mut gap_row = |name: String, w: WerCount, max: f64, failures: &mut Vec<String>| {
        let gap = pct(w) - pct(cli_total);
        let ok = gap <= max + 1e-9;
        if !ok {
            failures.push(format!("{name}: WER {:.1} % is {gap:.1} points worse than whisper-cli's {:.1} % (at most {max} allowed)", pct(w), pct(cli_total)));
        }
        let _ = writeln!(
            out,
            "| {name} | {} | {gap:+.1} points | {} (≤ {max:+.1}) |",
            fmt(w),
            if ok { "pass" } else { "FAIL" }
        );
    };
    gap_row(
        "Dictum, file".into(),
        file_total,
        opts.max_file_gap,
        &mut failures,
    );
    for (tail, w) in opts.tails.iter().zip(&live_total) {
        gap_row(
            format!("Dictum, live {tail} ms"),
            *w,
            opts.max_live_gap,
            &mut failures,
        );
    }
    let _ = writeln!(
        out,
        "\nRelease → words, in-process (the post-roll waited for and the tail pass, or what is \
         left of a reused speculation's pass; `scripts/bench-live` measures it from outside), \
         ms over the clips with speech:\n"
    );
    let _ = writeln!(out, "| release | p50 | p95 | max |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for (i, tail) in opts.tails.iter().enumerate() {
        let mut ms: Vec<f64> = clips
            .iter()
            .zip(all)
            .filter(|(c, _)| !c.reference.trim().is_empty())
            .map(|(_, t)| t.release_ms[i])
            .collect();
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| {
            ms.get(((ms.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(f64::NAN)
        };
        let _ = writeln!(
            out,
            "| {tail} ms after the last word | {:.0} | {:.0} | {:.0} |",
            at(0.5),
            at(0.95),
            at(1.0)
        );
    }
    if failures.is_empty() {
        let _ = writeln!(out, "\nAccuracy gate: passed.");
    } else {
        let _ = writeln!(out, "\nAccuracy gate: FAILED:");
        for f in &failures {
            let _ = writeln!(out, "- {f}");
        }
    }
    if let Some(path) = opts.details {
        std::fs::write(path, rows)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    Ok(Outcome {
        report: out,
        passed: failures.is_empty(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_the_reference_does_not_have_are_errors() {
        let reference = "please note the meeting moved to thursday";
        assert!(repeat_error(
            "Please note sa-ta-ta-ta-ta me no, the meeting moved to Thursday.",
            reference
        )
        .is_some());
        assert!(repeat_error("Go forward. Go forward.", "go forward").is_some());
        assert_eq!(
            repeat_error("Please note the meeting moved to Thursday.", reference),
            None
        );
        // Said in the reference: not an error.
        assert_eq!(
            repeat_error("We want more, we want more!", "we want more we want more"),
            None
        );
        assert_eq!(repeat_error("No, no, no.", "no no no"), None);
    }
}
