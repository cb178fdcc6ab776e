// How a history row's typing went, as the engine decides it (crates/dictum-engine/src/inject/
// report.rs). Pure functions (unit-tested).

import type { Entry } from '../bindings/Entry';

/** The note every Wayland paste carries in `inject_error`: the text was pasted, only nobody
 * can see which window fetched it. The text of the Rust constant `inject::PASTE_UNCONFIRMED`
 * (crates/dictum-engine/src/inject/report.rs); keep the two the same. */
export const PASTE_UNCONFIRMED = 'pasted (unconfirmed: on Wayland Dictum cannot see which window fetched the paste)';

/** Whether a row's `inject_error` says the text did not (all) reach the window: anything but
 * the {@link PASTE_UNCONFIRMED} note alone (as the engine's `inject::inject_failed`). */
export function injectFailed(injectError: string | null | undefined): boolean {
  return !!injectError?.trim() && injectError.trim() !== PASTE_UNCONFIRMED;
}

/** Whether History offers Retry: kept audio and no delivered text (a failed transcription or
 * typing, a crash). A Wayland paste whose only note is {@link PASTE_UNCONFIRMED} was delivered. */
export function canRetry(e: Pick<Entry, 'audio_path' | 'outcome' | 'inject_error'>): boolean {
  return !!e.audio_path && (e.outcome === 'error' || e.outcome === 'interrupted' || (e.outcome === 'ok' && injectFailed(e.inject_error)));
}
