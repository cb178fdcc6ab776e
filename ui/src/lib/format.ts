// Display formatting shared by every view. Pure functions (unit-tested).

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m} min ${s} s`;
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}

/** The languages the pickers offer (whisper's codes; `auto`: detect). */
export const LANGUAGES: [string, string][] = [
  ['auto', 'Detect automatically'], ['en', 'English'], ['de', 'German'], ['fr', 'French'],
  ['es', 'Spanish'], ['it', 'Italian'], ['pt', 'Portuguese'], ['nl', 'Dutch'], ['pl', 'Polish'],
  ['ru', 'Russian'], ['uk', 'Ukrainian'], ['ja', 'Japanese'], ['zh', 'Chinese'], ['ko', 'Korean'],
];

const pad = (n: number) => String(n).padStart(2, '0');

/** Local date and time, `YYYY-MM-DD HH:MM`. */
export function formatDateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Local calendar date, `YYYY-MM-DD` (the value of an `<input type=date>`). */
export function formatDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** 0–100, or null when the total is unknown. */
export function progressPct(done: number, total: number | null | undefined): number | null {
  if (!total || total <= 0) return null;
  return Math.max(0, Math.min(100, (done / total) * 100));
}

export function outcomeLabel(outcome: string, llm?: string | null): string {
  const base: Record<string, string> = {
    ok: 'OK',
    no_speech: 'No speech',
    error: 'Error',
    pending: 'Pending',
    interrupted: 'Interrupted',
  };
  const label = base[outcome] ?? outcome;
  if (llm === 'rejected') return `${label} · LLM rejected`;
  if (llm === 'failed') return `${label} · LLM failed`;
  if (llm === 'cleaned') return `${label} · cleaned`;
  return label;
}

/** A list typed in one field (the terminal window classes): items separated by commas and/or
 * line breaks, each trimmed, empty ones dropped. */
export function splitList(s: string): string[] {
  return s.split(/[,\n]/).map((x) => x.trim()).filter(Boolean);
}
