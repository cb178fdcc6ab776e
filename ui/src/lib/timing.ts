// The per-stage timing bar of a history entry: capture (audio length: how long the key was
// held), speech-to-text, LLM cleanup, injection — each a segment proportional to its time.

import type { Entry } from '../bindings/Entry';

export type Stage = 'capture' | 'stt' | 'llm' | 'inject';
export const STAGES: Stage[] = ['capture', 'stt', 'llm', 'inject'];
export const STAGE_LABEL: Record<Stage, string> = {
  capture: 'capture',
  stt: 'speech-to-text',
  llm: 'LLM cleanup',
  inject: 'inject',
};

export interface Segment {
  stage: Stage;
  ms: number;
  /** Left edge and width in percent of the bar. */
  left: number;
  width: number;
}

type Timings = Pick<Entry, 'audio_ms' | 'decode_ms' | 'resample_ms' | 'vad_ms' | 'model_load_ms' | 'warmup_ms' | 'stt_ms' | 'llm_ms' | 'inject_ms'>;

/** Milliseconds per stage; stages that did not run are absent. Speech-to-text includes the
 * decode/resample/VAD work and a model load or warm-up if this utterance paid for one. */
export function stageTimes(e: Timings): Partial<Record<Stage, number>> {
  const out: Partial<Record<Stage, number>> = {};
  if (e.audio_ms != null && e.audio_ms > 0) out.capture = e.audio_ms;
  const sttParts = [e.decode_ms, e.resample_ms, e.vad_ms, e.model_load_ms, e.warmup_ms, e.stt_ms];
  if (sttParts.some((v) => v != null)) out.stt = sttParts.reduce<number>((a, v) => a + (v ?? 0), 0);
  if (e.llm_ms != null) out.llm = e.llm_ms;
  if (e.inject_ms != null) out.inject = e.inject_ms;
  return out;
}

/** Segments laid end to end; each visible stage gets at least `minPct` so a 4 ms inject is
 * still a sliver next to a 3 s capture. Widths always sum to 100 (or 0 when nothing ran). */
export function timingSegments(e: Timings, minPct = 2): Segment[] {
  const times = stageTimes(e);
  const present = STAGES.filter((s) => times[s] !== undefined);
  const total = present.reduce((a, s) => a + (times[s] ?? 0), 0);
  if (present.length === 0) return [];
  const raw = present.map((s) => (total > 0 ? ((times[s] ?? 0) / total) * 100 : 100 / present.length));
  // Lift tiny segments to minPct, take the difference from the big ones proportionally.
  const small = raw.map((w) => w < minPct);
  const lifted = small.filter(Boolean).length * minPct;
  const bigTotal = raw.reduce((a, w, i) => a + (small[i] ? 0 : w), 0);
  const widths = raw.map((w, i) => (small[i] ? minPct : bigTotal > 0 ? (w / bigTotal) * (100 - lifted) : w));
  let left = 0;
  return present.map((stage, i) => {
    const seg = { stage, ms: times[stage] ?? 0, left, width: widths[i] };
    left += widths[i];
    return seg;
  });
}
