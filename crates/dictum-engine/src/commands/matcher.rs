//! Finds the commands said at the end of a transcript (or alone) and splits them off the text.

use super::config::CommandsConfig;
use super::keys::{parse_keys, Chord, Key};
use super::phrase::tokens;
use super::{Action, Parsed, Spoken};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Alone, or at the end after the text.
    EndOrAlone,
    /// Only when it is all that was said (common words: "tab", "undo").
    AloneOnly,
}

/// Built-in phrases: (command name, phrase, where it acts).
const PHRASES: &[(&str, &str, Place)] = &[
    ("new line", "new line", Place::EndOrAlone),
    ("new line", "newline", Place::EndOrAlone),
    ("new line", "next line", Place::EndOrAlone),
    ("new paragraph", "new paragraph", Place::EndOrAlone),
    ("new paragraph", "next paragraph", Place::EndOrAlone),
    ("press enter", "press enter", Place::EndOrAlone),
    ("press enter", "press return", Place::EndOrAlone),
    ("press enter", "hit enter", Place::EndOrAlone),
    ("tab", "tab", Place::AloneOnly),
    ("tab", "press tab", Place::EndOrAlone),
    ("scratch that", "scratch that", Place::EndOrAlone),
    ("scratch that", "delete that", Place::EndOrAlone),
    ("scratch that", "strike that", Place::EndOrAlone),
    ("undo", "undo", Place::AloneOnly),
    ("undo", "undo that", Place::EndOrAlone),
    ("stop dictation", "stop dictation", Place::EndOrAlone),
    ("stop dictation", "stop listening", Place::EndOrAlone),
];

fn built_in_action(name: &str) -> Action {
    let keys = |keys: Vec<Chord>| Action::Keys { keys };
    match name {
        "new line" | "press enter" => keys(vec![Chord::key(Key::Return)]),
        "new paragraph" => keys(vec![Chord::key(Key::Return), Chord::key(Key::Return)]),
        "tab" => keys(vec![Chord::key(Key::Tab)]),
        "undo" => keys(vec![Chord::ctrl(Key::Char('z'))]),
        "scratch that" => Action::ScratchThat,
        _ => Action::StopDictation,
    }
}

struct Phrase {
    name: String,
    words: Vec<String>,
    place: Place,
    action: Action,
}

fn phrases(config: &CommandsConfig) -> Vec<Phrase> {
    let disabled: Vec<String> = config
        .disabled
        .iter()
        .map(|d| d.trim().to_lowercase())
        .collect();
    let mut out: Vec<Phrase> = PHRASES
        .iter()
        .filter(|(name, _, _)| !disabled.iter().any(|d| d == name))
        .map(|&(name, phrase, place)| Phrase {
            name: name.to_string(),
            words: super::words(phrase),
            place,
            action: built_in_action(name),
        })
        .collect();
    // Yours (validated at load; one that does not parse is left out here).
    for c in &config.custom {
        if let Ok(keys) = parse_keys(&c.keys) {
            out.push(Phrase {
                name: c.phrase.trim().to_string(),
                words: super::words(&c.phrase),
                place: Place::EndOrAlone,
                action: Action::Keys { keys },
            });
        }
    }
    out.retain(|p| !p.words.is_empty());
    out
}

/// Splits `text` into what is typed and the commands said at its end. With commands off it
/// only applies spoken punctuation (when that is on).
pub fn parse(text: &str, config: &CommandsConfig) -> Parsed {
    let mut parsed = Parsed {
        text: text.trim().to_string(),
        commands: Vec::new(),
    };
    if config.enabled {
        let toks = tokens(text);
        let table = phrases(config);
        let mut end = toks.len();
        let mut found = Vec::new();
        loop {
            // The longest phrase ending here ("undo that" before "that"…).
            let best = table
                .iter()
                .filter(|p| {
                    p.words.len() <= end
                        && toks[end - p.words.len()..end]
                            .iter()
                            .zip(&p.words)
                            .all(|(t, w)| t.word == *w)
                })
                .max_by_key(|p| p.words.len());
            let Some(p) = best else { break };
            let alone = end == p.words.len();
            if p.place == Place::AloneOnly && !alone {
                break;
            }
            found.push(Spoken {
                name: p.name.clone(),
                action: p.action.clone(),
            });
            end -= p.words.len();
        }
        if !found.is_empty() {
            found.reverse();
            let kept = match toks.get(end) {
                Some(t) if end > 0 => &text[..t.start],
                _ => "",
            };
            parsed.text = kept
                .trim_end()
                .trim_end_matches([',', ';', ':', '-'])
                .trim_end()
                .trim_start()
                .to_string();
            // "…scratch that" after words drops those words (this dictation); alone it
            // removes the previous dictation.
            for c in &mut found {
                if c.action == Action::ScratchThat && !parsed.text.is_empty() {
                    c.action = Action::Discard;
                    parsed.text.clear();
                }
            }
            parsed.commands = found;
        }
    }
    if config.punctuation && !parsed.text.is_empty() {
        parsed.text = super::punctuation::punctuate(&parsed.text);
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        said: &'static str,
        punctuation: bool,
        text: &'static str,
        commands: &'static [&'static str],
    }

    const fn c(said: &'static str, text: &'static str, commands: &'static [&'static str]) -> Case {
        Case {
            said,
            punctuation: false,
            text,
            commands,
        }
    }

    const fn p(said: &'static str, text: &'static str, commands: &'static [&'static str]) -> Case {
        Case {
            said,
            punctuation: true,
            text,
            commands,
        }
    }

    /// Positives and negatives, as whisper writes them (capitals, its own punctuation).
    const CASES: &[Case] = &[
        // Alone.
        c("New line.", "", &["new line"]),
        c("new line", "", &["new line"]),
        c("Newline.", "", &["new line"]),
        c("New-line!", "", &["new line"]),
        c("Next line.", "", &["new line"]),
        c("New paragraph.", "", &["new paragraph"]),
        c("Press enter.", "", &["press enter"]),
        c("Press Return.", "", &["press enter"]),
        c("Tab.", "", &["tab"]),
        c("Press tab.", "", &["tab"]),
        c("Scratch that.", "", &["scratch that"]),
        c("Delete that.", "", &["scratch that"]),
        c("Undo.", "", &["undo"]),
        c("Undo that.", "", &["undo"]),
        c("Stop dictation.", "", &["stop dictation"]),
        c("Stop listening.", "", &["stop dictation"]),
        // At the end of a sentence.
        c(
            "Send the report new line.",
            "Send the report",
            &["new line"],
        ),
        c(
            "Send the report. New line.",
            "Send the report.",
            &["new line"],
        ),
        c(
            "Send the report, new line.",
            "Send the report",
            &["new line"],
        ),
        c("Dear Anna, new paragraph.", "Dear Anna", &["new paragraph"]),
        c("ls -la press enter", "ls -la", &["press enter"]),
        c("Name press tab", "Name", &["tab"]),
        c(
            "That is all. Stop dictation.",
            "That is all.",
            &["stop dictation"],
        ),
        c(
            "Two lines new line new line.",
            "Two lines",
            &["new line", "new line"],
        ),
        c(
            "Thanks new line press enter",
            "Thanks",
            &["new line", "press enter"],
        ),
        c("Tab new line", "", &["tab", "new line"]),
        // "…scratch that" drops this dictation's words instead.
        c("I went home, scratch that.", "", &["scratch that"]),
        // In the middle, or part of other words: text.
        c("A new line of products.", "A new line of products.", &[]),
        c("The new line is ready.", "The new line is ready.", &[]),
        c("New lines.", "New lines.", &[]),
        c("Renew line.", "Renew line.", &[]),
        c("I pressed enter.", "I pressed enter.", &[]),
        c("Press enter to continue.", "Press enter to continue.", &[]),
        c("I opened a new tab.", "I opened a new tab.", &[]),
        c("Pay the tab", "Pay the tab", &[]),
        c("Do not undo.", "Do not undo.", &[]),
        c("Scratch that itch.", "Scratch that itch.", &[]),
        c(
            "Stop dictation software from typing.",
            "Stop dictation software from typing.",
            &[],
        ),
        c("A newline character.", "A newline character.", &[]),
        c("", "", &[]),
        // Spoken punctuation (opt-in).
        p("Hello comma world period", "Hello, world.", &[]),
        p("Hello, comma, world. Period.", "Hello, world.", &[]),
        p("What time is it question mark", "What time is it?", &[]),
        p("Wow exclamation point that works", "Wow! That works", &[]),
        p(
            "Items colon apples semicolon pears",
            "Items: apples; pears",
            &[],
        ),
        p(
            "It took a period of time.",
            "It took a period of time.",
            &[],
        ),
        p("Put the comma here", "Put the comma here", &[]),
        p("Done period new line", "Done.", &["new line"]),
        c("Hello comma world period", "Hello comma world period", &[]),
    ];

    #[test]
    fn the_command_table() {
        assert!(CASES.len() >= 40);
        let mut failures = Vec::new();
        for case in CASES {
            let config = CommandsConfig {
                punctuation: case.punctuation,
                ..CommandsConfig::default()
            };
            let parsed = parse(case.said, &config);
            let names: Vec<&str> = parsed.commands.iter().map(|c| c.name.as_str()).collect();
            if parsed.text != case.text || names != case.commands {
                failures.push(format!(
                    "{:?} → {:?} {names:?}, expected {:?} {:?}",
                    case.said, parsed.text, case.text, case.commands
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn actions_of_the_built_ins() {
        let d = CommandsConfig::default();
        let action = |said: &str| parse(said, &d).commands[0].action.clone();
        assert_eq!(
            action("new paragraph"),
            Action::Keys {
                keys: vec![Chord::key(Key::Return); 2]
            }
        );
        assert_eq!(
            action("undo"),
            Action::Keys {
                keys: vec![Chord::ctrl(Key::Char('z'))]
            }
        );
        assert_eq!(action("scratch that"), Action::ScratchThat);
        assert_eq!(action("It was wrong, scratch that"), Action::Discard);
        assert_eq!(action("stop dictation"), Action::StopDictation);
    }

    #[test]
    fn off_disabled_and_custom_commands() {
        let off = CommandsConfig {
            enabled: false,
            ..CommandsConfig::default()
        };
        assert_eq!(parse("New line.", &off).text, "New line.");
        assert!(parse("New line.", &off).commands.is_empty());

        let no_undo = CommandsConfig {
            disabled: vec!["Undo".into()],
            ..CommandsConfig::default()
        };
        assert_eq!(parse("Undo.", &no_undo).text, "Undo.");
        assert_eq!(parse("New line.", &no_undo).commands.len(), 1);

        let custom = CommandsConfig {
            custom: vec![crate::commands::CustomCommand {
                phrase: "Save the file".into(),
                keys: "ctrl+s".into(),
            }],
            ..CommandsConfig::default()
        };
        let parsed = parse("Fixed the typo. Save the file.", &custom);
        assert_eq!(parsed.text, "Fixed the typo.");
        assert_eq!(parsed.commands[0].name, "Save the file");
        assert_eq!(
            parsed.commands[0].action,
            Action::Keys {
                keys: vec![Chord::ctrl(Key::Char('s'))]
            }
        );
        assert_eq!(parsed.names_json().as_deref(), Some("[\"Save the file\"]"));
    }

    #[test]
    fn config_names_what_is_wrong() {
        let bad = CommandsConfig {
            disabled: vec!["make coffee".into()],
            ..CommandsConfig::default()
        };
        assert!(bad.validate().unwrap_err().1.contains("new line"));
        let bad_keys = CommandsConfig {
            custom: vec![crate::commands::CustomCommand {
                phrase: "go".into(),
                keys: "ctrl+pagedown".into(),
            }],
            ..CommandsConfig::default()
        };
        assert!(bad_keys.validate().unwrap_err().1.contains("unknown key"));
        assert!(CommandsConfig::default().validate().is_ok());
    }
}
