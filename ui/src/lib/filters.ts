// The history toolbar's form state and what it becomes on the wire.

import type { EntrySummary } from '../bindings/EntrySummary';
import type { HistoryFilter } from '../bindings/HistoryFilter';
import type { ExportSelection } from '../bindings/ExportSelection';
import { baseName, clock } from './transcribe';

export interface FilterForm {
  search: string;
  /** `YYYY-MM-DD` (local) or ''. */
  from: string;
  to: string;
  app: string;
  outcome: string;
  /** `mic` (dictations), `file` (transcribed files) or '' (both). */
  source: string;
}

export const EMPTY_FORM: FilterForm = { search: '', from: '', to: '', app: '', outcome: '', source: '' };

/** Local midnight of a `YYYY-MM-DD` date, in unix ms; null for '' or garbage. */
export function localMidnight(date: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isNaN(d.getTime()) ? null : d.getTime();
}

/** Form → filter: empty fields are left out; `to` is inclusive in the form (the whole day),
 * exclusive on the wire (next local midnight). */
export function toHistoryFilter(form: FilterForm): HistoryFilter {
  const f: HistoryFilter = {};
  const search = form.search.trim();
  if (search) f.search = search;
  const from = localMidnight(form.from);
  if (from !== null) f.from_ms = from;
  const to = localMidnight(form.to);
  if (to !== null) {
    const d = new Date(to);
    d.setDate(d.getDate() + 1);
    f.to_ms = d.getTime();
  }
  if (form.app) f.app_class = form.app;
  if (form.outcome) f.outcome = form.outcome;
  if (form.source === 'mic' || form.source === 'file') f.source = form.source;
  return f;
}

/** What "Export" sends: the ticked rows, or everything the filter matches. */
export function exportSelection(selected: Iterable<number>, form: FilterForm, all: boolean): ExportSelection {
  const filter = toHistoryFilter(form);
  if (all) return { filter };
  const ids = [...selected].sort((a, b) => b - a);
  return { ids, filter };
}

export const OUTCOMES: [string, string][] = [
  ['', 'Any outcome'],
  ['ok', 'OK'],
  ['no_speech', 'No speech'],
  ['error', 'Error'],
  ['interrupted', 'Interrupted'],
  ['llm_cleaned', 'LLM cleaned'],
  ['llm_rejected', 'LLM rejected'],
  ['llm_failed', 'LLM failed'],
];

export const SOURCES: [string, string][] = [
  ['', 'Dictations and files'],
  ['mic', 'Dictations'],
  ['file', 'Files'],
];

/** A list row: a dictation's, or a transcribed file's (its path and audio length). */
export type HistoryRow = EntrySummary;

/** The row's second line under the date: the app dictated into, or a file's length and name
 * (the length first: a long name is cut at its end); `title` the whole path. */
export function rowPlace(r: HistoryRow): { text: string; title?: string } {
  if (r.source === 'file') {
    const name = r.source_path ? baseName(r.source_path) : 'file';
    return { text: r.audio_ms != null ? `${clock(r.audio_ms)} · ${name}` : name, title: r.source_path ?? undefined };
  }
  return { text: r.app_class ?? '—' };
}
