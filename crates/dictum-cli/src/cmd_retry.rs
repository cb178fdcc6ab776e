//! `dictum history --retry ID`: a dictation whose text was not delivered is transcribed again
//! from its kept audio (`dictation::retry`), stored and printed; then the running Dictum types
//! it (`type ID` over its control socket), so the typing goes through its gate: the character
//! budget, the cancel key (heard only by the running Dictum), the focus check. With no Dictum
//! running, or with `--copy`, the text is put on the clipboard instead: this process never
//! types.

use crate::context::{load_config, open_history};
use dictum_engine::dictation::{control, retry, SinkReport};
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
    if !copy && control::running() {
        // The running Dictum types it and records how on the row.
        eprintln!("dictum: #{id}: handed to the running Dictum to type (the cancel key stops it)");
        return match control::send_waiting(&format!("type {id}"), control::TYPE_WAIT) {
            Ok(reply) => {
                let done = reply.strip_prefix("ok ").unwrap_or(&reply);
                eprintln!("dictum: {done}");
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => anyhow::bail!(
                "{e} (the text is stored in #{id}: `dictum history --retry {id}` again, or \
                 --copy)"
            ),
        };
    }
    // No Dictum to type through its gate: the clipboard, never keys from this process.
    let mut injector = Injector::new(&config.inject)
        .map_err(|e| anyhow::anyhow!("the text is stored in #{id} but cannot be copied: {e}"))?;
    let error = injector.copy(&text).err();
    let report = SinkReport {
        method: if error.is_none() { "clipboard" } else { "none" }.into(),
        error,
        ..SinkReport::default()
    };
    retry::delivered(&history, &mut entry, &report, keep_audio_dir.as_deref())
        .map_err(anyhow::Error::msg)?;
    if let Some(e) = &report.error {
        anyhow::bail!(
            "#{id}: the text is stored (`dictum history`) but could not be put on the \
             clipboard: {e}"
        );
    }
    let why = if copy {
        ""
    } else {
        " (no Dictum is running to type it: start `dictum run` or the tray app to have it \
         typed)"
    };
    eprintln!("dictum: #{id}: the text is on the clipboard and in history{why}");
    // On X11 the clipboard is served by this process: it stays until a line is read (or the
    // input ends: nothing waits on /dev/null).
    if std::io::stdin().is_terminal() {
        eprintln!("dictum: press Enter once it is pasted");
    }
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    Ok(ExitCode::SUCCESS)
}
