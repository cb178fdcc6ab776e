//! A file transcription's timed segments in its row (`segments`, migration 0017): written
//! once by the row writer ([`RowUpdate::Segments`](super::row::RowUpdate::Segments)), read
//! back for its subtitles (`dictum history --export talk.srt`).

use super::History;
use crate::subtitles::Segment;
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value};

/// `[{"start_ms":0,"end_ms":2480,"text":" Hello"}, …]`.
pub(super) fn to_json(segments: &[Segment]) -> String {
    Value::Array(
        segments
            .iter()
            .map(|s| json!({"start_ms": s.start_ms, "end_ms": s.end_ms, "text": s.text}))
            .collect(),
    )
    .to_string()
}

fn from_json(text: &str) -> Option<Vec<Segment>> {
    let items: Vec<Value> = serde_json::from_str(text).ok()?;
    items
        .iter()
        .map(|v| {
            Some(Segment {
                start_ms: v.get("start_ms")?.as_u64()?,
                end_ms: v.get("end_ms")?.as_u64()?,
                text: v.get("text")?.as_str()?.to_string(),
            })
        })
        .collect()
}

impl History {
    /// Row `id`'s timed segments: None for a row without them (a dictation, a file stored
    /// before they were kept); an unreadable column is an error that says so.
    pub fn segments(&self, id: i64) -> Result<Option<Vec<Segment>>> {
        let stored: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT segments FROM dictations WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some(text) = stored.flatten() else {
            return Ok(None);
        };
        from_json(&text).map(Some).ok_or_else(|| Error::Store {
            path: self.path.clone(),
            reason: format!("entry {id}: its stored segments are not readable"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_round_trip_through_their_json() {
        let segs = vec![
            Segment {
                start_ms: 0,
                end_ms: 2_480,
                text: " And so, my fellow \"Americans\"".into(),
            },
            Segment {
                start_ms: 2_480,
                end_ms: 61_000_123,
                text: " ask not. ".into(),
            },
        ];
        assert_eq!(from_json(&to_json(&segs)), Some(segs));
        assert_eq!(from_json("[]"), Some(vec![]));
        assert_eq!(from_json("[{\"start_ms\":1}]"), None);
        assert_eq!(from_json("not json"), None);
    }
}
