// Fixed-row-height windowing for the history list: only the rows in view (plus overscan)
// exist in the DOM, so 10,000+ entries scroll like 20.

export interface Window {
  start: number;
  /** Exclusive. */
  end: number;
  /** Pixels above the first rendered row. */
  offset: number;
  /** Height of the whole (virtual) list. */
  height: number;
}

export function visibleWindow(scrollTop: number, viewport: number, rowHeight: number, count: number, overscan = 6): Window {
  const height = count * rowHeight;
  if (count === 0 || rowHeight <= 0) return { start: 0, end: 0, offset: 0, height };
  const top = Math.max(0, Math.min(scrollTop, Math.max(0, height - viewport)));
  const first = Math.floor(top / rowHeight);
  const last = Math.ceil((top + viewport) / rowHeight);
  const start = Math.max(0, first - overscan);
  const end = Math.min(count, last + overscan);
  return { start, end, offset: start * rowHeight, height };
}

/** Whether the next page should be fetched: the window reaches within `ahead` rows of the end
 * of what is loaded and more exists. */
export function needsMore(win: Window, loaded: number, hasMore: boolean, ahead = 50): boolean {
  return hasMore && win.end + ahead >= loaded;
}
