//! `dictum run`: the headless dictation daemon. Registers the hotkey, keeps the microphone
//! open and the models warm, and types what you say into the focused window. The config file
//! is watched: hotkey, mode, device, model and LLM changes apply without a restart.
//!
//! SIGINT and SIGTERM quit cleanly: the utterance under way is finished (transcribed, typed,
//! the clipboard restored in paste mode, its row written) within the engine's shutdown grace,
//! then the process exits 0. A second signal, or one before dictation is ready, exits at once.

use crate::context::load_config;
use crate::llm_args::LlmArgs;
use crate::stt_args::SttArgs;
use dictum_engine::config::Config;
use dictum_engine::dictation::config::Mode;
use dictum_engine::dictation::{
    control, injector_sink, window_probe, Command, Dictation, Event, Sink, SinkFactory,
    StartOptions, StdoutSink,
};
use dictum_engine::filejobs::{FileJobs, JobOptions, JobState, JobView, Setup};
use dictum_engine::inject::InjectMethod;
use dictum_engine::paths;
use std::io::BufRead;
use std::process::ExitCode;
use std::sync::{mpsc, Arc, Mutex};

#[derive(clap::Args)]
pub struct Args {
    /// Model: a catalog name such as `tiny.en-q8_0`, or a path to a ggml .bin file.
    #[arg(long)]
    model: Option<String>,
    /// Where the text goes: `type` (keystrokes), `paste` (clipboard + Ctrl+V, previous
    /// clipboard restored), or `stdout` (print each dictation as a line). Default: the
    /// config's [inject] method.
    #[arg(long)]
    output: Option<String>,
    /// push-to-talk, toggle or hands-free (default: the config's [dictation] mode).
    #[arg(long)]
    mode: Option<String>,
    /// Override the hotkey, e.g. "ctrl+alt+space".
    #[arg(long)]
    hotkey: Option<String>,
    /// Take no hotkey (no X11 grab, no GlobalShortcuts portal); drive it with `dictum ctl`
    /// or commands on standard input instead. Not needed on Wayland: without the portal,
    /// Dictum starts anyway and a compositor shortcut runs `dictum ctl`.
    #[arg(long)]
    no_hotkey: bool,
    /// Read commands from standard input, one a line: press, release, toggle, cancel,
    /// pause, resume, hands-free [on|off|toggle], quit. (`dictum ctl COMMAND` sends the
    /// same from anywhere.)
    #[arg(long)]
    stdin_commands: bool,
    /// Print events (ready, state, dictation, notice) as JSON lines on standard output.
    #[arg(long)]
    json: bool,
    /// Clean each dictation with the LLM stage (as if llm.enabled = true).
    #[arg(long)]
    clean: bool,
    #[command(flatten)]
    llm: LlmArgs,
    #[command(flatten)]
    stt: SttArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut config = load_config()?;
    if let Some(model) = &args.model {
        config.stt.model = model.clone();
    }
    let mode = match args.mode.as_deref() {
        None => None,
        Some("push-to-talk" | "push_to_talk" | "ptt") => Some(Mode::PushToTalk),
        Some("toggle") => Some(Mode::Toggle),
        Some("hands-free" | "hands_free") => Some(Mode::HandsFree),
        Some(other) => {
            anyhow::bail!("unknown mode `{other}`; use push-to-talk, toggle or hands-free")
        }
    };
    if let Some(mode) = mode {
        config.dictation.mode = mode;
    }
    if let Some(hotkey) = &args.hotkey {
        config.dictation.hotkey = hotkey.clone();
    }
    if args.clean {
        config.llm.enabled = true;
    }
    args.llm.apply(&mut config)?;
    args.stt.apply(&mut config)?;
    let output = args.output.clone();
    if let Some(o) = &output {
        if !["type", "paste", "stdout"].contains(&o.as_str()) {
            anyhow::bail!("unknown --output `{o}`; use type, paste or stdout");
        }
    }
    // Overrides given on the command line stay in force when the config file changes.
    let overrides = {
        let model = args.model.clone();
        let hotkey = args.hotkey.clone();
        let clean = args.clean;
        let llm = args.llm.clone();
        let stt = args.stt.clone();
        move |c: &mut Config| {
            if let Some(m) = &model {
                c.stt.model = m.clone();
            }
            if let Some(m) = mode {
                c.dictation.mode = m;
            }
            if let Some(h) = &hotkey {
                c.dictation.hotkey = h.clone();
            }
            if clean {
                c.llm.enabled = true;
            }
            let _ = llm.apply(c);
            let _ = stt.apply(c);
        }
    };
    let config_path = paths::config_file().ok();
    // Signals are taken before start-up: until dictation is ready one ends the process at
    // once (nothing is under way), afterwards it asks for a clean quit.
    let quit_target: Arc<Mutex<Option<mpsc::Sender<Command>>>> = Arc::new(Mutex::new(None));
    watch_signals(quit_target.clone())?;
    let (events_tx, events_rx) = mpsc::channel();
    let opts = StartOptions {
        config: config.clone(),
        config_path,
        history_path: paths::history_db()?,
        model_dirs: paths::model_dirs()?,
        audio_dir: Some(paths::audio_dir()?),
        hotkeys: !args.no_hotkey,
        sink: sink_factory(output.clone(), args.json),
        window_probe: window_probe(&config),
        overrides: Some(Box::new(overrides)),
    };
    if config.stt.backend == dictum_engine::config::SttBackend::Openai {
        eprintln!(
            "dictum: starting (speech server {}, model {} loaded only if it fails)...",
            config.stt.url, config.stt.model
        );
    } else {
        eprintln!(
            "dictum: starting (model {}, loading and warming up)...",
            config.stt.model
        );
    }
    let dictation = Dictation::start(opts, events_tx).map_err(|e| anyhow::anyhow!(e))?;
    *quit_target.lock().unwrap_or_else(|e| e.into_inner()) = Some(dictation.command_sender());

    // `dictum ctl press|release|toggle|...` from a compositor shortcut or a script.
    let _control = match control::serve(dictation.command_sender()) {
        Ok(server) => Some(server),
        Err(e) => {
            eprintln!("dictum: warning: {e}");
            None
        }
    };
    if args.stdin_commands {
        let cmds = dictation.command_sender();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                let cmd = match control::parse_command(&line) {
                    Ok(cmd) => cmd,
                    Err(e) => {
                        eprintln!("dictum: {e}");
                        continue;
                    }
                };
                let quit = matches!(cmd, Command::Shutdown);
                if cmds.send(cmd).is_err() || quit {
                    break;
                }
            }
        });
    }
    let mut dictation = Some(dictation);
    // Files handed over by `dictum ctl transcribe FILE`: transcribed after dictations, with
    // the config this daemon started with.
    let mut files: Option<FileJobs> = None;
    for ev in events_rx {
        if let Event::TranscribeFile { path } = &ev {
            queue_file(&mut files, &config, path, args.json);
        }
        if args.json {
            if let Ok(line) = serde_json::to_string(&ev) {
                println!("{line}");
            }
        } else {
            print_human(&ev);
        }
        if matches!(ev, Event::Stopped) {
            break;
        }
    }
    if let Some(d) = dictation.take() {
        d.shutdown();
    }
    Ok(ExitCode::SUCCESS)
}

/// Queues `path` in the daemon's file queue (started on the first file). Each change is a
/// `{"event":"file",…}` line with `--json`; without, a line when a file starts and ends.
fn queue_file(files: &mut Option<FileJobs>, config: &Config, path: &std::path::Path, json: bool) {
    if files.is_none() {
        let for_jobs = config.clone();
        let started = paths::history_db().and_then(|history_path| {
            Ok(Setup {
                config: Box::new(move || for_jobs.clone()),
                model_dirs: paths::model_dirs()?,
                audio_dir: paths::audio_dir().ok(),
                history_path,
                changed: Box::new(move |v: &JobView| print_file(v, json)),
            })
        });
        match started.map(FileJobs::start) {
            Ok(Ok(queue)) => *files = Some(queue),
            Ok(Err(e)) => eprintln!("dictum: cannot transcribe files: {e}"),
            Err(e) => eprintln!("dictum: cannot transcribe files: {e}"),
        }
    }
    if let Some(queue) = files {
        queue.add(&[path.to_path_buf()], &JobOptions::default(), config);
    }
}

fn print_file(v: &JobView, json: bool) {
    if json {
        let mut line = serde_json::json!({ "event": "file" });
        if let (Some(map), Ok(serde_json::Value::Object(view))) =
            (line.as_object_mut(), serde_json::to_value(v))
        {
            map.extend(view);
        }
        println!("{line}");
        return;
    }
    match v.state {
        JobState::Running if v.done_ms == 0 && !v.waiting_for_dictation => {
            eprintln!("dictum: file #{}: transcribing {}", v.id, v.path)
        }
        JobState::Running => {}
        state => eprintln!(
            "dictum: file #{}: {:?}{}",
            v.id,
            state,
            v.error
                .as_ref()
                .or(v.note.as_ref())
                .map(|w| format!(" ({w})"))
                .unwrap_or_default()
        ),
    }
}

/// SIGINT/SIGTERM: the first asks the dictation to quit cleanly (when it is running), a
/// second one (or one during start-up) ends the process at once.
fn watch_signals(target: Arc<Mutex<Option<mpsc::Sender<Command>>>>) -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| anyhow::anyhow!("cannot watch for SIGINT/SIGTERM: {e}"))?;
    let (mut int, mut term) = {
        let _in_rt = rt.enter();
        (
            signal(SignalKind::interrupt())
                .map_err(|e| anyhow::anyhow!("cannot watch for SIGINT: {e}"))?,
            signal(SignalKind::terminate())
                .map_err(|e| anyhow::anyhow!("cannot watch for SIGTERM: {e}"))?,
        )
    };
    std::thread::Builder::new()
        .name("dictum-signals".into())
        .spawn(move || {
            rt.block_on(async move {
                let mut asked = false;
                loop {
                    let (name, code) = tokio::select! {
                        _ = int.recv() => ("SIGINT", 130),
                        _ = term.recv() => ("SIGTERM", 143),
                    };
                    let sender = target.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    match sender {
                        Some(tx) if !asked && tx.send(Command::Shutdown).is_ok() => {
                            asked = true;
                            eprintln!(
                                "dictum: {name}: finishing the dictation under way, then quitting                                  ({name} again quits at once)"
                            );
                        }
                        _ => {
                            eprintln!("dictum: {name}: quitting now");
                            std::process::exit(code);
                        }
                    }
                }
            })
        })
        .map_err(|e| anyhow::anyhow!("cannot watch for SIGINT/SIGTERM: {e}"))?;
    Ok(())
}

fn print_human(ev: &Event) {
    match ev {
        Event::Ready(info) => eprintln!(
            "dictum: ready in {:.1} s: {} {} and speak ({}; hotkey via {}); typing via {}; {}; model {} on {} ({}; load {:.0} ms, warm-up {:.0} ms); microphone {} ({}: {})",
            info.startup_ms / 1000.0,
            match info.mode.as_str() {
                "push_to_talk" => "hold",
                _ => "press",
            },
            info.hotkey.as_deref().unwrap_or("(no hotkey)"),
            info.mode,
            info.hotkey_path.replace('_', " "),
            info.inject_route.as_deref().unwrap_or("stdout"),
            info.session,
            info.model,
            info.device,
            info.plan,
            info.model_load_ms,
            info.warmup_ms,
            info.input,
            info.microphone,
            info.microphone_state
        ),
        Event::State { state } => tracing::info!("state: {}", state.as_str()),
        Event::Notice { message } => eprintln!("dictum: {message}"),
        Event::Dictation(r) => {
            // Standard error may be the journal (the systemd unit): the text only with
            // --verbose, else its length.
            let said = if crate::verbose() {
                r.text.clone()
            } else {
                format!("{} words", r.text.split_whitespace().count())
            };
            eprintln!(
                "dictum: #{} {:?} ({} ms audio, text ready {:.0} ms after release, typed {:.0} ms): {said}",
                r.id,
                r.outcome,
                r.audio_ms.unwrap_or(0),
                r.release_to_text_ms.unwrap_or(0.0),
                r.release_to_typed_ms.unwrap_or(0.0),
            );
            match r.inject_error.as_deref() {
                Some(e) if dictum_engine::inject::inject_failed(Some(e)) => {
                    eprintln!("dictum: could not type it ({e}); the text is on the clipboard")
                }
                Some(note) => eprintln!("dictum: {note}"),
                None => {}
            }
        }
        // The words so far, only with --verbose (the text may be private; the journal).
        Event::Partial(p) => tracing::debug!(
            "#{} partial {} at {:.0} ms: {} [{}]",
            p.dictation,
            p.seq,
            p.ms,
            p.committed,
            p.speculative
        ),
        Event::HandsFree { on } => tracing::info!("hands-free: {}", if *on { "on" } else { "off" }),
        Event::Microphone { state, .. } => tracing::debug!("microphone {state}"),
        Event::TranscribeFile { path } => tracing::info!("file queued: {}", path.display()),
        Event::Stopped => eprintln!("dictum: stopped"),
    }
}

/// The sink for `--output` (or the config's [inject] method): the injector, or stdout.
fn sink_factory(output: Option<String>, json_events: bool) -> SinkFactory {
    let method = match output.as_deref() {
        Some("type") => Some(InjectMethod::Type),
        Some("paste") => Some(InjectMethod::Paste),
        _ => None,
    };
    if output.as_deref() == Some("stdout") {
        return Box::new(move |_config: &Config| -> Result<Box<dyn Sink>, String> {
            if json_events {
                return Err(
                    "--output stdout and --json both write to standard output; pick one".into(),
                );
            }
            Ok(Box::new(StdoutSink))
        });
    }
    injector_sink(method)
}
