import { describe, expect, it } from 'vitest';
import type { ProfileConfig } from '../../src/bindings/ProfileConfig';
import { added, escapeRegex, fromTri, moved, patched, patternsFor, pick, problems, removed, tri, update } from '../../src/lib/profiles';

const term: ProfileConfig = { name: 'terminal', match_class: '^xterm$', llm: false, trailing_period: false };
const mail: ProfileConfig = { name: 'email', match_title: 'compose', llm_prompt: 'Full sentences.' };

describe('profile editor', () => {
  it('adds with a free name, removes, and reorders within bounds', () => {
    const a = added([term]);
    expect(a.map((p) => p.name)).toEqual(['terminal', 'profile 2']);
    expect(added([{ name: 'profile 2' }]).map((p) => p.name)).toEqual(['profile 2', 'profile 3']);
    expect(removed([term, mail], 0)).toEqual([mail]);
    expect(moved([term, mail], 1, -1)).toEqual([mail, term]);
    expect(moved([term, mail], 0, -1)).toEqual([term, mail]);
    expect(moved([term, mail], 1, 1)).toEqual([term, mail]);
  });

  it('an emptied override is dropped from the table, not sent as null', () => {
    const p = patched(term, { llm: fromTri('inherit'), match_title: '', vocabulary: [], language: 'de' });
    expect(p).toEqual({ name: 'terminal', match_class: '^xterm$', trailing_period: false, language: 'de' });
    expect('llm' in p).toBe(false);
    expect(update([term, mail], 1, { inject_method: 'paste' })[1]).toEqual({ ...mail, inject_method: 'paste' });
    expect(tri(true)).toBe('on');
    expect(tri(false)).toBe('off');
    expect(tri(undefined)).toBe('inherit');
    expect(fromTri('off')).toBe(false);
  });

  it('the picked window becomes exact, escaped patterns', () => {
    expect(patternsFor({ class: 'org.gnome.Terminal', title: 'x' })).toEqual({ match_class: '^org\\.gnome\\.Terminal$', match_title: undefined });
    expect(patternsFor({ class: null, title: 'Inbox (3) - Mail' })).toEqual({ match_class: undefined, match_title: '^Inbox \\(3\\) - Mail$' });
    expect(patternsFor({})).toEqual({});
    expect(new RegExp(escapeRegex('a+b[c]'), 'i').test('A+B[C]')).toBe(true);
  });

  it('problems are found before Save, naming the profile', () => {
    expect(problems([term, mail])).toEqual([]);
    const bad = problems([{ name: '' , match_class: 'x' }, { name: 'Default', match_class: 'x' }, { name: 'a' }, { name: 'b', match_title: '(unclosed' }, { name: 'b', match_class: 'y' }]);
    expect(bad[0]).toContain('#1 needs a name');
    expect(bad.some((m) => m.includes('built-in'))).toBe(true);
    expect(bad.some((m) => m.includes('"a" needs a window class or title'))).toBe(true);
    expect(bad.some((m) => m.includes('profile "b": `(unclosed`'))).toBe(true);
    expect(bad.some((m) => m.includes('two profiles are named "b"'))).toBe(true);
  });

  it('previews the pick as the engine does: first match, any case, both patterns', () => {
    const list: ProfileConfig[] = [{ name: 'gmail', match_class: 'firefox', match_title: 'gmail' }, { name: 'browser', match_class: 'firefox' }, term];
    expect(pick(list, 'Firefox', 'Inbox - Gmail')).toBe('gmail');
    expect(pick(list, 'firefox', 'News')).toBe('browser');
    expect(pick(list, 'XTerm', null)).toBe('terminal');
    expect(pick(list, 'UXTerm', null)).toBe('default');
    expect(pick(list, null, null)).toBe('default');
  });
});
