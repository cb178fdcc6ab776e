use super::*;

fn row(id: i64, raw: &str, correction: &str) -> Corrected {
    Corrected {
        id,
        raw_text: raw.into(),
        correction: correction.into(),
    }
}

fn pairs(raw: &str, corrected: &str) -> Vec<(String, String)> {
    align(raw, corrected)
        .into_iter()
        .map(|e| (e.from.join(" "), e.to))
        .collect()
}

#[test]
fn alignment_table() {
    let p = |a: &str, b: &str| (a.to_string(), b.to_string());
    // (whisper's text, the correction, the edits as (from, to))
    type Case = (&'static str, &'static str, Vec<(String, String)>);
    let cases: &[Case] = &[
        (
            "We run cooper netties.",
            "We run Kubernetes.",
            vec![p("cooper netties", "Kubernetes")],
        ),
        // Case and punctuation only: nothing to learn.
        ("the lazy dog, please", "The lazy dog. Please!", vec![]),
        ("it's here", "It’s here.", vec![]),
        // A pure insertion and a pure deletion.
        ("meet at three", "meet Alice at three", vec![p("", "Alice")]),
        ("um so we meet", "so we meet", vec![p("um", "")]),
        // Two separate edits, in text order; inner punctuation of the corrected side kept.
        (
            "the quick roundfark jump over the lazy nog",
            "The quick brown fox jumps over the lazy dog.",
            vec![p("roundfark jump", "brown fox jumps"), p("nog", "dog")],
        ),
        (
            "install no jazz",
            "install Node.js",
            vec![p("no jazz", "Node.js")],
        ),
        ("", "", vec![]),
    ];
    for (raw, corrected, want) in cases {
        assert_eq!(&pairs(raw, corrected), want, "{raw:?} -> {corrected:?}");
    }
}

#[test]
fn a_substitution_seen_twice_is_proposed_once_is_not() {
    let config = Config::default();
    let first = row(
        1,
        "We deploy on cooper netties today.",
        "We deploy on Kubernetes today.",
    );
    let once = propose(&first, std::slice::from_ref(&first), &config);
    assert!(
        !once.iter().any(|p| matches!(p, Proposal::Replace { .. })),
        "{once:?}"
    );
    let second = row(7, "Is cooper netties up?", "Is Kubernetes up?");
    let unrelated = row(3, "hello there", "hello they're");
    let all = [first.clone(), unrelated, second.clone()];
    let twice = propose(&second, &all, &config);
    assert!(
        twice.contains(&Proposal::Replace {
            from: "cooper netties".into(),
            to: "Kubernetes".into(),
            seen: 2,
            known: false,
        }),
        "{twice:?}"
    );
    // The current row is counted once even when `all` holds it.
    let twice_again = propose(&second, &all, &config);
    assert_eq!(twice, twice_again);
}

#[test]
fn vocabulary_proposals_table() {
    let config = Config::default();
    // (raw, corrected, words proposed for the vocabulary)
    let cases: &[(&str, &str, &[&str])] = &[
        // A pure insertion of a capitalised term.
        (
            "send it to the team",
            "send it to the Zephyrix team",
            &["Zephyrix"],
        ),
        // A substitution into a term; mixed letters and digits count too.
        (
            "we use cooper netties and kates",
            "we use Kubernetes and k8s",
            &["Kubernetes", "k8s"],
        ),
        // Common words (any case, inflected) are never proposed.
        ("the fox jump", "The brown fox jumps Quickly", &[]),
        ("see you on", "see you on Friday", &[]),
        // Lowercase ordinary-looking words are not proposed, nor what whisper wrote.
        ("we use cube control", "we use kubectl", &[]),
        ("Dashwood said so", "Dashwood said it, Dashwood", &[]),
        // Case only: not an edit at all.
        ("ask mr dashwood", "Ask Mr Dashwood", &[]),
    ];
    for (raw, corrected, want) in cases {
        let got: Vec<String> = propose(&row(1, raw, corrected), &[], &config)
            .into_iter()
            .filter_map(|p| match p {
                Proposal::Vocabulary { word, .. } => Some(word),
                Proposal::Replace { .. } => None,
            })
            .collect();
        assert_eq!(got, *want, "{raw:?} -> {corrected:?}");
    }
}

#[test]
fn grammar_fixes_and_long_rewrites_are_not_replacements() {
    let config = Config::default();
    let check = |raw: &str, corrected: &str| {
        let all = [row(1, raw, corrected), row(2, raw, corrected)];
        propose(&all[1], &all, &config)
            .into_iter()
            .filter(|p| matches!(p, Proposal::Replace { .. }))
            .count()
    };
    assert_eq!(
        check("the fox jump over", "the fox jumps over"),
        0,
        "common → common"
    );
    assert_eq!(check("a b c d e", "v w x y z"), 0, "more than 3 words");
    assert_eq!(
        check("we went zork", "we went, Zork"),
        0,
        "punctuation only"
    );
    assert_eq!(
        check("call zork now", "call York, Ann now"),
        0,
        "sentence punctuation inside"
    );
    assert_eq!(
        check("the lazy nog", "the lazy dog"),
        1,
        "nog is no common word"
    );
}

#[test]
fn known_proposals_are_marked() {
    let mut config = Config::default();
    config.stt.vocabulary = vec!["kubernetes".into()];
    config.replacements = vec![ReplaceConfig {
        from: "Cooper Netties".into(),
        to: "Kubernetes".into(),
    }];
    let all = [
        row(1, "on cooper netties", "on Kubernetes"),
        row(2, "on cooper netties", "on Kubernetes"),
    ];
    let got = propose(&all[1], &all, &config);
    assert_eq!(
        got,
        vec![
            Proposal::Vocabulary {
                word: "Kubernetes".into(),
                known: true
            },
            Proposal::Replace {
                from: "cooper netties".into(),
                to: "Kubernetes".into(),
                seen: 2,
                known: true
            }
        ]
    );
}

#[test]
fn accepted_proposals_are_written_in_place_keeping_comments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let before = "# my own note\n[stt]\nmodel = \"tiny.en-q8_0\" # fast\nvocabulary = [\"Dictum\"]\n\n[llm]\nenabled = false\n";
    std::fs::write(&path, before).expect("write");
    let vocab = Proposal::Vocabulary {
        word: "Kubernetes".into(),
        known: false,
    };
    let replace = Proposal::Replace {
        from: "cooper netties".into(),
        to: "Kubernetes".into(),
        seen: 2,
        known: false,
    };
    let w = write_accepted(&path, &[&vocab, &replace]).expect("write");
    assert_eq!(w.vocabulary, vec!["Kubernetes".to_string()]);
    assert!(!w.rewritten);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(
        text.starts_with("# my own note\n[stt]\nmodel = \"tiny.en-q8_0\" # fast\n"),
        "{text}"
    );
    let loaded = Config::load_from(&path).expect("load").config;
    assert_eq!(loaded.stt.vocabulary, vec!["Dictum", "Kubernetes"]);
    assert_eq!(loaded.replacements.len(), 1);
    assert_eq!(loaded.replacements[0].to, "Kubernetes");
    // Accepting again changes nothing.
    let again = write_accepted(&path, &[&vocab, &replace]).expect("again");
    assert_eq!(again, Written::default());
    assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
}

#[test]
fn no_stt_table_and_no_file_are_handled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[llm]\nenabled = false\n").expect("write");
    let vocab = Proposal::Vocabulary {
        word: "Zephyrix".into(),
        known: false,
    };
    write_accepted(&path, &[&vocab]).expect("write");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.starts_with("[llm]\nenabled = false\n"), "{text}");
    let c = Config::load_from(&path).expect("load").config;
    assert_eq!(c.stt.vocabulary, vec!["Zephyrix"]);
    let fresh = dir.path().join("new/config.toml");
    write_accepted(&fresh, &[&vocab]).expect("fresh");
    let c = Config::load_from(&fresh).expect("load").config;
    assert_eq!(c.stt.vocabulary, vec!["Zephyrix"]);
}

fn stored(history: &History, raw: &str) -> i64 {
    let mut e = crate::store::Entry::new(crate::store::Source::Mic);
    e.outcome = crate::store::Outcome::Ok;
    e.raw_text = Some(raw.into());
    e.text = Some(raw.into());
    history.insert(&mut e).expect("insert")
}

#[test]
fn review_then_accept_writes_only_what_the_engine_proposes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("history.sqlite3")).expect("open");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[llm]\nenabled = false\n").expect("write");
    let config = Config::default();
    let a = stored(&history, "we deploy on cooper netties");
    let b = stored(&history, "is cooper netties up");
    let first = review(&history, a, Some("we deploy on Kubernetes"), &config).expect("a");
    assert_eq!(
        first.proposals,
        vec![Proposal::Vocabulary {
            word: "Kubernetes".into(),
            known: false
        }]
    );
    let second = review(&history, b, Some("is Kubernetes up"), &config).expect("b");
    let replace = Proposal::Replace {
        from: "cooper netties".into(),
        to: "Kubernetes".into(),
        seen: 2,
        known: false,
    };
    assert!(second.proposals.contains(&replace), "{second:?}");
    // The stored correction is kept and reviewed again without a text.
    assert_eq!(review(&history, b, None, &config).expect("again"), second);
    // A page cannot teach a word or a replacement the engine did not propose.
    for forged in [
        Proposal::Vocabulary {
            word: "Zork".into(),
            known: false,
        },
        Proposal::Replace {
            from: "cooper netties".into(),
            to: "rm -rf".into(),
            seen: 2,
            known: false,
        },
    ] {
        let e = accept(&history, b, &[replace.clone(), forged], &config, &path)
            .expect_err("forged proposal accepted");
        assert!(e.to_string().contains("not proposed"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "[llm]\nenabled = false\n",
            "written although refused"
        );
    }
    // Only the accepted one is written; the rejected vocabulary word is not.
    let w = accept(&history, b, std::slice::from_ref(&replace), &config, &path).expect("ok");
    assert_eq!(
        w.replacements,
        vec![("cooper netties".to_string(), "Kubernetes".to_string())]
    );
    assert!(w.vocabulary.is_empty());
    let loaded = Config::load_from(&path).expect("load").config;
    assert!(loaded.stt.vocabulary.is_empty());
    assert_eq!(loaded.replacements.len(), 1);
    // Nothing accepted: nothing written.
    assert_eq!(
        accept(&history, a, &[], &loaded, &path).expect("none"),
        Written::default()
    );
}

#[test]
fn review_refuses_rows_without_a_transcript_or_a_correction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("history.sqlite3")).expect("open");
    let config = Config::default();
    let mut silent = crate::store::Entry::new(crate::store::Source::Mic);
    let silent = history.insert(&mut silent).expect("insert");
    let e = review(&history, silent, Some("hello"), &config).expect_err("no transcript");
    assert!(e.to_string().contains("no transcript"), "{e}");
    let id = stored(&history, "hello there");
    let e = review(&history, id, None, &config).expect_err("not corrected");
    assert!(e.to_string().contains("not been corrected"), "{e}");
    let e = review(&history, 999, Some("x"), &config).expect_err("no row");
    assert!(e.to_string().contains("no entry #999"), "{e}");
    assert!(review(&history, id, Some("  "), &config).is_err(), "empty");
}

#[test]
fn a_refused_value_or_broken_file_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[stt\n").expect("write");
    let vocab = Proposal::Vocabulary {
        word: "Zephyrix".into(),
        known: false,
    };
    assert!(write_accepted(&path, &[&vocab]).is_err());
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "[stt\n");
    // A `to` the config checks refuse (a control character) is not written.
    std::fs::write(&path, "").expect("write");
    let bad = Proposal::Replace {
        from: "zork".into(),
        to: "a\u{7}b".into(),
        seen: 2,
        known: false,
    };
    assert!(write_accepted(&path, &[&bad]).is_err());
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "");
}
