//! The encoder's priming at the start of an AAC track in an MP4/M4A file, from the track's
//! edit list (`moov/trak/edts/elst`), which symphonia 0.5 does not read.
//!
//! An AAC encoder starts with samples of its own (1024 from ffmpeg's and FDK's, 2112 from
//! Apple's); the file's edit list says where the real audio starts (`media_time`, in the
//! track's timescale), and players skip up to there. Without it every time comes out late by
//! the priming: 64 ms at 16 kHz, which subtitles and the kept audio showed. ffmpeg, the
//! reference decoder, skips it; so does Dictum now.
//!
//! Reads only box headers and the boxes on the way (moov at most [`MAX_MOOV`]): a hostile
//! file can make it give up (no skip), never allocate more or loop.

use std::io::{Read, Seek, SeekFrom};

/// The largest `moov` box read (an hour of AAC has a sample table of ~250 kB).
pub const MAX_MOOV: u64 = 32 << 20;
/// The largest priming believed, in seconds (Apple's is 2112 samples; anything near a second
/// is a file's real edit, not priming, and left alone).
const MAX_PRIMING_S: u64 = 1;

/// Frames (at `rate`) to drop at the start of the sound track of the MP4 read by `file`,
/// when its edit list says so; None when it has no edit list, is not an MP4, or any box is
/// odd.
pub fn priming_frames<R: Read + Seek>(file: &mut R, rate: u32) -> Option<u64> {
    let moov = read_top_level(file, b"moov")?;
    let (media_time, timescale) = children(&moov)
        .filter(|(kind, _)| kind == b"trak")
        .find_map(|(_, trak)| sound_edit(trak))?;
    if media_time == 0 || timescale == 0 {
        return None;
    }
    let frames = u128::from(media_time) * u128::from(rate) / u128::from(timescale);
    let frames = u64::try_from(frames).ok()?;
    (frames <= MAX_PRIMING_S * u64::from(rate)).then_some(frames)
}

/// The body of the first top-level box of `kind` (bounded by [`MAX_MOOV`]).
fn read_top_level<R: Read + Seek>(file: &mut R, kind: &[u8; 4]) -> Option<Vec<u8>> {
    let end = file.seek(SeekFrom::End(0)).ok()?;
    let mut at = 0u64;
    // A file's top level has a handful of boxes; a thousand is a loop or garbage.
    for _ in 0..1000 {
        if at + 8 > end {
            return None;
        }
        file.seek(SeekFrom::Start(at)).ok()?;
        let mut head = [0u8; 8];
        file.read_exact(&mut head).ok()?;
        let size32 = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let (size, header) = match size32 {
            0 => (end - at, 8),
            1 => {
                let mut large = [0u8; 8];
                file.read_exact(&mut large).ok()?;
                (u64::from_be_bytes(large), 16)
            }
            n => (u64::from(n), 8),
        };
        if size < header || at.checked_add(size)? > end {
            return None;
        }
        if &head[4..8] == kind {
            let body = size - header;
            if body > MAX_MOOV {
                return None;
            }
            let mut buf = vec![0u8; usize::try_from(body).ok()?];
            file.read_exact(&mut buf).ok()?;
            return Some(buf);
        }
        // The file's first box names its brand: not an MP4 when it is not `ftyp`.
        if at == 0 && &head[4..8] != b"ftyp" {
            return None;
        }
        at += size;
    }
    None
}

/// The boxes inside `body`: (type, body), stopping at the first malformed one.
fn children(body: &[u8]) -> impl Iterator<Item = ([u8; 4], &[u8])> {
    let mut rest = body;
    std::iter::from_fn(move || {
        if rest.len() < 8 {
            return None;
        }
        let size32 = u32::from_be_bytes(rest[0..4].try_into().ok()?);
        let kind: [u8; 4] = rest[4..8].try_into().ok()?;
        let (size, header) = match size32 {
            0 => (rest.len(), 8),
            1 => {
                let large = u64::from_be_bytes(rest.get(8..16)?.try_into().ok()?);
                (usize::try_from(large).ok()?, 16)
            }
            n => (usize::try_from(n).ok()?, 8),
        };
        if size < header || size > rest.len() {
            return None;
        }
        let inner = &rest[header..size];
        rest = &rest[size..];
        Some((kind, inner))
    })
}

fn child<'a>(body: &'a [u8], kind: &[u8; 4]) -> Option<&'a [u8]> {
    children(body).find(|(k, _)| k == kind).map(|(_, b)| b)
}

/// A `trak` that is sound (`mdia/hdlr` says `soun`): its first edit's media time and the
/// media's timescale (`mdia/mdhd`).
fn sound_edit(trak: &[u8]) -> Option<(u64, u32)> {
    let mdia = child(trak, b"mdia")?;
    let hdlr = child(mdia, b"hdlr")?;
    if hdlr.get(8..12)? != b"soun" {
        return None;
    }
    let mdhd = child(mdia, b"mdhd")?;
    let timescale = match mdhd.first()? {
        0 => u32::from_be_bytes(mdhd.get(12..16)?.try_into().ok()?),
        1 => u32::from_be_bytes(mdhd.get(20..24)?.try_into().ok()?),
        _ => return None,
    };
    let elst = child(child(trak, b"edts")?, b"elst")?;
    let version = *elst.first()?;
    let count = u32::from_be_bytes(elst.get(4..8)?.try_into().ok()?);
    let entry = if version == 1 { 20 } else { 12 };
    // The first edit that plays media (an empty edit, media time -1, delays the start
    // instead; that is not priming and is left alone).
    (0..count.min(16) as usize).find_map(|i| {
        let e = elst.get(8 + i * entry..8 + (i + 1) * entry)?;
        let media_time = if version == 1 {
            i64::from_be_bytes(e.get(8..16)?.try_into().ok()?)
        } else {
            i64::from(i32::from_be_bytes(e.get(4..8)?.try_into().ok()?))
        };
        u64::try_from(media_time).ok().map(|t| (t, timescale))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut b = ((body.len() + 8) as u32).to_be_bytes().to_vec();
        b.extend_from_slice(kind);
        b.extend_from_slice(body);
        b
    }

    fn trak(handler: &[u8; 4], timescale: u32, edits: &[(u32, i32)]) -> Vec<u8> {
        let mut hdlr = vec![0u8; 8];
        hdlr.extend_from_slice(handler);
        hdlr.extend_from_slice(&[0u8; 12]);
        let mut mdhd = vec![0u8; 12];
        mdhd.extend_from_slice(&timescale.to_be_bytes());
        mdhd.extend_from_slice(&[0u8; 8]);
        let mdia = [boxed(b"mdhd", &mdhd), boxed(b"hdlr", &hdlr)].concat();
        let mut elst = vec![0u8; 4];
        elst.extend_from_slice(&(edits.len() as u32).to_be_bytes());
        for (duration, media_time) in edits {
            elst.extend_from_slice(&duration.to_be_bytes());
            elst.extend_from_slice(&media_time.to_be_bytes());
            elst.extend_from_slice(&0x0001_0000u32.to_be_bytes());
        }
        let edts = boxed(b"edts", &boxed(b"elst", &elst));
        boxed(b"trak", &[edts, boxed(b"mdia", &mdia)].concat())
    }

    fn mp4(traks: &[Vec<u8>], moov_last: bool) -> Vec<u8> {
        let ftyp = boxed(b"ftyp", b"isomiso2mp41");
        let moov = boxed(b"moov", &traks.concat());
        let mdat = boxed(b"mdat", &[0u8; 64]);
        if moov_last {
            [ftyp, mdat, moov].concat()
        } else {
            [ftyp, moov, mdat].concat()
        }
    }

    #[test]
    fn the_sound_tracks_edit_gives_the_priming_at_the_decoders_rate() {
        // ffmpeg's AAC at 16 kHz: 1024 samples; the moov before or after the media.
        for last in [false, true] {
            let file = mp4(&[trak(b"soun", 16_000, &[(16_000, 1024)])], last);
            assert_eq!(priming_frames(&mut Cursor::new(file), 16_000), Some(1024));
        }
        // Apple's 2112 at 44.1 kHz, after a video track with an edit of its own, and behind
        // an empty edit (a delayed start: not priming).
        let file = mp4(
            &[
                trak(b"vide", 90_000, &[(1000, 3003)]),
                trak(b"soun", 44_100, &[(500, -1), (44_100, 2112)]),
            ],
            false,
        );
        assert_eq!(priming_frames(&mut Cursor::new(file), 44_100), Some(2112));
        // A timescale other than the rate is converted.
        let file = mp4(&[trak(b"soun", 48_000, &[(48_000, 2048)])], false);
        assert_eq!(priming_frames(&mut Cursor::new(file), 16_000), Some(682));
    }

    #[test]
    fn no_edit_an_odd_box_or_not_an_mp4_means_no_skip() {
        let none = |bytes: Vec<u8>| priming_frames(&mut Cursor::new(bytes), 16_000);
        assert_eq!(none(mp4(&[trak(b"soun", 16_000, &[])], false)), None);
        assert_eq!(
            none(mp4(&[trak(b"soun", 16_000, &[(100, 0)])], false)),
            None
        );
        assert_eq!(
            none(mp4(&[trak(b"vide", 16_000, &[(1, 1024)])], false)),
            None
        );
        // More than a second is an edit, not priming.
        assert_eq!(
            none(mp4(&[trak(b"soun", 16_000, &[(1, 40_000)])], false)),
            None
        );
        assert_eq!(none(b"RIFF\x24\0\0\0WAVEfmt ".to_vec()), None);
        assert_eq!(none(Vec::new()), None);
        // A box claiming more than the file, and a moov claiming a gigabyte.
        let mut bad = mp4(&[trak(b"soun", 16_000, &[(1, 1024)])], false);
        let moov_at = 20; // after the 20-byte ftyp
        bad[moov_at..moov_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(none(bad), None);
        let mut huge = boxed(b"ftyp", b"isom").to_vec();
        huge.extend_from_slice(&1u32.to_be_bytes());
        huge.extend_from_slice(b"moov");
        huge.extend_from_slice(&(1u64 << 30).to_be_bytes());
        assert_eq!(none(huge), None);
        // A truncated trak inside a good moov.
        let mut cut = mp4(&[trak(b"soun", 16_000, &[(1, 1024)])], true);
        cut.truncate(cut.len() - 10);
        assert_eq!(none(cut), None);
    }
}
