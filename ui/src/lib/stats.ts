// Stats buckets → the column arrays uPlot draws (x in seconds, gaps as null).

import type { Stats } from '../bindings/Stats';
import type { StatsBucket } from '../bindings/StatsBucket';

export type Series = (number | null)[];

export interface StageSeries {
  x: number[];
  series: { label: string; values: Series; color: string; dash?: number[] }[];
}

const COLORS = { stt: '#2f6fde', llm: '#c2410c', inject: '#15803d', total: '#6b21a8' };

/** Bucket midpoints in seconds (uPlot's time axis). */
export function bucketX(b: StatsBucket[]): number[] {
  return b.map((x) => (x.start_ms + x.end_ms) / 2000);
}

export function stageSeries(stats: Stats): StageSeries {
  const b = stats.buckets;
  const series: StageSeries['series'] = [];
  for (const stage of ['stt', 'llm', 'inject', 'total'] as const) {
    series.push({ label: `${stage} p50`, values: b.map((x) => x[stage].p50), color: COLORS[stage] });
    series.push({ label: `${stage} p95`, values: b.map((x) => x[stage].p95), color: COLORS[stage], dash: [6, 4] });
  }
  return { x: bucketX(b), series };
}

export function tokensSeries(stats: Stats): StageSeries {
  return {
    x: bucketX(stats.buckets),
    series: [{ label: 'tokens/s (median)', values: stats.buckets.map((b) => b.tokens_per_sec), color: '#0f766e' }],
  };
}

export function countSeries(stats: Stats): StageSeries {
  const b = stats.buckets;
  return {
    x: bucketX(b),
    series: [
      { label: 'LLM reloads', values: b.map((x) => x.reloads), color: '#b91c1c' },
      { label: 'no speech', values: b.map((x) => x.no_speech), color: '#64748b' },
      { label: 'LLM rejected', values: b.map((x) => x.llm_rejected), color: '#ca8a04' },
      { label: 'errors', values: b.map((x) => x.errors), color: '#7f1d1d', dash: [4, 3] },
    ],
  };
}

/** [from_ms, to_ms) for "last N days" ending now; N = 0 means everything. */
export function rangeFor(days: number, now: number): { from_ms: number | null; to_ms: number | null } {
  if (days <= 0) return { from_ms: null, to_ms: null };
  return { from_ms: now - days * 86_400_000, to_ms: now + 1 };
}

/** The x range (seconds) the charts span: the buckets' own [start, end], padded to at least a
 *  day. uPlot's automatic range around a single point spans years (one day of history drew an
 *  axis from 2027 to 2029). */
export function xRange(stats: Stats): [number, number] | null {
  const b = stats.buckets;
  if (b.length === 0) return null;
  let lo = Math.min(...b.map((x) => x.start_ms)) / 1000;
  let hi = Math.max(...b.map((x) => x.end_ms)) / 1000;
  const minSpan = 86_400;
  if (hi - lo < minSpan) {
    const mid = (lo + hi) / 2;
    lo = mid - minSpan / 2;
    hi = mid + minSpan / 2;
  }
  return [lo, hi];
}

/** Whether any series has a value to draw (not all null). */
export function hasValues(s: StageSeries): boolean {
  return s.series.some((x) => x.values.some((v) => v != null));
}
