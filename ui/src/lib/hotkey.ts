// The hotkey recorder: a key event → the config's key string ("RightCtrl", "Ctrl+Alt+D").

export interface KeyLike {
  code: string;
  key: string;
  ctrlKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
  metaKey: boolean;
}

const LONE: Record<string, string> = {
  ControlRight: 'RightCtrl',
  ControlLeft: 'LeftCtrl',
  AltRight: 'RightAlt',
  AltLeft: 'LeftAlt',
  ShiftRight: 'RightShift',
  ShiftLeft: 'LeftShift',
  MetaRight: 'RightSuper',
  MetaLeft: 'LeftSuper',
  CapsLock: 'CapsLock',
};

function keyName(code: string): string | null {
  if (/^Key[A-Z]$/.test(code)) return code.slice(3);
  if (/^Digit[0-9]$/.test(code)) return code.slice(5);
  if (/^F([1-9]|1[0-9]|2[0-4])$/.test(code)) return code;
  const named: Record<string, string> = {
    Space: 'Space', Enter: 'Enter', Tab: 'Tab', Backquote: 'Grave', Pause: 'Pause',
    ScrollLock: 'ScrollLock', Insert: 'Insert', Home: 'Home', End: 'End', PageUp: 'PageUp',
    PageDown: 'PageDown', ContextMenu: 'Menu',
  };
  return named[code] ?? null;
}

/** A modifier pressed alone is a valid push-to-talk key (`RightCtrl`); otherwise modifiers +
 * one key. `null` = not a usable hotkey (e.g. Escape, which cancels recording). */
export function hotkeyFromEvent(e: KeyLike, modifierReleased = false): string | null {
  if (e.code === 'Escape') return null;
  if (LONE[e.code]) return modifierReleased ? LONE[e.code] : null;
  const name = keyName(e.code);
  if (!name) return null;
  const mods: string[] = [];
  if (e.ctrlKey) mods.push('Ctrl');
  if (e.altKey) mods.push('Alt');
  if (e.shiftKey) mods.push('Shift');
  if (e.metaKey) mods.push('Super');
  return [...mods, name].join('+');
}
