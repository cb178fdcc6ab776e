import { describe, expect, it } from 'vitest';
import { canRetry, injectFailed, PASTE_UNCONFIRMED } from '../../src/lib/inject';

const kept = '/home/you/.local/share/dictum/spool/7.wav';

describe('typing outcome of a history row', () => {
  it('the Wayland paste note alone is not a failure', () => {
    expect(injectFailed(null)).toBe(false);
    expect(injectFailed('')).toBe(false);
    expect(injectFailed(PASTE_UNCONFIRMED)).toBe(false);
    expect(injectFailed(` ${PASTE_UNCONFIRMED}\n`)).toBe(false);
    expect(injectFailed('no display')).toBe(true);
    // More than the note is said (as the engine's inject_failed): a failure as before.
    expect(injectFailed(`${PASTE_UNCONFIRMED}; the previous clipboard was not restored`)).toBe(true);
  });
  it('Retry: kept audio and undelivered text, not a paste that is only unconfirmed', () => {
    expect(canRetry({ audio_path: kept, outcome: 'ok', inject_error: PASTE_UNCONFIRMED })).toBe(false);
    expect(canRetry({ audio_path: kept, outcome: 'ok', inject_error: 'typing stopped after 12 of 40 characters' })).toBe(true);
    expect(canRetry({ audio_path: kept, outcome: 'ok', inject_error: null })).toBe(false);
    expect(canRetry({ audio_path: kept, outcome: 'error', inject_error: null })).toBe(true);
    expect(canRetry({ audio_path: kept, outcome: 'interrupted', inject_error: PASTE_UNCONFIRMED })).toBe(true);
    expect(canRetry({ audio_path: null, outcome: 'error', inject_error: 'no display' })).toBe(false);
    expect(canRetry({ audio_path: kept, outcome: 'no_speech', inject_error: null })).toBe(false);
  });
});
