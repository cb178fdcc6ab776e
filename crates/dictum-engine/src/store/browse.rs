//! What the history browser and the stats view ask of the history: keyset-paged, filtered,
//! searchable listing; counts; export as CSV / JSON / Markdown; and per-stage
//! percentiles over time. Every query pages newest-first through an index (see
//! `migrations/0005_history_browse.sql`; `tests/history_browse.rs` checks the plans).

use super::{entry, format_utc, fts_query, Entry, History};
use crate::Result;
use rusqlite::types::Value;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which entries. Every field is optional; they are ANDed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export, optional_fields)]
pub struct HistoryFilter {
    /// Full-text search over raw and final text (words ANDed, last word a prefix).
    pub search: Option<String>,
    /// Inclusive lower bound, unix ms.
    #[ts(optional, type = "number")]
    pub from_ms: Option<i64>,
    /// Exclusive upper bound, unix ms.
    #[ts(optional, type = "number")]
    pub to_ms: Option<i64>,
    /// Focused window class, exact.
    pub app_class: Option<String>,
    /// `ok`, `no_speech`, `error`, `interrupted`, `pending` (the dictation's outcome) or `llm_cleaned`,
    /// `llm_rejected`, `llm_failed` (the LLM stage's).
    pub outcome: Option<String>,
    /// `mic` (dictations) or `file` (transcribed files); absent: both.
    pub source: Option<String>,
}

/// Position after the last row of a page (newest-first order: created_at_ms, then id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Cursor {
    #[ts(type = "number")]
    pub created_at_ms: i64,
    #[ts(type = "number")]
    pub id: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export, optional_fields)]
pub struct PageRequest {
    pub filter: HistoryFilter,
    /// Rows per page (1–1000; 0 means 200).
    pub limit: u32,
    /// Rows strictly after this cursor; `None` = from the newest.
    pub before: Option<Cursor>,
}

/// One row of the list (the detail view loads the full [`Entry`]).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct EntrySummary {
    #[ts(type = "number")]
    pub id: i64,
    #[ts(type = "number")]
    pub created_at_ms: i64,
    pub outcome: String,
    pub llm_outcome: Option<String>,
    pub app_class: Option<String>,
    /// Final text (what was typed), else the raw text, cut to 200 characters.
    pub text: String,
    pub total_ms: Option<f64>,
    pub error: Option<String>,
    /// A dictation, or a transcribed file (its path, and the audio's length).
    pub source: super::Source,
    pub source_path: Option<String>,
    #[ts(type = "number | null")]
    pub audio_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct Page {
    pub entries: Vec<EntrySummary>,
    /// Cursor for the next page; `None` when this was the last.
    pub next: Option<Cursor>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum ExportFormat {
    Csv,
    Json,
    Markdown,
}

impl ExportFormat {
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "json",
            ExportFormat::Markdown => "md",
        }
    }
}

/// What to export: the listed ids, or (when `ids` is `None`) everything the filter matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export, optional_fields)]
pub struct ExportSelection {
    #[ts(optional, type = "Array<number>")]
    pub ids: Option<Vec<i64>>,
    pub filter: HistoryFilter,
}

/// How the stats view groups entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "by", rename_all = "lowercase")]
#[ts(export)]
pub enum Bucketing {
    /// Calendar days in the viewer's time zone (`tz_offset_min` east of UTC).
    Day { tz_offset_min: i32 },
    /// Consecutive runs of `size` entries, oldest first.
    Entries { size: u32 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct StatsRequest {
    #[ts(type = "number | null")]
    pub from_ms: Option<i64>,
    #[ts(type = "number | null")]
    pub to_ms: Option<i64>,
    pub bucketing: Bucketing,
}

/// p50 / p95 of one stage, milliseconds; `None` when no entry in the bucket ran it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct Pct {
    pub p50: Option<f64>,
    pub p95: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct StatsBucket {
    #[ts(type = "number")]
    pub start_ms: i64,
    #[ts(type = "number")]
    pub end_ms: i64,
    pub count: u32,
    /// Capture = recorded audio length (how long the key was held).
    pub capture: Pct,
    pub stt: Pct,
    pub llm: Pct,
    pub inject: Pct,
    pub total: Pct,
    /// Median LLM generation speed.
    pub tokens_per_sec: Option<f64>,
    /// LLM requests that found the model unloaded (llm_reloaded).
    pub reloads: u32,
    pub no_speech: u32,
    pub errors: u32,
    pub llm_rejected: u32,
    pub llm_failed: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct Stats {
    pub buckets: Vec<StatsBucket>,
    /// The whole range as one bucket.
    pub overall: StatsBucket,
}

/// WHERE clause (with leading " WHERE " or empty) and its parameters.
fn where_clause(f: &HistoryFilter, extra: &[(String, Vec<Value>)]) -> (String, Vec<Value>) {
    let mut parts: Vec<String> = Vec::new();
    let mut params: Vec<Value> = Vec::new();
    // `#` marks a parameter in the fragments below; each becomes `?N` in order.
    let mut push = |sql: &str, vals: Vec<Value>| {
        let mut sql = sql.to_string();
        for v in vals {
            params.push(v);
            sql = sql.replacen('#', &format!("?{}", params.len()), 1);
        }
        parts.push(sql);
    };
    if let Some(q) = f.search.as_deref().map(fts_query).filter(|q| !q.is_empty()) {
        push(
            "d.id IN (SELECT rowid FROM dictations_fts WHERE dictations_fts MATCH #)",
            vec![q.into()],
        );
    }
    if let Some(from) = f.from_ms {
        push("d.created_at_ms >= #", vec![from.into()]);
    }
    if let Some(to) = f.to_ms {
        push("d.created_at_ms < #", vec![to.into()]);
    }
    if let Some(app) = f.app_class.as_deref().filter(|a| !a.is_empty()) {
        push("d.app_class = #", vec![app.to_string().into()]);
    }
    if let Some(o) = f.outcome.as_deref().filter(|o| !o.is_empty()) {
        match o.strip_prefix("llm_") {
            Some(llm) => push("d.llm_outcome = #", vec![llm.to_string().into()]),
            None => push("d.outcome = #", vec![o.to_string().into()]),
        }
    }
    if let Some(source) = f.source.as_deref().filter(|s| !s.is_empty()) {
        push("d.source = #", vec![source.to_string().into()]);
    }
    for (sql, vals) in extra {
        push(sql, vals.clone());
    }
    if parts.is_empty() {
        (String::new(), params)
    } else {
        (format!(" WHERE {}", parts.join(" AND ")), params)
    }
}

fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

impl History {
    /// The SQL and parameters of a page query (exposed for the EXPLAIN QUERY PLAN test).
    pub fn page_sql(&self, req: &PageRequest) -> (String, Vec<Value>) {
        let limit = match req.limit {
            0 => 200,
            n => n.min(1000),
        };
        let extra = req
            .before
            .map(|c| {
                vec![(
                    "(d.created_at_ms, d.id) < (#, #)".to_string(),
                    vec![c.created_at_ms.into(), c.id.into()],
                )]
            })
            .unwrap_or_default();
        let (w, mut params) = where_clause(&req.filter, &extra);
        params.push(i64::from(limit).into());
        let sql = format!(
            "SELECT d.id, d.created_at_ms, d.outcome, d.llm_outcome, d.app_class, \
             substr(coalesce(nullif(d.text, ''), d.raw_text, ''), 1, 201), d.total_ms, d.error, \
             d.source, d.source_path, d.audio_ms \
             FROM dictations d{w} ORDER BY d.created_at_ms DESC, d.id DESC LIMIT ?{}",
            params.len()
        );
        (sql, params)
    }

    /// One page of the list, newest first.
    pub fn page(&self, req: &PageRequest) -> Result<Page> {
        let (sql, params) = self.page_sql(req);
        let limit = match req.limit {
            0 => 200,
            n => n.min(1000),
        } as usize;
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params), |r| {
                let text: String = r.get(5)?;
                Ok(EntrySummary {
                    id: r.get(0)?,
                    created_at_ms: r.get(1)?,
                    outcome: r.get(2)?,
                    llm_outcome: r.get(3)?,
                    app_class: r.get(4)?,
                    text: cut(&text, 200),
                    total_ms: r.get(6)?,
                    error: r.get(7)?,
                    source: if r.get::<_, String>(8)? == "mic" {
                        super::Source::Mic
                    } else {
                        super::Source::File
                    },
                    source_path: r.get(9)?,
                    audio_ms: r.get(10)?,
                })
            })
            .map_err(|e| self.err(e))?;
        let mut entries = Vec::with_capacity(limit);
        for row in rows {
            entries.push(row.map_err(|e| self.err(e))?);
        }
        let next = (entries.len() == limit)
            .then(|| entries.last())
            .flatten()
            .map(|e| Cursor {
                created_at_ms: e.created_at_ms,
                id: e.id,
            });
        Ok(Page { entries, next })
    }

    /// How many entries match.
    pub fn count(&self, filter: &HistoryFilter) -> Result<u64> {
        let (w, params) = where_clause(filter, &[]);
        let sql = format!("SELECT count(*) FROM dictations d{w}");
        self.conn
            .query_row(&sql, rusqlite::params_from_iter(params), |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }

    /// App classes present in the history, for the filter menu.
    pub fn app_classes(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT app_class FROM dictations WHERE app_class IS NOT NULL ORDER BY app_class",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Full entries of a selection, newest first.
    pub fn select(&self, sel: &ExportSelection) -> Result<Vec<Entry>> {
        let cols = entry::COLUMNS
            .iter()
            .map(|c| format!("d.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let (w, params) = match &sel.ids {
            Some(ids) => {
                let list = ids
                    .iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                (format!(" WHERE d.id IN ({list})"), Vec::new())
            }
            None => where_clause(&sel.filter, &[]),
        };
        let sql = format!(
            "SELECT d.id, {cols} FROM dictations d{w} ORDER BY d.created_at_ms DESC, d.id DESC"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params), Entry::from_row)
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// The selection as a document in `format`; returns (text, number of entries).
    pub fn export(&self, sel: &ExportSelection, format: ExportFormat) -> Result<(String, usize)> {
        let entries = self.select(sel)?;
        let n = entries.len();
        Ok((render_export(&entries, format)?, n))
    }

    /// Stage percentiles and counts per bucket (see [`Bucketing`]).
    pub fn stats(&self, req: &StatsRequest) -> Result<Stats> {
        let filter = HistoryFilter {
            from_ms: req.from_ms,
            to_ms: req.to_ms,
            ..Default::default()
        };
        let (w, params) = where_clause(&filter, &[]);
        let sql = format!(
            "SELECT d.created_at_ms, d.outcome, d.audio_ms, d.stt_ms, d.llm_ms, d.inject_ms, d.total_ms, \
             d.llm_tokens_per_sec, d.llm_reloaded, d.llm_outcome FROM dictations d{w} \
             ORDER BY d.created_at_ms, d.id"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params), |r| {
                Ok(StatRow {
                    at: r.get(0)?,
                    outcome: r.get(1)?,
                    capture: r.get::<_, Option<i64>>(2)?.map(|v| v as f64),
                    stt: r.get(3)?,
                    llm: r.get(4)?,
                    inject: r.get(5)?,
                    total: r.get(6)?,
                    tps: r.get(7)?,
                    reloaded: r.get::<_, Option<bool>>(8)?.unwrap_or(false),
                    llm_outcome: r.get(9)?,
                })
            })
            .map_err(|e| self.err(e))?;
        let rows = rows
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(aggregate(&rows, req.bucketing))
    }
}

struct StatRow {
    at: i64,
    outcome: String,
    capture: Option<f64>,
    stt: Option<f64>,
    llm: Option<f64>,
    inject: Option<f64>,
    total: Option<f64>,
    tps: Option<f64>,
    reloaded: bool,
    llm_outcome: Option<String>,
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn pct(rows: &[StatRow], f: impl Fn(&StatRow) -> Option<f64>) -> Pct {
    let mut v: Vec<f64> = rows
        .iter()
        .filter_map(f)
        .filter(|x| x.is_finite())
        .collect();
    v.sort_by(f64::total_cmp);
    Pct {
        p50: percentile(&v, 50.0),
        p95: percentile(&v, 95.0),
    }
}

fn bucket(rows: &[StatRow], start_ms: i64, end_ms: i64) -> StatsBucket {
    let count_if = |f: &dyn Fn(&StatRow) -> bool| rows.iter().filter(|r| f(r)).count() as u32;
    StatsBucket {
        start_ms,
        end_ms,
        count: rows.len() as u32,
        capture: pct(rows, |r| r.capture),
        stt: pct(rows, |r| r.stt),
        llm: pct(rows, |r| r.llm),
        inject: pct(rows, |r| r.inject),
        total: pct(rows, |r| r.total),
        tokens_per_sec: pct(rows, |r| r.tps).p50,
        reloads: count_if(&|r| r.reloaded),
        no_speech: count_if(&|r| r.outcome == "no_speech"),
        errors: count_if(&|r| r.outcome == "error"),
        llm_rejected: count_if(&|r| r.llm_outcome.as_deref() == Some("rejected")),
        llm_failed: count_if(&|r| r.llm_outcome.as_deref() == Some("failed")),
    }
}

fn aggregate(rows: &[StatRow], by: Bucketing) -> Stats {
    let span = |rs: &[StatRow]| {
        (
            rs.first().map_or(0, |r| r.at),
            rs.last().map_or(0, |r| r.at + 1),
        )
    };
    let mut buckets = Vec::new();
    match by {
        Bucketing::Entries { size } => {
            for chunk in rows.chunks(size.max(1) as usize) {
                let (s, e) = span(chunk);
                buckets.push(bucket(chunk, s, e));
            }
        }
        Bucketing::Day { tz_offset_min } => {
            let off = i64::from(tz_offset_min) * 60_000;
            let day_of = |at: i64| (at + off).div_euclid(86_400_000);
            let mut i = 0;
            while i < rows.len() {
                let day = day_of(rows[i].at);
                let j = rows[i..]
                    .iter()
                    .position(|r| day_of(r.at) != day)
                    .map_or(rows.len(), |k| i + k);
                let start = day * 86_400_000 - off;
                buckets.push(bucket(&rows[i..j], start, start + 86_400_000));
                i = j;
            }
        }
    }
    let (s, e) = span(rows);
    Stats {
        buckets,
        overall: bucket(rows, s, e),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A text cell a spreadsheet will not run: one starting with `=`, `+`, `-`, `@`, a tab or a
/// carriage return is a formula (or becomes one) in Excel, LibreOffice and Google Sheets
/// (`=HYPERLINK(...)`, `=cmd|...`), so it gets a leading `'` (OWASP's CSV injection rule).
/// Dictated or LLM text, window classes and error messages are all untrusted here.
fn csv_text(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        csv_field(&format!("'{s}"))
    } else {
        csv_field(s)
    }
}

fn md_cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

fn num(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1}")).unwrap_or_default()
}

/// Renders entries as CSV (RFC 4180), JSON (an array of full entries) or a Markdown table.
pub fn render_export(entries: &[Entry], format: ExportFormat) -> Result<String> {
    let mut out = String::new();
    match format {
        ExportFormat::Json => {
            out = serde_json::to_string_pretty(entries).map_err(|e| crate::Error::Store {
                path: "export".into(),
                reason: e.to_string(),
            })?;
            out.push('\n');
        }
        ExportFormat::Csv => {
            out.push_str("id,created_at,app_class,outcome,llm_outcome,raw_text,text,audio_ms,stt_ms,llm_ms,inject_ms,total_ms,llm_tokens_per_sec,error\r\n");
            for e in entries {
                let text = |v: Option<&str>| csv_text(v.unwrap_or_default());
                // Numbers and the timestamp are Dictum's own: written as they are (a negative
                // number stays a number).
                let line = [
                    csv_field(&e.id.map(|i| i.to_string()).unwrap_or_default()),
                    csv_field(&format_utc(e.created_at_ms)),
                    text(e.app_class.as_deref()),
                    text(Some(e.outcome.as_str())),
                    text(e.llm_outcome.as_deref()),
                    text(e.raw_text.as_deref()),
                    text(e.text.as_deref()),
                    csv_field(&e.audio_ms.map(|v| v.to_string()).unwrap_or_default()),
                    csv_field(&num(e.stt_ms)),
                    csv_field(&num(e.llm_ms)),
                    csv_field(&num(e.inject_ms)),
                    csv_field(&num(e.total_ms)),
                    csv_field(&num(e.llm_tokens_per_sec)),
                    text(e.error.as_deref()),
                ];
                out.push_str(&line.join(","));
                out.push_str("\r\n");
            }
        }
        ExportFormat::Markdown => {
            out.push_str("# Dictum history\n\n");
            out.push_str("| time (UTC) | app | outcome | text | total ms |\n");
            out.push_str("|---|---|---|---|---:|\n");
            for e in entries {
                let outcome = match e.llm_outcome.as_deref() {
                    Some(l) if l != "disabled" => format!("{} (llm {l})", e.outcome.as_str()),
                    _ => e.outcome.as_str().to_string(),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    &format_utc(e.created_at_ms)[..19].replace('T', " "),
                    md_cell(e.app_class.as_deref().unwrap_or("")),
                    outcome,
                    md_cell(e.text.as_deref().or(e.raw_text.as_deref()).unwrap_or("")),
                    num(e.total_ms)
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(50.0));
        assert_eq!(percentile(&v, 95.0), Some(95.0));
        assert_eq!(percentile(&[7.0], 95.0), Some(7.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn where_clause_numbers_parameters_in_order() {
        let f = HistoryFilter {
            search: Some("hello wor".into()),
            from_ms: Some(1),
            to_ms: Some(2),
            app_class: Some("kitty".into()),
            outcome: Some("llm_rejected".into()),
            source: Some("file".into()),
        };
        let (w, p) = where_clause(&f, &[]);
        assert!(
            w.contains("MATCH ?1") && w.contains(">= ?2") && w.contains("< ?3"),
            "{w}"
        );
        assert!(
            w.contains("app_class = ?4") && w.contains("llm_outcome = ?5"),
            "{w}"
        );
        assert!(w.contains("d.source = ?6"), "{w}");
        assert_eq!(p.len(), 6);
        assert_eq!(p[4], Value::Text("rejected".into()));
        assert_eq!(p[5], Value::Text("file".into()));
        assert_eq!(where_clause(&HistoryFilter::default(), &[]).0, "");
    }

    #[test]
    fn csv_and_markdown_escape() {
        let mut e = Entry::new(super::super::Source::Mic);
        e.id = Some(3);
        e.text = Some("a, \"b\"\nc | d".into());
        let csv = render_export(std::slice::from_ref(&e), ExportFormat::Csv).expect("csv");
        assert!(csv.contains("\"a, \"\"b\"\"\nc | d\""), "{csv}");
        let md = render_export(&[e], ExportFormat::Markdown).expect("md");
        assert!(md.contains("a, \"b\" c \\| d"), "{md}");
    }

    /// Cells a spreadsheet would run as formulas get a leading `'` in every text column;
    /// plain text, numbers (a negative one included) and the timestamp are left as they are.
    #[test]
    fn csv_text_cells_cannot_be_formulas() {
        let mut e = Entry::new(super::super::Source::Mic);
        e.id = Some(7);
        e.text = Some("=HYPERLINK(\"http://x\")".into());
        e.raw_text = Some("+1 and more".into());
        e.app_class = Some("@evil".into());
        e.llm_outcome = Some("-2+3".into());
        e.error = Some("\tcmd".into());
        e.total_ms = Some(-12.5);
        e.stt_ms = Some(40.0);
        let csv = render_export(std::slice::from_ref(&e), ExportFormat::Csv).expect("csv");
        let row = csv.lines().nth(1).expect("a row");
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[0], "7");
        assert_eq!(cells[2], "'@evil");
        assert_eq!(cells[4], "'-2+3");
        assert_eq!(cells[5], "'+1 and more");
        assert_eq!(cells[6], "\"'=HYPERLINK(\"\"http://x\"\")\"");
        assert_eq!(cells[8], "40.0");
        assert_eq!(cells[11], "-12.5", "a number is not text");
        assert_eq!(cells[13], "'\tcmd");
        for c in ['=', '+', '-', '@', '\t', '\r'] {
            assert_eq!(
                csv_text(&format!("{c}x")).trim_matches('"'),
                format!("'{c}x")
            );
        }
        assert_eq!(csv_text("fine - text = ok"), "fine - text = ok");
        assert_eq!(csv_text(""), "");
    }

    #[test]
    fn day_buckets_follow_the_time_zone() {
        let row = |at: i64| StatRow {
            at,
            outcome: "ok".into(),
            capture: None,
            stt: Some(at as f64),
            llm: None,
            inject: None,
            total: None,
            tps: None,
            reloaded: false,
            llm_outcome: None,
        };
        // 23:30 UTC and 00:30 UTC next day: two UTC days, one day at UTC-2.
        let rows = [row(84_600_000), row(86_400_000 + 1_800_000)];
        let utc = aggregate(&rows, Bucketing::Day { tz_offset_min: 0 });
        assert_eq!(utc.buckets.len(), 2);
        let west = aggregate(
            &rows,
            Bucketing::Day {
                tz_offset_min: -120,
            },
        );
        assert_eq!(west.buckets.len(), 1);
        assert_eq!(west.buckets[0].start_ms, 7_200_000);
        let by2 = aggregate(&rows, Bucketing::Entries { size: 1 });
        assert_eq!(by2.buckets.len(), 2);
        assert_eq!(by2.overall.count, 2);
        assert_eq!(by2.overall.stt.p95, Some(88_200_000.0));
    }
}
