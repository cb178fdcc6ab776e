import { describe, expect, it } from 'vitest';
import { hotkeyFromEvent, loneModifierProblem } from '../../src/lib/hotkey';

const ev = (code: string, mods: Partial<{ ctrlKey: boolean; altKey: boolean; shiftKey: boolean; metaKey: boolean }> = {}) => ({
  code, key: '', ctrlKey: false, altKey: false, shiftKey: false, metaKey: false, ...mods,
});

describe('hotkey recorder', () => {
  it('chords', () => {
    expect(hotkeyFromEvent(ev('KeyD', { ctrlKey: true, altKey: true }))).toBe('Ctrl+Alt+D');
    expect(hotkeyFromEvent(ev('Space', { metaKey: true }))).toBe('Super+Space');
    expect(hotkeyFromEvent(ev('F9'))).toBe('F9');
  });
  it('a lone modifier is refused with the reason (X11 cannot grab it)', () => {
    expect(hotkeyFromEvent(ev('ControlRight', { ctrlKey: true }))).toBeNull();
    expect(loneModifierProblem('ControlRight')).toContain('RightCtrl alone cannot be a hotkey');
    expect(loneModifierProblem('ControlRight')).toContain('Ctrl+F9');
    expect(loneModifierProblem('KeyD')).toBeNull();
  });
  it('escape and unknown keys are not hotkeys', () => {
    expect(hotkeyFromEvent(ev('Escape'))).toBeNull();
    expect(hotkeyFromEvent(ev('IntlBackslash'))).toBeNull();
  });
});
