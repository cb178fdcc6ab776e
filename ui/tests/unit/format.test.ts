import { describe, expect, it } from 'vitest';
import { formatBytes, formatMs, outcomeLabel, progressPct, splitList } from '../../src/lib/format';

describe('format', () => {
  it('milliseconds pick a readable unit', () => {
    expect(formatMs(null)).toBe('—');
    expect(formatMs(4.26)).toBe('4.3 ms');
    expect(formatMs(312.4)).toBe('312 ms');
    expect(formatMs(1530)).toBe('1.53 s');
    expect(formatMs(12_400)).toBe('12.4 s');
    expect(formatMs(125_000)).toBe('2 min 5 s');
    expect(formatMs(Number.NaN)).toBe('—');
  });
  it('bytes in binary units', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(43_550_778)).toBe('41.5 MiB');
    expect(formatBytes(1_624_555_275)).toBe('1.5 GiB');
    expect(formatBytes(undefined)).toBe('—');
  });
  it('progress is clamped and unknown without a total', () => {
    expect(progressPct(50, 200)).toBe(25);
    expect(progressPct(300, 200)).toBe(100);
    expect(progressPct(10, null)).toBeNull();
    expect(progressPct(10, 0)).toBeNull();
  });
  it('outcome labels mention the LLM verdict', () => {
    expect(outcomeLabel('ok', 'rejected')).toBe('OK · LLM rejected');
    expect(outcomeLabel('no_speech', null)).toBe('No speech');
    expect(outcomeLabel('ok', 'disabled')).toBe('OK');
  });
  it('a list typed in one field: commas and/or lines, trimmed, no empties', () => {
    expect(splitList('XTerm, kitty,Alacritty ,  foot')).toEqual(['XTerm', 'kitty', 'Alacritty', 'foot']);
    expect(splitList('XTerm\nkitty\r\n\n, foot,\n')).toEqual(['XTerm', 'kitty', 'foot']);
    expect(splitList(' , \n ')).toEqual([]);
  });
});
