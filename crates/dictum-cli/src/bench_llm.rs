//! `dictum bench llm`: Dictum's LLM stage (client-side wall time of `Cleaner::clean`: prompt,
//! request, parse, guard) against the same JSON body POSTed by a separate plain
//! `reqwest::Client` to the same server (built by the same `dictum_engine::net` policy: no
//! proxy for loopback, same-origin redirects, 1 MiB answers), interleaved (order alternating) after warm-up; plus
//! the guard's verdicts on every sentence. With `--guard-table`, no server: the guard alone
//! over its table of cases ([`guard_table`]).

use dictum_engine::config::Config;
use dictum_engine::llm::{Cleaner, LlmOutcome};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

fn pct(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let idx = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
    v[idx.min(v.len() - 1)]
}

async fn direct(
    client: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
) -> anyhow::Result<f64> {
    let t = Instant::now();
    let resp = client.post(url).json(body).send().await?;
    let status = resp.status();
    let bytes = dictum_engine::net::read_capped(resp, dictum_engine::net::MAX_BODY)
        .await
        .map_err(|e| match e {
            Ok(e) => anyhow::Error::from(e),
            Err(e) => anyhow::Error::from(e),
        })?;
    let _: serde_json::Value = serde_json::from_slice(&bytes)?;
    anyhow::ensure!(status.is_success(), "direct request: HTTP {status}");
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

pub fn run(config: &Config, sentences: &[String], rounds: usize) -> anyhow::Result<String> {
    anyhow::ensure!(!sentences.is_empty(), "no sentences to clean");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cleaner = Cleaner::new(&config.llm, &config.stt.vocabulary)?;
    let plain = dictum_engine::llm::client_for(&config.llm, std::time::Duration::from_secs(300))?;
    rt.block_on(async {
        let warm = cleaner.warm_up().await;
        anyhow::ensure!(warm.ok, "warm-up failed: {:?}", warm.warnings);
        // Warm the plain client's connection too.
        let (url, body) = cleaner.request_for(&sentences[0]);
        direct(&plain, &url, &body).await?;

        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let mut diffs = Vec::new();
        let mut reloads = 0;
        let mut verdicts: Vec<(String, LlmOutcome, Option<String>, String)> = Vec::new();
        for round in 0..rounds {
            for (i, s) in sentences.iter().enumerate() {
                let (url, body) = cleaner.request_for(s);
                let dictum_first = (i + round) % 2 == 0;
                let mut d_ms = 0.0;
                if !dictum_first {
                    d_ms = direct(&plain, &url, &body).await?;
                }
                let t = Instant::now();
                let r = cleaner.clean(s).await;
                let c_ms = t.elapsed().as_secs_f64() * 1000.0;
                if dictum_first {
                    d_ms = direct(&plain, &url, &body).await?;
                }
                anyhow::ensure!(
                    r.outcome != LlmOutcome::Failed,
                    "cleanup failed: {:?}",
                    r.error
                );
                reloads += usize::from(r.reloaded);
                ours.push(c_ms);
                theirs.push(d_ms);
                diffs.push(c_ms - d_ms);
                if round == 0 {
                    verdicts.push((
                        s.clone(),
                        r.outcome,
                        r.reject_reason.clone(),
                        r.output.clone().unwrap_or_default(),
                    ));
                }
            }
        }

        let mut out = String::new();
        let _ = writeln!(
            out,
            "Backend `{}` at {}, model `{}`, num_ctx {}, temperature {}, seed {}, num_predict {} (0 = auto); \
             {} sentences x {rounds} rounds = {} interleaved pairs after warm-up; {reloads} reloads.\n",
            config.llm.backend.as_str(),
            config.llm.url,
            config.llm.model,
            config.llm.num_ctx,
            config.llm.temperature,
            config.llm.seed,
            config.llm.num_predict,
            sentences.len(),
            ours.len()
        );
        let _ = writeln!(out, "| | p50 ms | p95 ms | mean ms |");
        let _ = writeln!(out, "|---|---:|---:|---:|");
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        for (name, v) in [
            ("Dictum LLM stage (`Cleaner::clean`)", &ours),
            ("same body, plain reqwest POST", &theirs),
            ("per-pair difference (Dictum - direct)", &diffs),
        ] {
            let _ = writeln!(
                out,
                "| {name} | {:.1} | {:.1} | {:.1} |",
                pct(v, 50.0),
                pct(v, 95.0),
                mean(v)
            );
        }
        let _ = writeln!(
            out,
            "\nOverhead ratio: p50 {:.3}x, p95 {:.3}x; absolute p50 difference {:+.1} ms (target: <= 1.02x and <= 5 ms).\n",
            pct(&ours, 50.0) / pct(&theirs, 50.0),
            pct(&ours, 95.0) / pct(&theirs, 95.0),
            pct(&ours, 50.0) - pct(&theirs, 50.0),
        );

        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for (_, outcome, reason, _) in &verdicts {
            let key = match (outcome, reason) {
                (LlmOutcome::Rejected, Some(r)) => {
                    format!("rejected: {}", r.split(':').next().unwrap_or(r))
                }
                (o, _) => o.as_str().to_string(),
            };
            *counts.entry(key).or_default() += 1;
        }
        let _ = writeln!(out, "Guard verdicts over {} sentences:\n", verdicts.len());
        let _ = writeln!(out, "| verdict | count |\n|---|---:|");
        for (k, n) in &counts {
            let _ = writeln!(out, "| {k} | {n} |");
        }
        let _ = writeln!(out, "\n| dictated | model output | verdict |\n|---|---|---|");
        let cell = |s: &str| {
            let mut s = s.replace('|', "\\|").replace('\n', " ");
            if s.chars().count() > 90 {
                s = s.chars().take(90).collect::<String>() + "…";
            }
            s
        };
        for (s, outcome, reason, output) in &verdicts {
            let v = match reason {
                Some(r) => format!("{}: {}", outcome.as_str(), cell(r)),
                None => outcome.as_str().to_string(),
            };
            let _ = writeln!(out, "| {} | {} | {v} |", cell(s), cell(output));
        }
        Ok(out)
    })
}

/// `dictum bench llm --guard-table`: the guard over a table of cases (the built-in
/// `guard_cases.tsv` unless another is given): precision and recall (an accepted cleanup is a
/// positive) overall and per category, the rows it gets wrong, and its time per call (each
/// row judged `rounds` x 20 times; median and p95 of the per-row means).
pub fn guard_table(text: &str, rounds: usize) -> anyhow::Result<String> {
    use dictum_engine::llm::guard::{judge, table, Limits};
    let cases = table::parse(text).map_err(|e| anyhow::anyhow!("guard table: {e}"))?;
    anyhow::ensure!(!cases.is_empty(), "the guard table has no rows");
    let limits = Limits::default();
    let (all, per, misses) = table::score(&cases, &limits);
    let reps = rounds * 20;
    let mut us = Vec::with_capacity(cases.len());
    for c in &cases {
        let t = Instant::now();
        for _ in 0..reps {
            std::hint::black_box(judge(
                std::hint::black_box(&c.raw),
                std::hint::black_box(&c.output),
                &limits,
                c.terminal,
            ))
            .ok();
        }
        us.push(t.elapsed().as_secs_f64() * 1e6 / reps as f64);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Guard table: {} rows ({} accept, {} reject), each judged {reps} times. \
         Positive = accepted cleanup: precision = accepted rows that should be, recall = good \
         cleanups accepted.\n",
        all.rows(),
        all.true_accept + all.false_reject,
        all.true_reject + all.false_accept
    );
    let _ = writeln!(
        out,
        "| category | rows | precision | recall | false accepts | false rejects |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
    let total = "**all**".to_string();
    for (name, s) in per.iter().chain(std::iter::once((&total, &all))) {
        let _ = writeln!(
            out,
            "| {name} | {} | {:.3} | {:.3} | {} | {} |",
            s.rows(),
            s.precision(),
            s.recall(),
            s.false_accept,
            s.false_reject
        );
    }
    let mean = us.iter().sum::<f64>() / us.len() as f64;
    let _ = writeln!(
        out,
        "\nGuard time per call: median {:.1} µs, p95 {:.1} µs, max {:.1} µs, mean {:.1} µs.\n",
        pct(&us, 50.0),
        pct(&us, 95.0),
        pct(&us, 100.0),
        mean
    );
    if misses.is_empty() {
        let _ = writeln!(out, "Every row gets its expected verdict.");
    } else {
        let _ = writeln!(
            out,
            "| line | category | expected | guard said | transcript | output |\n|---:|---|---|---|---|---|"
        );
        let cell = |s: &str| s.replace('|', "\\|").replace('\n', "\\n");
        for m in &misses {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                m.case.line,
                m.case.category,
                if m.case.accept { "accept" } else { "reject" },
                cell(m.reason.as_deref().unwrap_or("accept")),
                cell(&m.case.raw),
                cell(&m.case.output)
            );
        }
    }
    Ok(out)
}
