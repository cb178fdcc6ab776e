// The voice-command settings' list edits (issue 16), kept pure for the unit tests.

import type { CommandsConfig } from '../bindings/CommandsConfig';
import type { CustomCommand } from '../bindings/CustomCommand';

/** The built-ins, by the names `[commands] disabled` takes, with what they do. */
export const BUILT_INS: [string, string][] = [
  ['new line', 'Return'],
  ['new paragraph', 'Return twice'],
  ['press enter', 'Return'],
  ['tab', 'Tab ("tab" alone, or "press tab")'],
  ['scratch that', 'removes the previous dictation ("delete that" too)'],
  ['undo', 'Ctrl+Z ("undo" alone, or "undo that")'],
  ['stop dictation', 'ends hands-free listening'],
];

/** `disabled` with `name` switched on (removed) or off (added), keeping the others. */
export function withBuiltIn(disabled: string[], name: string, on: boolean): string[] {
  const rest = disabled.filter((d) => d.trim().toLowerCase() !== name);
  return on ? rest : [...rest, name];
}

/** The custom list with row `i` changed, removed (patch null) or appended (i = length). */
export function withCustom(custom: CustomCommand[], i: number, patch: Partial<CustomCommand> | null): CustomCommand[] {
  if (patch === null) return custom.filter((_, k) => k !== i);
  if (i >= custom.length) return [...custom, { phrase: '', keys: '', ...patch }];
  return custom.map((c, k) => (k === i ? { ...c, ...patch } : c));
}

/** Rows without a phrase or keys are not saved (the engine would refuse them). */
export function savable(c: CommandsConfig): CommandsConfig {
  return { ...c, custom: c.custom.filter((r) => r.phrase.trim() && r.keys.trim()) };
}
