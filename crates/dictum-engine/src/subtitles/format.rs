//! Cues written as SubRip (`.srt`) and WebVTT (`.vtt`).
//!
//! SRT: numbered cues from 1, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, the lines, a blank line.
//! WebVTT: the `WEBVTT` header, a blank line, then `HH:MM:SS.mmm --> HH:MM:SS.mmm`, the lines,
//! a blank line; `&`, `<` and `>` escaped, since a parser reads them as markup. In both, `-->`
//! inside the text becomes `->` (a parser may take the line for a timing line), and no cue line
//! is empty (an empty line ends a cue).

use super::cue::Cue;

/// The cues as an SRT file.
pub fn to_srt(cues: &[Cue]) -> String {
    let mut out = String::new();
    for (i, cue) in cues.iter().enumerate() {
        out.push_str(&format!(
            "{}\n{} --> {}\n",
            i + 1,
            stamp(cue.start_ms, ','),
            stamp(cue.end_ms, ',')
        ));
        push_lines(&mut out, cue, |l| l.replace("-->", "->"));
        out.push('\n');
    }
    out
}

/// The cues as a WebVTT file.
pub fn to_vtt(cues: &[Cue]) -> String {
    let mut out = String::from("WEBVTT\n\n");
    for cue in cues {
        out.push_str(&format!(
            "{} --> {}\n",
            stamp(cue.start_ms, '.'),
            stamp(cue.end_ms, '.')
        ));
        push_lines(&mut out, cue, |l| {
            l.replace("-->", "->")
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        });
        out.push('\n');
    }
    out
}

fn push_lines(out: &mut String, cue: &Cue, escape: impl Fn(&str) -> String) {
    let mut any = false;
    for line in &cue.lines {
        let line: String = line.chars().filter(|c| !c.is_control()).collect();
        let line = escape(line.trim());
        if !line.is_empty() {
            out.push_str(&line);
            out.push('\n');
            any = true;
        }
    }
    if !any {
        // A cue without text still needs a line, or the blank line would end it early.
        out.push_str("…\n");
    }
}

/// `HH:MM:SS<sep>mmm`; hours grow past 99 for very long files.
fn stamp(ms: u64, sep: char) -> String {
    let (h, rest) = (ms / 3_600_000, ms % 3_600_000);
    let (m, rest) = (rest / 60_000, rest % 60_000);
    let (s, ms) = (rest / 1_000, rest % 1_000);
    format!("{h:02}:{m:02}:{s:02}{sep}{ms:03}")
}

#[cfg(test)]
mod tests {
    use super::stamp;

    #[test]
    fn stamps_carry_hours_minutes_and_milliseconds() {
        assert_eq!(stamp(0, ','), "00:00:00,000");
        assert_eq!(stamp(3_723_004, '.'), "01:02:03.004");
        assert_eq!(stamp(360_000_000, ','), "100:00:00,000");
    }
}
