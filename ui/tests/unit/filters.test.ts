import { describe, expect, it } from 'vitest';
import { EMPTY_FORM, exportSelection, localMidnight, rowPlace, toHistoryFilter, type HistoryRow } from '../../src/lib/filters';

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
    expect(toHistoryFilter({ search: ' quarterly rep ', from: '', to: '', app: 'kitty', outcome: 'llm_rejected', source: '' })).toEqual({
      search: 'quarterly rep', app_class: 'kitty', outcome: 'llm_rejected',
    });
  });
  it('export: ticked ids newest first, or the whole filter', () => {
    const form = { ...EMPTY_FORM, app: 'code' };
    expect(exportSelection(new Set([3, 10, 7]), form, false)).toEqual({ ids: [10, 7, 3], filter: { app_class: 'code' } });
    expect(exportSelection(new Set([3]), form, true)).toEqual({ filter: { app_class: 'code' } });
  });
  it('source: dictations or files, absent for both; exported with the filter', () => {
    expect(toHistoryFilter({ ...EMPTY_FORM, source: 'file' })).toEqual({ source: 'file' });
    expect(toHistoryFilter({ ...EMPTY_FORM, source: 'mic', outcome: 'ok' })).toEqual({ outcome: 'ok', source: 'mic' });
    expect(toHistoryFilter({ ...EMPTY_FORM, source: 'garbage' })).toEqual({});
    expect(exportSelection(new Set(), { ...EMPTY_FORM, source: 'file' }, true)).toEqual({ filter: { source: 'file' } });
    expect(exportSelection(new Set([4, 9]), { ...EMPTY_FORM, source: 'mic' }, false)).toEqual({ ids: [9, 4], filter: { source: 'mic' } });
  });
  it('a row names its app, or a file by its length and name', () => {
    const row: HistoryRow = { id: 1, created_at_ms: 0, outcome: 'ok', llm_outcome: null, app_class: 'kitty', text: 'hi', total_ms: 120, error: null, source: 'mic', source_path: null, audio_ms: 900 };
    expect(rowPlace(row)).toEqual({ text: 'kitty' });
    expect(rowPlace({ ...row, source: 'mic', app_class: null })).toEqual({ text: '—' });
    expect(rowPlace({ ...row, app_class: null, source: 'file' })).toEqual({ text: '0:00 · file' });
    expect(rowPlace({ ...row, app_class: null, source: 'file', source_path: '/home/you/Recordings/interview.m4a', audio_ms: 2_400_000 }))
      .toEqual({ text: '40:00 · interview.m4a', title: '/home/you/Recordings/interview.m4a' });
    expect(rowPlace({ ...row, app_class: null, source: 'file', source_path: 'C:\\rec\\call.wav', audio_ms: null }))
      .toEqual({ text: 'call.wav', title: 'C:\\rec\\call.wav' });
  });
});
