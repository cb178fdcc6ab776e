// Per-app profiles (issue 16): the config's [[profile]] tables. The window focused at the key
// press picks the first profile whose patterns match; its overrides apply to that dictation
// only. "Use the window focused in 3 s" reads the window you click into (the engine's own
// probe) and fills exact patterns for it. Logic in lib/profiles.ts.

import { useState } from 'preact/hooks';
import type { FocusedWindow } from '../bindings/FocusedWindow';
import type { ProfileConfig } from '../bindings/ProfileConfig';
import { errorText, ipc } from '../ipc';
import { added, fromTri, moved, patternsFor, pick, problems, removed, tri, update, type Tri } from '../lib/profiles';

const val = (e: Event) => (e.target as HTMLInputElement).value;
const lines = (s: string) => s.split('\n').map((l) => l.trim()).filter(Boolean);

/** `testid` is also its id (a column label's `for`). */
function TriSelect({ value, on, off, set, testid }: { value: boolean | undefined; on: string; off: string; set: (v: boolean | undefined) => void; testid: string }) {
  return (
    <select id={testid} value={tri(value)} onChange={(e) => set(fromTri(val(e) as Tri))} data-testid={testid}>
      <option value="inherit">as in settings</option>
      <option value="on">{on}</option>
      <option value="off">{off}</option>
    </select>
  );
}

export function Profiles({ list, set, languages, styles }: { list: ProfileConfig[]; set: (l: ProfileConfig[]) => void; languages: [string, string][]; styles: string[] }) {
  const [picking, setPicking] = useState<number | null>(null);
  const [picked, setPicked] = useState<{ i: number; w: FocusedWindow | null; error?: string } | null>(null);
  const issues = problems(list);

  const usePicked = async (i: number) => {
    setPicking(i);
    setPicked(null);
    try {
      const w = await ipc.focusedWindowIn(3);
      setPicked({ i, w });
      if (w.known) set(update(list, i, patternsFor(w)));
    } catch (e) {
      setPicked({ i, w: null, error: errorText(e) });
    } finally {
      setPicking(null);
    }
  };

  return (
    <div data-testid="profiles">
      <p class="muted">The window focused when you press the hotkey picks the first profile that matches
        (class and title are regular expressions, any case). No match: your settings above.</p>
      {list.map((p, i) => {
        const up = (patch: Partial<Record<keyof ProfileConfig, unknown>>) => set(update(list, i, patch));
        return (
          <fieldset key={i} class="profile" data-testid={`profile-${i}`}>
            <div class="row">
              <label for={`profile-${i}-name`}>Name</label>
              <input id={`profile-${i}-name`} type="text" value={p.name} onChange={(e) => up({ name: val(e) })} data-testid={`profile-${i}-name`} />
              <button disabled={i === 0} onClick={() => set(moved(list, i, -1))} title="Earlier: checked first">↑</button>
              <button disabled={i === list.length - 1} onClick={() => set(moved(list, i, 1))} title="Later">↓</button>
              <button onClick={() => set(removed(list, i))} data-testid={`profile-${i}-remove`}>Remove</button>
            </div>
            <div class="row">
              <label for={`profile-${i}-class`}>Window class</label>
              <input id={`profile-${i}-class`} type="text" placeholder="e.g. ^xterm$" value={p.match_class ?? ''} onChange={(e) => up({ match_class: val(e) })} data-testid={`profile-${i}-class`} />
              <label for={`profile-${i}-title`}>Title</label>
              <input id={`profile-${i}-title`} type="text" placeholder="e.g. compose|reply" value={p.match_title ?? ''} onChange={(e) => up({ match_title: val(e) })} data-testid={`profile-${i}-title`} />
              <button disabled={picking !== null} onClick={() => usePicked(i)} data-testid={`profile-${i}-pick`}>
                {picking === i ? 'Click into the window…' : 'Use the window focused in 3 s'}
              </button>
            </div>
            {picked?.i === i && (
              <p class={picked.w?.known ? 'muted' : 'error'} data-testid={`profile-${i}-picked`}>
                {picked.error ?? (picked.w?.known
                  ? `Picked ${picked.w.class ?? '(no class)'} — “${picked.w.title ?? ''}” (it now gets: ${pick(update(list, i, patternsFor(picked.w)), picked.w.class, picked.w.title)})`
                  : 'The focused app cannot be known on this desktop (GNOME/KDE Wayland): dictations there use your settings.')}
              </p>
            )}
            <div class="row">
              <label for={`profile-${i}-llm`}>LLM cleanup</label>
              <TriSelect value={p.llm} on="on" off="off" set={(llm) => up({ llm })} testid={`profile-${i}-llm`} />
              <label for={`profile-${i}-period`}>Final period</label>
              <TriSelect value={p.trailing_period} on="keep" off="drop" set={(trailing_period) => up({ trailing_period })} testid={`profile-${i}-period`} />
              <label for={`profile-${i}-commands`}>Voice commands</label>
              <TriSelect value={p.commands} on="on" off="off" set={(commands) => up({ commands })} testid={`profile-${i}-commands`} />
            </div>
            <div class="row">
              <label for={`profile-${i}-inject`}>Insert text by</label>
              <select id={`profile-${i}-inject`} value={p.inject_method ?? ''} onChange={(e) => up({ inject_method: val(e) || undefined })} data-testid={`profile-${i}-inject`}>
                <option value="">as in settings</option>
                <option value="type">typing</option>
                <option value="paste">pasting</option>
              </select>
              <label for={`profile-${i}-language`}>Language</label>
              <select id={`profile-${i}-language`} value={p.language ?? ''} onChange={(e) => up({ language: val(e) || undefined })} data-testid={`profile-${i}-language`}>
                <option value="">as in settings</option>
                {languages.map(([code, name]) => <option key={code} value={code}>{name} ({code})</option>)}
              </select>
              <label for={`profile-${i}-style`}>Style</label>
              <select id={`profile-${i}-style`} value={p.style ?? ''} onChange={(e) => up({ style: val(e) || undefined })} data-testid={`profile-${i}-style`}>
                <option value="">as in settings</option>
                {styles.map((name) => <option key={name} value={name}>{name}</option>)}
              </select>
              <label for={`profile-${i}-task`}>Speech</label>
              <select id={`profile-${i}-task`} value={p.task ?? ''} onChange={(e) => up({ task: val(e) || undefined })} data-testid={`profile-${i}-task`}>
                <option value="">as in settings</option>
                <option value="transcribe">transcribe</option>
                <option value="translate">translate to English (multilingual model)</option>
              </select>
            </div>
            <div class="row">
              <label for={`profile-${i}-vocabulary`}>Vocabulary<br /><span class="muted">replaces yours; empty = yours</span></label>
              <textarea id={`profile-${i}-vocabulary`} style="flex:1" value={(p.vocabulary ?? []).join('\n')} onChange={(e) => up({ vocabulary: lines((e.target as HTMLTextAreaElement).value) })} data-testid={`profile-${i}-vocabulary`} />
            </div>
            <div class="row">
              <label for={`profile-${i}-prompt`}>LLM prompt<br /><span class="muted">empty = yours</span></label>
              <textarea id={`profile-${i}-prompt`} style="flex:1" value={p.llm_prompt ?? ''} onChange={(e) => { const v = (e.target as HTMLTextAreaElement).value; up({ llm_prompt: v.trim() ? v : undefined }); }} data-testid={`profile-${i}-prompt`} />
            </div>
          </fieldset>
        );
      })}
      {issues.map((m) => <p class="error" key={m} data-testid="profile-problem">{m}</p>)}
      <button onClick={() => set(added(list))} data-testid="profile-add">Add a profile</button>
    </div>
  );
}
