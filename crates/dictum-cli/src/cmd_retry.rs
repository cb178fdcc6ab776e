//! `dictum history --retry ID`: a dictation whose text was not delivered is transcribed again
//! from its kept audio (`dictation::retry`), stored, printed, and typed into the focused
//! window like the daemon types (or, with `--copy`, put on the clipboard).

use crate::context::{load_config, open_history};
use dictum_engine::dictation::{retry, Sink, SinkReport};
use dictum_engine::inject::Injector;
use dictum_engine::paths;
use dictum_engine::pipeline::Engine;
use std::io::IsTerminal;
use std::process::ExitCode;

pub fn run(id: i64, copy: bool) -> anyhow::Result<ExitCode> {
    let config = load_config()?;
    let history = open_history()?;
    let keep_audio_dir = config
        .history
        .keep_audio
        .then(paths::audio_dir)
        .transpose()?;
    let mut engine = Engine::new(config.clone(), paths::model_dirs()?);
    let mut entry = retry::transcribe(&history, &mut engine, id).map_err(anyhow::Error::msg)?;
    drop(engine);
    let text = entry.text.clone().unwrap_or_default();
    if text.trim().is_empty() {
        eprintln!("dictum: #{id}: no speech in its audio (nothing to type)");
        retry::delivered(&history, &mut entry, &SinkReport::default(), None)
            .map_err(anyhow::Error::msg)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{text}");
    let mut injector = Injector::new(&config.inject)
        .map_err(|e| anyhow::anyhow!("the text is stored in #{id} but cannot be typed: {e}"))?;
    let report = if copy {
        let error = injector.copy(&text).err();
        SinkReport {
            method: if error.is_none() { "clipboard" } else { "none" }.into(),
            error,
            ..SinkReport::default()
        }
    } else if let Some(why) =
        dictum_engine::inject::gate::over_budget(&config.inject, &text, entry.audio_ms)
    {
        // A runaway text (a speech server gone wild) is not typed on a retry either.
        SinkReport {
            method: "none".into(),
            error: Some(why),
            ..SinkReport::default()
        }
    } else {
        injector.deliver(&text)
    };
    retry::delivered(&history, &mut entry, &report, keep_audio_dir.as_deref())
        .map_err(anyhow::Error::msg)?;
    if let Some(e) = &report.error {
        anyhow::bail!(
            "#{id}: the text is stored but was not delivered: {e} (`dictum history --retry \
             {id}` again, or --copy)"
        );
    }
    if copy && std::io::stdin().is_terminal() {
        // On X11 the clipboard is served by this process: wait until it has been pasted.
        eprintln!("dictum: the text is on the clipboard; press Enter once it is pasted");
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
    Ok(ExitCode::SUCCESS)
}
