//! Which window the edit is for. At the press the focused window is named the way the
//! injector's sink names it (`Sink::focus_key`: `x11:<id>`, else `class|title`); at the
//! release the answer is typed only when the sink names the same window, since typing over
//! a selection in another window would replace whatever is selected there.

use crate::inject::window::WindowInfo;

/// The window's name as `Sink::focus_key` gives it for the injector; None when unknown.
pub fn key(w: &WindowInfo) -> Option<String> {
    w.id.map(|id| format!("x11:{id}")).or_else(|| {
        (w.class.is_some() || w.title.is_some()).then(|| {
            format!(
                "{}|{}",
                w.class.clone().unwrap_or_default(),
                w.title.clone().unwrap_or_default()
            )
        })
    })
}

/// Whether the answer may be typed: the window focused now is the one focused at the press.
/// A focus that cannot be known now counts as changed.
pub fn unchanged(at_press: &str, now: Option<&str>) -> bool {
    now == Some(at_press)
}

/// Reads the focused window at the press through its own connection to the session (the
/// injector's thread has its own).
pub struct Probe {
    injector: Option<crate::inject::Injector>,
}

impl Probe {
    pub fn new() -> Probe {
        Probe { injector: None }
    }

    /// The focused window now (unknown: all None), and whether it is a terminal.
    pub fn focused(&mut self, config: &crate::config::Config) -> (WindowInfo, bool) {
        if self.injector.is_none() {
            match crate::inject::Injector::new(&config.inject) {
                Ok(i) => self.injector = Some(i),
                Err(e) => {
                    tracing::debug!("edit: the focused window cannot be read: {e}");
                    return (WindowInfo::default(), false);
                }
            }
        }
        let Some(i) = self.injector.as_mut() else {
            return (WindowInfo::default(), false);
        };
        let w = i.focused_window();
        let terminal = config
            .inject
            .is_terminal(w.instance.as_deref(), w.class.as_deref());
        (w, terminal)
    }
}

impl Default for Probe {
    fn default() -> Self {
        Probe::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_named_by_id_else_by_class_and_title() {
        let w = WindowInfo {
            id: Some(42),
            instance: None,
            class: Some("Gedit".into()),
            title: Some("notes".into()),
            pid: None,
        };
        assert_eq!(key(&w).as_deref(), Some("x11:42"));
        let w = WindowInfo { id: None, ..w };
        assert_eq!(key(&w).as_deref(), Some("Gedit|notes"));
        assert_eq!(key(&WindowInfo::default()), None);
    }

    #[test]
    fn a_focus_change_or_an_unknown_focus_refuses_the_typing() {
        assert!(unchanged("x11:42", Some("x11:42")));
        assert!(!unchanged("x11:42", Some("x11:43")));
        assert!(!unchanged("x11:42", None));
        assert!(!unchanged("Gedit|notes", Some("Gedit|other")));
    }
}
