// The small always-on-top pill shown while the dictation key is held.

import { useEffect, useState } from 'preact/hooks';
import type { TrayStatus } from '../bindings/TrayStatus';
import { events, ipc } from '../ipc';

export function Indicator() {
  const [status, setStatus] = useState<TrayStatus | null>(null);
  const [level, setLevel] = useState(0);
  useEffect(() => {
    ipc.trayStatus().then(setStatus, () => undefined);
    const stops: (() => void)[] = [];
    events.trayStatus(setStatus).then((u) => stops.push(u));
    events.micLevel((l) => setLevel(l.level)).then((u) => stops.push(u));
    return () => stops.forEach((s) => s());
  }, []);
  const state = status?.state ?? 'idle';
  return (
    <div class={`indicator ${state}`} data-testid="indicator" data-state={state}>
      <span class="dot" />
      {state === 'processing' ? 'Transcribing…' : state === 'recording' ? 'Listening' : state === 'listening' ? 'Hands-free: waiting for speech' : state === 'error' ? 'Error' : 'Idle'}
      <span class="meter" style="width:70px;height:6px"><div style={{ width: `${Math.round(Math.min(1, level) * 100)}%` }} /></span>
    </div>
  );
}
