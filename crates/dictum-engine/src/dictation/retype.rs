//! "Type the last dictation again" (issue 41): `dictum ctl retype` and `[dictation]
//! retype_hotkey` type the newest dictation's text once more, into whatever window has the
//! focus now, through the same gate as a fresh dictation (the injector's stored-text path:
//! the character budget of its audio, the terminal verdict, the cancel key, the focus check).
//!
//! Which row that is is decided here, from history's newest rows, by [`last_dictation`].

use crate::store::{Entry, History, Outcome, Query, Source};

/// How many of history's newest rows are looked at for a dictation to type again.
pub const LOOK_BACK: usize = 100;

/// The row to type again, among `rows` (newest first, as `History::list` gives them): the
/// newest dictation from the microphone that ended with text (outcome `ok`, text not blank)
/// and was not cancelled while it was typed. Rows with no speech, failed, cancelled while
/// recording (outcome `error`), still under way or interrupted, and files transcribed with
/// `dictum transcribe`, are passed over. A row whose text was not typed (refused by the
/// budget, no window) still counts: typing it again is the point, and the gate judges it
/// again.
pub fn last_dictation(rows: &[Entry]) -> Option<i64> {
    rows.iter()
        .find(|e| {
            e.source == Source::Mic
                && e.outcome == Outcome::Ok
                && e.text.as_deref().is_some_and(|t| !t.trim().is_empty())
                && e.inject_method.as_deref() != Some("cancelled")
        })
        .and_then(|e| e.id)
}

/// The id of the dictation to type again in `history`, or what to tell the user.
pub fn find(history: &History) -> Result<i64, String> {
    let rows = history
        .list(&Query {
            limit: LOOK_BACK,
            search: None,
        })
        .map_err(|e| format!("cannot read the history to find the last dictation: {e}"))?;
    last_dictation(&rows).ok_or_else(|| {
        format!(
            "no dictation to type again: none of the last {LOOK_BACK} history entries has \
             dictated text (`dictum history` lists them; `dictum ctl type ID` types one)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, source: Source, outcome: Outcome, text: &str, method: &str) -> Entry {
        let mut e = Entry::new(source);
        e.id = Some(id);
        e.outcome = outcome;
        e.text = (!text.is_empty()).then(|| text.to_string());
        e.inject_method = (!method.is_empty()).then(|| method.to_string());
        e
    }

    #[test]
    fn the_newest_dictation_with_text_is_chosen() {
        use Outcome::*;
        use Source::*;
        // (rows newest first, the id chosen)
        let table: Vec<(Vec<Entry>, Option<i64>)> = vec![
            (vec![], None),
            (vec![row(7, Mic, Ok, "Hello there.", "x11_type")], Some(7)),
            // Newest first: the first one that qualifies.
            (
                vec![
                    row(9, Mic, Ok, "Second.", "x11_type"),
                    row(8, Mic, Ok, "First.", "x11_type"),
                ],
                Some(9),
            ),
            // No speech, a failure, a cancelled recording, one under way, an interrupted
            // one: passed over.
            (
                vec![
                    row(14, Mic, NoSpeech, "", "none"),
                    row(13, Mic, Error, "", ""),
                    row(12, Mic, Error, "Half a sentence", ""),
                    row(11, Mic, Pending, "", ""),
                    row(10, Mic, Interrupted, "", ""),
                    row(5, Mic, Ok, "Typed earlier.", "x11_paste"),
                ],
                Some(5),
            ),
            // Blank text, a dictation cancelled while it was typed, a transcribed file.
            (
                vec![
                    row(4, Mic, Ok, "   ", "none"),
                    row(3, Mic, Ok, "Never mind.", "cancelled"),
                    row(2, File, Ok, "A file's words.", ""),
                    row(1, Mic, Ok, "The one.", "x11_type"),
                ],
                Some(1),
            ),
            // Not typed (the budget refused it, no window): chosen; the gate judges it again.
            (
                vec![
                    row(21, Mic, Ok, "Too long for its audio.", "none"),
                    row(20, Mic, Ok, "Typed.", "x11_type"),
                ],
                Some(21),
            ),
            // Nothing qualifies.
            (
                vec![
                    row(31, Mic, NoSpeech, "", "none"),
                    row(30, File, Ok, "A file.", ""),
                ],
                None,
            ),
        ];
        for (rows, want) in table {
            let ids: Vec<_> = rows.iter().map(|e| e.id).collect();
            assert_eq!(last_dictation(&rows), want, "rows {ids:?}");
        }
    }

    #[test]
    fn an_empty_history_says_what_to_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let history = History::open(&dir.path().join("h.sqlite3")).expect("history");
        let why = find(&history).expect_err("nothing to type");
        assert!(why.starts_with("no dictation to type again"), "{why}");
        assert!(why.contains("dictum history"), "{why}");
    }
}
