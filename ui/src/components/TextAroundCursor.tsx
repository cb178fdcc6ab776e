// The text around the cursor (`[context]`, issue 41): read through accessibility to fit a
// dictation into it, and given to the LLM as data. The engine reads and fits
// (crates/dictum-engine/src/context/); this card only sets it up.

import type { ContextConfig } from '../bindings/ContextConfig';

const checked = (e: Event) => (e.target as HTMLInputElement).checked;
const num = (e: Event) => Number((e.target as HTMLInputElement).value);
const lines = (s: string) => s.split('\n').map((l) => l.trim()).filter(Boolean);

export function TextAroundCursor({ c, set, llmOn, engineError }: {
  c: ContextConfig;
  set: (p: Partial<ContextConfig>) => void;
  /** `[llm] enabled`: the LLM settings are used only then. */
  llmOn: boolean;
  /** The engine's refusal of the last Save when it is about `context.*`. */
  engineError: string | null;
}) {
  return (
    <div data-testid="text-around-cursor">
      <div class="row">
        <label>Fit the words in</label>
        <label><input type="checkbox" checked={c.around_cursor} onChange={(e) => set({ around_cursor: checked(e) })} data-testid="context-around" /> Read the text around the cursor (where the app exposes it: GTK apps, Qt and Chromium/Electron apps with accessibility on; never terminals, password fields or the apps below) so a dictation fits in: no capital mid-sentence, one space each side, no final period where the sentence goes on</label>
      </div>
      <div class="row">
        <label>Qt and Chromium apps</label>
        <label><input type="checkbox" checked={c.switch_on_accessibility} onChange={(e) => set({ switch_on_accessibility: checked(e) })} data-testid="context-switch-a11y" /> Turn on the desktop's accessibility switch while Dictum runs, so Qt and Chromium/Electron apps started afterwards expose their text too (it may make Chromium a little slower); turned off again when you clear this, if it was off</label>
      </div>
      <div class="row">
        <label>Tell the LLM where</label>
        <label><input type="checkbox" checked={c.llm} onChange={(e) => set({ llm: checked(e) })} data-testid="context-llm" /> Give the LLM cleanup the app, the window title and the text before the cursor, marked as data, when its server runs on this machine</label>
        <label><input type="checkbox" checked={c.llm_remote} onChange={(e) => set({ llm_remote: checked(e) })} data-testid="context-llm-remote" /> … also when the server is on another machine (that text then leaves this machine)</label>
        {!llmOn && <span class="muted" data-testid="context-llm-off">Used only with LLM cleanup on.</span>}
      </div>
      <div class="row">
        <label for="context-opt-out">Never read these apps<br /><span class="muted">one per line: window class, app id, program or Flatpak id</span></label>
        <textarea id="context-opt-out" rows={4} style="flex:1;min-height:0" value={c.opt_out.join('\n')} data-testid="context-opt-out"
          onChange={(e) => set({ opt_out: lines((e.target as HTMLTextAreaElement).value) })} />
      </div>
      <div class="row">
        <label for="context-budget">Longest read</label>
        <input id="context-budget" type="number" min={10} max={2000} style="width:90px" value={c.budget_ms} data-testid="context-budget"
          onChange={(e) => set({ budget_ms: Math.round(num(e) || 0) })} />
        <span class="muted">ms; past it the words are typed as heard</span>
      </div>
      {engineError && <p class="error" data-testid="context-engine-error">Not saved: {engineError}</p>}
    </div>
  );
}
