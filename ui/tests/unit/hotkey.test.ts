import { describe, expect, it } from 'vitest';
import { hotkeyFromEvent, hotkeyFromMouseButton, loneModifierProblem, sameHotkey } from '../../src/lib/hotkey';

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
  it('a thumb mouse button is mouse:8 or mouse:9; clicking buttons are not hotkeys', () => {
    expect(hotkeyFromMouseButton(3)).toBe('mouse:8');
    expect(hotkeyFromMouseButton(4)).toBe('mouse:9');
    for (const b of [0, 1, 2, 5]) expect(hotkeyFromMouseButton(b)).toBeNull();
  });
  it('the same keys in another order, case or alias are the same hotkey', () => {
    expect(sameHotkey('Ctrl+Alt+E', 'alt+control+e')).toBe(true);
    expect(sameHotkey('super+F9', 'Cmd+f9')).toBe(true);
    expect(sameHotkey('Ctrl+Alt+E', 'ctrl+alt+KeyE')).toBe(true);
    expect(sameHotkey('Ctrl+Alt+E', 'Ctrl+Alt+Space')).toBe(false);
    expect(sameHotkey('Ctrl+E', 'Ctrl+Alt+E')).toBe(false);
    expect(sameHotkey('mouse:9', 'Mouse:9')).toBe(true);
    expect(sameHotkey('', '')).toBe(false);
  });
});
