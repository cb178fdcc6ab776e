use crate::context::{load_config, open_history};
use crate::llm_args::LlmArgs;
use crate::stt_args::SttArgs;
use dictum_engine::paths;
use dictum_engine::pipeline::{Engine, FileProgress, Utterance};
use dictum_engine::store::Outcome;
use dictum_engine::subtitles;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `dictum transcribe` writes.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The text alone.
    Txt,
    /// One JSON object: the text, the row's facts, timings, and `segments` with times.
    Json,
    /// SubRip subtitles (at most 2 lines of 42 characters, cues of 1 to 7 s).
    Srt,
    /// WebVTT subtitles (the same cues).
    Vtt,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Json => "json",
            Format::Srt => "srt",
            Format::Vtt => "vtt",
        }
    }
}

#[derive(clap::Args)]
#[command(after_help = "\
Formats read: WAV (any rate, depth and channels), FLAC, MP3, M4A/MP4 (AAC, ALAC), Ogg Vorbis and
Matroska/WebM (Vorbis, FLAC, ...) built in; Opus and other containers or video files through
ffmpeg when it is installed (Debian/Ubuntu: `sudo apt install ffmpeg`). A file cut short is
transcribed as far as it goes, with a warning (and `truncated` in the JSON).

Examples:
  dictum transcribe talk.mp3
  dictum transcribe --format srt --output talk.srt talk.mp4
  dictum transcribe --format vtt --output-dir subs/ *.m4a")]
pub struct Args {
    /// Audio or video files to transcribe (see the formats below).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Output format: txt (the text), json, srt or vtt (subtitles, with times).
    #[arg(long, value_enum, default_value_t = Format::Txt)]
    format: Format,
    /// Write the output to this file instead of standard output (one input file only).
    #[arg(long, value_name = "FILE", conflicts_with = "output_dir")]
    output: Option<PathBuf>,
    /// Write each input's output to DIR/<input name>.<format> (any number of input files).
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Model: a catalog name such as `tiny.en-q8_0`, or a path to a ggml .bin file.
    #[arg(long)]
    model: Option<String>,
    /// Spoken language ("en", "de", ... or "auto").
    #[arg(long)]
    language: Option<String>,
    /// English text whatever language is spoken (as if stt.task = "translate"; needs a
    /// multilingual model such as base-q8_0).
    #[arg(long)]
    translate: bool,
    /// The same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Clean the text with the LLM stage (as if llm.enabled = true).
    #[arg(long)]
    clean: bool,
    /// Longest stretch of audio whisper takes at once, in seconds: longer files are cut at
    /// their quietest point near this length and transcribed piece by piece, with progress
    /// on stderr.
    #[arg(long, default_value_t = dictum_engine::pipeline::FILE_PIECE_S,
          value_parser = clap::value_parser!(u32).range(10..=1800))]
    piece_s: u32,
    #[command(flatten)]
    llm: LlmArgs,
    #[command(flatten)]
    stt: SttArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let format = if args.json { Format::Json } else { args.format };
    if args.output.is_some() && args.files.len() > 1 {
        anyhow::bail!(
            "--output takes one input file ({} given); use --output-dir DIR for several",
            args.files.len()
        );
    }
    if args.files.len() > 1
        && args.output_dir.is_none()
        && matches!(format, Format::Srt | Format::Vtt)
    {
        anyhow::bail!(
            "subtitles of several files need --output-dir DIR (one .{} file each)",
            format.extension()
        );
    }
    if let Some(dir) = &args.output_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    }
    let mut config = load_config()?;
    if let Some(model) = args.model {
        config.stt.model = model;
    }
    if let Some(language) = args.language {
        config.stt.language = language;
    }
    if args.translate {
        config.stt.task = dictum_engine::config::SttTask::Translate;
    }
    if args.clean {
        config.llm.enabled = true;
    }
    args.llm.apply(&mut config)?;
    args.stt.apply(&mut config)?;
    let history = open_history()?;
    let mut engine = Engine::new(config, paths::model_dirs()?);
    engine.audio_dir = Some(paths::audio_dir()?);
    engine.file_piece_s = args.piece_s;
    engine.enable_llm()?;
    let mut failed = 0usize;
    for file in &args.files {
        let mut shown = Progress::new(file);
        let utterance = engine.transcribe_file_with(&history, file, &mut |p| shown.show(p))?;
        shown.end();
        let name = shown.name.clone();
        if let Some(why) = &utterance.entry.stt_fallback {
            eprintln!("dictum: warning: {why}");
        }
        if let Some(why) = &utterance.truncated {
            eprintln!("dictum: warning: {name}: transcribed in part: {why}");
        }
        if let Some(e) = &utterance.error {
            eprintln!("dictum: error: {e}");
            failed += 1;
            if format == Format::Json && args.output.is_none() && args.output_dir.is_none() {
                println!("{}", to_json(&utterance));
            }
            continue;
        }
        if utterance.entry.outcome == Outcome::NoSpeech {
            eprintln!("dictum: {name}: no speech detected (nothing to type)");
        }
        let text = render(&utterance, format);
        let target = match (&args.output, &args.output_dir) {
            (Some(out), _) => Some(out.clone()),
            (None, Some(dir)) => Some(dir.join(output_name(file, format))),
            (None, None) => None,
        };
        match target {
            Some(path) => std::fs::write(&path, text.as_bytes())
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
            None if text.is_empty() => {}
            None => {
                print!("{text}");
                if !text.ends_with('\n') {
                    println!();
                }
            }
        }
    }
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `talk.mp3` → `talk.srt`.
fn output_name(file: &std::path::Path, format: Format) -> PathBuf {
    let stem = file
        .file_stem()
        .map_or_else(|| "transcript".into(), |s| s.to_os_string());
    let mut name = stem;
    name.push(".");
    name.push(format.extension());
    PathBuf::from(name)
}

/// The utterance in `format`. Subtitles take whisper's segment times; with `--clean`, the
/// cleaned text laid over them ([`subtitles::retext`]).
fn render(u: &Utterance, format: Format) -> String {
    match format {
        Format::Txt => u.entry.text.clone().unwrap_or_default(),
        Format::Json => format!("{}\n", to_json(u)),
        Format::Srt | Format::Vtt => {
            let segments: Vec<subtitles::Segment> = u.segments.iter().map(Into::into).collect();
            // As `dictum history --export x.srt` reads the stored row.
            let cleaned = u.entry.llm_outcome.as_deref() == Some("cleaned");
            let cues = subtitles::cues_for(
                segments,
                u.entry.text.as_deref(),
                cleaned,
                u.entry.audio_ms.and_then(|ms| u64::try_from(ms).ok()),
            );
            if format == Format::Srt {
                subtitles::to_srt(&cues)
            } else {
                subtitles::to_vtt(&cues)
            }
        }
    }
}

/// Progress of a long file on stderr: one line rewritten in place on a terminal, a line per
/// piece otherwise (logs, CI).
struct Progress {
    pub name: String,
    tty: bool,
    shown: bool,
}

impl Progress {
    fn new(file: &std::path::Path) -> Progress {
        use std::io::IsTerminal;
        Progress {
            name: file.file_name().map_or_else(
                || file.display().to_string(),
                |n| n.to_string_lossy().into(),
            ),
            tty: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn show(&mut self, p: &FileProgress) {
        let pct = (p.done_ms * 100)
            .checked_div(p.total_ms)
            .map_or(100, |pct| pct.min(100));
        let speed = if p.elapsed_ms > 0.0 {
            p.done_ms as f64 / p.elapsed_ms
        } else {
            0.0
        };
        let line = format!(
            "dictum: {}: {} of {} transcribed ({pct}%), {speed:.1}x real time, about {} left",
            self.name,
            clock(p.done_ms),
            clock(p.total_ms),
            clock(p.remaining_ms() as u64),
        );
        if self.tty {
            eprint!("\r{line}\x1b[K");
        } else {
            eprintln!("{line}");
        }
        self.shown = true;
    }

    fn end(&self) {
        if self.tty && self.shown {
            eprintln!();
        }
    }
}

/// `h:mm:ss` or `m:ss`.
fn clock(ms: u64) -> String {
    let s = ms / 1000;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

pub fn to_json(u: &Utterance) -> serde_json::Value {
    let e = &u.entry;
    let mut obj = json!({
        "id": e.id,
        "text": e.text.clone().unwrap_or_default(),
        "raw_text": e.raw_text.clone().unwrap_or_default(),
        "outcome": e.outcome,
        "language": e.language,
        "model": e.model,
        "device": e.device,
        "stt_backend": e.stt_backend,
        "stt_fallback": e.stt_fallback,
        "stt_upload_ms": e.stt_upload_ms,
        "stt_server_ms": e.stt_server_ms,
        "audio_ms": e.audio_ms,
        "speech_ms": e.speech_ms,
        "timings_ms": u.timings,
        "source_path": e.source_path,
        "segments": u.segments.iter().map(|s| json!({
            "start_ms": s.start_ms,
            "end_ms": s.end_ms,
            "text": s.text,
        })).collect::<Vec<_>>(),
        "truncated": u.truncated,
    });
    obj["llm"] = u
        .llm
        .as_ref()
        .map_or(serde_json::Value::Null, |r| r.to_json());
    if let Some(err) = &u.error {
        obj["error"] = json!(err.to_string());
        obj["error_kind"] = json!(err.kind());
    }
    obj
}
