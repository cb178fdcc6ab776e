use super::*;

fn split(text: &str) -> (&str, &str) {
    let n = whole_sentences(text);
    (text[..n].trim(), text[n..].trim())
}

#[test]
fn only_whole_sentences_are_taken() {
    assert_eq!(
        split("And so my fellow Americans. Ask not what your"),
        ("And so my fellow Americans.", "Ask not what your")
    );
    // A committed chunk that ends with its period is a whole sentence.
    assert_eq!(split("Ship it on Friday."), ("Ship it on Friday.", ""));
    assert_eq!(
        split("Is it done? Yes! And then"),
        ("Is it done? Yes!", "And then")
    );
    // Nothing whole yet.
    assert_eq!(split("and then we"), ("", "and then we"));
    assert_eq!(split(""), ("", ""));
    // A sentence left hanging, a decimal, an abbreviation, a lowercase continuation.
    assert_eq!(split("We could..."), ("", "We could..."));
    assert_eq!(split("It grew 3.5 percent"), ("", "It grew 3.5 percent"));
    assert_eq!(
        split("Ask Mr. Smith. He knows"),
        ("Ask Mr. Smith.", "He knows")
    );
    assert_eq!(split("so... we went"), ("", "so... we went"));
    // Closing quotes stay with their sentence; a digit starts a new one.
    assert_eq!(
        split("He said \"stop.\" 3 people left"),
        ("He said \"stop.\"", "3 people left")
    );
}

#[test]
fn the_rest_after_the_cleaned_pieces() {
    assert_eq!(after_words("A b.  C d. E f", "A b. C d."), Some("E f"));
    assert_eq!(after_words("A b. C d.", "A b. C d."), Some(""));
    assert_eq!(after_words("A b.", ""), Some("A b."));
    // A command or a spoken mark changed the text: the pieces no longer fit.
    assert_eq!(after_words("A, b. C", "A b."), None);
    assert_eq!(after_words("Cats run.", "Cat"), None);
}

fn piece(raw: &str, output: Option<&str>) -> Piece {
    Piece {
        raw: raw.into(),
        report: LlmReport {
            backend: "openai".into(),
            model: "m".into(),
            outcome: LlmOutcome::Rejected,
            text: raw.into(),
            output: output.map(str::to_string),
            reject_reason: None,
            error: output.is_none().then(|| "timed out".to_string()),
            error_kind: output.is_none().then(|| "timeout".to_string()),
            load_ms: None,
            prompt_eval_ms: None,
            eval_ms: None,
            tokens_per_sec: None,
            total_ms: 100.0,
            reloaded: false,
            reload_cause: None,
        },
    }
}

#[test]
fn each_piece_is_guarded_and_a_rejected_one_keeps_its_words() {
    let pieces = [
        piece("um the report is like done.", Some("The report is done.")),
        // Drops the "not": rejected, typed raw.
        piece(
            "we should not ship it on friday.",
            Some("We should ship it on Friday."),
        ),
        piece(
            "the total is one hundred and twenty three dollars.",
            Some("The total is $123."),
        ),
    ];
    let r = assemble(&pieces, &Limits::default(), false, 42.0);
    assert_eq!(r.outcome, LlmOutcome::Cleaned);
    assert_eq!(
        r.text,
        "The report is done. we should not ship it on friday. The total is $123."
    );
    let reason = r.reject_reason.clone().unwrap_or_default();
    assert!(reason.starts_with("piece 2 of 3: "), "{reason}");
    assert!(
        reason.contains("not"),
        "the guard's reason is kept: {reason}"
    );
    assert_eq!(r.total_ms, 42.0);
    assert_eq!(r.error, None);
    // Into a terminal, "$" is refused: that piece keeps its words too.
    let t = assemble(&pieces, &Limits::default(), true, 42.0);
    assert!(
        t.text.ends_with("one hundred and twenty three dollars."),
        "{}",
        t.text
    );
    let reason = t.reject_reason.unwrap_or_default();
    assert!(reason.contains("piece 3 of 3: "), "{reason}");
}

#[test]
fn a_failed_piece_is_named_and_all_rejected_is_a_rejection() {
    let r = assemble(
        &[
            piece("we should not ship it.", Some("We should ship it.")),
            piece("then call me.", None),
        ],
        &Limits::default(),
        false,
        1.0,
    );
    assert_eq!(r.outcome, LlmOutcome::Rejected);
    assert_eq!(r.text, "we should not ship it. then call me.");
    assert_eq!(r.error.as_deref(), Some("piece 2 of 2: timed out"));
    assert_eq!(r.error_kind.as_deref(), Some("timeout"));
    // One piece alone reads like one pass: no "piece 1 of 1".
    let one = assemble(
        &[piece("we should not ship it.", Some("We should ship it."))],
        &Limits::default(),
        false,
        1.0,
    );
    assert!(!one.reject_reason.unwrap_or_default().starts_with("piece"));
}

#[test]
fn the_context_is_the_last_piece_as_it_was_typed() {
    assert_eq!(context(&[]), None);
    let pieces = [
        piece("um the report is like done.", Some("The report is done.")),
        piece("we should not ship.", Some("We should ship.")),
    ];
    assert_eq!(
        context(&pieces[..1]),
        Some((
            "um the report is like done.".into(),
            "The report is done.".into()
        ))
    );
    // A rejected piece's context is its raw words, never the rejected output.
    assert_eq!(
        context(&pieces),
        Some(("we should not ship.".into(), "we should not ship.".into()))
    );
}
#[test]
fn the_context_comes_as_one_exchange_before_the_piece() {
    let config = LlmConfig::default();
    let cleaner = Cleaner::new(&config, &[]).expect("cleaner");
    let plain = cleaner.messages("then call me");
    let m = cleaner.messages_after(
        "then call me",
        Some(("um the report is like done", "The report is done.")),
    );
    assert_eq!(m.len(), plain.len() + 2);
    assert_eq!(m[..plain.len() - 1], plain[..plain.len() - 1]);
    let n = m.len();
    assert_eq!(m[n - 3].role, "user");
    assert!(m[n - 3].content.contains("um the report is like done"));
    assert_eq!(m[n - 2].role, "assistant");
    assert_eq!(m[n - 2].content, "The report is done.");
    assert_eq!(m[n - 1], plain[plain.len() - 1]);
    assert_eq!(cleaner.messages_after("then call me", None), plain);
}
