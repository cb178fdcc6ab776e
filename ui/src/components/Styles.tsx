// Styles (issue 41): the config's [[style]] tables, how one dictation is written (the LLM's
// prompt, LLM on/off, final period, another model), picked at the key by a modifier held
// with the hotkey or a key of its own, per app by a profile, or for every dictation here
// ("Every dictation"). No tables means the built-in styles: shown as they are, and saved as
// tables once one is changed. "Test" sends a sentence through the LLM as the style would.

import { useState } from 'preact/hooks';
import type { LlmConfig } from '../bindings/LlmConfig';
import type { LlmTestResult } from '../bindings/LlmTestResult';
import type { StyleConfig } from '../bindings/StyleConfig';
import { errorText, ipc } from '../ipc';
import { formatMs } from '../lib/format';
import { HotkeyRecorder } from './HotkeyRecorder';

const val = (e: Event) => (e.target as HTMLInputElement).value;
const MODIFIERS = ['shift', 'ctrl', 'alt', 'super'];

/** The LLM request a style makes: its prompt and model over the settings' (as the engine's
 * `Profile::with_style`); null when the style turns the LLM off. */
export function styleRequest(llm: LlmConfig, s: StyleConfig): LlmConfig | null {
  if (s.llm === false || (s.llm === undefined && !llm.enabled)) return null;
  return { ...llm, system_prompt: s.prompt?.trim() ? s.prompt : llm.system_prompt, model: s.model?.trim() ? s.model : llm.model };
}

/** What is wrong with the list before Save (the engine checks again on Save). */
export function styleProblems(list: StyleConfig[], hotkey: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  list.forEach((s, i) => {
    const name = s.name.trim();
    if (!name) out.push(`Style ${i + 1} needs a name.`);
    else if (!/^[\p{L}\p{N}_-]+$/u.test(name)) out.push(`“${name}”: letters, digits, - and _ only.`);
    else if (seen.has(name.toLowerCase())) out.push(`Two styles are named “${name}”.`);
    seen.add(name.toLowerCase());
    if (s.modifier && hotkey.toLowerCase().split('+').includes(s.modifier)) out.push(`“${name}”: the hotkey ${hotkey} already holds ${s.modifier}.`);
  });
  return out;
}

/** `testid` is also its id (a column label's `for`). */
function Tri({ value, on, off, set, testid }: { value: boolean | undefined; on: string; off: string; set: (v: boolean | undefined) => void; testid: string }) {
  return (
    <select id={testid} value={value === undefined ? '' : value ? 'on' : 'off'} onChange={(e) => set(val(e) === '' ? undefined : val(e) === 'on')} data-testid={testid}>
      <option value="">as in settings</option>
      <option value="on">{on}</option>
      <option value="off">{off}</option>
    </select>
  );
}

export function Styles({ list, builtin, current, hotkey, llm, vocabulary, set, setCurrent }: {
  list: StyleConfig[]; builtin: StyleConfig[]; current: string; hotkey: string; llm: LlmConfig; vocabulary: string[];
  set: (l: StyleConfig[]) => void; setCurrent: (name: string) => void;
}) {
  const shown = list.length ? list : builtin;
  const [sample, setSample] = useState('');
  const [testing, setTesting] = useState<number | null>(null);
  const [result, setResult] = useState<{ i: number; r: LlmTestResult | null; text: string } | null>(null);
  const up = (i: number, patch: Partial<StyleConfig>) => set(shown.map((s, j) => (j === i ? clean({ ...s, ...patch }) : s)));
  const issues = styleProblems(shown, hotkey);

  const test = async (i: number) => {
    const s = shown[i];
    const text = sample.trim() || 'um so i think we should uh send the report to maria by friday';
    const request = styleRequest(llm, s);
    const finish = (t: string) => (s.trailing_period === false ? t.trimEnd().replace(/(?<!\.)\.$/, '') : t);
    if (!request) { setResult({ i, r: null, text: finish(text) }); return; }
    setTesting(i);
    try {
      const r = await ipc.llmTest(request, vocabulary, text);
      setResult({ i, r, text: finish(r.text) });
    } catch (e) {
      setResult({ i, r: { outcome: 'failed', input: text, output: null, text, reject_reason: null, error: errorText(e), latency_ms: 0, tokens_per_sec: null, load_ms: null, model_loaded: false, key: '' }, text });
    } finally { setTesting(null); }
  };

  return (
    <div data-testid="styles">
      <p class="muted">Pick a style for one dictation: hold its modifier with the hotkey ({hotkey}), press its own key, or run
        <code> dictum ctl press --style NAME</code> (on Wayland, bind that to a shortcut). A per-app profile can pick one too.</p>
      <div class="row">
        <label for="style-current">Every dictation</label>
        <select id="style-current" value={current} onChange={(e) => setCurrent(val(e))} data-testid="style-current">
          <option value="">no style (as in settings)</option>
          {shown.map((s) => <option key={s.name} value={s.name}>{s.name}</option>)}
        </select>
      </div>
      <div class="row">
        <label for="style-sample">Test sentence</label>
        <input id="style-sample" type="text" style="flex:1" placeholder="um so i think we should uh send the report to maria by friday"
          value={sample} onInput={(e) => setSample(val(e))} data-testid="style-sample" />
      </div>
      {!list.length && <p class="muted" data-testid="styles-builtin">These are the built-in styles; a change saves them as your own.</p>}
      {shown.map((s, i) => (
        <fieldset key={i} class="profile" data-testid={`style-${i}`}>
          <div class="row">
            <label for={`style-${i}-name`}>Name</label>
            <input id={`style-${i}-name`} type="text" value={s.name} onInput={(e) => up(i, { name: val(e) })} data-testid={`style-${i}-name`} />
            <button onClick={() => set(shown.filter((_, j) => j !== i))} data-testid={`style-${i}-remove`}>Remove</button>
            <button disabled={testing !== null} onClick={() => test(i)} data-testid={`style-${i}-test`}>{testing === i ? 'Testing…' : 'Test'}</button>
          </div>
          <div class="row">
            <label for={`style-${i}-llm`}>LLM cleanup</label>
            <Tri value={s.llm} on="on" off="off (as spoken)" set={(llm) => up(i, { llm })} testid={`style-${i}-llm`} />
            <label for={`style-${i}-period`}>Final period</label>
            <Tri value={s.trailing_period} on="keep" off="drop" set={(trailing_period) => up(i, { trailing_period })} testid={`style-${i}-period`} />
          </div>
          <div class="row">
            <label for={`style-${i}-model`}>LLM model</label>
            <input id={`style-${i}-model`} type="text" placeholder={`as in settings (${llm.model})`} value={s.model ?? ''} onInput={(e) => up(i, { model: val(e) })} data-testid={`style-${i}-model`} />
            <label for={`style-${i}-modifier`}>Modifier</label>
            <select id={`style-${i}-modifier`} value={s.modifier ?? ''} onChange={(e) => up(i, { modifier: val(e) })} data-testid={`style-${i}-modifier`}>
              <option value="">none</option>
              {MODIFIERS.map((m) => <option key={m} value={m}>{m} + {hotkey}</option>)}
            </select>
          </div>
          <div class="row">
            <label>Key of its own</label>
            <HotkeyRecorder value={s.hotkey || 'no key'} onChange={(hotkey) => up(i, { hotkey })} testid={`style-${i}-hotkey`} />
            {s.hotkey && <button onClick={() => up(i, { hotkey: '' })} data-testid={`style-${i}-hotkey-none`}>No key</button>}
          </div>
          <div class="row">
            <label for={`style-${i}-prompt`}>LLM prompt<br /><span class="muted">empty = yours</span></label>
            <textarea id={`style-${i}-prompt`} style="flex:1" value={s.prompt ?? ''} onInput={(e) => up(i, { prompt: (e.target as HTMLTextAreaElement).value })} data-testid={`style-${i}-prompt`} />
          </div>
          {result?.i === i && (
            <div class="result-box" data-testid={`style-${i}-result`}>
              {result.r === null
                ? <span><span class="badge">no LLM</span> → {result.text}</span>
                : <span>
                  <span class={`badge ${result.r.outcome === 'cleaned' ? 'ok' : result.r.outcome === 'rejected' ? 'warn' : 'error'}`}>{result.r.outcome}</span>{' '}
                  {formatMs(result.r.latency_ms)} → {result.text}
                  {result.r.reject_reason && <span class="muted"> (kept the raw text: {result.r.reject_reason})</span>}
                  {result.r.error && <span class="error"> {result.r.error}</span>}
                </span>}
            </div>
          )}
        </fieldset>
      ))}
      {issues.map((m) => <p class="error" key={m} data-testid="style-problem">{m}</p>)}
      <button onClick={() => set([...shown, { name: `style-${shown.length + 1}`, llm: true }])} data-testid="style-add">Add a style</button>
    </div>
  );
}

/** Empty text fields are left out of the table (the engine reads none as "as in settings"). */
function clean(s: StyleConfig): StyleConfig {
  const out: StyleConfig = { ...s };
  for (const k of ['prompt', 'model', 'modifier', 'hotkey'] as const) if (!out[k]?.trim()) delete out[k];
  return out;
}
