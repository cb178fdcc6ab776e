// Voice commands (issue 16): on/off, spoken punctuation, which built-ins act, and your own
// phrases with the keys they press. Matching happens in the engine (commands/), offline.

import type { CommandsConfig } from '../bindings/CommandsConfig';
import { BUILT_INS, withBuiltIn, withCustom } from '../lib/commands';

const checked = (e: Event) => (e.target as HTMLInputElement).checked;
const val = (e: Event) => (e.target as HTMLInputElement).value;

export function VoiceCommands({ c, set }: { c: CommandsConfig; set: (p: Partial<CommandsConfig>) => void }) {
  const on = (name: string) => !c.disabled.some((d) => d.trim().toLowerCase() === name);
  return (
    <div data-testid="voice-commands">
      <div class="row">
        <label>Commands</label>
        <label><input type="checkbox" checked={c.enabled} onChange={(e) => set({ enabled: checked(e) })} data-testid="commands-enabled" /> Spoken commands act instead of being typed</label>
      </div>
      <p class="muted">Said alone or at the very end of a dictation ("…the report new line"), never in the middle ("a new line of products" stays text).</p>
      {c.enabled && (
        <div class="row" style="align-items:flex-start">
          <label>Built-in commands</label>
          <ul style="list-style:none;padding-left:0;margin:0" data-testid="commands-built-in">
            {BUILT_INS.map(([name, what]) => (
              <li key={name}>
                <label><input type="checkbox" checked={on(name)} onChange={(e) => set({ disabled: withBuiltIn(c.disabled, name, checked(e)) })} data-testid={`command-${name.replace(' ', '-')}`} /> “{name}” — {what}</label>
              </li>
            ))}
          </ul>
        </div>
      )}
      <div class="row">
        <label>Punctuation</label>
        <label><input type="checkbox" checked={c.punctuation} onChange={(e) => set({ punctuation: checked(e) })} data-testid="commands-punctuation" /> Spoken punctuation ("comma", "period", "question mark" become marks)</label>
      </div>
      {c.enabled && (
        <div data-testid="commands-custom">
          {c.custom.map((r, i) => (
            <div class="row" key={i}>
              <label for={`custom-phrase-${i}`}>When I say</label>
              <input id={`custom-phrase-${i}`} type="text" value={r.phrase} placeholder="save the file" onChange={(e) => set({ custom: withCustom(c.custom, i, { phrase: val(e) }) })} data-testid={`custom-phrase-${i}`} />
              <label for={`custom-keys-${i}`}>press</label>
              <input id={`custom-keys-${i}`} type="text" style="width:160px" value={r.keys} placeholder="ctrl+s" onChange={(e) => set({ custom: withCustom(c.custom, i, { keys: val(e) }) })} data-testid={`custom-keys-${i}`} />
              <button onClick={() => set({ custom: withCustom(c.custom, i, null) })} title="Remove">✕</button>
            </div>
          ))}
          <button onClick={() => set({ custom: withCustom(c.custom, c.custom.length, {}) })} data-testid="custom-add">Add a command</button>
          <span class="muted"> Keys: chords separated by spaces, e.g. ctrl+s, Return Return, ctrl+shift+t.</span>
        </div>
      )}
    </div>
  );
}
