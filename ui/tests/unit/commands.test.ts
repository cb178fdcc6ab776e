import { describe, expect, it } from 'vitest';
import { BUILT_INS, savable, withBuiltIn, withCustom } from '../../src/lib/commands';

describe('voice command settings', () => {
  it('switching a built-in off and on edits only its name', () => {
    expect(withBuiltIn([], 'undo', false)).toEqual(['undo']);
    expect(withBuiltIn(['undo', 'tab'], 'undo', true)).toEqual(['tab']);
    expect(withBuiltIn(['Undo '], 'undo', true)).toEqual([]);
    expect(withBuiltIn(['tab'], 'undo', false)).toEqual(['tab', 'undo']);
  });
  it('the built-in names are the engine names', () => {
    expect(BUILT_INS.map(([n]) => n)).toEqual(['new line', 'new paragraph', 'press enter', 'tab', 'scratch that', 'undo', 'stop dictation']);
  });
  it('custom rows: append, edit, remove; empty rows are not saved', () => {
    let rows = withCustom([], 0, {});
    expect(rows).toEqual([{ phrase: '', keys: '' }]);
    rows = withCustom(rows, 0, { phrase: 'save it' });
    rows = withCustom(rows, 0, { keys: 'ctrl+s' });
    rows = withCustom(rows, 1, { phrase: 'half' });
    expect(rows).toEqual([{ phrase: 'save it', keys: 'ctrl+s' }, { phrase: 'half', keys: '' }]);
    expect(savable({ enabled: true, punctuation: false, disabled: [], custom: rows }).custom).toEqual([{ phrase: 'save it', keys: 'ctrl+s' }]);
    expect(withCustom(rows, 0, null)).toEqual([{ phrase: 'half', keys: '' }]);
  });
});
