// The first-run window's data (src-tauri/src/welcome.rs: FirstRunInfo, ModelChoice; written by
// hand, the tray crate has no ts-rs) and how it is shown.

import type { ModelStatus } from '../bindings/ModelStatus';

export type ModelChoice = ModelStatus & {
  languages: string;
  est_sec_per_10s: number;
  wer_pct: number;
  /** From timing installed models here (null before): key-up → text p95 for a 10 s dictation,
   * file real-time factor, and "measured" or "estimate from tiny.en-q8_0 × 1.9". */
  release_p95_ms?: number | null;
  file_rtf?: number | null;
  basis?: string | null;
};

export interface FirstRunInfo {
  version: string;
  cores: number;
  gpu: string;
  cuda_build: boolean;
  model_ready: boolean;
  recommended: string;
  reason: string;
  /** The recommendation comes from timing the installed models on this machine. */
  measured?: boolean;
  measure_note?: string;
  models: ModelChoice[];
  models_dir: string;
  hotkey: string;
  /** The microphone a dictation opens, as the desktop names it, or why it is unknown. */
  microphone: string;
  /** Set for a Bluetooth headset's microphone: what keeping it open costs (the engine's words). */
  bluetooth_note?: string | null;
  /** `[dictation] microphone`: "auto", "always" or "on_demand". */
  microphone_mode: string;
}

/** "about 0.8 s per 10 s of speech" from the estimate in seconds. */
export function speedText(sec: number): string {
  if (sec < 0.95) return `about ${sec.toFixed(1)} s per 10 s of speech`;
  return `about ${Math.round(sec)} s per 10 s of speech`;
}

/** The recommended model first, then installed ones, then by size. */
export function orderChoices(models: ModelChoice[], recommended: string): ModelChoice[] {
  const rank = (m: ModelChoice) => (m.name === recommended ? 0 : m.installed ? 1 : 2);
  return [...models].sort((a, b) => rank(a) - rank(b) || a.exact_bytes - b.exact_bytes);
}

/** "190 ms · 0.06× · measured" for a timed row, '' before any timing. */
export function measuredText(m: ModelChoice): string {
  if (m.release_p95_ms == null || m.file_rtf == null) return '';
  return `${Math.round(m.release_p95_ms)} ms · ${m.file_rtf.toFixed(2)}× · ${m.basis ?? ''}`;
}
