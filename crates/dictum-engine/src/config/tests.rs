use super::*;

fn parse(text: &str) -> Result<(Config, Vec<String>)> {
    Config::parse(text, Path::new("test.toml"))
}

#[test]
fn documented_defaults_match_code_defaults() {
    let (config, warnings) = parse(DEFAULT_TOML).expect("default text parses");
    assert_eq!(config, Config::default());
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn empty_file_means_defaults() {
    assert_eq!(parse("").expect("parses").0, Config::default());
}

#[test]
fn the_retype_key_is_off_by_default_and_a_key_of_its_own() {
    assert_eq!(Config::default().dictation.retype_hotkey, "");
    let ok = parse("[dictation]\nretype_hotkey = \"ctrl+alt+r\"\n").expect("a key of its own");
    assert_eq!(ok.0.dictation.retype_hotkey, "ctrl+alt+r");
    let refused = |text: &str, why: &str| {
        let err = parse(text).expect_err(text).to_string();
        assert!(
            err.contains("dictation.retype_hotkey") && err.contains(why),
            "{text}: {err}"
        );
    };
    refused(
        "[dictation]\nretype_hotkey = \"ctrl+alt+nosuchkey\"\n",
        "nosuchkey",
    );
    // The modifiers' order does not make another key.
    refused(
        "[dictation]\nretype_hotkey = \"alt+ctrl+space\"\n",
        "[dictation] hotkey",
    );
    refused("[dictation]\nretype_hotkey = \"escape\"\n", "cancel_key");
    let edit = "[dictation]\nretype_hotkey = \"ctrl+alt+e\"\n[edit]\nenabled = ";
    refused(&format!("{edit}true\n"), "[edit] hotkey");
    // Edit mode off: its key is grabbed by nobody.
    assert!(parse(&format!("{edit}false\n")).is_ok());
}

#[test]
fn syntax_error_has_line_and_column() {
    let text = "[stt]\nmodel = \"tiny\"\nthreads = = 4\n";
    match parse(text) {
        Err(Error::ConfigSyntax { line, column, .. }) => {
            assert_eq!(line, 3);
            assert!(column >= 10, "column {column}");
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

#[test]
fn wrong_type_has_line_and_column() {
    let text = "[vad]\nthreshold = \"high\"\n";
    match parse(text) {
        Err(e @ Error::ConfigSyntax { line: 2, .. }) => {
            assert!(e.to_string().contains("test.toml:2:"), "{e}")
        }
        other => panic!("expected a syntax error on line 2, got {other:?}"),
    }
}

#[test]
fn unknown_keys_are_warned_not_fatal() {
    let (config, warnings) =
        parse("[stt]\nmodle = \"x\"\nthreads = 3\n[nope]\na = 1\n").expect("parses");
    assert_eq!(config.stt.threads, 3);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains("stt.modle")),
        "{warnings:?}"
    );
    assert!(warnings.iter().any(|w| w.contains("nope")), "{warnings:?}");
}

#[test]
fn out_of_range_value_is_rejected() {
    let err = parse("[vad]\nthreshold = 3.0\n").expect_err("rejected");
    assert!(err.to_string().contains("vad.threshold"), "{err}");
    let err = parse("[stt]\nlanguage = \"klingon\"\n").expect_err("rejected");
    assert!(err.to_string().contains("stt.language"), "{err}");
    let err = parse("[llm]\nnum_ctx = 0\n").expect_err("rejected");
    assert!(err.to_string().contains("llm.num_ctx"), "{err}");
    let err = parse("[llm]\ntimeout_ms = 0\n").expect_err("rejected");
    assert!(err.to_string().contains("llm.timeout_ms"), "{err}");
    let err = parse("[llm]\nbackend = \"gpt\"\n").expect_err("rejected");
    assert!(err.to_string().contains("test.toml:2:"), "{err}");
}

#[test]
fn every_number_is_bounded_both_ways() {
    // (section, key = value, accepted?) — the edges of each documented range and one
    // past them, plus the values issue 12 found accepted.
    let table: &[(&str, &str, bool)] = &[
        ("stt", "threads = 64", true),
        ("stt", "threads = 65", false),
        ("stt", "threads = 4000000000", false),
        ("stt", "audio_ctx_margin = 1500", true),
        ("stt", "audio_ctx_margin = 1501", false),
        ("stt", "audio_ctx_min = 0", true),
        ("stt", "audio_ctx_min = 100000", false),
        ("stt", "max_file_s = 86400", true),
        ("stt", "max_file_s = 86401", false),
        ("stt", "max_file_s = 0", false),
        ("vad", "threshold = nan", false),
        ("vad", "min_speech_ms = 10000", true),
        ("vad", "min_speech_ms = 10001", false),
        ("vad", "pad_ms = 5001", false),
        ("history", "retention_days = 36500", true),
        ("history", "retention_days = 36501", false),
        ("llm", "timeout_ms = 600000", true),
        ("llm", "timeout_ms = 600001", false),
        ("llm", "timeout_ms = 0", false),
        ("llm", "num_ctx = 1048576", true),
        ("llm", "num_ctx = 1048577", false),
        ("llm", "num_predict = 131073", false),
        ("llm", "reload_threshold_ms = 600001", false),
        ("llm", "seed = -1", true),
        ("llm", "seed = -2", false),
        ("llm", "seed = 4294967295", true),
        ("llm", "seed = 4294967296", false),
        ("llm", "temperature = inf", false),
        ("llm", "keep_alive = \"-1\"", true),
        ("llm", "keep_alive = \"0\"", true),
        ("llm", "keep_alive = \"168h\"", true),
        ("llm", "keep_alive = \"169h\"", false),
        ("llm", "keep_alive = \"inf\"", false),
        ("llm", "keep_alive = \"-inf\"", false),
        ("llm", "keep_alive = \"nan\"", false),
        ("llm", "keep_alive = \"1e9\"", false),
        ("llm", "keep_alive = \"-5m\"", false),
        ("llm", "keep_alive = \"99999999999999999999999h\"", false),
        ("dictation", "max_utterance_s = 3600", true),
        ("dictation", "max_utterance_s = 3601", false),
        ("dictation", "max_utterance_s = 4000000000", false),
        ("dictation", "max_utterance_s = 0", false),
        ("dictation", "preroll_ms = 5001", false),
        ("dictation", "pause_ms = 5000", true),
        ("dictation", "pause_ms = 5001", false),
        ("dictation", "queue_max = 64", true),
        ("dictation", "queue_max = 65", false),
        ("dictation", "idle_unload_min = nan", false),
    ];
    for &(section, line, accepted) in table {
        let text = format!("[{section}]\n{line}\n");
        let key = line.split(' ').next().unwrap_or_default();
        match parse(&text) {
            Ok(_) => assert!(accepted, "{section}.{line} was accepted"),
            Err(e) => {
                assert!(!accepted, "{section}.{line} was refused: {e}");
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!("{section}.{key}")) || msg.contains("test.toml:2:"),
                    "{section}.{line}: {msg}"
                );
            }
        }
    }
    let err = parse("[dictation]\nmax_utterance_s = 4000000000\n").expect_err("refused");
    assert!(
        err.to_string()
            .contains("between 1 and 3600 s; it is 4000000000"),
        "{err}"
    );
    let err = parse("[llm]\nkeep_alive = \"inf\"\n").expect_err("refused");
    assert!(err.to_string().contains("\"-1\" (forever)"), "{err}");
}

#[test]
fn profiles_load_validate_and_save_with_the_documentation() {
    let text = "[[profile]]\nname = \"terminal\"\nmatch_class = \"xterm\"\nllm = false\n\
                trailing_period = false\nmatch = \"typo\"\n";
    let (c, warnings) = parse(text).expect("parses");
    assert_eq!(c.profiles.len(), 1);
    assert_eq!(c.profiles[0].llm, Some(false));
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("profile") && w.contains("match")),
        "{warnings:?}"
    );
    let err = parse("[[profile]]\nname = \"mail\"\nmatch_title = \"(Inbox\"\n")
        .expect_err("bad regex refused");
    let msg = err.to_string();
    assert!(
        msg.contains("profile \"mail\".match_title") && msg.contains("`(Inbox`"),
        "{msg}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    c.save_to(&path).expect("save");
    let saved = std::fs::read_to_string(&path).expect("read");
    assert!(
        saved.contains("# Spoken language as a two-letter code"),
        "{saved}"
    );
    assert!(saved.contains("[[profile]]"), "{saved}");
    let (back, warnings) = parse(&saved).expect("re-parses");
    assert_eq!(back, c);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn snippets_and_replacements_load_validate_and_save() {
    let text = "[[replace]]\nfrom = \"cooper netties\"\nto = \"Kubernetes\"\n\
                [[snippet]]\nphrase = \"my address\"\ntext = \"1 Main St\\nSpringfield\"\n";
    let (c, warnings) = parse(text).expect("parses");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.replacements[0].to, "Kubernetes");
    assert_eq!(c.snippets[0].text, "1 Main St\nSpringfield");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    c.save_to(&path).expect("save");
    let saved = std::fs::read_to_string(&path).expect("read");
    assert!(saved.contains("# Snippets: a phrase said"), "{saved}");
    assert!(
        saved.contains("[[snippet]]\nphrase = \"my address\""),
        "{saved}"
    );
    let (back, warnings) = parse(&saved).expect("re-parses");
    assert_eq!(back, c);
    assert!(warnings.is_empty(), "{warnings:?}");
    let err = parse("[[snippet]]\nphrase = \"\"\ntext = \"x\"\n").expect_err("refused");
    assert!(
        err.to_string().contains("snippet #1.phrase") && err.to_string().contains("no words"),
        "{err}"
    );
    let err = parse("[[replace]]\nfrom = \"a\"\nto = \"b\"\n[[replace]]\nfrom = \"A\"\n")
        .expect_err("refused");
    assert!(err.to_string().contains("replaced twice"), "{err}");
}

#[test]
fn invalid_file_is_never_overwritten() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let text = "[stt\nmodel = 1";
    std::fs::write(&path, text).expect("write");
    assert!(Config::load_from(&path).is_err());
    assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
}

#[test]
fn save_keeps_the_documentation_and_round_trips() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sub/config.toml");
    let mut c = Config::default();
    assert_eq!(render_documented(&c).expect("render"), DEFAULT_TOML);
    c.stt.model = "base-q8_0".into();
    c.stt.vocabulary = vec!["Dictum".into(), "say \"hi\"".into()];
    c.llm.enabled = true;
    c.llm.top_p = 0.8;
    c.llm.system_prompt = "Fix punctuation.\nKeep words.".into();
    c.dictation.mode = crate::dictation::config::Mode::Toggle;
    c.inject.method = crate::inject::InjectMethod::Paste;
    c.history.retention_days = 30;
    c.save_to(&path).expect("save");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(
        text.contains("# Spoken language as a two-letter code"),
        "{text}"
    );
    assert!(text.contains("top_p = 0.8\n"), "{text}");
    assert!(text.contains("mode = \"toggle\""), "{text}");
    let loaded = Config::load_from(&path).expect("load");
    assert_eq!(loaded.config, c);
    assert!(loaded.warnings.is_empty());
    assert!(!dir.path().join("sub/config.toml.tmp").exists());
}

#[test]
fn save_refuses_invalid_values_and_never_overwrites_a_broken_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let mut c = Config::default();
    c.vad.threshold = 2.0;
    assert!(c.save_to(&path).is_err());
    assert!(!path.exists());
    std::fs::write(&path, "[stt\n").expect("write");
    assert!(Config::default().save_to(&path).is_err());
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "[stt\n");
}

#[test]
fn missing_file_means_defaults_and_is_not_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let loaded = Config::load_from(&path).expect("loads");
    assert_eq!(loaded.config, Config::default());
    assert!(loaded.path.is_none());
    assert!(!path.exists());
}
