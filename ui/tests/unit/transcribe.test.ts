import { describe, expect, it } from 'vitest';
import type { JobView } from '../../src/bindings/JobView';
import {
  baseName, clock, englishOnly, isLater, jobActions, logLine, logPercent, mergeJob, mergeJobs, positionText, progressPercent, timesText,
} from '../../src/lib/transcribe';

const job = (over: Partial<JobView> = {}): JobView => ({
  id: 1, path: '/home/you/Recordings/interview.m4a', name: 'interview.m4a', state: 'running', done_ms: 960_000, total_ms: 2_400_000,
  elapsed_ms: 65_000, remaining_ms: 97_400, text: 'So the first question.', entry_id: null, error: null, note: null,
  waiting_for_dictation: false, model: 'tiny.en-q8_0', language: 'en', translate: false, ...over,
});

describe('transcribe: times', () => {
  it('clock: m:ss under an hour, h:mm:ss above, whole seconds rounded down', () => {
    expect(clock(0)).toBe('0:00');
    expect(clock(65_000)).toBe('1:05');
    expect(clock(65_999)).toBe('1:05');
    expect(clock(2_400_000)).toBe('40:00');
    expect(clock(3_723_000)).toBe('1:02:03');
    expect(clock(null)).toBe('—');
    expect(clock(Number.NaN)).toBe('—');
    expect(clock(-5)).toBe('—');
  });
  it('position in the audio: done / total, the position alone before the length is known', () => {
    expect(positionText({ done_ms: 65_000, total_ms: 2_400_000 })).toBe('1:05 / 40:00');
    expect(positionText({ done_ms: 0, total_ms: 0 })).toBe('0:00');
  });
  it('elapsed and remaining time by state', () => {
    expect(timesText(job())).toBe('1:05 elapsed · about 1:38 left');
    expect(timesText(job({ remaining_ms: null }))).toBe('1:05 elapsed · estimating the time left…');
    expect(timesText(job({ remaining_ms: 200 }))).toBe('1:05 elapsed · about 0:01 left');
    expect(timesText(job({ waiting_for_dictation: true }))).toBe('1:05 elapsed · paused');
    expect(timesText(job({ state: 'queued', elapsed_ms: 0 }))).toBe('waiting for the files before it');
    expect(timesText(job({ state: 'done', elapsed_ms: 312_000 }))).toBe('took 5:12');
    expect(timesText(job({ state: 'failed', elapsed_ms: 0 }))).toBe('');
  });
});

describe('transcribe: progress', () => {
  it('whole percent of the audio; 100 once done; unknown while running without a length', () => {
    expect(progressPercent(job())).toBe(40);
    expect(progressPercent(job({ done_ms: 1_259_000 }))).toBe(52);
    expect(progressPercent(job({ state: 'done', total_ms: 0 }))).toBe(100);
    expect(progressPercent(job({ total_ms: 0, done_ms: 0 }))).toBeNull();
    expect(progressPercent(job({ state: 'queued', total_ms: 0, done_ms: 0 }))).toBe(0);
    expect(progressPercent(job({ state: 'cancelled', done_ms: 1_259_000 }))).toBe(52);
    expect(progressPercent(job({ done_ms: 3_000_000 }))).toBe(100);
    expect(logPercent(job({ total_ms: 0 }))).toBe(0);
  });
});

describe('transcribe: buttons by state', () => {
  it('Cancel while queued or running; TXT with any text; SRT/VTT done or cancelled; Remove when finished', () => {
    expect(jobActions(job({ state: 'queued', text: '' }))).toEqual({ cancel: true, copy: false, txt: false, subtitles: false, remove: false });
    expect(jobActions(job())).toEqual({ cancel: true, copy: true, txt: true, subtitles: false, remove: false });
    expect(jobActions(job({ state: 'done' }))).toEqual({ cancel: false, copy: true, txt: true, subtitles: true, remove: true });
    expect(jobActions(job({ state: 'cancelled' }))).toEqual({ cancel: false, copy: true, txt: true, subtitles: true, remove: true });
    expect(jobActions(job({ state: 'done', text: '  ' }))).toEqual({ cancel: false, copy: false, txt: false, subtitles: false, remove: true });
    expect(jobActions(job({ state: 'failed', text: '' }))).toEqual({ cancel: false, copy: false, txt: false, subtitles: false, remove: true });
  });
});

describe('transcribe: the queue as snapshots arrive', () => {
  it('replaces by id, appends a new id, keeps the order by id', () => {
    const a = job({ id: 1, state: 'done', done_ms: 2_400_000 });
    const b = job({ id: 2, done_ms: 100_000 });
    const c = job({ id: 3, state: 'queued', done_ms: 0, elapsed_ms: 0 });
    let q = mergeJob([], b);
    q = mergeJob(q, c);
    q = mergeJob(q, a);
    expect(q.map((j) => j.id)).toEqual([1, 2, 3]);
    const b2 = { ...b, done_ms: 200_000, text: 'more' };
    q = mergeJob(q, b2);
    expect(q.map((j) => j.id)).toEqual([1, 2, 3]);
    expect(q[1]).toBe(b2);
    expect(mergeJobs([], [c, a, b]).map((j) => j.id)).toEqual([1, 2, 3]);
  });
  it('an older snapshot does not undo a later one (the list and the events may cross)', () => {
    const later = job({ state: 'cancelled', done_ms: 1_259_000 });
    const older = job({ done_ms: 960_000 });
    expect(isLater(later, older)).toBe(true);
    expect(mergeJob([later], older)).toEqual([later]);
    expect(isLater(job({ elapsed_ms: 70_000 }), job())).toBe(true);
    // The same snapshot again, or a flag change only (paused for a dictation): taken.
    const paused = job({ waiting_for_dictation: true });
    expect(mergeJob([job()], paused)[0]).toBe(paused);
  });
});

describe('transcribe: log lines', () => {
  it('a new state, or a running job whose whole percent moved', () => {
    const first = logLine(undefined, job());
    expect(first?.line).toBe('transcribe: #1 running 40%');
    expect(logLine(first?.logged, job({ done_ms: 965_000 }))).toBeNull();
    const moved = logLine(first?.logged, job({ done_ms: 984_000 }));
    expect(moved?.line).toBe('transcribe: #1 running 41%');
    expect(logLine(moved?.logged, job({ state: 'cancelled', done_ms: 1_259_000 }))?.line).toBe('transcribe: #1 cancelled 52%');
    expect(logLine({ state: 'cancelled', pct: 52 }, job({ state: 'cancelled', done_ms: 1_259_000, text: 'edited' }))).toBeNull();
    expect(logLine(undefined, job({ id: 7, state: 'done' }))?.line).toBe('transcribe: #7 done 100%');
    expect(logLine(undefined, job({ id: 3, state: 'queued', done_ms: 0, total_ms: 0 }))?.line).toBe('transcribe: #3 queued 0%');
  });
});

describe('transcribe: names', () => {
  it('base names and English-only models', () => {
    expect(baseName('/home/you/Recordings/call with Ana.opus')).toBe('call with Ana.opus');
    expect(baseName('C:\\rec\\a.wav')).toBe('a.wav');
    expect(baseName('plain.mp3')).toBe('plain.mp3');
    expect(englishOnly('tiny.en-q8_0')).toBe(true);
    expect(englishOnly('base.en')).toBe(true);
    expect(englishOnly('base-q8_0')).toBe(false);
    expect(englishOnly('large-v3-turbo-q5_0')).toBe(false);
  });
});
