import { describe, expect, it } from 'vitest';
import { stageTimes, timingSegments } from '../../src/lib/timing';

const base = {
  audio_ms: null, decode_ms: null, resample_ms: null, vad_ms: null, model_load_ms: null,
  warmup_ms: null, stt_ms: null, llm_ms: null, inject_ms: null,
};

describe('timing bar', () => {
  it('sums the speech-to-text parts and skips stages that did not run', () => {
    const t = stageTimes({ ...base, audio_ms: 2000, vad_ms: 5, stt_ms: 195, inject_ms: 10 });
    expect(t).toEqual({ capture: 2000, stt: 200, inject: 10 });
  });
  it('segments are proportional, end to end, and sum to 100', () => {
    const s = timingSegments({ ...base, audio_ms: 600, stt_ms: 200, llm_ms: 200, inject_ms: 0.1 }, 0);
    expect(s.map((x) => x.stage)).toEqual(['capture', 'stt', 'llm', 'inject']);
    expect(s[0].width).toBeCloseTo(60, 1);
    expect(s[1].left).toBeCloseTo(s[0].width, 6);
    expect(s.reduce((a, x) => a + x.width, 0)).toBeCloseTo(100, 6);
  });
  it('tiny stages stay visible at the minimum width', () => {
    const s = timingSegments({ ...base, audio_ms: 3000, stt_ms: 150, inject_ms: 3 }, 2);
    const inject = s.find((x) => x.stage === 'inject');
    expect(inject?.width).toBe(2);
    expect(s.reduce((a, x) => a + x.width, 0)).toBeCloseTo(100, 6);
    expect(s[s.length - 1].left + s[s.length - 1].width).toBeCloseTo(100, 6);
  });
  it('nothing ran: no segments', () => {
    expect(timingSegments(base)).toEqual([]);
  });
});
