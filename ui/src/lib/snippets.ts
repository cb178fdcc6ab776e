// Snippets and replacements (issue 30): the settings card's list edits and the checks it shows
// before Save, kept pure for the unit tests. The lists are the config's `[[snippet]]` and
// `[[replace]]` tables (SnippetConfig, ReplaceConfig, generated from Rust). The checks mirror
// the engine's (crates/dictum-engine/src/config/snippets.rs: `validate`, `phrase_words`); the
// engine checks again when the config is saved and has the last word (its error is shown).

import type { ReplaceConfig } from '../bindings/ReplaceConfig';
import type { SnippetConfig } from '../bindings/SnippetConfig';
import type { SttConfig } from '../bindings/SttConfig';

/** The engine's bounds (snippets.rs MAX_RULES, MAX_PHRASE_WORDS, MAX_TEXT_CHARS). */
export const MAX_RULES = 1000;
export const MAX_PHRASE_WORDS = 12;
export const MAX_TEXT_CHARS = 4000;

const ALNUM = /[\p{Alphabetic}\p{N}]/u;
const APOSTROPHE = /['\u2019]/u;

/** The words of a phrase as the engine compares them: letters and digits (apostrophes inside a
 * word), lowercase, curly apostrophes straight; anything else separates words. */
export function phraseWords(text: string): string[] {
  const out: string[] = [];
  let word = '';
  let pending = ''; // apostrophes after a word's last letter: kept only if a letter follows
  for (const c of text) {
    if (ALNUM.test(c)) {
      word += pending + c;
      pending = '';
    } else if (APOSTROPHE.test(c) && word) {
      pending += "'";
    } else {
      if (word) out.push(word);
      word = '';
      pending = '';
    }
  }
  if (word) out.push(word);
  return out.map((w) => w.toLowerCase());
}

/** A list with row `i` changed, removed (patch null) or appended (i = length). */
export function withRow<T extends object>(list: T[], i: number, patch: Partial<T> | null, blank: T): T[] {
  if (patch === null) return list.filter((_, k) => k !== i);
  if (i >= list.length) return [...list, { ...blank, ...patch }];
  return list.map((r, k) => (k === i ? { ...r, ...patch } : r));
}
export const BLANK_SNIPPET: SnippetConfig = { phrase: '', text: '' };
export const BLANK_REPLACE: ReplaceConfig = { from: '', to: '' };

/** Rows left entirely blank (just added, never filled) are not saved; a half-filled row is, so
 * the engine's message says what it lacks. */
export function savableSnippets(list: SnippetConfig[]): SnippetConfig[] {
  return list.filter((s) => s.phrase.trim() || s.text.trim());
}
export function savableReplacements(list: ReplaceConfig[]): ReplaceConfig[] {
  return list.filter((r) => r.from.trim() || r.to.trim());
}

/** A problem found before Save: which row, which field, why (the engine's words). */
export interface Problem { list: 'snippet' | 'replace'; row: number; field: 'phrase' | 'text' | 'from' | 'to'; message: string }

const controlChar = (text: string, newlines: boolean): string | null => {
  for (const c of text) {
    if (/\p{Cc}/u.test(c) && !(newlines && (c === '\n' || c === '\t'))) return `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return null;
};

/** Everything the engine would refuse in these lists (it stops at the first; this lists all),
 * numbered as the rows are shown (#1 is the first row). */
export function problems(snippets: SnippetConfig[], replacements: ReplaceConfig[]): Problem[] {
  const out: Problem[] = [];
  if (snippets.length + replacements.length > MAX_RULES) {
    out.push({ list: 'snippet', row: 0, field: 'phrase', message: `${snippets.length + replacements.length} snippets and replacements; at most ${MAX_RULES} are allowed` });
  }
  const phrase = (text: string, list: Problem['list'], row: number, field: Problem['field'], example: string): string[] | null => {
    const words = phraseWords(text);
    if (words.length === 0) {
      out.push({ list, row, field, message: `${list} #${row + 1}: ${text.trim() ? `"${text}" has no words` : `empty ${field === 'from' ? '“whisper writes”' : '“when I say”'}`}; write ${example}` });
      return null;
    }
    if (words.length > MAX_PHRASE_WORDS) {
      out.push({ list, row, field, message: `${list} #${row + 1}: "${text}" has ${words.length} words; at most ${MAX_PHRASE_WORDS}` });
      return null;
    }
    return words;
  };
  const text = (t: string, list: Problem['list'], row: number, field: Problem['field'], newlines: boolean) => {
    const n = [...t].length;
    if (n > MAX_TEXT_CHARS) out.push({ list, row, field, message: `${list} #${row + 1}: the text is ${n} characters long; at most ${MAX_TEXT_CHARS}` });
    const c = controlChar(t, newlines);
    if (c) out.push({ list, row, field, message: `${list} #${row + 1}: the text holds the control character ${c}; ${newlines ? 'only newlines and tabs are allowed' : 'write it on one line'}` });
  };
  const key = (w: string[]) => w.join(' ');
  const froms = new Set<string>();
  replacements.forEach((r, i) => {
    const words = phrase(r.from, 'replace', i, 'from', 'the words whisper writes, e.g. "cooper netties"');
    if (words) {
      if (froms.has(key(words))) out.push({ list: 'replace', row: i, field: 'from', message: `replace #${i + 1}: "${key(words)}" is replaced twice; keep one replacement for it` });
      froms.add(key(words));
    }
    text(r.to, 'replace', i, 'to', false);
  });
  const phrases = new Set<string>();
  snippets.forEach((s, i) => {
    const words = phrase(s.phrase, 'snippet', i, 'phrase', 'what you will say, e.g. "my address"');
    if (words) {
      if (phrases.has(key(words))) out.push({ list: 'snippet', row: i, field: 'phrase', message: `snippet #${i + 1}: "${key(words)}" has two snippets; keep one` });
      else if (froms.has(key(words))) out.push({ list: 'snippet', row: i, field: 'phrase', message: `snippet #${i + 1}: "${key(words)}" is also a replacement's “whisper writes”; replacements run first, so this snippet would never be typed: remove one of them` });
      phrases.add(key(words));
    }
    if (!s.text.trim()) out.push({ list: 'snippet', row: i, field: 'text', message: `snippet #${i + 1} has no text; write what it types (to remove words, use a replacement with an empty “write instead”)` });
    else text(s.text, 'snippet', i, 'text', true);
  });
  return out;
}

/** True when `model` (a catalog name or a file path) names an English-only whisper model: `.en`
 * ends its size name (the engine's `english_only_name`). */
export function englishOnlyModel(model: string): boolean {
  let name = model.split(/[/\\]/).pop() ?? model;
  if (name.endsWith('.bin')) name = name.slice(0, -4);
  for (let i = name.indexOf('.en'); i >= 0; i = name.indexOf('.en', i + 1)) {
    const next = name[i + 3];
    if (next === undefined || next === '-' || next === '_' || next === '.') return true;
  }
  return false;
}

/** Why the speech settings cannot translate (the engine refuses them on Save), or null: an
 * English-only local model, where the local model is used (local backend, or the server's
 * fallback). */
export function translateProblem(stt: Pick<SttConfig, 'task' | 'model' | 'backend' | 'fallback'>): string | null {
  if (stt.task !== 'translate') return null;
  if (stt.backend !== 'local' && !stt.fallback) return null;
  if (!englishOnlyModel(stt.model)) return null;
  const where = stt.backend === 'local' ? '' : ' (it stands in when the speech server fails)';
  return `The model ${stt.model.trim()}${where} is English-only (.en) and cannot translate: download a multilingual one below (e.g. base-q8_0) and set it as default, or choose “Transcribe”.`;
}
