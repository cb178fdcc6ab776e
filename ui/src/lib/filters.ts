// The history toolbar's form state and what it becomes on the wire.

import type { HistoryFilter } from '../bindings/HistoryFilter';
import type { ExportSelection } from '../bindings/ExportSelection';

export interface FilterForm {
  search: string;
  /** `YYYY-MM-DD` (local) or ''. */
  from: string;
  to: string;
  app: string;
  outcome: string;
}

export const EMPTY_FORM: FilterForm = { search: '', from: '', to: '', app: '', outcome: '' };

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
