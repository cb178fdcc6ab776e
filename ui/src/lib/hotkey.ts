// The hotkey recorder: a key event → the config's key string ("Ctrl+Alt+D", "F9").

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

/** Modifiers + one key (`Ctrl+Alt+D`), or one key alone (`F9`). `null` = not a usable hotkey:
 * Escape (it cancels recording), unknown keys, and modifiers on their own. */
export function hotkeyFromEvent(e: KeyLike): string | null {
  if (e.code === 'Escape') return null;
  if (LONE[e.code]) return null;
  const name = keyName(e.code);
  if (!name) return null;
  const mods: string[] = [];
  if (e.ctrlKey) mods.push('Ctrl');
  if (e.altKey) mods.push('Alt');
  if (e.shiftKey) mods.push('Shift');
  if (e.metaKey) mods.push('Super');
  return [...mods, name].join('+');
}

/** Why a modifier pressed and released on its own cannot be the hotkey (the engine refuses it
 * too: X11 cannot grab a lone modifier); `null` for other keys. */
export function loneModifierProblem(code: string): string | null {
  const name = LONE[code];
  if (!name) return null;
  return `${name} alone cannot be a hotkey: X11 cannot grab a modifier on its own. Hold it with a main key, e.g. Ctrl+Alt+Space or ${name.replace(/^(Left|Right)/, '')}+F9.`;
}

/** A mouse button pressed while the recorder listens → the config's "mouse:N" (X11's
 * numbering), for the thumb buttons only: the page reports back as 3 (X11 8) and forward as
 * 4 (X11 9). Left, middle and right (0-2) stay clicks, so the recorder's own button and the
 * rest of the window keep working; `null` for them. */
export function hotkeyFromMouseButton(button: number): string | null {
  if (button === 3 || button === 4) return `mouse:${button + 5}`;
  return null;
}

// global-hotkey's names for the same modifier.
const ALIAS: Record<string, string> = { control: 'ctrl', option: 'alt', cmd: 'super', command: 'super' };

/** Whether two config key strings name the same keys ("Ctrl+Alt+E" and "alt+control+KeyE"):
 * modifiers in any order and case, with the engine's aliases. The engine decides; this only
 * lets Settings say so before Save. */
export function sameHotkey(a: string, b: string): boolean {
  const keys = (s: string) => s.split('+').map((k) => k.trim().toLowerCase()).filter(Boolean).map((k) => ALIAS[k] ?? k.replace(/^(key|digit)([a-z0-9])$/, '$2')).sort().join('+');
  return keys(a) !== '' && keys(a) === keys(b);
}
