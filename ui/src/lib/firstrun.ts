// The first-run window's data (src-tauri/src/welcome.rs: FirstRunInfo, ModelChoice; written by
// hand, the tray crate has no ts-rs) and how it is shown.

import type { ModelStatus } from '../bindings/ModelStatus';

export type ModelChoice = ModelStatus & { languages: string; est_sec_per_10s: number; wer_pct: number };

export interface FirstRunInfo {
  version: string;
  cores: number;
  gpu: string;
  cuda_build: boolean;
  model_ready: boolean;
  recommended: string;
  reason: string;
  models: ModelChoice[];
  models_dir: string;
  hotkey: string;
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
