//! The pure parts of keeping the Wayland clipboard across a paste: which offered MIME types
//! are read, what a snapshot holds ([`WlSaved`]), and what the report says about the types
//! it could not keep. The bounds are X11's (`clip_x11/targets.rs`): at most
//! [`SNAPSHOT_LIMIT`] bytes and [`MAX_TARGETS`] types, and the same names that are requests
//! rather than data are skipped. Unlike X11 (where a snapshot over the bound leaves the
//! clipboard alone and types the text), what fits is kept and the rest named.

use super::super::clip_x11::targets::{is_data, MAX_TARGETS, SNAPSHOT_LIMIT};

/// Why one offered type was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// It would have taken the snapshot past [`SNAPSHOT_LIMIT`].
    OverLimit,
    /// Past the first [`MAX_TARGETS`] types.
    TooMany,
    /// The owner did not send it (all of it) in time: nothing for a second, or the whole
    /// snapshot's time was up.
    TimedOut,
    /// The owner's pipe failed, or the type could not be asked for.
    Failed,
}

/// Everything the clipboard offered, as its owner sent it: each MIME type with its bytes, in
/// the owner's order, and the types left out with why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WlSaved {
    pub(crate) items: Vec<(String, Vec<u8>)>,
    pub(crate) dropped: Vec<(String, Why)>,
}

impl WlSaved {
    /// The MIME types kept, in the owner's order.
    pub fn types(&self) -> Vec<&str> {
        self.items.iter().map(|(m, _)| m.as_str()).collect()
    }

    /// The bytes kept for `mime`.
    pub fn bytes(&self, mime: &str) -> Option<&[u8]> {
        self.items
            .iter()
            .find(|(m, _)| m == mime)
            .map(|(_, d)| d.as_slice())
    }

    /// All types' bytes together.
    pub fn total(&self) -> usize {
        self.items.iter().map(|(_, d)| d.len()).sum()
    }

    /// What the report says when types were left out: None when everything was kept.
    pub fn dropped_note(&self) -> Option<String> {
        (!self.dropped.is_empty()).then(|| {
            format!(
                "the previous clipboard was restored without {}",
                self.dropped_list()
            )
        })
    }

    /// The types left out, each with why ("image/png (over 32 MiB in all), ...").
    pub(crate) fn dropped_list(&self) -> String {
        let mut parts: Vec<String> = self
            .dropped
            .iter()
            .filter(|(_, why)| *why != Why::TooMany)
            .map(|(mime, why)| match why {
                Why::OverLimit => format!("{mime} (over {} MiB in all)", SNAPSHOT_LIMIT >> 20),
                Why::TimedOut => format!("{mime} (not sent in time)"),
                _ => format!("{mime} (could not be read)"),
            })
            .collect();
        let many = self
            .dropped
            .iter()
            .filter(|(_, why)| *why == Why::TooMany)
            .count();
        if many > 0 {
            parts.push(format!("{many} more types (over {MAX_TARGETS})"));
        }
        parts.join(", ")
    }
}

/// The offered types worth reading: the data ones, each once, in the owner's order, at most
/// [`MAX_TARGETS`]; the rest as [`Why::TooMany`].
pub(crate) fn data_types(offered: &[String]) -> (Vec<String>, Vec<(String, Why)>) {
    let mut kept: Vec<String> = Vec::new();
    let mut dropped = Vec::new();
    for name in offered {
        if !is_data(name) || kept.contains(name) || dropped.iter().any(|(d, _)| d == name) {
            continue;
        }
        if kept.len() == MAX_TARGETS {
            dropped.push((name.clone(), Why::TooMany));
        } else {
            kept.push(name.clone());
        }
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn data_types_skip_requests_and_repeats_and_stop_at_the_count_bound() {
        let offered = names(&[
            "image/png",
            "TARGETS",
            "text/html",
            "",
            "image/png",
            "SAVE_TARGETS",
            "text/plain;charset=utf-8",
            "x-kde-passwordManagerHint",
        ]);
        let (kept, dropped) = data_types(&offered);
        assert_eq!(
            kept,
            names(&[
                "image/png",
                "text/html",
                "text/plain;charset=utf-8",
                "x-kde-passwordManagerHint"
            ])
        );
        assert!(dropped.is_empty());
        let many: Vec<String> = (0..100).map(|i| format!("app/t{i}")).collect();
        let (kept, dropped) = data_types(&many);
        assert_eq!(kept.len(), MAX_TARGETS);
        assert_eq!(kept[0], "app/t0", "the owner's first ones");
        assert_eq!(dropped.len(), 100 - MAX_TARGETS);
        assert!(dropped.iter().all(|(_, w)| *w == Why::TooMany));
    }

    #[test]
    fn the_note_names_what_was_left_out_and_why() {
        let mut saved = WlSaved {
            items: vec![("text/html".into(), b"<p>x</p>".to_vec())],
            dropped: vec![],
        };
        assert_eq!(saved.dropped_note(), None);
        assert_eq!(saved.types(), ["text/html"]);
        assert_eq!(saved.bytes("text/html"), Some(&b"<p>x</p>"[..]));
        assert_eq!(saved.bytes("image/png"), None);
        assert_eq!(saved.total(), 8);
        saved.dropped = vec![
            ("image/png".into(), Why::OverLimit),
            ("app/slow".into(), Why::TimedOut),
            ("app/a".into(), Why::TooMany),
            ("app/b".into(), Why::TooMany),
            ("app/broken".into(), Why::Failed),
        ];
        assert_eq!(
            saved.dropped_note().as_deref(),
            Some(
                "the previous clipboard was restored without image/png (over 32 MiB in all), \
                 app/slow (not sent in time), app/broken (could not be read), \
                 2 more types (over 64)"
            )
        );
    }
}
