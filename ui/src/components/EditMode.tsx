// Edit by voice (`[edit]`, issue 30): select text, hold the edit key, say what to do with it;
// the LLM's answer replaces the selection. The engine does the edit (crates/dictum-engine/src/
// edit/); this card only sets it up.

import type { EditConfig } from '../bindings/EditConfig';
import { sameHotkey } from '../lib/hotkey';
import { HotkeyRecorder } from './HotkeyRecorder';

const checked = (e: Event) => (e.target as HTMLInputElement).checked;
const num = (e: Event) => Number((e.target as HTMLInputElement).value);

export function EditMode({ c, set, llmOn, dictationKey, engineError }: {
  c: EditConfig;
  set: (p: Partial<EditConfig>) => void;
  /** `[llm] enabled`: edits use that server. */
  llmOn: boolean;
  dictationKey: string;
  /** The engine's refusal of the last Save when it is about `edit.*`. */
  engineError: string | null;
}) {
  const clash = sameHotkey(c.hotkey, dictationKey);
  return (
    <div data-testid="edit-mode">
      <div class="row">
        <label>Edit a selection</label>
        <label><input type="checkbox" checked={c.enabled} onChange={(e) => set({ enabled: checked(e) })} data-testid="edit-enabled" /> Select text, hold the edit key, say what to do with it (“make this more formal”): the answer replaces the selection</label>
      </div>
      <p class="muted">The selection and your words go to the server of “LLM cleanup”, and its answer may change the meaning (that is the point). Nothing is typed in a terminal, without a selection, or when the focus moved. The original stays in history, and on the clipboard if you like.</p>
      {c.enabled && !llmOn && <p class="error" data-testid="edit-needs-llm">Edits need an LLM: turn on “LLM cleanup” above and choose its server.</p>}
      <div class="row">
        <label>Edit key</label>
        <HotkeyRecorder value={c.hotkey} onChange={(hotkey) => set({ hotkey })} testid="edit-hotkey" />
      </div>
      {clash && <p class="error" data-testid="edit-hotkey-clash">The edit key is the dictation hotkey; choose another one for edits.</p>}
      <div class="row">
        <label>Original</label>
        <label><input type="checkbox" checked={c.keep_on_clipboard} onChange={(e) => set({ keep_on_clipboard: checked(e) })} data-testid="edit-keep-clipboard" /> Put the original selection on the clipboard before replacing it</label>
      </div>
      <div class="row">
        <label>Line breaks</label>
        <label><input type="checkbox" checked={c.type_newlines} onChange={(e) => set({ type_newlines: checked(e) })} data-testid="edit-newlines" /> Typed as Return (a list stays a list); off: as spaces, for one-line fields where Return sends a form</label>
      </div>
      <div class="row">
        <label for="edit-timeout">Wait for the answer</label>
        <input id="edit-timeout" type="number" min={1} max={600} style="width:90px" value={Math.round(c.timeout_ms / 1000)} data-testid="edit-timeout"
          onChange={(e) => set({ timeout_ms: Math.max(1, Math.round(num(e) || 0)) * 1000 })} />
        <span class="muted">seconds at most; past that nothing is typed</span>
      </div>
      <div class="row">
        <label for="edit-max-selection">Longest selection</label>
        <input id="edit-max-selection" type="number" min={1} max={100000} style="width:110px" value={c.max_selection_chars} data-testid="edit-max-selection"
          onChange={(e) => set({ max_selection_chars: Math.max(1, Math.round(num(e) || 0)) })} />
        <span class="muted">characters; a longer selection is refused, not cut</span>
      </div>
      <div class="row">
        <label for="edit-prompt">Instructions to the LLM<br /><span class="muted">empty: the built-in ones</span></label>
        <textarea id="edit-prompt" style="flex:1" value={c.prompt} data-testid="edit-prompt"
          onChange={(e) => set({ prompt: (e.target as HTMLTextAreaElement).value })} />
      </div>
      {engineError && <p class="error" data-testid="edit-engine-error">Not saved: {engineError}</p>}
    </div>
  );
}
