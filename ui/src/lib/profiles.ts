// Per-app profiles (issue 16): the editor's logic, kept pure for the unit tests. The list is
// the config's `[[profile]]` tables (ProfileConfig, generated from Rust); an override left
// empty is removed from its table (absent = "as the settings say"), never sent as null.
// The engine validates again when the config is saved (its error names the profile).

import type { ProfileConfig } from '../bindings/ProfileConfig';

export type Tri = 'inherit' | 'on' | 'off';

export const OVERRIDES = ['inject_method', 'llm', 'llm_prompt', 'vocabulary', 'language', 'task', 'commands', 'trailing_period'] as const;

/** A boolean override as a three-way choice. */
export const tri = (v: boolean | undefined | null): Tri => (v === true ? 'on' : v === false ? 'off' : 'inherit');
export const fromTri = (t: Tri): boolean | undefined => (t === 'on' ? true : t === 'off' ? false : undefined);

/** `p` with `patch` applied; fields that become undefined, null, '' or [] are dropped (the name stays). */
export function patched(p: ProfileConfig, patch: Partial<Record<keyof ProfileConfig, unknown>>): ProfileConfig {
  const out: Record<string, unknown> = { ...p, ...patch };
  for (const [k, v] of Object.entries(out)) {
    if (k === 'name') continue;
    const empty = v === undefined || v === null || (typeof v === 'string' && v.trim() === '' && k !== 'llm_prompt') ||
      (Array.isArray(v) && v.length === 0);
    if (empty) delete out[k];
  }
  return out as ProfileConfig;
}

export function update(list: ProfileConfig[], i: number, patch: Partial<Record<keyof ProfileConfig, unknown>>): ProfileConfig[] {
  return list.map((p, j) => (j === i ? patched(p, patch) : p));
}

/** A new profile with a free name ("profile 1", "profile 2"...), matching nothing yet. */
export function added(list: ProfileConfig[]): ProfileConfig[] {
  let n = list.length + 1;
  while (list.some((p) => p.name === `profile ${n}`)) n++;
  return [...list, { name: `profile ${n}` }];
}

export const removed = (list: ProfileConfig[], i: number): ProfileConfig[] => list.filter((_, j) => j !== i);

/** Moves profile `i` by `delta` (the first match wins, so order matters); out of range: unchanged. */
export function moved(list: ProfileConfig[], i: number, delta: number): ProfileConfig[] {
  const to = i + delta;
  if (i < 0 || i >= list.length || to < 0 || to >= list.length) return list;
  const out = [...list];
  const [p] = out.splice(i, 1);
  out.splice(to, 0, p);
  return out;
}

/** `s` as a regular expression matching it literally. */
export const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Patterns for a window picked with "use the window focused in 3 s": its exact class when it
 * has one, else its exact title. */
export function patternsFor(w: { class?: string | null; title?: string | null }): Pick<ProfileConfig, 'match_class' | 'match_title'> {
  if (w.class) return { match_class: `^${escapeRegex(w.class)}$`, match_title: undefined };
  if (w.title) return { match_class: undefined, match_title: `^${escapeRegex(w.title)}$` };
  return {};
}

function regexProblem(p: string): string | null {
  try {
    new RegExp(p, 'i');
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** What is wrong with the list, as the engine will say it (checked before Save). JavaScript's
 * regular expressions are close to the engine's; the engine has the last word. */
export function problems(list: ProfileConfig[]): string[] {
  const out: string[] = [];
  list.forEach((p, i) => {
    const name = p.name.trim();
    if (!name) out.push(`profile #${i + 1} needs a name`);
    else if (name.toLowerCase() === 'default') out.push('"default" is the built-in profile\'s name; choose another');
    else if (list.slice(0, i).some((q) => q.name.trim() === name)) out.push(`two profiles are named "${name}"`);
    if (!p.match_class?.trim() && !p.match_title?.trim()) out.push(`profile "${name}" needs a window class or title pattern`);
    for (const key of ['match_class', 'match_title'] as const) {
      const pat = p[key];
      const why = pat ? regexProblem(pat) : null;
      if (why) out.push(`profile "${name}": \`${pat}\` is not a valid regular expression (${why})`);
    }
  });
  return out;
}

/** The profile a window gets, as the engine picks it: the first whose patterns all match (in
 * any case, anywhere in the text); "default" when none does. */
export function pick(list: ProfileConfig[], cls: string | null | undefined, title: string | null | undefined): string {
  const hit = (pat: string | undefined, s: string | null | undefined) => {
    if (!pat?.trim()) return true;
    if (s == null) return false;
    try { return new RegExp(pat, 'i').test(s); } catch { return false; }
  };
  return list.find((p) => hit(p.match_class, cls) && hit(p.match_title, title))?.name ?? 'default';
}
