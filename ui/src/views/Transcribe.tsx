// "Transcribe a file…": a queue of recordings transcribed one after the other (a dictation
// goes first: a file pauses while one runs). Files come from Add files…, from a drop on the
// window (the app takes the drop and queues them) or from `dictum-tray --transcribe FILE…`;
// every change to a file arrives as a `file-job` snapshot.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { JobDefaults } from '../bindings/JobDefaults';
import type { JobView } from '../bindings/JobView';
import type { SaveFormat } from '../bindings/SaveFormat';
import { errorText, events, ipc } from '../ipc';
import { formatBytes, LANGUAGES } from '../lib/format';
import {
  englishOnly, jobActions, logLine, mergeJob, mergeJobs, positionText, progressPercent, STATE_LABEL, stateBadge, timesText, type Logged,
} from '../lib/transcribe';

const log = (line: string) => ipc.log(line).catch(() => undefined);

export function Transcribe() {
  const [defaults, setDefaults] = useState<JobDefaults | null>(null);
  const [jobs, setJobs] = useState<JobView[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [model, setModel] = useState('');
  const [language, setLanguage] = useState('');
  const [translate, setTranslate] = useState(false);
  const [adding, setAdding] = useState(false);
  const [toast, setToast] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const logged = useRef(new Map<number, Logged>());
  const renderedLogged = useRef(false);

  useEffect(() => {
    let stop: (() => void) | null = null;
    let gone = false;
    // Listen first, then ask for the queue: a change in between is not missed, and the later
    // of the two snapshots of a file wins (mergeJob).
    events.fileJob((j) => setJobs((q) => mergeJob(q, j))).then((u) => (gone ? u() : (stop = u)), () => undefined);
    ipc.fileJobDefaults().then((d) => {
      setDefaults(d);
      setModel(d.model);
      setLanguage(d.language);
    }, (e) => setLoadError(errorText(e)));
    ipc.fileJobs().then((list) => {
      setJobs((q) => mergeJobs(q, list));
      setLoaded(true);
    }, (e) => { setLoadError(errorText(e)); setLoaded(true); });
    return () => { gone = true; stop?.(); };
  }, []);

  // The app's log hears what the window shows (the Xvfb test of the real app reads it).
  useEffect(() => {
    if (!loaded) return;
    if (!renderedLogged.current) {
      renderedLogged.current = true;
      log(`transcribe: rendered ${jobs.length} files`);
    }
    for (const j of jobs) {
      const l = logLine(logged.current.get(j.id), j);
      if (l) {
        logged.current.set(j.id, l.logged);
        log(l.line);
      }
    }
  }, [jobs, loaded]);

  useEffect(() => {
    if (!toast) return;
    const t = setTimeout(() => setToast(null), 6000);
    return () => clearTimeout(t);
  }, [toast]);

  const addFiles = async () => {
    setAdding(true);
    try {
      const paths = await ipc.fileJobsPick();
      if (!paths.length) return;
      const options = { model: model || undefined, language: language || undefined, translate };
      const added = await ipc.fileJobsAdd(paths, options);
      setJobs((q) => mergeJobs(q, added));
    } catch (e) {
      setToast(errorText(e));
    } finally {
      setAdding(false);
    }
  };

  const act = (what: Promise<unknown>) => what.catch((e) => setToast(errorText(e)));
  const remove = (id: number) => act(ipc.fileJobRemove(id).then(() => {
    logged.current.delete(id);
    setJobs((q) => q.filter((j) => j.id !== id));
  }));
  const copy = (id: number) => act(ipc.fileJobCopy(id).then(() => setToast('Copied')));
  const save = (id: number, format: SaveFormat) => act(ipc.fileJobSave(id, format).then((saved) => {
    if (!saved) return;
    setToast(`Saved ${saved.path} (${formatBytes(saved.bytes)})`);
    log(`transcribe: saved ${saved.path}`);
  }));

  const models = defaults ? (defaults.models.includes(defaults.model) || !defaults.model ? defaults.models : [defaults.model, ...defaults.models]) : [];
  const languages = language && !LANGUAGES.some(([c]) => c === language) ? [[language, language] as [string, string], ...LANGUAGES] : LANGUAGES;
  const cannotTranslate = translate && !!model && englishOnly(model);
  return (
    <div class="transcribe" data-testid="transcribe">
      <section class="card" data-testid="transcribe-add">
        <div class="toolbar">
          <button class="primary" onClick={addFiles} disabled={adding} data-testid="add-files">Add files…</button>
          <label for="tr-model">Model</label>
          <select id="tr-model" value={model} disabled={!defaults} onChange={(e) => setModel((e.target as HTMLSelectElement).value)} data-testid="model">
            {models.map((m) => <option key={m} value={m}>{m}{defaults && m === defaults.model ? ' (dictation’s)' : ''}</option>)}
          </select>
          <label for="tr-language">Language</label>
          <select id="tr-language" value={language} disabled={!defaults} onChange={(e) => setLanguage((e.target as HTMLSelectElement).value)} data-testid="language">
            {languages.map(([code, name]) => <option key={code} value={code}>{name} ({code})</option>)}
          </select>
          <label class="check"><input type="checkbox" checked={translate} onChange={(e) => setTranslate((e.target as HTMLInputElement).checked)} data-testid="translate" /> Translate to English</label>
        </div>
        <p class="muted" data-testid="options-note">The model, language and translation apply to the files added next.</p>
        {cannotTranslate && <p class="warn" data-testid="translate-problem">{model} is English-only and cannot translate: pick a multilingual model.</p>}
        <div class="dropzone" data-testid="dropzone">
          Drop audio or video files here
          {defaults && defaults.extensions.length > 0 && (
            <span class="muted"> · {defaults.extensions.join(', ')}{defaults.ffmpeg ? ' and what ffmpeg reads' : ''}</span>
          )}
        </div>
        {loadError && <p class="error" data-testid="load-error">{loadError}</p>}
      </section>
      {loaded && jobs.length === 0 && <p class="muted" data-testid="queue-empty">No files yet: add some or drop them on this window.</p>}
      <div class="jobs" data-testid="queue">
        {jobs.map((j) => <Job key={j.id} job={j} onCancel={() => act(ipc.fileJobCancel(j.id))} onRemove={() => remove(j.id)} onCopy={() => copy(j.id)} onSave={(f) => save(j.id, f)} />)}
      </div>
      {toast && <div class="toast" data-testid="toast" role="status">{toast}</div>}
    </div>
  );
}

function Job({ job, onCancel, onRemove, onCopy, onSave }: {
  job: JobView; onCancel: () => void; onRemove: () => void; onCopy: () => void; onSave: (f: SaveFormat) => void;
}) {
  const can = jobActions(job);
  const pct = progressPercent(job);
  const barLabel = `${job.name}: transcribed`;
  return (
    <section class="card job" data-testid="job" data-job={job.id} data-state={job.state} aria-label={job.name}>
      <div class="job-head">
        <b class="job-name" title={job.path} data-testid="job-name">{job.name}</b>
        <span class={`badge ${stateBadge(job.state)}`} data-testid="job-state">{STATE_LABEL[job.state]}</span>
        <span class="muted job-opts">{job.model} · {job.language}{job.translate ? ' · to English' : ''}</span>
        <span style="margin-left:auto" />
        {can.cancel && <button onClick={onCancel} aria-label={`Cancel ${job.name}`} data-testid="cancel">Cancel</button>}
        {can.remove && <button class="icon" onClick={onRemove} aria-label={`Remove ${job.name} from the list`} title="Remove from the list" data-testid="remove">×</button>}
      </div>
      <div class="job-progress">
        {pct === null
          ? <progress aria-label={barLabel} data-testid="progress" />
          : <progress max={100} value={pct} aria-label={barLabel} aria-valuetext={`${pct}%`} data-testid="progress" />}
        <span class="job-pct" data-testid="pct">{pct === null ? '…' : `${pct}%`}</span>
        {(job.state !== 'queued' || job.total_ms > 0) && <span data-testid="position">{positionText(job)}</span>}
        <span class="muted" data-testid="times">{timesText(job)}</span>
      </div>
      {job.waiting_for_dictation && <p class="warn" data-testid="waiting">Paused: a dictation goes first</p>}
      {job.note && <p class="muted" data-testid="note">{job.note}</p>}
      {job.error && <p class="error" data-testid="error">{job.error}</p>}
      {job.text && <pre class="job-text" data-testid="job-text" tabIndex={0} aria-label={`Text of ${job.name}`}>{job.text}</pre>}
      {(can.copy || can.txt) && (
        <div class="job-actions" role="group" aria-label={`Copy or save the text of ${job.name}`}>
          <button onClick={onCopy} disabled={!can.copy} data-testid="copy">Copy</button>
          <span class="muted">Save as</span>
          <button onClick={() => onSave('txt')} disabled={!can.txt} aria-label="Save as TXT" data-testid="save-txt">TXT</button>
          <button onClick={() => onSave('srt')} disabled={!can.subtitles} aria-label="Save as SRT" data-testid="save-srt"
            title={can.subtitles ? 'Subtitles with the times of each line' : 'Subtitles once the file is done or cancelled'}>SRT</button>
          <button onClick={() => onSave('vtt')} disabled={!can.subtitles} aria-label="Save as VTT" data-testid="save-vtt"
            title={can.subtitles ? 'Web subtitles with the times of each line' : 'Subtitles once the file is done or cancelled'}>VTT</button>
        </div>
      )}
    </section>
  );
}
