//! The history browser's and stats view's queries on a real SQLite file with 10,000 rows:
//! keyset paging, FTS search + filters, counts, delete, export, stats — each query's plan uses
//! an index (EXPLAIN QUERY PLAN), and the time per query is printed (run with --nocapture).

use dictum_engine::store::{
    demo, Bucketing, Cursor, ExportFormat, ExportSelection, History, HistoryFilter, PageRequest,
    StatsRequest,
};
use std::time::Instant;

const END: i64 = 1_795_000_000_000;
const N: usize = 10_000;

fn seeded() -> (tempfile::TempDir, History) {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("history.sqlite3")).expect("open");
    let mut rows = demo::entries(N, 60, END, 42);
    let t = Instant::now();
    history.insert_batch(&mut rows).expect("seed");
    println!(
        "seeded {N} rows in {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    (dir, history)
}

fn plan(history: &History, req: &PageRequest) -> String {
    let (sql, params) = history.page_sql(req);
    let conn = rusqlite::Connection::open(history.path()).expect("open");
    let mut stmt = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .expect("prepare");
    let rows = stmt
        .query_map(rusqlite::params_from_iter(params), |r| {
            r.get::<_, String>(3)
        })
        .expect("plan");
    rows.map(|r| r.expect("row"))
        .collect::<Vec<_>>()
        .join(" / ")
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    println!("{what}: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
    out
}

#[test]
fn paging_walks_every_row_once_newest_first() {
    let (_dir, history) = seeded();
    let mut req = PageRequest {
        limit: 500,
        ..Default::default()
    };
    let mut seen = Vec::new();
    let mut pages = 0;
    let t = Instant::now();
    loop {
        let page = history.page(&req).expect("page");
        pages += 1;
        seen.extend(page.entries.iter().map(|e| (e.created_at_ms, e.id)));
        match page.next {
            Some(c) => req.before = Some(c),
            None => break,
        }
    }
    println!(
        "all {N} rows in {pages} pages of 500: {:.2} ms per page",
        t.elapsed().as_secs_f64() * 1e3 / pages as f64
    );
    assert_eq!(seen.len(), N);
    assert!(
        seen.windows(2).all(|w| w[0] > w[1]),
        "not strictly newest first"
    );
    // A page deep in the history costs what the first one costs (keyset, not OFFSET).
    let deep = PageRequest {
        limit: 100,
        before: Some(Cursor {
            created_at_ms: seen[9_000].0,
            id: seen[9_000].1,
        }),
        ..Default::default()
    };
    let page = timed("page of 100 at row 9000", || {
        history.page(&deep).expect("page")
    });
    assert_eq!(page.entries.len(), 100);
    assert_eq!(page.entries[0].id, seen[9_001].1);
    let p = plan(&history, &deep);
    assert!(p.contains("USING INDEX dictations_created "), "{p}");
    assert!(
        !p.contains("TEMP B-TREE"),
        "sorts instead of walking the index: {p}"
    );
}

#[test]
fn search_and_filters_use_indexes_and_agree_with_counts() {
    let (_dir, history) = seeded();
    let cases = [
        HistoryFilter {
            search: Some("quarterly rep".into()),
            ..Default::default()
        },
        HistoryFilter {
            app_class: Some("kitty".into()),
            ..Default::default()
        },
        HistoryFilter {
            outcome: Some("no_speech".into()),
            ..Default::default()
        },
        HistoryFilter {
            outcome: Some("llm_rejected".into()),
            app_class: Some("slack".into()),
            ..Default::default()
        },
        HistoryFilter {
            from_ms: Some(END - 7 * 86_400_000),
            to_ms: Some(END - 86_400_000),
            ..Default::default()
        },
        HistoryFilter {
            search: Some("plants".into()),
            app_class: Some("firefox".into()),
            from_ms: Some(END - 30 * 86_400_000),
            ..Default::default()
        },
    ];
    let all = history
        .select(&ExportSelection::default())
        .expect("all rows");
    assert_eq!(all.len(), N);
    for f in cases {
        let req = PageRequest {
            filter: f.clone(),
            limit: 100,
            before: None,
        };
        let page = timed(&format!("page of 100, {f:?}"), || {
            history.page(&req).expect("page")
        });
        let count = timed("  count", || history.count(&f).expect("count"));
        // The same rows by brute force over every entry.
        let want: Vec<i64> = all
            .iter()
            .filter(|e| {
                let text = format!(
                    "{} {}",
                    e.raw_text.as_deref().unwrap_or(""),
                    e.text.as_deref().unwrap_or("")
                )
                .to_lowercase();
                f.search.as_deref().is_none_or(|s| {
                    let words: Vec<&str> = s.split_whitespace().collect();
                    words.iter().enumerate().all(|(i, w)| {
                        if i + 1 == words.len() {
                            text.split(|c: char| !c.is_alphanumeric() && c != '\'')
                                .any(|t| t.starts_with(w))
                        } else {
                            text.split(|c: char| !c.is_alphanumeric() && c != '\'')
                                .any(|t| t == *w)
                        }
                    })
                }) && f
                    .app_class
                    .as_deref()
                    .is_none_or(|a| e.app_class.as_deref() == Some(a))
                    && f.from_ms.is_none_or(|t| e.created_at_ms >= t)
                    && f.to_ms.is_none_or(|t| e.created_at_ms < t)
                    && f.outcome
                        .as_deref()
                        .is_none_or(|o| match o.strip_prefix("llm_") {
                            Some(l) => e.llm_outcome.as_deref() == Some(l),
                            None => e.outcome.as_str() == o,
                        })
            })
            .map(|e| e.id.expect("id"))
            .collect();
        assert!(!want.is_empty(), "{f:?} matches nothing: a vacuous case");
        assert_eq!(count as usize, want.len(), "{f:?}");
        let got: Vec<i64> = page.entries.iter().map(|e| e.id).collect();
        assert_eq!(
            got,
            want.iter().take(100).copied().collect::<Vec<_>>(),
            "{f:?}"
        );
        let p = plan(&history, &req);
        println!("  plan: {p}");
        assert!(
            !p.split(" / ").any(|step| step == "SCAN d"),
            "full table scan for {f:?}: {p}"
        );
        if f.app_class.is_some() && f.search.is_none() && f.outcome.is_none() {
            assert!(p.contains("dictations_app_created"), "{p}");
        }
        if f.outcome.as_deref() == Some("no_speech") {
            assert!(p.contains("dictations_outcome_created"), "{p}");
        }
        if f.search.is_some() {
            assert!(p.contains("VIRTUAL TABLE INDEX"), "FTS not used: {p}");
        } else {
            assert!(
                !p.contains("TEMP B-TREE"),
                "sorts instead of walking an index: {p}"
            );
        }
    }
}

#[test]
fn delete_and_export_selection_and_all() {
    let (_dir, history) = seeded();
    let page = history
        .page(&PageRequest {
            limit: 3,
            ..Default::default()
        })
        .expect("page");
    let ids: Vec<i64> = page.entries.iter().map(|e| e.id).collect();
    for format in [
        ExportFormat::Csv,
        ExportFormat::Json,
        ExportFormat::Markdown,
    ] {
        let (text, n) = history
            .export(
                &ExportSelection {
                    ids: Some(ids.clone()),
                    ..Default::default()
                },
                format,
            )
            .expect("export");
        assert_eq!(n, 3);
        match format {
            ExportFormat::Csv => assert_eq!(text.lines().count(), 4, "{text}"),
            ExportFormat::Json => {
                let v: serde_json::Value = serde_json::from_str(&text).expect("json");
                let got: Vec<i64> = v
                    .as_array()
                    .expect("array")
                    .iter()
                    .map(|e| e["id"].as_i64().expect("id"))
                    .collect();
                assert_eq!(got, ids);
            }
            ExportFormat::Markdown => {
                assert_eq!(text.lines().filter(|l| l.starts_with("| ")).count(), 4)
            }
        }
    }
    let (csv, n) = timed("export all 10000 as CSV", || {
        history
            .export(&ExportSelection::default(), ExportFormat::Csv)
            .expect("export all")
    });
    assert_eq!(n, N);
    assert!(csv.starts_with("id,created_at,app_class,outcome"));
    let (_, n) = timed("export all 10000 as JSON", || {
        history
            .export(&ExportSelection::default(), ExportFormat::Json)
            .expect("export all")
    });
    assert_eq!(n, N);

    assert_eq!(history.delete(&ids).expect("delete"), 3);
    assert_eq!(
        history.count(&HistoryFilter::default()).expect("count"),
        (N - 3) as u64
    );
    assert!(history.get(ids[0]).expect("get").is_none());
    // FTS follows deletes (trigger): a search never returns a deleted row.
    let hits = history
        .select(&ExportSelection {
            filter: HistoryFilter {
                search: Some(
                    page.entries[0]
                        .text
                        .split_whitespace()
                        .last()
                        .unwrap_or("x")
                        .trim_end_matches('.')
                        .into(),
                ),
                ..Default::default()
            },
            ..Default::default()
        })
        .expect("search");
    assert!(hits.iter().all(|e| !ids.contains(&e.id.expect("id"))));
    let apps = history.app_classes().expect("apps");
    assert_eq!(apps.len(), 6, "{apps:?}");
}

#[test]
fn stats_per_day_and_per_n_entries() {
    let (_dir, history) = seeded();
    let stats = timed("stats per day over 10000 rows", || {
        history
            .stats(&StatsRequest {
                from_ms: None,
                to_ms: None,
                bucketing: Bucketing::Day { tz_offset_min: 60 },
            })
            .expect("stats")
    });
    assert!(
        (60..=61).contains(&stats.buckets.len()),
        "{}",
        stats.buckets.len()
    );
    assert_eq!(
        stats
            .buckets
            .iter()
            .map(|b| b.count as usize)
            .sum::<usize>(),
        N
    );
    let o = &stats.overall;
    assert_eq!(o.count as usize, N);
    let (p50, p95) = (o.stt.p50.expect("p50"), o.stt.p95.expect("p95"));
    assert!(p50 > 90.0 && p50 < p95 && p95 < 400.0, "{p50} {p95}");
    assert!(o.llm.p95 >= o.llm.p50);
    assert!(o.tokens_per_sec.is_some_and(|t| (55.0..85.0).contains(&t)));
    assert!(
        o.reloads > 0 && o.no_speech > 0 && o.llm_rejected > 0 && o.errors > 0,
        "{o:?}"
    );
    // Counts agree with the filters.
    assert_eq!(
        o.no_speech as u64,
        history
            .count(&HistoryFilter {
                outcome: Some("no_speech".into()),
                ..Default::default()
            })
            .expect("count")
    );
    assert!(stats
        .buckets
        .windows(2)
        .all(|w| w[0].end_ms <= w[1].start_ms));
    let by_n = timed("stats per 250 entries, last 30 days", || {
        history
            .stats(&StatsRequest {
                from_ms: Some(END - 30 * 86_400_000),
                to_ms: Some(END),
                bucketing: Bucketing::Entries { size: 250 },
            })
            .expect("stats")
    });
    assert!(by_n.buckets.iter().rev().skip(1).all(|b| b.count == 250));
    assert!((4_900..5_100).contains(&(by_n.overall.count as usize)));
}
