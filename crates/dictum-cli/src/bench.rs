//! `dictum bench`: speed and accuracy figures for `docs/PERFORMANCE.md`, measured on a folder
//! of clips with a `refs.tsv` (file, reference text; empty reference = no speech).

use crate::context::load_config;
use dictum_engine::audio::{self, Pcm16k};
use dictum_engine::config::VadConfig;
use dictum_engine::eval::WerCount;
use dictum_engine::pipeline::Engine;
use dictum_engine::stt::{strip_nonspeech, SttOptions, Window};
use dictum_engine::timing::timed;
use dictum_engine::vad::{self, Detector};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// What to measure.
    #[arg(value_enum)]
    what: What,
    /// Folder with `audio/dev/*.wav`, `audio/dev/refs.tsv` and `models/`
    /// (default: $DICTUM_TEST_ASSETS, else ../shared).
    #[arg(long)]
    assets: Option<PathBuf>,
    /// Folder of clips with their `refs.tsv` (default: `audio/dev` in the assets); e.g. the
    /// live-WER corpus `scripts/corpus` builds. `accuracy` takes it more than once.
    #[arg(long)]
    clips: Vec<PathBuf>,
    /// Model name or path (default: models/ggml-tiny.en-q8_0.bin in the assets).
    #[arg(long)]
    model: Option<String>,
    /// Timed runs per clip (the median is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Smallest auto-sized encoder windows to compare (frames); default: the configured one.
    #[arg(long, value_delimiter = ',')]
    floors: Vec<u32>,
    /// `live`: release the key this many ms after each clip's last word.
    #[arg(long, value_delimiter = ',', default_values_t = [100, 200, 400])]
    tail_ms: Vec<u32>,
    /// Also write the report to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// `live`: write each clip's passes (stretches, texts, errors) to this TSV file.
    #[arg(long)]
    details: Option<PathBuf>,
    /// `accuracy`: whisper.cpp's whisper-cli, the reference (`scripts/whisper-cli` builds the
    /// version Dictum links).
    #[arg(long)]
    whisper_cli: Option<PathBuf>,
    /// `accuracy`: fail when the file path's WER is worse than whisper-cli's by more than
    /// this many points.
    #[arg(long, default_value_t = 0.3)]
    max_file_gap: f64,
    /// `accuracy`: fail when a live WER is worse than whisper-cli's by more than this many
    /// points.
    #[arg(long, default_value_t = 0.5)]
    max_live_gap: f64,
    /// `live`: transcribe each live pass without the text before it as its prompt (the
    /// product always gives it; this measures what the prompt does).
    #[arg(long)]
    no_prompt: bool,
    /// `llm`: dictation-like sentences, one per line, '#' = comment
    /// (default: tests/data/dictations.txt).
    #[arg(long)]
    sentences: Option<PathBuf>,
    /// `llm`: no server; the guard alone over its table of cases (precision and recall per
    /// category, time per call). `--sentences` may name another table of the same format.
    #[arg(long)]
    guard_table: bool,
    #[command(flatten)]
    llm: crate::llm_args::LlmArgs,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum What {
    /// Model load, warm-up, per-clip whisper time with and without the utterance-sized window, WER, peak RSS.
    Stt,
    /// The live path's accuracy: each clip fed as if spoken through the live segmenter, its
    /// commits and release tail transcribed as the dictation worker does, the key released
    /// `--tail-ms` after the last word; beside one pass over the whole clip.
    Live,
    /// Dictum's words against raw whisper-cli's on the same clips (file path and live path),
    /// with a per-clip table; exits 1 when the gate fails (`scripts/test`).
    Accuracy,
    /// The VAD candidates on every clip: speech found, verdict, time.
    Vad,
    /// The LLM cleanup stage against the same HTTP body posted directly (interleaved, same
    /// server, same run), and the guard's verdicts over a list of dictation-like sentences.
    Llm,
}

struct Clip {
    name: String,
    reference: String,
    pcm: Pcm16k,
    /// The file it came from (none for the made-up silence).
    path: Option<PathBuf>,
}

fn assets_dir(arg: Option<PathBuf>) -> PathBuf {
    arg.or_else(|| std::env::var_os("DICTUM_TEST_ASSETS").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("../shared"))
}

fn load_clips(dir: &Path) -> anyhow::Result<Vec<Clip>> {
    let refs = std::fs::read_to_string(dir.join("refs.tsv")).map_err(|e| {
        anyhow::anyhow!(
            "cannot read {}/refs.tsv: {e} (a clip folder needs one, file<TAB>reference per \
                 line; scripts/corpus builds the live-WER corpus)",
            dir.display()
        )
    })?;
    let mut clips = Vec::new();
    for line in refs.lines().filter(|l| !l.trim().is_empty()) {
        let (name, reference) = line.split_once('\t').unwrap_or((line, ""));
        let decoded = audio::read_wav(&dir.join(name))?;
        let mono = audio::downmix(&decoded.samples, decoded.channels);
        let samples = audio::resample_to_16k(&mono, decoded.sample_rate)?;
        clips.push(Clip {
            name: name.to_string(),
            reference: reference.trim().to_string(),
            pcm: Pcm16k { samples },
            path: Some(dir.join(name)),
        });
    }
    // Plus 3 s of digital silence, the classic "you" hallucination.
    clips.push(Clip {
        name: "(3 s digital silence)".into(),
        reference: String::new(),
        pcm: Pcm16k {
            samples: vec![0.0; 48_000],
        },
        path: None,
    });
    Ok(clips)
}

/// `--model`, else tiny.en q8_0 from the test assets.
fn model_or_default(model: Option<String>, assets: &Path) -> String {
    model.unwrap_or_else(|| {
        assets
            .join("models/ggml-tiny.en-q8_0.bin")
            .display()
            .to_string()
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// Peak resident set size of this process, from /proc (Linux); None elsewhere.
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let (What::Llm, true) = (args.what, args.guard_table) {
        let text = match &args.sentences {
            Some(file) => std::fs::read_to_string(file)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?,
            None => dictum_engine::llm::guard::table::GUARD_CASES.to_string(),
        };
        let report = crate::bench_llm::guard_table(&text, args.runs.max(1))?;
        print!("{report}");
        if let Some(out) = args.out {
            std::fs::write(&out, &report)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let What::Llm = args.what {
        let mut config = load_config()?;
        config.llm.enabled = true;
        args.llm.apply(&mut config)?;
        let file = args
            .sentences
            .unwrap_or_else(|| PathBuf::from("tests/data/dictations.txt"));
        let text = std::fs::read_to_string(&file)
            .map_err(|e| anyhow::anyhow!("cannot read sentences from {}: {e}", file.display()))?;
        let sentences: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        let report = crate::bench_llm::run(&config, &sentences, args.runs.max(1))?;
        print!("{report}");
        if let Some(out) = args.out {
            std::fs::write(&out, &report)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let assets = assets_dir(args.assets);
    let dirs = if args.clips.is_empty() {
        vec![assets.join("audio/dev")]
    } else {
        args.clips.clone()
    };
    if dirs.len() > 1 && !matches!(args.what, What::Accuracy) {
        anyhow::bail!("--clips is taken once here (more than once only by `accuracy`)");
    }
    let mut clips = Vec::new();
    for dir in &dirs {
        let mut more = load_clips(dir)?;
        if dirs.len() > 1 {
            for c in &mut more {
                let folder = dir.file_name().map(|f| f.to_string_lossy().into_owned());
                c.name = format!("{}/{}", folder.unwrap_or_default(), c.name);
            }
        }
        clips.extend(more);
    }
    let report = match args.what {
        What::Llm => unreachable!("handled above"),
        What::Vad => bench_vad(&clips),
        What::Accuracy => {
            let mut config = load_config()?;
            config.stt.model = model_or_default(args.model, &assets);
            let cli = args.whisper_cli.ok_or_else(|| {
                anyhow::anyhow!(
                    "`accuracy` needs --whisper-cli PATH (scripts/whisper-cli builds it)"
                )
            })?;
            let with_files: Vec<_> = clips
                .iter()
                .filter_map(|c| {
                    Some(crate::bench_accuracy::Clip {
                        name: c.name.clone(),
                        path: c.path.clone()?,
                        reference: &c.reference,
                        samples: &c.pcm.samples,
                    })
                })
                .collect();
            let outcome = crate::bench_accuracy::run(
                config,
                &with_files,
                &crate::bench_accuracy::Options {
                    whisper_cli: &cli,
                    tails: &args.tail_ms,
                    max_file_gap: args.max_file_gap,
                    max_live_gap: args.max_live_gap,
                    details: args.details.as_deref(),
                },
            )?;
            print!("{}", outcome.report);
            if let Some(out) = args.out {
                std::fs::write(&out, &outcome.report)?;
            }
            return Ok(if outcome.passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
        What::Live => {
            let mut config = load_config()?;
            config.stt.model = model_or_default(args.model, &assets);
            let live: Vec<_> = clips
                .iter()
                .filter(|c| !c.reference.is_empty())
                .map(|c| crate::bench_live::LiveClip {
                    name: &c.name,
                    reference: &c.reference,
                    samples: &c.pcm.samples,
                })
                .collect();
            crate::bench_live::run(
                config,
                &live,
                &crate::bench_live::Options {
                    tails: &args.tail_ms,
                    details: args.details.as_deref(),
                    prompt: !args.no_prompt,
                },
            )?
        }
        What::Stt => {
            let mut config = load_config()?;
            config.stt.model = model_or_default(args.model, &assets);
            let floors = if args.floors.is_empty() {
                vec![config.stt.audio_ctx_min]
            } else {
                args.floors
            };
            bench_stt(config, &clips, args.runs.max(1), &floors)?
        }
    };
    print!("{report}");
    if let Some(out) = args.out {
        std::fs::write(&out, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn bench_vad(clips: &[Clip]) -> String {
    let cfg = VadConfig::default();
    let mut out = String::new();
    let _ = writeln!(out, "| clip | audio ms | expected | earshot speech ms | earshot verdict | earshot ms | energy speech ms | energy verdict |");
    let _ = writeln!(out, "|---|---:|---|---:|---|---:|---:|---|");
    let mut right = [0usize; 2];
    for c in clips {
        let expected = if c.reference.is_empty() {
            "no speech"
        } else {
            "speech"
        };
        let (e, ms) = timed(|| vad::analyze(&c.pcm.samples, &cfg, Detector::Earshot));
        let g = vad::analyze(&c.pcm.samples, &cfg, Detector::Energy);
        let verdict = |no: bool| if no { "no speech" } else { "speech" };
        right[0] += usize::from(verdict(e.no_speech) == expected);
        right[1] += usize::from(verdict(g.no_speech) == expected);
        let _ = writeln!(
            out,
            "| {} | {} | {expected} | {} | {} | {ms:.2} | {} | {} |",
            c.name,
            c.pcm.duration_ms(),
            e.speech_ms,
            verdict(e.no_speech),
            g.speech_ms,
            verdict(g.no_speech)
        );
    }
    let _ = writeln!(
        out,
        "\nCorrect verdicts: earshot {}/{n}, energy gate {}/{n}.",
        right[0],
        right[1],
        n = clips.len()
    );
    out
}

fn bench_stt(
    config: dictum_engine::config::Config,
    clips: &[Clip],
    runs: usize,
    floors: &[u32],
) -> anyhow::Result<String> {
    let vad_cfg = config.vad.clone();
    let mut engine = Engine::new(config, vec![]);
    let (load_ms, warm_ms) = engine.ensure_model()?.unwrap_or((f64::NAN, f64::NAN));
    let base: SttOptions = engine.stt_options();
    let margin = base.window.map_or(64, |w| w.margin);
    let mut modes: Vec<(String, Option<Window>)> = floors
        .iter()
        .map(|&min| (format!("auto, min {min}"), Some(Window { margin, min })))
        .collect();
    modes.push(("full 30 s".into(), None));
    let t = engine
        .transcriber_mut()
        .ok_or_else(|| anyhow::anyhow!("model did not load"))?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Model `{}` ({} bytes), device {}, {} threads; model load {load_ms:.0} ms, warm-up {warm_ms:.0} ms; \
         window margin {margin} frames; stt ms = median of {runs} runs on the VAD-trimmed clip.\n",
        t.model_name, t.info.file_bytes, t.device, base.threads
    );
    let head: Vec<String> = modes.iter().map(|(m, _)| format!("stt ms ({m})")).collect();
    let _ = writeln!(
        out,
        "| clip | audio ms | speech kept ms | {} | text (first window) |",
        head.join(" | ")
    );
    let _ = writeln!(out, "|---|---:|---:|{}---|", "---:|".repeat(modes.len()));
    let mut totals = vec![WerCount::default(); modes.len()];
    let mut sums = vec![0.0f64; modes.len()];
    let mut redone = vec![0usize; modes.len()];
    for c in clips {
        let v = vad::analyze(&c.pcm.samples, &vad_cfg, Detector::Earshot);
        if v.no_speech {
            let _ = writeln!(
                out,
                "| {} | {} | 0 | {}(no speech: VAD, whisper not run) |",
                c.name,
                c.pcm.duration_ms(),
                "- | ".repeat(modes.len())
            );
            continue;
        }
        let pcm = &c.pcm.samples[v.keep.clone()];
        let mut cells = Vec::new();
        let mut first_text = String::new();
        for (i, (_, window)) in modes.iter().enumerate() {
            let opts = SttOptions {
                window: *window,
                ..base.clone()
            };
            let mut times = Vec::new();
            let mut text = String::new();
            for _ in 0..runs {
                let o = t.transcribe(pcm, &opts)?;
                times.push(o.ms);
                redone[i] += usize::from(o.redone_full);
                text = strip_nonspeech(&o.text);
            }
            let m = median(times);
            sums[i] += m;
            let wer = WerCount::of(&c.reference, &text);
            totals[i] = totals[i].plus(wer);
            cells.push(format!("{m:.0} ({:.0}%)", wer.rate() * 100.0));
            if i == 0 {
                first_text = text;
            }
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            c.name,
            c.pcm.duration_ms(),
            pcm.len() / 16,
            cells.join(" | "),
            first_text
        );
    }
    let _ = writeln!(out, "\nCells: median stt ms (clip WER).\n");
    let _ = writeln!(
        out,
        "| window | total stt ms | vs full | corpus WER | redone with full window |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    let full = sums.last().copied().unwrap_or(f64::NAN);
    for (i, (name, _)) in modes.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {name} | {:.0} | {:.2}× faster | {:.1}% ({}/{}) | {} of {} runs |",
            sums[i],
            full / sums[i],
            totals[i].rate() * 100.0,
            totals[i].errors,
            totals[i].words,
            redone[i] / runs.max(1),
            clips.len()
        );
    }
    if let Some(rss) = peak_rss_mib() {
        let _ = writeln!(out, "\nPeak RSS of the process: {rss:.0} MiB.");
    }
    Ok(out)
}
