// The "Transcribe a file…" window's logic (views/Transcribe.tsx): times, progress, which
// buttons a file's state allows, and the queue as `file-job` snapshots arrive. Pure functions
// (unit-tested).

import type { JobState } from '../bindings/JobState';
import type { JobView } from '../bindings/JobView';

/** A duration as a clock: `1:05`, `40:00`, `1:02:03` (whole seconds, rounded down). */
export function clock(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** Where the transcription is in the audio: `1:05 / 40:00`; the position alone before the
 * length is known. */
export function positionText(job: Pick<JobView, 'done_ms' | 'total_ms'>): string {
  return job.total_ms > 0 ? `${clock(job.done_ms)} / ${clock(job.total_ms)}` : clock(job.done_ms);
}

/** The bar's 0–100 (whole numbers, as the log's), or null while a running file's length is
 * unknown (an indeterminate bar). */
export function progressPercent(job: Pick<JobView, 'state' | 'done_ms' | 'total_ms'>): number | null {
  if (job.state === 'running' && !(job.total_ms > 0)) return null;
  return logPercent(job);
}

/** The wall-clock line beside the bar: time taken so far and time still to go. */
export function timesText(job: Pick<JobView, 'state' | 'elapsed_ms' | 'remaining_ms' | 'waiting_for_dictation'>): string {
  switch (job.state) {
    case 'queued':
      return job.waiting_for_dictation ? 'waiting for the dictation' : 'waiting for the files before it';
    case 'running': {
      const left = job.waiting_for_dictation
        ? 'paused'
        : job.remaining_ms === null || !Number.isFinite(job.remaining_ms)
          ? 'estimating the time left…'
          : `about ${clock(Math.ceil(job.remaining_ms / 1000) * 1000)} left`;
      return `${clock(job.elapsed_ms)} elapsed · ${left}`;
    }
    default:
      return job.elapsed_ms > 0 ? `took ${clock(job.elapsed_ms)}` : '';
  }
}

export const STATE_LABEL: Record<JobState, string> = {
  queued: 'Queued',
  running: 'Transcribing',
  done: 'Done',
  cancelled: 'Cancelled',
  failed: 'Failed',
};

/** The badge class of a state (style.css `.badge.*`). */
export function stateBadge(state: JobState): string {
  return state === 'done' ? 'ok' : state === 'failed' ? 'error' : state === 'cancelled' ? 'warn' : state === 'running' ? 'default' : '';
}

export interface JobActions {
  cancel: boolean;
  copy: boolean;
  /** Save as TXT: whatever text there is, even while it runs. */
  txt: boolean;
  /** Save as SRT / VTT: the timings are whole once it is done or cancelled. */
  subtitles: boolean;
  /** Take it off the list (finished files only). */
  remove: boolean;
}

/** Which buttons a file shows. */
export function jobActions(job: Pick<JobView, 'state' | 'text'>): JobActions {
  const hasText = job.text.trim().length > 0;
  const finished = job.state === 'done' || job.state === 'cancelled' || job.state === 'failed';
  return {
    cancel: job.state === 'queued' || job.state === 'running',
    copy: hasText,
    txt: hasText,
    subtitles: hasText && (job.state === 'done' || job.state === 'cancelled'),
    remove: finished,
  };
}

const RANK: Record<JobState, number> = { queued: 0, running: 1, done: 2, cancelled: 2, failed: 2 };

/** Whether snapshot `a` of a job is later than `b`: a file only moves forward (queued, running,
 * finished; audio done and wall time only grow). The list that `file_jobs` answers and the
 * `file-job` events may cross at the window's start: the later snapshot wins. */
export function isLater(a: JobView, b: JobView): boolean {
  if (RANK[a.state] !== RANK[b.state]) return RANK[a.state] > RANK[b.state];
  if (a.done_ms !== b.done_ms) return a.done_ms > b.done_ms;
  return a.elapsed_ms > b.elapsed_ms;
}

/** The queue with one snapshot merged in: it replaces the job of its id (unless the one shown
 * is later), a new id is added; ordered by id (oldest first). */
export function mergeJob(jobs: JobView[], job: JobView): JobView[] {
  const i = jobs.findIndex((j) => j.id === job.id);
  if (i >= 0) {
    if (isLater(jobs[i], job)) return jobs;
    const out = jobs.slice();
    out[i] = job;
    return out;
  }
  return [...jobs, job].sort((a, b) => a.id - b.id);
}

export function mergeJobs(jobs: JobView[], more: JobView[]): JobView[] {
  return more.reduce(mergeJob, jobs);
}

/** What the log was last told about a job (see `logLine`). */
export interface Logged {
  state: JobState;
  pct: number;
}

/** The integer percent of the log lines: 100 when done, else the audio done (0 unknown). */
export function logPercent(job: Pick<JobView, 'state' | 'done_ms' | 'total_ms'>): number {
  if (job.state === 'done') return 100;
  return job.total_ms > 0 ? Math.max(0, Math.min(100, Math.floor((job.done_ms / job.total_ms) * 100))) : 0;
}

/** The app-log line for a job's change (`transcribe: #1 running 40%`; the Xvfb test reads
 * these), or null when there is nothing new: a new state, or a running job's integer percent
 * moved. */
export function logLine(last: Logged | undefined, job: JobView): { line: string; logged: Logged } | null {
  const pct = logPercent(job);
  if (last && last.state === job.state && (job.state !== 'running' || last.pct === pct)) return null;
  return { line: `transcribe: #${job.id} ${job.state} ${pct}%`, logged: { state: job.state, pct } };
}

/** A file's name without its folders (either separator). */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

/** English-only whisper models (`.en`) cannot translate. */
export function englishOnly(model: string): boolean {
  return /\.en($|[-_.])/.test(baseName(model));
}
