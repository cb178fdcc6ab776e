import { describe, expect, it } from 'vitest';
import type { Stats } from '../../src/bindings/Stats';
import type { StatsBucket } from '../../src/bindings/StatsBucket';
import { countSeries, hasValues, rangeFor, stageSeries, tokensSeries, xRange } from '../../src/lib/stats';
import { orderChoices, speedText, type ModelChoice } from '../../src/lib/firstrun';
import { viewFromHash } from '../../src/App';

const pct = (p50: number | null, p95: number | null) => ({ p50, p95 });
const bucket = (start: number, stt: number | null): StatsBucket => ({
  start_ms: start, end_ms: start + 86_400_000, count: 3, capture: pct(1, 2), stt: pct(stt, stt === null ? null : stt * 2),
  llm: pct(null, null), inject: pct(5, 9), total: pct(300, 600), tokens_per_sec: stt === null ? null : 70,
  reloads: 1, no_speech: 0, errors: 0, llm_rejected: 2, llm_failed: 0,
});

describe('stats series', () => {
  const stats: Stats = { buckets: [bucket(0, 100), bucket(86_400_000, null)], overall: bucket(0, 100) };
  it('x is the bucket midpoint in seconds', () => {
    expect(stageSeries(stats).x).toEqual([43_200, 129_600]);
  });
  it('p50 and p95 per stage, gaps stay null', () => {
    const s = stageSeries(stats);
    expect(s.series.map((x) => x.label)).toEqual(['stt p50', 'stt p95', 'llm p50', 'llm p95', 'inject p50', 'inject p95', 'total p50', 'total p95']);
    expect(s.series[0].values).toEqual([100, null]);
    expect(s.series[1].values).toEqual([200, null]);
    expect(s.series[1].dash).toBeDefined();
  });
  it('tokens and counts', () => {
    expect(tokensSeries(stats).series[0].values).toEqual([70, null]);
    expect(countSeries(stats).series.find((x) => x.label === 'LLM rejected')?.values).toEqual([2, 2]);
  });
  it('ranges', () => {
    expect(rangeFor(0, 1000)).toEqual({ from_ms: null, to_ms: null });
    expect(rangeFor(1, 86_400_000)).toEqual({ from_ms: 0, to_ms: 86_400_001 });
  });
  it('views from the URL hash', () => {
    expect(viewFromHash('#history')).toBe('history');
    expect(viewFromHash('#/stats')).toBe('stats');
    expect(viewFromHash('')).toBe('settings');
    expect(viewFromHash('#nope')).toBe('settings');
  });
});

describe('stats with little history (issue 14)', () => {
  it('one day spans that day, not years', () => {
    const one: Stats = { buckets: [bucket(1_800_000_000_000, 100)], overall: bucket(0, 100) };
    const r = xRange(one);
    expect(r).not.toBeNull();
    const [lo, hi] = r as [number, number];
    expect(hi - lo).toBe(86_400);
    expect(lo).toBeLessThanOrEqual(1_800_000_000);
    expect(hi).toBeGreaterThanOrEqual(1_800_086_400);
  });
  it('several days span exactly their buckets', () => {
    const two: Stats = { buckets: [bucket(0, 100), bucket(86_400_000 * 3, 100)], overall: bucket(0, 100) };
    expect(xRange(two)).toEqual([0, 86_400 * 4]);
    expect(xRange({ buckets: [], overall: bucket(0, 100) })).toBeNull();
  });
  it('a chart with no values is not drawn', () => {
    const noLlm: Stats = { buckets: [bucket(0, null)], overall: bucket(0, null) };
    expect(hasValues(tokensSeries(noLlm))).toBe(false);
    expect(hasValues(tokensSeries({ buckets: [bucket(0, 70)], overall: bucket(0, 70) }))).toBe(true);
  });
});

describe('first-run window helpers', () => {
  it('speed text and order', () => {
    expect(speedText(0.25)).toBe('about 0.3 s per 10 s of speech');
    expect(speedText(3.4)).toBe('about 3 s per 10 s of speech');
    const m = (name: string, bytes: number, installed = false) => ({ name, exact_bytes: bytes, installed } as unknown as ModelChoice);
    expect(orderChoices([m('a', 3), m('b', 1), m('rec', 9), m('inst', 5, true)], 'rec').map((x) => x.name)).toEqual(['rec', 'inst', 'b', 'a']);
  });
  it('the welcome view has its own hash', () => {
    expect(viewFromHash('#welcome')).toBe('welcome');
  });
});
