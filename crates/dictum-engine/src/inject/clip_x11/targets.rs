//! The pure parts of keeping the X11 clipboard: which targets are data worth saving, the
//! size bound on what is kept, and how a large value is cut into INCR pieces.

use std::ops::Range;

/// The most a clipboard snapshot keeps, all targets together. A bigger clipboard (a large
/// image copied in several formats) is left alone: paste mode types the text instead.
pub(crate) const SNAPSHOT_LIMIT: usize = 32 << 20;

/// The most targets a snapshot fetches (an owner may list any number; real ones list a
/// dozen or two): the first ones, in the owner's order, are kept.
pub(crate) const MAX_TARGETS: usize = 64;

/// Targets that are requests to the owner rather than data (ICCCM §2.6.2 and the clipboard
/// manager's SAVE_TARGETS): never fetched, never served back.
const NOT_DATA: &[&str] = &[
    "TARGETS",
    "TIMESTAMP",
    "MULTIPLE",
    "SAVE_TARGETS",
    "DELETE",
    "INSERT_SELECTION",
    "INSERT_PROPERTY",
];

/// Whether a target named `name` holds data to save and serve back byte for byte.
pub(crate) fn is_data(name: &str) -> bool {
    !name.is_empty() && !NOT_DATA.contains(&name)
}

/// The targets worth fetching from a TARGETS answer: the data ones, each once, in the
/// owner's order, at most [`MAX_TARGETS`].
pub(crate) fn data_targets<T: Copy + PartialEq>(targets: &[(T, String)]) -> Vec<(T, String)> {
    let mut kept: Vec<(T, String)> = Vec::new();
    for (atom, name) in targets {
        if kept.len() == MAX_TARGETS {
            break;
        }
        if is_data(name) && !kept.iter().any(|(a, _)| a == atom) {
            kept.push((*atom, name.clone()));
        }
    }
    kept
}

/// The snapshot was bigger than [`SNAPSHOT_LIMIT`]: at least `.0` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooLarge(pub usize);

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the clipboard holds over {} MiB (at least {} MiB), too large to keep; it was left \
             alone and the text was typed instead",
            SNAPSHOT_LIMIT >> 20,
            self.0.div_ceil(1 << 20)
        )
    }
}

/// Bytes kept so far against a limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    limit: usize,
    used: usize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Budget {
        Budget { limit, used: 0 }
    }

    /// Whether `more` bytes would still fit (an INCR transfer announces its size first).
    pub(crate) fn check(&self, more: usize) -> Result<(), TooLarge> {
        let total = self.used.saturating_add(more);
        if total > self.limit {
            Err(TooLarge(total))
        } else {
            Ok(())
        }
    }

    /// Counts `n` more bytes kept; an error once over the limit.
    pub(crate) fn take(&mut self, n: usize) -> Result<(), TooLarge> {
        self.check(n)?;
        self.used += n;
        Ok(())
    }

    pub(crate) fn used(&self) -> usize {
        self.used
    }
}

/// Largest value sent in one ChangeProperty before switching to INCR, and the size of each
/// INCR piece: a quarter MiB (what GTK uses) or less when the server takes smaller
/// requests (`max_request_bytes`, less room for the request's own header), a multiple of 4
/// so 16- and 32-bit values are never cut inside an item.
pub(crate) fn piece_size(max_request_bytes: usize) -> usize {
    let room = max_request_bytes.saturating_sub(64);
    (room.min(256 << 10) & !3).max(4)
}

/// Whether a value of `len` bytes goes by INCR.
pub(crate) fn needs_incr(len: usize, max_request_bytes: usize) -> bool {
    len > piece_size(max_request_bytes)
}

/// The byte ranges of an INCR transfer of `len` bytes in pieces of `piece`, the closing
/// empty piece included (it tells the requestor the value is complete).
pub(crate) fn incr_pieces(len: usize, piece: usize) -> Vec<Range<usize>> {
    let piece = piece.max(1);
    let mut out: Vec<Range<usize>> = (0..len)
        .step_by(piece)
        .map(|at| at..(at + piece).min(len))
        .collect();
    out.push(len..len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_data_targets_are_fetched_each_once() {
        let offered: Vec<(u32, String)> = [
            (1, "TARGETS"),
            (2, "TIMESTAMP"),
            (3, "image/png"),
            (4, "MULTIPLE"),
            (5, "text/html"),
            (6, "SAVE_TARGETS"),
            (3, "image/png"),
            (7, "DELETE"),
            (8, "UTF8_STRING"),
            (9, "INSERT_SELECTION"),
            (0, ""),
        ]
        .iter()
        .map(|(a, n)| (*a, n.to_string()))
        .collect();
        let kept = data_targets(&offered);
        let kept: Vec<&str> = kept.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(kept, ["image/png", "text/html", "UTF8_STRING"]);
        assert!(is_data("text/plain;charset=utf-8"));
        let many: Vec<(u32, String)> = (0..1000).map(|i| (i, format!("t{i}"))).collect();
        let kept = data_targets(&many);
        assert_eq!(kept.len(), MAX_TARGETS);
        assert_eq!(
            kept.first().map(|(a, _)| *a),
            Some(0),
            "the owner's first ones"
        );
        assert!(!is_data("TARGETS"));
    }

    #[test]
    fn the_budget_stops_past_the_limit() {
        let mut b = Budget::new(100);
        assert_eq!(b.take(60), Ok(()));
        assert_eq!(b.check(40), Ok(()));
        assert_eq!(b.check(41), Err(TooLarge(101)));
        assert_eq!(b.take(41), Err(TooLarge(101)));
        assert_eq!(b.used(), 60, "a refused take counts nothing");
        assert_eq!(b.take(40), Ok(()));
        assert_eq!(b.take(1), Err(TooLarge(101)));
        assert_eq!(
            Budget::new(SNAPSHOT_LIMIT).check(usize::MAX),
            Err(TooLarge(usize::MAX))
        );
        let says = TooLarge(40 << 20).to_string();
        assert!(
            says.contains("over 32 MiB") && says.contains("40 MiB"),
            "{says}"
        );
        assert!(says.contains("typed instead"), "{says}");
    }

    #[test]
    fn incr_pieces_cover_the_value_and_end_empty() {
        assert_eq!(incr_pieces(10, 4), vec![0..4, 4..8, 8..10, 10..10]);
        assert_eq!(incr_pieces(8, 4), vec![0..4, 4..8, 8..8]);
        assert_eq!(incr_pieces(0, 4), vec![0..0]);
        let pieces = incr_pieces(1_000_003, piece_size(16 << 20));
        assert_eq!(pieces.len(), 5);
        assert!(pieces.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!(pieces.last(), Some(&(1_000_003..1_000_003)));
    }

    #[test]
    fn piece_size_fits_the_server_and_keeps_items_whole() {
        // BIG-REQUESTS (16 MiB): a quarter MiB.
        assert_eq!(piece_size(16 << 20), 256 << 10);
        // The core limit, 256 KiB: less the request's header, a multiple of 4.
        assert_eq!(piece_size(262_140), 262_076);
        assert_eq!(piece_size(1_001) % 4, 0);
        assert!(piece_size(1_001) <= 1_001 - 64);
        assert_eq!(piece_size(0), 4);
        assert!(!needs_incr(256 << 10, 16 << 20));
        assert!(needs_incr((256 << 10) + 1, 16 << 20));
    }
}
