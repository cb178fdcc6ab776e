// The settings panel's "Measure again" (src-tauri/src/remeasure.rs: Remeasured, written by hand,
// the tray crate has no ts-rs, around the engine's generated Recommendation) and how it is shown.

import type { Measurement } from '../bindings/Measurement';
import type { Recommendation } from '../bindings/Recommendation';
import type { RecommendRow } from '../bindings/RecommendRow';
import type { RecommendVerdict } from '../bindings/RecommendVerdict';

export type Remeasured = Recommendation & {
  /** The configured model when the timing started. */
  current: string;
  /** Models timed, load average before → after, skipped models and why. */
  note: string;
  /** How long the timing took. */
  seconds: number;
};

/** The rows worth a line: every model timed here, and the recommended one if it was not. */
export function shownRows(r: Remeasured): RecommendRow[] {
  return r.rows.filter((row) => row.basis.kind === 'measured' || row.model === r.model);
}

/** "212 ms" for the fastest pass, or how an estimated row was made ("estimate: tiny.en-q8_0 × 1.9"). */
export function passText(row: RecommendRow, m: Measurement | undefined, pass: 'tail' | 'long'): string {
  if (row.basis.kind === 'estimated') return `estimate: ${row.basis.from} × ${row.basis.factor}`;
  return m ? `${Math.round(m[pass].ms)} ms` : '—';
}

const VERDICTS: Record<RecommendVerdict, string> = {
  fits: 'fits',
  release_too_slow: 'release too slow',
  files_too_slow: 'files too slow',
  both_too_slow: 'too slow',
};

export function verdictText(v: RecommendVerdict): string {
  return VERDICTS[v];
}
