import { describe, expect, it } from 'vitest';
import { needsMore, visibleWindow } from '../../src/lib/virtual';

describe('virtual list window', () => {
  it('renders only the rows in view plus overscan', () => {
    const w = visibleWindow(0, 520, 52, 10_000, 5);
    expect(w).toEqual({ start: 0, end: 15, offset: 0, height: 520_000 });
    const mid = visibleWindow(52 * 5000 + 10, 520, 52, 10_000, 5);
    expect(mid.start).toBe(4995);
    expect(mid.end).toBe(5016);
    expect(mid.offset).toBe(4995 * 52);
  });
  it('clamps past the end and handles empty lists', () => {
    const w = visibleWindow(1e9, 520, 52, 100, 0);
    expect(w.end).toBe(100);
    expect(w.start).toBe(90);
    expect(visibleWindow(0, 500, 52, 0)).toEqual({ start: 0, end: 0, offset: 0, height: 0 });
  });
  it('asks for the next page near the end only when there is one', () => {
    const w = visibleWindow(52 * 150, 520, 52, 200, 6);
    expect(needsMore(w, 200, true)).toBe(true);
    expect(needsMore(w, 200, false)).toBe(false);
    expect(needsMore(visibleWindow(0, 520, 52, 200), 200, true)).toBe(false);
  });
});
