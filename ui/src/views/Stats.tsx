// Stats from the same SQLite history the CLI writes: p50/p95 per stage over time, tokens/s,
// and the counts that explain slow or empty dictations.

import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Stats } from '../bindings/Stats';
import { Plot } from '../components/Plot';
import { errorText, ipc } from '../ipc';
import { formatMs } from '../lib/format';
import { countSeries, hasValues, rangeFor, stageSeries, tokensSeries, xRange } from '../lib/stats';

export function StatsView() {
  const [days, setDays] = useState(30);
  const [by, setBy] = useState<'day' | 'entries'>('day');
  const [stats, setStats] = useState<Stats | null>(null);
  const [err, setErr] = useState<string | null>(null);
  useEffect(() => {
    const { from_ms, to_ms } = rangeFor(days, Date.now());
    const bucketing = by === 'day' ? { by: 'day' as const, tz_offset_min: -new Date().getTimezoneOffset() } : { by: 'entries' as const, size: 100 };
    ipc.stats({ from_ms, to_ms, bucketing }).then((s) => {
      setStats(s);
      ipc.log(`stats: rendered ${s.buckets.length} buckets of ${s.overall.count} entries`).catch(() => undefined);
    }, (e) => setErr(errorText(e)));
  }, [days, by]);
  const stages = useMemo(() => (stats ? stageSeries(stats) : null), [stats]);
  const tokens = useMemo(() => (stats ? tokensSeries(stats) : null), [stats]);
  const counts = useMemo(() => (stats ? countSeries(stats) : null), [stats]);
  const range = useMemo(() => (stats ? xRange(stats) : null), [stats]);
  if (err) return <p class="error">{err}</p>;
  const o = stats?.overall;
  return (
    <div data-testid="stats">
      <div class="toolbar">
        <select value={days} onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))} data-testid="range">
          <option value={7}>Last 7 days</option><option value={30}>Last 30 days</option><option value={90}>Last 90 days</option><option value={0}>Everything</option>
        </select>
        <select value={by} onChange={(e) => setBy((e.target as HTMLSelectElement).value as 'day' | 'entries')} data-testid="bucketing">
          <option value="day">per day</option><option value="entries">per 100 dictations</option>
        </select>
      </div>
      {o && (
        <div class="cards" data-testid="summary">
          <div>Dictations<b data-testid="total-count">{o.count.toLocaleString('en-US')}</b></div>
          <div>Total p50 / p95<b>{formatMs(o.total.p50)} / {formatMs(o.total.p95)}</b></div>
          <div>Speech-to-text p50<b>{formatMs(o.stt.p50)}</b></div>
          <div>LLM p50<b>{formatMs(o.llm.p50)}</b></div>
          <div>Tokens/s (median)<b>{o.tokens_per_sec != null ? o.tokens_per_sec.toFixed(1) : '—'}</b></div>
          <div>LLM reloads<b data-testid="reloads">{o.reloads}</b></div>
          <div>No speech<b>{o.no_speech}</b></div>
          <div>LLM rejected<b>{o.llm_rejected}</b></div>
        </div>
      )}
      {!stats && <p class="muted">Reading the history…</p>}
      {stats && stats.buckets.length === 0 && (
        <p class="empty-state" data-testid="stats-empty">No dictations in this range yet. Hold the hotkey and speak: each dictation adds
          its timings here, and the charts appear after the first one.</p>
      )}
      {stats && stats.buckets.length > 0 && (
        <>
          {stats.buckets.length === 1 && (
            <p class="muted" data-testid="stats-one-bucket">One {by === 'day' ? 'day' : 'group of dictations'} so far: the charts draw lines from the second {by === 'day' ? 'day' : 'group'} on.</p>
          )}
          {stages && <Plot title="Per-stage time, p50 (solid) and p95 (dashed)" data={stages} unit="ms" testid="plot-stages" xRange={range} />}
          {tokens && hasValues(tokens)
            ? <Plot title="LLM generation speed" data={tokens} unit="tokens/s" testid="plot-tokens" xRange={range} />
            : <p class="empty-state" data-testid="tokens-empty">LLM generation speed appears here once dictations are cleaned up by a local LLM
              (Settings → LLM cleanup). None of the {o?.count ?? 0} dictation{o?.count === 1 ? '' : 's'} in this range used it.</p>}
          {counts && <Plot title="Reloads, no-speech and rejected dictations" data={counts} unit="count" testid="plot-counts" xRange={range} />}
        </>
      )}
    </div>
  );
}
