// Settings → Models: "Measure again" times the installed speech models on this machine (the
// app's measure_models; seconds per model), shows the numbers behind the choice and offers to
// switch to the recommended model.

import { useEffect, useState } from 'preact/hooks';
import { errorText, events, ipc } from '../ipc';
import { passText, shownRows, verdictText, type Remeasured } from '../lib/measure';

export function MeasureAgain({ onSwitch }: { onSwitch: (model: string) => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [timing, setTiming] = useState<string | null>(null);
  const [result, setResult] = useState<Remeasured | null>(null);
  const [err, setErr] = useState<string | null>(null);
  useEffect(() => {
    let stop: (() => void) | undefined;
    events.measureProgress((p) => setTiming(p.model)).then((u) => (stop = u));
    return () => stop?.();
  }, []);
  const measure = async () => {
    setBusy(true);
    setErr(null);
    setTiming(null);
    try {
      setResult(await ipc.measureModels());
    } catch (e) {
      setResult(null);
      setErr(`Not measured: ${errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };
  const switchTo = async (model: string) => {
    setErr(null);
    try {
      await onSwitch(model);
      setResult((r) => (r ? { ...r, current: model } : r));
    } catch (e) {
      setErr(`Not switched: ${errorText(e)}`);
    }
  };
  return (
    <div data-testid="measure">
      <div class="row">
        <label>Which model suits this machine</label>
        <button onClick={measure} disabled={busy} data-testid="measure-again">{busy ? 'Measuring…' : 'Measure again'}</button>
        <span class="muted" data-testid="measure-status">
          {busy ? `measuring… ${timing ? `timing ${timing}` : 'loading the first model'} (a few seconds per installed model)`
            : 'Times real passes with the installed models here and recommends the most accurate one that stays quick.'}
        </span>
      </div>
      {err && <p class="error" data-testid="measure-error">{err}</p>}
      {result && (
        <div data-testid="measure-result">
          <table class="models" data-testid="measure-table">
            <thead><tr><th>Model</th><th>3 s pass</th><th>10 s pass</th><th>Key-up → text p95</th><th>Files</th><th>WER</th><th>Verdict</th></tr></thead>
            <tbody>
              {shownRows(result).map((row) => {
                const m = result.measurements.find((x) => x.model === row.model);
                return (
                  <tr key={row.model} data-testid={`measure-row-${row.model}`}>
                    <td><b>{row.model}</b>{row.model === result.current && <> <span class="badge default">in use</span></>}</td>
                    <td>{passText(row, m, 'tail')}</td>
                    <td>{row.basis.kind === 'measured' ? passText(row, m, 'long') : ''}</td>
                    <td>{Math.round(row.release_p95_ms)} ms</td>
                    <td>{row.file_rtf.toFixed(2)}× real time</td>
                    <td>{row.wer_pct.toFixed(1)} %</td>
                    <td>{verdictText(row.verdict)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p>
            Recommended: <b data-testid="measure-recommended">{result.model}</b> — <span data-testid="measure-reason">{result.reason}</span>{' '}
            {result.model === result.current ? <span class="badge ok" data-testid="measure-in-use">in use</span>
              : result.installed ? <button class="primary" onClick={() => switchTo(result.model)} data-testid="measure-switch">Switch to {result.model}</button>
              : <span class="muted" data-testid="measure-download-first">Download it in the list above, then measure again: its numbers are an estimate until it has been timed here.</span>}
          </p>
          <p class="muted" data-testid="measure-note">
            Targets: key-up → text p95 ≤ {result.targets.release_p95_ms} ms for a {result.targets.dictation_s} s dictation, files ≤ {result.targets.file_rtf}× real time.
            {' '}Measured in {result.seconds.toFixed(0)} s; {result.note}.
          </p>
        </div>
      )}
    </div>
  );
}
