// Settings: every value is the engine's config (types generated from Rust). Save writes the
// file and the app applies it at once (no restart); the model manager and the autostart switch
// act immediately.

import { useEffect, useState } from 'preact/hooks';
import { EditMode } from '../components/EditMode';
import { HotkeyRecorder } from '../components/HotkeyRecorder';
import { MeasureAgain } from '../components/MeasureAgain';
import { Profiles } from '../components/Profiles';
import { Snippets } from '../components/Snippets';
import { Styles } from '../components/Styles';
import { SpeechServer } from '../components/SpeechServer';
import { TextAroundCursor } from '../components/TextAroundCursor';
import { VoiceCommands } from '../components/VoiceCommands';
import { savable } from '../lib/commands';
import { sameHotkey } from '../lib/hotkey';
import { savableReplacements, savableSnippets, translateProblem } from '../lib/snippets';
import type { Config } from '../bindings/Config';
import type { ConfigView } from '../bindings/ConfigView';
import type { InjectBackend } from '../bindings/InjectBackend';
import type { MicrophoneMode } from '../bindings/MicrophoneMode';
import type { DownloadProgress } from '../bindings/DownloadProgress';
import type { LlmTestResult } from '../bindings/LlmTestResult';
import type { ModelStatus } from '../bindings/ModelStatus';
import type { SttTask } from '../bindings/SttTask';
import { errorText, events, ipc } from '../ipc';
import { formatBytes, formatMs, LANGUAGES, progressPct, splitList } from '../lib/format';

const lines = (s: string) => s.split('\n').map((l) => l.trim()).filter(Boolean);

export function Settings() {
  const [view, setView] = useState<ConfigView | null>(null);
  const [cfg, setCfg] = useState<Config | null>(null);
  // `config`: the form the message is about (a refusal is shown in its card until the form changes).
  const [status, setStatus] = useState<{ ok: boolean; text: string; config?: string } | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  useEffect(() => {
    ipc.getConfig().then((v) => { setView(v); setCfg(v.config); }, (e) => setLoadError(errorText(e)));
  }, []);

  if (loadError) return <p class="error" data-testid="load-error">{loadError}</p>;
  if (!cfg || !view) return <p class="muted">Loading…</p>;

  const dirty = JSON.stringify(cfg) !== JSON.stringify(view.config);
  const save = async () => {
    try {
      const v = await ipc.saveConfig({ ...cfg, commands: savable(cfg.commands), snippet: savableSnippets(cfg.snippet), replace: savableReplacements(cfg.replace) });
      setView(v);
      setCfg(v.config);
      setStatus({ ok: true, text: 'Saved — applied now' });
    } catch (e) {
      setStatus({ ok: false, text: errorText(e), config: JSON.stringify(cfg) });
    }
  };
  // The engine's refusal of the last Save, also shown in the card it is about ("invalid
  // setting snippet #2.phrase: ...", "invalid setting stt.task: ...").
  const refusedAt = (keys: RegExp) => (status && !status.ok && status.config === JSON.stringify(cfg) && keys.test(status.text) ? status.text : null);
  const taskRefused = refusedAt(/\bstt\.task:/);
  const taskProblem = taskRefused ? null : translateProblem(cfg.stt);
  // From the latest state, not this render's: two changes before a re-render (a text field's
  // change on blur, then a select) must both stay.
  const up = <K extends keyof Config>(section: K, patch: Partial<Config[K]>) =>
    setCfg((c) => (c ? { ...c, [section]: { ...c[section], ...patch } } : c));

  return (
    <div data-testid="settings" class="settings">
      <div class="savebar">
        <button class="primary" onClick={save} disabled={!dirty} data-testid="save">Save</button>
        <button onClick={() => setCfg(view.config)} disabled={!dirty}>Revert</button>
        {status && <span class={status.ok ? 'ok' : 'error'} data-testid="save-status">{status.text}</span>}
        <span class="muted" style="margin-left:auto">{view.path}</span>
      </div>
      {view.warnings.map((w) => <p class="error" key={w}>{w}</p>)}

      <section class="card" data-testid="card-dictation">
        <h2>Dictation</h2>
        <div class="row">
          <label>Hotkey</label>
          <HotkeyRecorder value={cfg.dictation.hotkey} onChange={(hotkey) => up('dictation', { hotkey })} />
        </div>
        <div class="row">
          <label>Type the last dictation again</label>
          <HotkeyRecorder value={cfg.dictation.retype_hotkey || 'no key'} onChange={(retype_hotkey) => up('dictation', { retype_hotkey })} testid="retype-hotkey" />
          {cfg.dictation.retype_hotkey && <button onClick={() => up('dictation', { retype_hotkey: '' })} data-testid="retype-hotkey-none">No key</button>}
          {sameHotkey(cfg.dictation.retype_hotkey, cfg.dictation.hotkey) && <span class="error" data-testid="retype-hotkey-clash">This is the dictation hotkey; choose another key.</span>}
        </div>
        <div class="row" role="radiogroup" aria-labelledby="mode-label">
          <label id="mode-label">Mode</label>
          {(['push_to_talk', 'toggle', 'hands_free'] as const).map((m) => (
            <label key={m}>
              <input type="radio" name="mode" checked={cfg.dictation.mode === m} onChange={() => up('dictation', { mode: m })} data-testid={`mode-${m}`} />{' '}
              {m === 'push_to_talk' ? 'Push-to-talk (hold)' : m === 'toggle' ? 'Toggle (press to start / stop)' : 'Hands-free (press to listen; each pause ends a dictation)'}
            </label>
          ))}
        </div>
        <div class="row">
          <label for="inject-method">Insert text by</label>
          <select id="inject-method" value={cfg.inject.method} onChange={(e) => up('inject', { method: (e.target as HTMLSelectElement).value as 'type' | 'paste' })} data-testid="inject-method">
            <option value="type">Typing it (synthesized keys)</option>
            <option value="paste">Pasting it (clipboard, restored after)</option>
          </select>
        </div>
        <div class="row">
          <label for="inject-backend">Keys go through</label>
          <select id="inject-backend" value={cfg.inject.backend} onChange={(e) => up('inject', { backend: (e.target as HTMLSelectElement).value as InjectBackend })} data-testid="inject-backend">
            <option value="auto">Automatic (by desktop and window; `dictum doctor` shows the choice)</option>
            <option value="virtual-keyboard">Wayland virtual keyboard (sway, Hyprland)</option>
            <option value="portal">Remote Desktop portal (GNOME, KDE)</option>
            <option value="x11">X11 (XTest)</option>
            <option value="wtype">wtype</option>
            <option value="uinput">uinput keyboard (any desktop, your layout; needs /dev/uinput)</option>
            <option value="ydotool">ydotool (US layout only)</option>
          </select>
        </div>
        <div class="row">
          <label for="terminal-classes">Terminal window classes<br /><span class="muted">separated by commas or lines</span></label>
          <textarea id="terminal-classes" rows={2} style="flex:1;min-height:0" value={cfg.inject.terminal_classes.join(', ')} data-testid="terminal-classes"
            onChange={(e) => up('inject', { terminal_classes: splitList((e.target as HTMLTextAreaElement).value) })} />
        </div>
        <div class="row">
          <label>Words while you speak</label>
          <label><input type="checkbox" checked={cfg.dictation.live_words} data-testid="live-words"
            onChange={(e) => up('dictation', { live_words: (e.target as HTMLInputElement).checked })} /> The recording indicator shows what was heard so far (the typed text is always the final one)</label>
        </div>
        <div class="row">
          <label>Music and videos</label>
          <label><input type="checkbox" checked={cfg.dictation.pause_media} data-testid="pause-media"
            onChange={(e) => up('dictation', { pause_media: (e.target as HTMLInputElement).checked })} /> Paused while you dictate, playing again once the text is typed (MPRIS players)</label>
          <label><input type="checkbox" checked={cfg.dictation.mute_output} data-testid="mute-output"
            onChange={(e) => up('dictation', { mute_output: (e.target as HTMLInputElement).checked })} /> Or: the output muted while you dictate, unmuted once the text is typed (every sound, sound cues too)</label>
        </div>
        <div class="row">
          <label>Sound cues</label>
          <label><input type="checkbox" checked={cfg.dictation.sound_cues} data-testid="sound-cues"
            onChange={(e) => up('dictation', { sound_cues: (e.target as HTMLInputElement).checked })} /> A short sound when recording starts and stops, a low one when a dictation fails</label>
          <label for="sound-volume">Volume{' '}
            <input id="sound-volume" type="range" min={0} max={1} step={0.05} value={cfg.dictation.sound_volume} data-testid="sound-volume"
              disabled={!cfg.dictation.sound_cues} style="vertical-align:middle"
              onChange={(e) => up('dictation', { sound_volume: Number((e.target as HTMLInputElement).value) })} />
          </label>
        </div>
        <div class="row">
          <label>Start at login</label>
          <Autostart initial={view.autostart} />
        </div>
      </section>

      <section class="card" data-testid="card-microphone">
        <h2>Microphone</h2>
        <Microphone device={cfg.dictation.input_device} onChange={(input_device) => up('dictation', { input_device })} />
        <div class="row">
          <label for="mic-open">Open</label>
          <select id="mic-open" value={cfg.dictation.microphone} data-testid="mic-open"
            onChange={(e) => up('dictation', { microphone: (e.target as HTMLSelectElement).value as MicrophoneMode })}>
            <option value="auto">While dictating and {cfg.dictation.microphone_keep_s} s after (a Bluetooth headset: only while dictating)</option>
            <option value="on_demand">Only while dictating</option>
            <option value="always">Always (a pre-roll before every press)</option>
          </select>
          <span class="muted">While it is open the desktop shows the microphone in use and a Bluetooth headset stays in call quality. The pre-roll (the audio just before the press) needs it open before the press; closed, the recording starts at the press.</span>
        </div>
      </section>

      <section class="card" data-testid="card-speech">
        <h2>Speech recognition</h2>
        <div class="row">
          <label for="language">Language</label>
          <select id="language" value={cfg.stt.language} onChange={(e) => up('stt', { language: (e.target as HTMLSelectElement).value })} data-testid="language">
            {LANGUAGES.map(([code, name]) => <option key={code} value={code}>{name} ({code})</option>)}
          </select>
        </div>
        <div class="row">
          <label for="stt-task">Task</label>
          <select id="stt-task" value={cfg.stt.task} onChange={(e) => up('stt', { task: (e.target as HTMLSelectElement).value as SttTask })} data-testid="stt-task">
            <option value="transcribe">Transcribe (text in the language spoken)</option>
            <option value="translate">Translate to English (speak another language, English is typed)</option>
          </select>
          <span class="muted">Translating needs a multilingual model: English-only models (.en) cannot translate.{cfg.stt.task === 'translate' && cfg.stt.language === 'en' ? ' Language “English” means: detect the language spoken.' : ''}</span>
        </div>
        {taskProblem && <p class="error" data-testid="task-problem">{taskProblem}</p>}
        {taskRefused && <p class="error" data-testid="task-engine-error">Not saved: {taskRefused}</p>}
        <div class="row">
          <label for="vocabulary">Custom vocabulary<br /><span class="muted">one word or name per line</span></label>
          <textarea id="vocabulary" style="flex:1" value={cfg.stt.vocabulary.join('\n')} data-testid="vocabulary"
            onChange={(e) => up('stt', { vocabulary: lines((e.target as HTMLTextAreaElement).value) })} />
        </div>
        <SpeechServer stt={cfg.stt} set={(p) => up('stt', p)} />
      </section>

      <section class="card" data-testid="card-snippets">
        <h2>Snippets and replacements</h2>
        <Snippets snippets={cfg.snippet} replacements={cfg.replace} engineError={refusedAt(/\b(snippet|replace) #\d+/)}
          setSnippets={(edit) => setCfg((c) => (c ? { ...c, snippet: edit(c.snippet) } : c))}
          setReplacements={(edit) => setCfg((c) => (c ? { ...c, replace: edit(c.replace) } : c))} />
      </section>

      <section class="card" data-testid="card-commands">
        <h2>Voice commands</h2>
        <VoiceCommands c={cfg.commands} set={(p) => up('commands', p)} />
      </section>

      <section class="card" data-testid="card-models">
        <h2>Models</h2>
        <div class="row">
          <label for="base-url">Download from</label>
          <input id="base-url" type="text" style="flex:1" value={cfg.models.base_url} data-testid="base-url"
            onChange={(e) => up('models', { base_url: (e.target as HTMLInputElement).value })} />
        </div>
        <p class="muted">The models' public home by default; a mirror URL or a local folder (/path or file:///path) works too. Save to use a new address. Files go to {view.models_dir}.</p>
        {/* Switching to a measured recommendation saves only the model, over the saved settings
            (unsaved edits in the form stay unsaved). */}
        <Models onDefault={(v) => { setView(v); setCfg({ ...cfg, stt: { ...cfg.stt, model: v.config.stt.model } }); }}
          saveModel={(model) => ipc.saveConfig({ ...view.config, stt: { ...view.config.stt, model } })} />
      </section>

      <section class="card" data-testid="card-llm">
        <h2>LLM cleanup</h2>
        <Llm cfg={cfg} up={up} />
      </section>

      <section class="card" data-testid="card-styles">
        <h2>Styles</h2>
        <Styles list={cfg.style ?? []} builtin={view.builtin_styles} current={cfg.dictation.style} hotkey={cfg.dictation.hotkey}
          llm={cfg.llm} vocabulary={cfg.stt.vocabulary}
          set={(style) => setCfg((c) => (c ? { ...c, style } : c))} setCurrent={(style) => up('dictation', { style })} />
        {refusedAt(/\b(style |dictation\.style|profile "[^"]*"\.style)/) && <p class="error" data-testid="styles-engine-error">{status?.text}</p>}
      </section>

      <section class="card" data-testid="card-context">
        <h2>Text around the cursor</h2>
        <TextAroundCursor c={cfg.context} set={(p) => up('context', p)} llmOn={cfg.llm.enabled}
          engineError={refusedAt(/\bcontext\.[a-z_]+:/)} />
      </section>

      <section class="card" data-testid="card-edit">
        <h2>Edit by voice</h2>
        <EditMode c={cfg.edit} set={(p) => up('edit', p)} llmOn={cfg.llm.enabled} dictationKey={cfg.dictation.hotkey}
          engineError={refusedAt(/\bedit\.[a-z_]+:/)} />
      </section>

      <section class="card" data-testid="card-profiles">
        <h2>Per-app profiles</h2>
        <Profiles list={cfg.profile ?? []} languages={LANGUAGES} styles={(cfg.style?.length ? cfg.style : view.builtin_styles).map((s) => s.name)} set={(profile) => setCfg((c) => (c ? { ...c, profile } : c))} />
      </section>

      <section class="card" data-testid="card-privacy">
        <h2>Privacy</h2>
        <div class="row">
          <label>Keep audio</label>
          <label><input type="checkbox" checked={cfg.history.keep_audio} data-testid="keep-audio"
            onChange={(e) => up('history', { keep_audio: (e.target as HTMLInputElement).checked })} /> Keep a WAV of each dictation next to the history</label>
        </div>
        <div class="row">
          <label for="retention">Keep history for</label>
          <input id="retention" type="number" min={0} style="width:90px" value={cfg.history.retention_days} data-testid="retention"
            onChange={(e) => up('history', { retention_days: Math.max(0, Number((e.target as HTMLInputElement).value) || 0) })} />
          <span class="muted">days (0 = forever)</span>
        </div>
      </section>
    </div>
  );
}

function Autostart({ initial }: { initial: boolean }) {
  const [on, setOn] = useState(initial);
  const [err, setErr] = useState<string | null>(null);
  return (
    <label>
      <input type="checkbox" checked={on} data-testid="autostart" onChange={async (e) => {
        const want = (e.target as HTMLInputElement).checked;
        setOn(want); // show the click at once; the app's answer (the file's state) follows
        try { setOn(await ipc.setAutostart(want)); setErr(null); } catch (x) { setOn(!want); setErr(errorText(x)); }
      }} /> Start Dictum in the tray when I log in
      {err && <span class="error"> {err}</span>}
    </label>
  );
}

function Microphone({ device, onChange }: { device: string; onChange: (d: string) => void }) {
  const [mics, setMics] = useState<string[] | null>(null);
  const [level, setLevel] = useState(0);
  const [err, setErr] = useState<string | null>(null);
  useEffect(() => { ipc.listMics().then(setMics, (e) => setErr(errorText(e))); }, []);
  useEffect(() => {
    let stop: (() => void) | undefined;
    events.micLevel((l) => { setLevel(l.level); setErr(l.error); }).then((u) => (stop = u));
    ipc.startLevelMeter(device).catch((e) => setErr(errorText(e)));
    return () => { stop?.(); ipc.stopLevelMeter().catch(() => undefined); };
  }, [device]);
  return (
    <>
      <div class="row">
        <label for="mic">Input device</label>
        <select id="mic" value={device} onChange={(e) => onChange((e.target as HTMLSelectElement).value)} data-testid="mic">
          <option value="">System default</option>
          {(mics ?? []).map((m) => <option key={m} value={m}>{m}</option>)}
          {device && mics && !mics.includes(device) && <option value={device}>{device} (not connected)</option>}
        </select>
      </div>
      <div class="row">
        <label>Input level</label>
        <div class="meter" data-testid="level"><div style={{ width: `${Math.round(Math.min(1, level) * 100)}%` }} /></div>
        {err && <span class="error">{err}</span>}
      </div>
    </>
  );
}

function Models({ onDefault, saveModel }: { onDefault: (v: ConfigView) => void; saveModel: (model: string) => Promise<ConfigView> }) {
  const [models, setModels] = useState<ModelStatus[]>([]);
  const [progress, setProgress] = useState<Record<string, DownloadProgress>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [showAll, setShowAll] = useState(false);
  const refresh = () => ipc.listModels().then(setModels, () => undefined);
  useEffect(() => {
    ipc.listModels().then((list) => {
      setModels(list);
      ipc.log(`settings: rendered ${list.length} models, ${list.filter((m) => m.installed).length} installed`).catch(() => undefined);
    }, () => undefined);
    let stop: (() => void) | undefined;
    events.downloadProgress((p) => setProgress((all) => ({ ...all, [p.file]: p }))).then((u) => (stop = u));
    return () => stop?.();
  }, []);
  const download = async (m: ModelStatus) => {
    setErrors((e) => ({ ...e, [m.file]: '' }));
    setProgress((all) => ({ ...all, [m.file]: { file: m.file, downloaded: m.partial_bytes, total: m.exact_bytes, resumed_from: m.partial_bytes, phase: 'downloading' } }));
    try {
      await ipc.downloadModel(m.name);
    } catch (e) {
      setErrors((all) => ({ ...all, [m.file]: errorText(e) }));
    }
    setProgress((all) => { const c = { ...all }; delete c[m.file]; return c; });
    refresh();
  };
  const shown = showAll ? models : models.filter((m) => m.installed || m.is_default || m.partial_bytes > 0 || progress[m.file] || ['tiny.en-q8_0', 'base-q8_0', 'base.en', 'small.en-q8_0', 'large-v3-turbo-q5_0', 'medium.en-q5_0'].includes(m.name));
  return (
    <>
      <table class="models" data-testid="models">
        <thead><tr><th>Model</th><th>Size</th><th>Languages</th><th>Check</th><th>State</th><th /></tr></thead>
        <tbody>
          {shown.map((m) => {
            const p = progress[m.file];
            const pct = p ? progressPct(Number(p.downloaded), p.total === null ? null : Number(p.total)) : null;
            return (
              <tr key={m.name} data-testid={`model-${m.name}`}>
                <td><b>{m.name}</b>{m.quant && <span class="muted"> · {m.quant}</span>}</td>
                <td title={`${Number(m.exact_bytes).toLocaleString('en')} bytes`}>{formatBytes(Number(m.exact_bytes))}</td>
                <td>{m.english_only ? 'English' : 'Multilingual'}</td>
                <td title={`verified after download: exact size, SHA-256 ${m.sha256}, SHA-1 ${m.sha1}`} data-testid={`check-${m.name}`}>
                  <span class="badge ok">SHA-256</span> <code class="muted">{m.sha256.slice(0, 8)}</code>
                </td>
                <td>
                  {m.is_default && <span class="badge default">default</span>}{' '}
                  {m.installed ? <span class="badge ok">installed</span> : p ? (
                    <span data-testid={`progress-${m.name}`}>
                      <span class="progress"><div style={{ width: `${pct ?? 0}%` }} /></span>{' '}
                      {p.phase === 'verifying' ? 'verifying…' : `${pct === null ? '' : `${pct.toFixed(0)} % · `}${formatBytes(Number(p.downloaded))}`}
                    </span>
                  ) : m.partial_bytes > 0 ? <span class="badge warn">{formatBytes(Number(m.partial_bytes))} downloaded</span> : <span class="muted">not installed</span>}
                  {errors[m.file] && <div class="error" data-testid={`error-${m.name}`}>{errors[m.file]}</div>}
                </td>
                <td style="white-space:nowrap">
                  {!m.installed && !p && <button onClick={() => download(m)} data-testid={`download-${m.name}`}>{m.partial_bytes > 0 ? 'Resume' : 'Download'}</button>}
                  {p && <button onClick={() => ipc.cancelDownload(m.name)} data-testid={`cancel-${m.name}`}>Cancel</button>}
                  {m.installed && !m.is_default && <button onClick={async () => { onDefault(await ipc.setDefaultModel(m.name)); refresh(); }} data-testid={`default-${m.name}`}>Set default</button>}{' '}
                  {(m.installed || (m.partial_bytes > 0 && !p)) && <button class="danger" onClick={async () => { await ipc.deleteModel(m.name); refresh(); }} data-testid={`delete-${m.name}`}>Delete</button>}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p><a href="javascript:void 0" onClick={() => setShowAll(!showAll)} data-testid="show-all-models">{showAll ? 'Show fewer' : `Show all ${models.length} models`}</a></p>
      <MeasureAgain onSwitch={async (model) => { onDefault(await saveModel(model)); refresh(); }} />
    </>
  );
}

function Llm({ cfg, up }: { cfg: Config; up: <K extends keyof Config>(s: K, p: Partial<Config[K]>) => void }) {
  const llm = cfg.llm;
  const [models, setModels] = useState<string[] | null>(null);
  const [listErr, setListErr] = useState<string | null>(null);
  const [testing, setTesting] = useState(false);
  const [result, setResult] = useState<LlmTestResult | null>(null);
  const [sample, setSample] = useState('');
  const refresh = async () => {
    setListErr(null);
    try { setModels(await ipc.llmModels(llm)); } catch (e) { setListErr(errorText(e)); }
  };
  const set = (p: Partial<Config['llm']>) => up('llm', p);
  const val = (e: Event) => (e.target as HTMLInputElement).value;
  return (
    <>
      <div class="row">
        <label>Clean up dictations</label>
        <label><input type="checkbox" checked={llm.enabled} onChange={(e) => set({ enabled: (e.target as HTMLInputElement).checked })} data-testid="llm-enabled" /> Punctuation, capitals, fillers removed by a local LLM (a guard keeps the raw text when the output is not faithful)</label>
      </div>
      <div class="row">
        <label for="llm-backend">Backend</label>
        <select id="llm-backend" value={llm.backend} onChange={(e) => set({ backend: val(e) as 'ollama' | 'openai' })} data-testid="llm-backend">
          <option value="ollama">Ollama (native API)</option>
          <option value="openai">OpenAI-compatible (/v1)</option>
        </select>
        <label for="llm-url">URL</label>
        <input id="llm-url" type="text" style="width:260px" value={llm.url} onChange={(e) => set({ url: val(e) })} data-testid="llm-url" />
      </div>
      <div class="row">
        <label title="The name of an environment variable holding the API key (sent as a bearer token); set in the config file only, so no page can choose which secret is sent where">API key variable</label>
        <span class="muted" data-testid="llm-api-key-env-note">{llm.api_key_env
          ? `$${llm.api_key_env} (llm.api_key_env: set in the config file only)`
          : 'none; llm.api_key_env is set in the config file only'}</span>
      </div>
      <div class="row">
        <label for="llm-model">Model</label>
        <input id="llm-model" type="text" list="llm-models" value={llm.model} onChange={(e) => set({ model: val(e) })} data-testid="llm-model" />
        <datalist id="llm-models">{(models ?? []).map((m) => <option key={m} value={m} />)}</datalist>
        {models && models.length > 0 && (
          <select value="" aria-label="Pick a model from the server" onChange={(e) => val(e) && set({ model: val(e) })} data-testid="llm-model-pick">
            <option value="">Pick from server ({models.length})…</option>
            {models.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        )}
        <button onClick={refresh} data-testid="llm-refresh">List server models</button>
        {listErr && <span class="error">{listErr}</span>}
      </div>
      <div class="row">
        <label for="llm-num-ctx">Context (num_ctx)</label>
        <input id="llm-num-ctx" type="number" min={256} step={256} style="width:100px" value={llm.num_ctx} onChange={(e) => set({ num_ctx: Number(val(e)) || 0 })} data-testid="llm-num-ctx" />
        <label for="llm-keep-alive">keep_alive</label>
        <input id="llm-keep-alive" type="text" style="width:80px" value={llm.keep_alive} onChange={(e) => set({ keep_alive: val(e) })} data-testid="llm-keep-alive" />
        <span class="muted">every request and the warm-up use these: a mismatch makes Ollama reload the model</span>
      </div>
      <div class="row">
        <label for="llm-prompt">System prompt<br /><span class="muted">empty = built-in</span></label>
        <textarea id="llm-prompt" style="flex:1" value={llm.system_prompt} placeholder="(built-in cleanup prompt; {vocabulary} lists your vocabulary)" onChange={(e) => set({ system_prompt: (e.target as HTMLTextAreaElement).value })} data-testid="llm-prompt" />
      </div>
      <div class="row">
        <label for="llm-user-template">User message</label>
        <input id="llm-user-template" type="text" style="flex:1" value={llm.user_template} onChange={(e) => set({ user_template: val(e) })} data-testid="llm-user-template" />
      </div>
      <div class="row">
        <label for="llm-sample">Test</label>
        <input id="llm-sample" type="text" style="flex:1" placeholder="um so i think we should uh send the report to maria by friday" value={sample} onChange={(e) => setSample(val(e))} data-testid="llm-sample" />
        <button disabled={testing} data-testid="llm-test" onClick={async () => {
          setTesting(true);
          try {
            setResult(await ipc.llmTest(llm, cfg.stt.vocabulary, sample));
          } catch (e) {
            setResult({ outcome: 'failed', input: sample, output: null, text: sample, reject_reason: null, error: errorText(e), latency_ms: 0, tokens_per_sec: null, load_ms: null, model_loaded: false, key: '' });
          } finally { setTesting(false); }
        }}>{testing ? 'Testing…' : 'Test'}</button>
      </div>
      {result && (
        <div class="result-box" data-testid="llm-result">
          <div>
            <span class={`badge ${result.outcome === 'cleaned' ? 'ok' : result.outcome === 'rejected' ? 'warn' : 'error'}`}>{result.outcome}</span>{' '}
            latency <b data-testid="llm-latency">{formatMs(result.latency_ms)}</b>
            {' · '}{result.tokens_per_sec != null ? <b data-testid="llm-tps">{result.tokens_per_sec.toFixed(1)} tokens/s</b> : 'tokens/s n/a'}
            {' · '}{result.model_loaded ? <span class="badge warn" data-testid="llm-loaded">model was loaded ({formatMs(result.load_ms)})</span> : <span class="badge ok" data-testid="llm-loaded">model already loaded</span>}
          </div>
          {result.output != null && <div style="margin-top:6px">→ {result.text}</div>}
          {result.reject_reason && <div class="muted">kept the raw text: {result.reject_reason}</div>}
          {result.error && <div class="error">{result.error}</div>}
          {result.key && <div class="muted" data-testid="llm-key-used">{result.key}</div>}
        </div>
      )}
    </>
  );
}
