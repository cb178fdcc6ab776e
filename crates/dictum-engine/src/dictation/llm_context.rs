//! The text around the cursor for the LLM (issue 41, `[context] llm`): read at the press on
//! a thread of its own ([`PressRead`]), shared by the utterance's jobs (the cleanup while
//! speaking starts before the release), read again after the release when the press found
//! nothing, and given to the LLM only where it may go ([`for_llm`]). The text read at typing,
//! to fit the words in, is `caret.rs`'s.

use crate::config::context::ContextConfig;
use crate::config::Config;
use crate::context::atspi::{read_around_caret, Read, Target};
use crate::llm::prompt::Context;
use crate::profile::Profile;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The read started at the press, for the LLM: shared by the utterance's jobs (the
/// cleanup while speaking starts before the release).
///
/// On X11 the hotkey's grab takes the keyboard focus from the window while the key is held
/// (GTK then says no field is focused), so a read at the press often finds nothing: after the
/// release ([`PressRead::get`] with `released`), a read that found nothing is done once more.
pub struct PressRead {
    app: Option<String>,
    title: Option<String>,
    /// What is read (None: a terminal, nothing is read: the app and title only).
    target: Option<Arc<Again>>,
    state: Mutex<ReadState>,
}

/// What a second read needs.
struct Again {
    pid: Option<u32>,
    class: Option<String>,
    opt_out: Vec<String>,
    budget: Duration,
}

impl Again {
    fn read(&self) -> Read {
        let target = Target {
            pid: self.pid,
            class: self.class.as_deref(),
        };
        read_around_caret(&target, &self.opt_out, self.budget)
    }
}

#[derive(Default)]
struct ReadState {
    pending: Option<JoinHandle<Read>>,
    result: Option<Read>,
    read_again: bool,
}

impl PressRead {
    /// Starts the read at the press when the LLM will clean this dictation and `[context]
    /// llm` is on; None otherwise (nothing is read for the LLM then).
    pub(crate) fn start(
        config: &Config,
        profile: &Profile,
        class: Option<&str>,
        title: Option<&str>,
        pid: Option<u32>,
    ) -> Option<Arc<PressRead>> {
        if !config.context.llm || !profile.llm_enabled(config) {
            return None;
        }
        let terminal = class.is_none_or(|c| config.inject.is_terminal(None, Some(c)));
        let target = (config.context.around_cursor && !terminal).then(|| {
            Arc::new(Again {
                pid,
                class: class.map(str::to_string),
                opt_out: config.context.opt_out.clone(),
                budget: config.context.budget(),
            })
        });
        let pending = target.clone().map(|t| std::thread::spawn(move || t.read()));
        Some(Arc::new(PressRead {
            app: class.map(str::to_string),
            title: title.map(str::to_string),
            target,
            state: Mutex::new(ReadState {
                pending,
                ..ReadState::default()
            }),
        }))
    }

    /// The context for the LLM, or why there is none (a password field, an app on the
    /// opt-out list: nothing at all is sent then, not even the app's name). The first call
    /// waits for the press's read (bounded by `[context] budget_ms`); the first call with
    /// `released` reads again when that found nothing. Before that, a read that found
    /// nothing gives nothing at all (fail closed: it may be a password field).
    pub(crate) fn get(&self, released: bool) -> Result<Context, String> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.result.is_none() {
            let read = match s.pending.take() {
                Some(handle) => handle
                    .join()
                    .unwrap_or_else(|_| Read::Unavailable("the read crashed".into())),
                None => Read::Unavailable("a terminal".into()),
            };
            s.result = Some(read);
        }
        let unknown = matches!(s.result, Some(Read::Unavailable(_)));
        if unknown && !released && !s.read_again && self.target.is_some() {
            // Not known yet (it may be a password field): nothing at all, until the release
            // reads again.
            return Err("not known yet".into());
        }
        if released && !s.read_again && unknown {
            s.read_again = true;
            if let Some(target) = &self.target {
                s.result = Some(target.read());
            }
        }
        let before = match &s.result {
            Some(Read::Known(caret)) => caret.before.clone(),
            Some(Read::Refused(why)) => return Err(format!("not sent: {why}")),
            Some(Read::Unavailable(why)) => {
                tracing::debug!("the text before the cursor is not known: {why}");
                String::new()
            }
            None => String::new(),
        };
        Ok(Context {
            app: self.app.clone(),
            title: self.title.clone(),
            before,
        })
    }
}

/// Whether the LLM at `url` may be given the context (`[context] llm`, `llm_remote`); the
/// row's `llm_context` when it may not.
pub(crate) fn llm_may_see(config: &ContextConfig, url: &str) -> Result<(), String> {
    if config.llm_allowed(crate::net::is_loopback_url(url)) {
        Ok(())
    } else {
        Err("not sent: the LLM server is not on this machine ([context] llm_remote)".into())
    }
}

/// What the LLM gets of `read` for a server at `url` after the release, and what the row
/// says of it (`llm_context`): the context when `[context] llm` allows it for that server,
/// else why not.
pub(crate) fn for_llm(
    read: Option<&PressRead>,
    config: &ContextConfig,
    url: &str,
) -> (Option<Context>, Option<String>) {
    let Some(read) = read else {
        return (None, None);
    };
    if let Err(why) = llm_may_see(config, url) {
        return (None, Some(why));
    }
    match read.get(true) {
        Ok(context) => (Some(context), Some("sent".into())),
        Err(why) => (None, Some(why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(app: &str, result: Read) -> PressRead {
        PressRead {
            app: Some(app.into()),
            title: Some("notes".into()),
            target: None,
            state: Mutex::new(ReadState {
                result: Some(result),
                ..ReadState::default()
            }),
        }
    }

    #[test]
    fn the_llm_gets_the_context_only_where_it_may() {
        let c = ContextConfig::default();
        let local = "http://127.0.0.1:8080";
        let remote = "https://llm.example.com";
        let caret = crate::context::atspi::Caret {
            before: "I think ".into(),
            after: "is right".into(),
            app: None,
            role: "text".into(),
            nodes: 2,
            took: Duration::from_millis(9),
        };
        let ok = read("Gedit", Read::Known(caret));
        let (context, note) = for_llm(Some(&ok), &c, local);
        assert_eq!(context.map(|c| c.before), Some("I think ".to_string()));
        assert_eq!(note.as_deref(), Some("sent"));
        let (context, note) = for_llm(Some(&ok), &c, remote);
        assert!(context.is_none());
        assert!(note.is_some_and(|n| n.contains("llm_remote")));
        let allowed = ContextConfig {
            llm_remote: true,
            ..c.clone()
        };
        assert!(for_llm(Some(&ok), &allowed, remote).0.is_some());
        let refused = read(
            "Gedit",
            Read::Refused(crate::context::atspi::REFUSED_PASSWORD),
        );
        let (context, note) = for_llm(Some(&refused), &allowed, local);
        assert!(context.is_none());
        assert_eq!(note.as_deref(), Some("not sent: a password field"));
        assert_eq!(for_llm(None, &c, local), (None, None));
    }

    #[test]
    fn a_terminal_gets_its_app_and_title_but_no_read() {
        let mut config = Config::default();
        config.llm.enabled = true;
        let profile = Profile::default_arc();
        let read = PressRead::start(&config, &profile, Some("XTerm"), Some("vim"), Some(1))
            .expect("the LLM is on");
        let (context, note) = for_llm(Some(&read), &config.context, &config.llm.url);
        let context = context.expect("sent to the default local server");
        assert_eq!(note.as_deref(), Some("sent"));
        assert_eq!(context.app.as_deref(), Some("XTerm"));
        assert_eq!(context.title.as_deref(), Some("vim"));
        assert!(context.before.is_empty());
        // The LLM off: nothing is read.
        config.llm.enabled = false;
        assert!(PressRead::start(&config, &profile, Some("Gedit"), None, Some(1)).is_none());
    }
}
