// The small always-on-top pill shown while the dictation key is held, with the words
// transcribed so far (`dictation-partial`): the committed ones, then the current speculation
// in a lighter style. A preview only: the typed text is what the release produces.

import { useEffect, useState } from 'preact/hooks';
import type { TrayStatus } from '../bindings/TrayStatus';
import { events, ipc, type LivePartial } from '../ipc';

/** The last characters of the words so far (about two lines of the pill). */
const SHOWN_CHARS = 90;

function tail(committed: string, speculative: string): [string, string] {
  const spec = speculative ? ` ${speculative}` : '';
  const over = committed.length + spec.length - SHOWN_CHARS;
  if (over <= 0) return [committed, spec];
  if (over < committed.length) return [`…${committed.slice(over)}`, spec];
  return ['…', spec.slice(over - committed.length)];
}

export function Indicator() {
  const [status, setStatus] = useState<TrayStatus | null>(null);
  const [level, setLevel] = useState(0);
  const [words, setWords] = useState<LivePartial | null>(null);
  useEffect(() => {
    ipc.trayStatus().then(setStatus, () => undefined);
    const stops: (() => void)[] = [];
    events.trayStatus(setStatus).then((u) => stops.push(u));
    events.micLevel((l) => setLevel(l.level)).then((u) => stops.push(u));
    // Numbers only go up within a dictation; a new dictation starts again at 1.
    events
      .partial((p) => setWords((old) => (old && old.dictation === p.dictation && old.seq >= p.seq ? old : p)))
      .then((u) => stops.push(u));
    return () => stops.forEach((s) => s());
  }, []);
  const state = status?.state ?? 'idle';
  useEffect(() => {
    if (state !== 'recording' && state !== 'listening') setWords(null);
  }, [state]);
  const [committed, speculative] = words ? tail(words.committed, words.speculative) : ['', ''];
  // For the live tray test (its screenshot waits for words on screen): how many words this
  // partial put on screen, never the words themselves (the app log is not for dictated text).
  useEffect(() => {
    if (!words || !(committed || speculative)) return;
    const count = (t: string) => t.split(/\s+/).filter((w) => w && w !== '…').length;
    ipc
      .log(`indicator: partial ${words.seq} shown: ${count(committed)} committed words, ${count(speculative)} speculative`)
      .catch(() => undefined);
  }, [words]);
  return (
    <div class={`indicator ${state}`} data-testid="indicator" data-state={state}>
      <span class="dot" />
      {state === 'processing' ? 'Transcribing…' : state === 'recording' ? 'Listening' : state === 'opening' ? 'Waiting for the microphone…' : state === 'listening' ? 'Hands-free: waiting for speech' : state === 'error' ? 'Error' : 'Idle'}
      {status?.style ? <span style="opacity:0.75;white-space:nowrap" data-testid="indicator-style">· {status.style}</span> : null}
      <span class="meter" style="width:70px;height:6px"><div style={{ width: `${Math.round(Math.min(1, level) * 100)}%` }} /></span>
      {words && (committed || speculative) ? (
        <div class="live-words" data-testid="live-words">
          {committed}
          <span class="speculative">{speculative}</span>
        </div>
      ) : null}
    </div>
  );
}
