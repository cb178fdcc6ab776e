//! The desktop's accessibility switch as `[context] switch_on_accessibility` wants it: turned
//! on when the user asks (Qt and Chromium/Electron apps then expose their text), and turned
//! off again when they stop asking, only if it was off before Dictum turned it on. Dictum
//! never touches it otherwise.

use crate::config::context::ContextConfig;

/// What Dictum did to the switch.
#[derive(Debug, Default)]
pub struct Switch {
    /// Some(was): Dictum turned it on; `was` is what it was before.
    turned_on: Option<bool>,
}

impl Switch {
    /// Brings the switch to what `config` wants, through `set` (which sets it and returns
    /// what it was, `super::switch_accessibility`). Returns a message for the user when that
    /// failed.
    pub fn apply(
        &mut self,
        config: &ContextConfig,
        set: impl Fn(bool) -> Result<Option<bool>, String>,
    ) -> Option<String> {
        let wanted = config.wants_accessibility();
        match (wanted, self.turned_on) {
            (true, None) => match set(true) {
                Ok(was) => {
                    self.turned_on = Some(was.unwrap_or(false));
                    tracing::info!("the desktop's accessibility switch is on (was {was:?})");
                    None
                }
                Err(e) => Some(format!(
                    "[context] switch_on_accessibility: {e}; Qt and Chromium apps keep their \
                     text to themselves"
                )),
            },
            (false, Some(was)) => {
                self.turned_on = None;
                if was {
                    return None;
                }
                set(false)
                    .err()
                    .map(|e| format!("the desktop's accessibility switch stays on: {e}"))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn on_when_asked_and_off_again_only_if_it_was_off() {
        let on = ContextConfig {
            switch_on_accessibility: true,
            ..ContextConfig::default()
        };
        let off = ContextConfig::default();
        let calls = RefCell::new(Vec::new());
        let set = |was: Option<bool>| {
            let calls = &calls;
            move |v: bool| {
                calls.borrow_mut().push(v);
                Ok(was)
            }
        };
        let mut s = Switch::default();
        assert_eq!(s.apply(&off, set(Some(false))), None);
        assert!(calls.borrow().is_empty(), "never touched unless asked");
        assert_eq!(s.apply(&on, set(Some(false))), None);
        assert_eq!(s.apply(&on, set(Some(true))), None);
        assert_eq!(*calls.borrow(), [true], "once");
        assert_eq!(s.apply(&off, set(Some(true))), None);
        assert_eq!(*calls.borrow(), [true, false], "off again: it was off");
        // It was on before Dictum: left on.
        calls.borrow_mut().clear();
        assert_eq!(s.apply(&on, set(Some(true))), None);
        assert_eq!(s.apply(&off, set(Some(true))), None);
        assert_eq!(*calls.borrow(), [true]);
        // Reading the text off turns the switch off too.
        let mut s = Switch::default();
        s.apply(&on, set(None));
        let no_read = ContextConfig {
            around_cursor: false,
            ..on.clone()
        };
        calls.borrow_mut().clear();
        s.apply(&no_read, set(Some(true)));
        assert_eq!(*calls.borrow(), [false]);
        // A failure is told.
        let mut s = Switch::default();
        let told = s.apply(&on, |_| Err("no bus".into())).unwrap_or_default();
        assert!(told.contains("no bus"), "{told}");
    }
}
