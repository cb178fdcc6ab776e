//! `dictum history --correct ID ["text"] [--accept N,M|all]`: learning from corrections
//! (issue 30 item 3). Stores the correction on the row, prints the numbered proposals of
//! `dictum_engine::learn` and writes only the accepted ones into the config file.

use crate::context::{load_config, open_history};
use dictum_engine::learn::{self, Proposal, Written};
use dictum_engine::paths;
use dictum_engine::store::row::{RowUpdate, RowWriter};
use dictum_engine::store::Corrected;
use serde_json::json;
use std::process::ExitCode;

pub fn run(correct: &[String], accept: Option<&str>, as_json: bool) -> anyhow::Result<ExitCode> {
    let (id, text) = match correct {
        [id, rest @ ..] => (id, rest.first()),
        [] => anyhow::bail!("--correct wants an entry id (see the ids with `dictum history`)"),
    };
    let id: i64 = id.trim().trim_start_matches('#').parse().map_err(|_| {
        anyhow::anyhow!(
            "--correct wants an entry id first, e.g. `dictum history --correct 12 \"the right text\"`; got \"{id}\""
        )
    })?;
    let history = open_history()?;
    let entry = history
        .get(id)?
        .ok_or_else(|| anyhow::anyhow!("no entry #{id} (see the ids with `dictum history`)"))?;
    let raw_text = entry
        .raw_text
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "entry #{id} has no transcript to correct (nothing was heard or it failed); pick another with `dictum history`"
            )
        })?;
    let correction = match text {
        Some(text) => {
            RowWriter::new(&history).update(id, RowUpdate::Corrected { text })?;
            text.clone()
        }
        None => history.correction(id)?.ok_or_else(|| {
            anyhow::anyhow!(
                "entry #{id} has not been corrected yet; give the text: `dictum history --correct {id} \"the right text\"`"
            )
        })?,
    };
    let config = load_config()?;
    let config_path = paths::config_file()?;
    let current = Corrected {
        id,
        raw_text,
        correction,
    };
    let all = history.corrections()?;
    let proposals = learn::propose(&current, &all, &config);
    let accepted = match accept {
        Some(list) => parse_accept(list, proposals.len())?,
        None => Vec::new(),
    };
    let written = if accepted.is_empty() {
        None
    } else {
        let chosen: Vec<&Proposal> = accepted.iter().map(|n| &proposals[n - 1]).collect();
        Some(learn::write_accepted(&config_path, &chosen)?)
    };
    if as_json {
        let list: Vec<serde_json::Value> = proposals
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut v = serde_json::to_value(p).unwrap_or_else(|_| json!({}));
                v["n"] = json!(i + 1);
                v
            })
            .collect();
        let out = json!({
            "id": id,
            "raw_text": current.raw_text,
            "correction": current.correction,
            "proposals": list,
            "accepted": accepted,
            "written": written,
            "config": config_path.display().to_string(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("#{id} corrected");
    println!("  whisper wrote: {}", current.raw_text);
    println!("  corrected:     {}", current.correction);
    if proposals.is_empty() {
        println!(
            "Nothing to learn from it yet: a replacement is proposed once whisper makes the same \
             mistake in {} corrected dictations, and new words only when they look like names \
             or terms (a capital letter, or letters with digits).",
            learn::MIN_SEEN
        );
    } else {
        println!("What Dictum could learn (nothing is learned until you accept it):");
        for (i, p) in proposals.iter().enumerate() {
            println!("  {}. {p}", i + 1);
        }
    }
    match &written {
        Some(w) => report_written(w, &config_path),
        None if !proposals.is_empty() => println!(
            "To learn from it: dictum history --correct {id} --accept 1{} (or --accept all)",
            if proposals.len() > 1 { ",2" } else { "" }
        ),
        None => {}
    }
    Ok(ExitCode::SUCCESS)
}

fn report_written(w: &Written, config_path: &std::path::Path) {
    if w.vocabulary.is_empty() && w.replacements.is_empty() {
        println!("Nothing new to write: the accepted proposals are already in your config.");
        return;
    }
    for word in &w.vocabulary {
        println!("learned: \"{word}\" added to [stt] vocabulary");
    }
    for (from, to) in &w.replacements {
        println!("learned: [[replace]] \"{from}\" -> \"{to}\"");
    }
    println!(
        "written to {}{} (a running `dictum run` picks it up by itself)",
        config_path.display(),
        if w.rewritten {
            "; it could not be edited in place, so it was rewritten whole and your own comments in it were not kept"
        } else {
            ""
        }
    );
}

/// `1,3` or `all` → 1-based proposal numbers, each once, in order.
fn parse_accept(list: &str, count: usize) -> anyhow::Result<Vec<usize>> {
    if list.trim().eq_ignore_ascii_case("all") {
        return Ok((1..=count).collect());
    }
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n: usize = part.parse().map_err(|_| {
            anyhow::anyhow!(
                "--accept wants proposal numbers as printed (e.g. 1,3) or `all`; got \"{part}\""
            )
        })?;
        if n == 0 || n > count {
            anyhow::bail!(
                "there is no proposal {n}: this correction has {count} (numbered as printed without --accept); nothing was written"
            );
        }
        if !out.contains(&n) {
            out.push(n);
        }
    }
    if out.is_empty() {
        anyhow::bail!("--accept wants proposal numbers as printed (e.g. 1,3) or `all`");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_accept;

    #[test]
    fn accept_lists() {
        assert_eq!(parse_accept("all", 3).expect("all"), vec![1, 2, 3]);
        assert_eq!(parse_accept("ALL", 0).expect("none"), Vec::<usize>::new());
        assert_eq!(parse_accept("2, 1,2", 3).expect("list"), vec![2, 1]);
        assert!(parse_accept("4", 3).is_err());
        assert!(parse_accept("0", 3).is_err());
        assert!(parse_accept("x", 3).is_err());
        assert!(parse_accept(",", 3).is_err());
    }
}
