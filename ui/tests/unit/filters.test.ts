import { describe, expect, it } from 'vitest';
import { EMPTY_FORM, exportSelection, localMidnight, toHistoryFilter } from '../../src/lib/filters';

describe('history filters', () => {
  it('empty form means no filter at all', () => {
    expect(toHistoryFilter(EMPTY_FORM)).toEqual({});
    expect(toHistoryFilter({ ...EMPTY_FORM, search: '   ' })).toEqual({});
  });
  it('dates are local days; "to" is inclusive in the form, exclusive on the wire', () => {
    const f = toHistoryFilter({ ...EMPTY_FORM, from: '2026-03-01', to: '2026-03-01' });
    expect(f.from_ms).toBe(new Date(2026, 2, 1).getTime());
    expect(f.to_ms).toBe(new Date(2026, 2, 2).getTime());
    expect(localMidnight('garbage')).toBeNull();
    expect(toHistoryFilter({ ...EMPTY_FORM, from: 'x' })).toEqual({});
  });
  it('search, app and outcome pass through trimmed', () => {
    expect(toHistoryFilter({ search: ' quarterly rep ', from: '', to: '', app: 'kitty', outcome: 'llm_rejected' })).toEqual({
      search: 'quarterly rep', app_class: 'kitty', outcome: 'llm_rejected',
    });
  });
  it('export: ticked ids newest first, or the whole filter', () => {
    const form = { ...EMPTY_FORM, app: 'code' };
    expect(exportSelection(new Set([3, 10, 7]), form, false)).toEqual({ ids: [10, 7, 3], filter: { app_class: 'code' } });
    expect(exportSelection(new Set([3]), form, true)).toEqual({ filter: { app_class: 'code' } });
  });
});
