// History browser: keyset pages of 200 newest-first rows, loaded as the list scrolls; only the
// rows in view are in the DOM. Search and filters run in SQLite (FTS5 + indexes).

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Cursor } from '../bindings/Cursor';
import type { Entry } from '../bindings/Entry';
import type { ExportFormat } from '../bindings/ExportFormat';
import { Correct } from '../components/Correct';
import { errorText, ipc } from '../ipc';
import { formatDateTime, formatMs, outcomeLabel } from '../lib/format';
import { EMPTY_FORM, exportSelection, OUTCOMES, rowPlace, SOURCES, toHistoryFilter, type FilterForm, type HistoryRow } from '../lib/filters';
import { canRetry } from '../lib/inject';
import { STAGE_LABEL, timingSegments } from '../lib/timing';
import { needsMore, visibleWindow } from '../lib/virtual';

const ROW = 52;
const PAGE = 200;

export function History() {
  const [form, setForm] = useState<FilterForm>(EMPTY_FORM);
  const [query, setQuery] = useState<FilterForm>(EMPTY_FORM);
  const [rows, setRows] = useState<HistoryRow[]>([]);
  const [next, setNext] = useState<Cursor | null>(null);
  const [count, setCount] = useState<number | null>(null);
  const [apps, setApps] = useState<string[]>([]);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [current, setCurrent] = useState<number | null>(null);
  const [scroll, setScroll] = useState({ top: 0, height: 600 });
  const [toast, setToast] = useState<string | null>(null);
  const [format, setFormat] = useState<ExportFormat>('csv');
  const [confirmAll, setConfirmAll] = useState(false);
  const loading = useRef(false);
  const generation = useRef(0);
  const listRef = useRef<HTMLDivElement>(null);
  const filter = useMemo(() => toHistoryFilter(query), [query]);

  // Debounce typing into the query.
  useEffect(() => {
    const t = setTimeout(() => setQuery(form), form.search === query.search ? 0 : 200);
    return () => clearTimeout(t);
  }, [form]);

  const load = async (reset: boolean) => {
    if (loading.current && !reset) return;
    loading.current = true;
    const gen = reset ? ++generation.current : generation.current;
    try {
      const page = await ipc.historyPage({ filter, limit: PAGE, before: reset ? undefined : next ?? undefined });
      if (gen !== generation.current) return;
      setRows((old) => (reset ? page.entries : [...old, ...page.entries]));
      setNext(page.next);
      if (reset) ipc.log(`history: rendered first page of ${page.entries.length} rows`).catch(() => undefined);
    } catch (e) {
      setToast(errorText(e));
    } finally {
      if (gen === generation.current) loading.current = false;
    }
  };

  useEffect(() => {
    listRef.current?.scrollTo(0, 0);
    setScroll((s) => ({ ...s, top: 0 }));
    setSelected(new Set());
    load(true);
    ipc.historyCount(filter).then(setCount, () => setCount(null));
  }, [filter]);
  useEffect(() => { ipc.historyApps().then(setApps, () => undefined); }, []);
  useEffect(() => {
    const el = listRef.current;
    if (!el) return;
    const measure = () => setScroll({ top: el.scrollTop, height: el.clientHeight });
    measure();
    window.addEventListener('resize', measure);
    return () => window.removeEventListener('resize', measure);
  }, []);

  const win = visibleWindow(scroll.top, scroll.height, ROW, rows.length);
  useEffect(() => {
    if (needsMore(win, rows.length, next !== null) && !loading.current) load(false);
  }, [win.end, rows.length, next]);

  const doExport = async (all: boolean) => {
    try {
      const r = await ipc.historyExport(exportSelection(selected, query, all), format);
      setToast(`Exported ${r.count} entries to ${r.path}`);
    } catch (e) {
      setToast(errorText(e));
    }
  };
  useEffect(() => {
    if (!toast) return;
    const t = setTimeout(() => setToast(null), 6000);
    return () => clearTimeout(t);
  }, [toast]);

  const deleteAll = async () => {
    setConfirmAll(false);
    try {
      const n = await ipc.historyDeleteAll();
      setRows([]);
      setNext(null);
      setSelected(new Set());
      setCurrent(null);
      setCount(0);
      setApps([]);
      setToast(`Deleted ${n.toLocaleString('en-US')} entries and their recordings`);
    } catch (e) {
      setToast(errorText(e));
    }
  };

  const removeRows = (ids: number[]) => {
    const gone = new Set(ids);
    setRows((r) => r.filter((e) => !gone.has(e.id)));
    setSelected((s) => new Set([...s].filter((id) => !gone.has(id))));
    setCount((c) => (c === null ? c : c - ids.length));
    if (current !== null && gone.has(current)) setCurrent(null);
  };

  const f = (k: keyof FilterForm) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  return (
    <div data-testid="history">
      <div class="toolbar">
        <input type="search" placeholder="Search what you said…" value={form.search} onInput={f('search')} data-testid="search" />
        <input type="date" value={form.from} onChange={f('from')} title="From" data-testid="from" />
        <input type="date" value={form.to} onChange={f('to')} title="To (inclusive)" data-testid="to" />
        <select value={form.app} onChange={f('app')} data-testid="app">
          <option value="">Any app</option>
          {apps.map((a) => <option key={a} value={a}>{a}</option>)}
        </select>
        <select value={form.source} onChange={f('source')} aria-label="Show dictations, files or both" title="Dictations or transcribed files" data-testid="source">
          {SOURCES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
        </select>
        <select value={form.outcome} onChange={f('outcome')} data-testid="outcome">
          {OUTCOMES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
        </select>
      </div>
      <div class="toolbar">
        <span class="muted" data-testid="count">{count === null ? '…' : `${count.toLocaleString('en-US')} entries`}{selected.size > 0 && ` · ${selected.size} selected`}</span>
        <span style="margin-left:auto" />
        <select value={format} onChange={(e) => setFormat((e.target as HTMLSelectElement).value as ExportFormat)} data-testid="export-format">
          <option value="csv">CSV</option><option value="json">JSON</option><option value="markdown">Markdown</option>
        </select>
        <button disabled={selected.size === 0} onClick={() => doExport(false)} data-testid="export-selected">Export selected</button>
        <button onClick={() => doExport(true)} data-testid="export-all">Export all matching</button>
        <button class="danger" disabled={selected.size === 0} data-testid="delete-selected" onClick={async () => {
          const ids = [...selected];
          try { await ipc.historyDelete(ids); removeRows(ids); } catch (e) { setToast(errorText(e)); }
        }}>Delete selected</button>
        <button class="danger" data-testid="delete-all" onClick={() => setConfirmAll(true)}>Delete all history…</button>
      </div>
      <div class="history">
        <div class="list" ref={listRef} data-testid="list" onScroll={(e) => {
          const el = e.currentTarget as HTMLDivElement;
          setScroll({ top: el.scrollTop, height: el.clientHeight });
        }}>
          <div style={{ height: `${win.height}px`, position: 'relative' }}>
            {rows.slice(win.start, win.end).map((r, i) => (
              <div key={r.id} class={`hrow${r.id === current ? ' sel' : ''}`} style={{ top: `${(win.start + i) * ROW}px`, height: `${ROW}px` }}
                onClick={() => setCurrent(r.id)} data-testid="row" data-id={r.id}>
                <input type="checkbox" checked={selected.has(r.id)} onClick={(e) => e.stopPropagation()} onChange={(e) => {
                  const s = new Set(selected);
                  if ((e.target as HTMLInputElement).checked) s.add(r.id); else s.delete(r.id);
                  setSelected(s);
                }} data-testid="row-check" />
                <div class="meta" data-source={r.source}>{formatDateTime(r.created_at_ms)}<span class="place" title={rowPlace(r).title}>{rowPlace(r).text}</span></div>
                <div>
                  <div class="text">{r.text || <span class="muted">{r.error ?? '(nothing said)'}</span>}</div>
                  <span class={`badge ${r.outcome === 'ok' ? (r.llm_outcome === 'rejected' || r.llm_outcome === 'failed' ? 'warn' : 'ok') : r.outcome === 'error' ? 'error' : ''}`}>{outcomeLabel(r.outcome, r.llm_outcome)}</span>
                </div>
                <div class="ms">{formatMs(r.total_ms)}</div>
              </div>
            ))}
          </div>
          {rows.length === 0 && count === 0 && <p class="muted" style="padding:12px">No entries match.</p>}
        </div>
        <Detail id={current} onDeleted={(id) => removeRows([id])} toast={setToast} />
      </div>
      {confirmAll && (
        <div class="modal-backdrop" data-testid="confirm-delete-all">
          <div class="modal" role="alertdialog" aria-modal="true" aria-labelledby="confirm-delete-all-title">
            <h3 id="confirm-delete-all-title">Delete all history?</h3>
            <p>Every dictation in the history, not only those the filter shows, and every kept recording will be deleted. This cannot be undone.</p>
            <div class="modal-actions">
              <button data-testid="confirm-cancel" onClick={() => setConfirmAll(false)}>Cancel</button>
              <button class="danger" data-testid="confirm-delete" onClick={deleteAll}>Delete all</button>
            </div>
          </div>
        </div>
      )}
      {toast && <div class="toast" data-testid="toast">{toast}</div>}
    </div>
  );
}

function Detail({ id, onDeleted, toast }: { id: number | null; onDeleted: (id: number) => void; toast: (s: string) => void }) {
  const [e, setE] = useState<Entry | null>(null);
  const [correcting, setCorrecting] = useState(false);
  useEffect(() => {
    setE(null);
    setCorrecting(false);
    if (id !== null) ipc.historyGet(id).then(setE, (x) => toast(errorText(x)));
  }, [id]);
  if (id === null) return <div class="detail muted">Select an entry to see what was said, what was typed, and where the time went.</div>;
  if (!e) return <div class="detail muted">Loading…</div>;
  const segs = timingSegments(e);
  const refusedText = (json: string): string => {
    try {
      return (JSON.parse(json) as { name: string; why: string }[]).map((r) => `"${r.name}" (${r.why})`).join('; ');
    } catch {
      return json;
    }
  };
  // Kept audio and no delivered text (queue full, failed transcription or typing, a crash):
  // it can be transcribed again (the command checks it too). A Wayland paste whose only
  // note is that it is unconfirmed was delivered: no Retry.
  const retryable = canRetry(e);
  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const t = document.createElement('textarea');
      t.value = text;
      document.body.appendChild(t);
      t.select();
      document.execCommand('copy');
      t.remove();
    }
    toast('Copied');
  };
  return (
    <div class="detail" data-testid="detail">
      <div class="muted">{formatDateTime(e.created_at_ms)} · {e.app_class ?? e.source_path ?? 'file'} · {e.model ?? ''} {e.device ?? ''}</div>
      <h2 style="margin-top:8px">{outcomeLabel(e.outcome, e.llm_outcome)}</h2>
      {e.error && <p class="error">{e.error}</p>}
      <div class="muted">Heard (raw)</div>
      <pre data-testid="raw">{e.raw_text || '—'}</pre>
      <div class="muted">{e.source === 'file' ? 'Text (final)' : 'Typed (final)'}{e.llm_reject_reason ? ` — LLM output rejected: ${e.llm_reject_reason}` : ''}</div>
      <pre data-testid="final">{e.text || '—'}</pre>
      {e.inject_error && <p class="muted" data-testid="inject-error">Typing: {e.inject_error}</p>}
      {e.context && <p class="muted" data-testid="context">Text around the cursor: {e.context}{e.context_ms != null ? ` (${formatMs(e.context_ms)})` : ''}</p>}
      {e.llm_context && <p class="muted" data-testid="llm-context">LLM context: {e.llm_context}</p>}
      {e.commands_refused && <p class="muted" data-testid="refused">Voice commands not done: {refusedText(e.commands_refused)}</p>}
      <div class="muted">Timing · total {formatMs(e.total_ms)}</div>
      <div class="tbar" data-testid="timing-bar">
        {segs.map((s) => <div key={s.stage} title={`${STAGE_LABEL[s.stage]}: ${formatMs(s.ms)}`} style={{ width: `${s.width}%`, background: `var(--${s.stage})` }} data-stage={s.stage} />)}
      </div>
      <div class="legend">
        {segs.map((s) => <span key={s.stage}><i style={{ background: `var(--${s.stage})` }} />{STAGE_LABEL[s.stage]} {formatMs(s.ms)}</span>)}
      </div>
      {e.llm_tokens_per_sec != null && <p class="muted">LLM {e.llm_model}: {e.llm_tokens_per_sec.toFixed(1)} tokens/s{e.llm_reloaded ? ' · model was reloaded' : ''}</p>}
      <div class="row" style="margin-top:14px">
        <button onClick={() => copy(e.text ?? '')} data-testid="copy">Copy</button>
        {e.source !== 'file' && <button onClick={() => ipc.historyReinject(e.id ?? 0).then(() => toast('Typed again'), (x) => toast(errorText(x)))} data-testid="reinject">Re-inject</button>}
        {retryable && <button title="Transcribe its kept audio again and type the text" data-testid="retry" onClick={() => ipc.historyRetry(e.id ?? 0).then(
          () => { toast('Retried and typed'); ipc.historyGet(e.id ?? 0).then(setE, () => {}); },
          (x) => toast(errorText(x)))}>Retry</button>}
        {!!e.raw_text?.trim() && !correcting && <button title="Write what it should have been; Dictum proposes what to learn from it"
          onClick={() => setCorrecting(true)} data-testid="correct-open">Correct…</button>}
        <button class="danger" data-testid="delete" onClick={async () => {
          try { await ipc.historyDelete([e.id ?? 0]); onDeleted(e.id ?? 0); } catch (x) { toast(errorText(x)); }
        }}>Delete</button>
      </div>
      {correcting && <Correct key={e.id} entry={e} toast={toast} onClose={() => setCorrecting(false)} />}
    </div>
  );
}
