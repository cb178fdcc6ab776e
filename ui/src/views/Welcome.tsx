// First run (no speech model yet): pick a model (recommended from this machine's hardware),
// download it with progress or import a file, choose the hotkey, press it, see which microphone
// it records from (a Bluetooth headset's: what keeping it open costs, and the choice), speak,
// see the text.
// Every step shows something sensible while the app answers or when it fails.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { ConfigView } from '../bindings/ConfigView';
import type { DownloadProgress } from '../bindings/DownloadProgress';
import type { DictationState } from '../bindings/DictationState';
import type { MicrophoneMode } from '../bindings/MicrophoneMode';
import { errorText, events, ipc } from '../ipc';
import { formatBytes, progressPct } from '../lib/format';
import { measuredText, orderChoices, speedText, type FirstRunInfo } from '../lib/firstrun';
import { HotkeyRecorder } from '../components/HotkeyRecorder';

export function Welcome() {
  const [info, setInfo] = useState<FirstRunInfo | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const [pick, setPick] = useState<string>('');
  const [busy, setBusy] = useState<string | null>(null);
  const [progress, setProgress] = useState<DownloadProgress | null>(null);
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  const [importPath, setImportPath] = useState('');
  const [view, setView] = useState<ConfigView | null>(null);
  const [hotkeySeen, setHotkeySeen] = useState<DictationState | null>(null);

  const [measuring, setMeasuring] = useState(false);
  const autoMeasured = useRef(false);

  // Times the installed models (seconds each) and recommends from the figures.
  const measure = () => {
    setMeasuring(true);
    ipc.firstRunInfo(true).then((i) => {
      setInfo(i);
      if (i.measured) setPick(i.recommended);
      ipc.log(`welcome: measured, recommended ${i.recommended}`).catch(() => undefined);
    }, (e) => setMsg({ ok: false, text: `Timing failed: ${errorText(e)}` })).finally(() => setMeasuring(false));
  };
  const load = () => ipc.firstRunInfo().then((i) => {
    setInfo(i);
    setPick((p) => p || i.recommended);
    ipc.log(`welcome: rendered ${i.models.length} models, recommended ${i.recommended}, ready ${i.model_ready}`).catch(() => undefined);
    // A model is installed: time it once on its own, so the recommendation is measured.
    if (!i.measured && !autoMeasured.current && i.models.some((m) => m.installed)) {
      autoMeasured.current = true;
      measure();
    }
  }, (e) => setErr(errorText(e)));
  useEffect(() => {
    load();
    ipc.getConfig().then(setView, () => undefined);
    const un = [
      events.downloadProgress((p) => setProgress(p)),
      events.trayStatus((s) => { if (s.state === 'recording' || s.state === 'processing') setHotkeySeen(s.state); }),
    ];
    return () => un.forEach((u) => u.then((f) => f()).catch(() => undefined));
  }, []);

  if (err) return <div class="welcome"><h1>Welcome to Dictum</h1><p class="error" data-testid="welcome-error">{err}</p><p>Open Settings from the tray icon to set Dictum up by hand.</p></div>;
  if (!info) return <div class="welcome"><h1>Welcome to Dictum</h1><p class="muted">Looking at this machine…</p></div>;

  const download = async (name: string) => {
    setBusy(name); setMsg(null); setProgress(null);
    try {
      const out = await ipc.downloadModel(name);
      if (out.status === 'completed') {
        await ipc.setDefaultModel(name);
        setMsg({ ok: true, text: `${name} is installed (checked: ${out.verified_by}) and is the default model.` });
        autoMeasured.current = false; // time it (and the others) on this machine
      } else {
        setMsg({ ok: false, text: `Stopped: ${formatBytes(out.partial_bytes)} kept, Download resumes from there.` });
      }
    } catch (e) { setMsg({ ok: false, text: errorText(e) }); }
    setBusy(null);
    load();
  };
  const importFile = async () => {
    setBusy('import'); setMsg(null);
    try {
      const name = await ipc.importModel(importPath);
      setMsg({ ok: true, text: `Imported ${name}; it is the default model.` });
    } catch (e) { setMsg({ ok: false, text: errorText(e) }); }
    setBusy(null);
    load();
  };
  const setHotkey = async (hotkey: string) => {
    if (!view) return;
    try {
      const v = await ipc.saveConfig({ ...view.config, dictation: { ...view.config.dictation, hotkey } });
      setView(v); setHotkeySeen(null);
    } catch (e) { setMsg({ ok: false, text: errorText(e) }); }
  };
  const setMicrophone = async (microphone: MicrophoneMode) => {
    if (!view) return;
    try {
      const v = await ipc.saveConfig({ ...view.config, dictation: { ...view.config.dictation, microphone } });
      setView(v);
    } catch (e) { setMsg({ ok: false, text: errorText(e) }); }
  };
  const micMode = view?.config.dictation.microphone ?? info.microphone_mode;
  const pct = progress && busy ? progressPct(progress.downloaded, progress.total) : null;
  const models = orderChoices(info.models, info.recommended);

  return (
    <div class="welcome" data-testid="welcome">
      <h1>Welcome to Dictum <span class="muted" data-testid="welcome-version">{info.version}</span></h1>
      <p>Hold a key, speak, release: your words are typed where you type. Speech stays on this machine.</p>
      <p class="muted" data-testid="hardware">This machine: {info.cores} CPU cores · GPU: {info.gpu}</p>

      <section class="card" data-testid="step-model">
        <h2>1. Speech model {info.model_ready && <span class="ok" data-testid="model-ready">✓ ready</span>}</h2>
        <p>Recommended: <b data-testid="recommended">{info.recommended}</b> — {info.reason}.</p>
        <p class="muted" data-testid="measure-note">
          {measuring ? 'Timing the installed models on this machine…' : `${info.measured ? 'Measured on this machine' : 'Not measured'}: ${info.measure_note ?? ''}`}
          {' '}<button disabled={measuring || !!busy || !info.models.some((m) => m.installed)} onClick={measure} data-testid="measure">
            {info.measured ? 'Measure again' : 'Measure'}
          </button>
        </p>
        <table class="models">
          <thead><tr><th></th><th>Model</th><th>Languages</th><th>Download</th><th>Speed here (estimate)</th><th>Key-up → text p95 · files</th><th>Word errors*</th><th></th></tr></thead>
          <tbody>
            {models.map((m) => (
              <tr key={m.name} data-testid={`choice-${m.name}`}>
                <td><input type="radio" name="model" checked={pick === m.name} onChange={() => setPick(m.name)} /></td>
                <td>{m.name}{m.name === info.recommended && <span class="badge">recommended</span>}</td>
                <td>{m.languages}</td>
                <td>{formatBytes(m.exact_bytes)}</td>
                <td>{speedText(m.est_sec_per_10s)}</td>
                <td data-testid={`measured-${m.name}`}>{measuredText(m)}</td>
                <td>{m.wer_pct.toFixed(1)} %</td>
                <td>{m.installed ? (m.is_default ? 'in use' : 'installed') : m.partial_bytes > 0 ? `${formatBytes(m.partial_bytes)} so far` : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p class="muted">* published word error rate on read English speech (LibriSpeech test-clean); lower is better.</p>
        <div class="row">
          <button class="primary" disabled={!!busy || !pick} onClick={() => download(pick)} data-testid="download">
            {busy === pick ? 'Downloading…' : `Download ${pick}`}
          </button>
          {busy && busy !== 'import' && <button onClick={() => ipc.cancelDownload(busy).catch(() => undefined)}>Stop</button>}
          {busy && busy !== 'import' && progress && (
            <span data-testid="download-progress">{progress.phase} {formatBytes(progress.downloaded)}{progress.total ? ` of ${formatBytes(progress.total)}` : ''}{pct != null ? ` (${pct.toFixed(0)} %)` : ''}</span>
          )}
        </div>
        <div class="row">
          <label>Or import a file</label>
          <input type="text" style="flex:1" placeholder="/home/you/Downloads/ggml-base.en.bin" value={importPath} data-testid="import-path"
            onInput={(e) => setImportPath((e.target as HTMLInputElement).value)} />
          <button disabled={!!busy || !importPath.trim()} onClick={importFile} data-testid="import">Import</button>
        </div>
        <p class="muted">No network here? Copy a whisper.cpp ggml .bin model onto this machine and import it. Models go to {info.models_dir}.</p>
        {msg && <p class={msg.ok ? 'ok' : 'error'} data-testid="model-message">{msg.text}</p>}
      </section>

      <section class="card" data-testid="step-hotkey">
        <h2>2. Hotkey</h2>
        {view ? <HotkeyRecorder value={view.config.dictation.hotkey} onChange={setHotkey} /> : <p class="muted">Reading the settings…</p>}
        <p data-testid="hotkey-test">{hotkeySeen
          ? <span class="ok">✓ The hotkey works (Dictum saw it: {hotkeySeen}).</span>
          : <span class="muted">Press the hotkey once to test it: a tick appears here when Dictum sees it.</span>}</p>
      </section>

      <section class="card" data-testid="step-microphone">
        <h2>3. Microphone</h2>
        <p>Dictum records from <b data-testid="microphone">{info.microphone}</b> (the desktop's default input; Settings can pick another).</p>
        {info.bluetooth_note ? (
          <>
            {/* The engine's words are the doctor's too: its `code` quotes read as plain text here. */}
            <p class="warn" data-testid="bluetooth-note">{info.bluetooth_note.replace(/`/g, '')}</p>
            <div class="choices" role="radiogroup" aria-label="When the microphone is open">
              <label><input type="radio" name="mic" checked={micMode !== 'always'} disabled={!view}
                onChange={() => setMicrophone('auto')} data-testid="mic-auto" /> Only while dictating (music quality in between)</label>
              <label><input type="radio" name="mic" checked={micMode === 'always'} disabled={!view}
                onChange={() => setMicrophone('always')} data-testid="mic-always" /> Keep it open (ready at once, call quality all day)</label>
            </div>
          </>
        ) : (
          <p class="muted" data-testid="microphone-rule">{micMode === 'always'
            ? 'It stays open while Dictum runs, so the words just before the press are kept; the desktop shows the microphone in use all along.'
            : 'It is open only while you dictate (and a few minutes after, for the next one): the desktop shows it in use only then. Settings → Microphone changes this.'}</p>
        )}
      </section>

      <section class="card" data-testid="step-try">
        <h2>4. Try it</h2>
        <p class="muted">{info.model_ready
          ? 'Click in the box, hold the hotkey, say a sentence, release: the text appears here.'
          : 'Once a model is installed: click in the box, hold the hotkey, say a sentence, release.'}</p>
        <textarea class="try" rows={3} data-testid="try-box" placeholder="Your words appear here." />
      </section>

      <div class="row">
        <button class="primary" onClick={() => ipc.showView('settings').catch(() => undefined)} data-testid="finish">
          {info.model_ready ? 'Done — open Settings' : 'Skip — open Settings'}
        </button>
        <span class="muted">Dictum keeps running in the tray; this window can be closed.</span>
      </div>
    </div>
  );
}
