// The hotkey recorder of Settings and the first-run page: press the key (or a thumb mouse
// button) and it becomes the config's key string (`lib/hotkey.ts`).

import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { hotkeyFromEvent, hotkeyFromMouseButton, loneModifierProblem } from '../lib/hotkey';

/** The key (or thumb mouse button) in `value`, and a button that records a new one. `testid`
 * names its parts (`testid`, `record-${testid}`, `${testid}-problem`): one per hotkey on a page. */
export function HotkeyRecorder({ value, onChange, testid = 'hotkey' }: { value: string; onChange: (v: string) => void; testid?: string }) {
  const [recording, setRecording] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const lastModifier = useRef<KeyboardEvent | null>(null);
  // Layout effect: listening as soon as the button says "Press the key…".
  useLayoutEffect(() => {
    if (!recording) return;
    const down = (e: KeyboardEvent) => {
      e.preventDefault();
      if (e.code === 'Escape') return setRecording(false);
      const k = hotkeyFromEvent(e);
      if (k) { onChange(k); setProblem(null); setRecording(false); } else lastModifier.current = e;
    };
    const upKey = (e: KeyboardEvent) => {
      e.preventDefault();
      // A modifier pressed and released on its own: say why it cannot be the hotkey.
      if (lastModifier.current && lastModifier.current.code === e.code) {
        const why = loneModifierProblem(e.code);
        if (why) setProblem(why);
      }
      lastModifier.current = null;
    };
    // A thumb button of the mouse (X11: grabbed as "mouse:8"/"mouse:9"; the user guide says
    // how Wayland binds one).
    const mouse = (e: MouseEvent) => {
      const k = hotkeyFromMouseButton(e.button);
      if (k) { e.preventDefault(); onChange(k); setProblem(null); setRecording(false); }
    };
    window.addEventListener('keydown', down, true);
    window.addEventListener('keyup', upKey, true);
    window.addEventListener('mousedown', mouse, true);
    return () => {
      window.removeEventListener('keydown', down, true);
      window.removeEventListener('keyup', upKey, true);
      window.removeEventListener('mousedown', mouse, true);
    };
  }, [recording]);
  return (
    <span class="hotkey-recorder">
      <code data-testid={testid}>{value}</code>
      <button onClick={() => { setProblem(null); setRecording(!recording); }} data-testid={`record-${testid}`}>
        {recording ? 'Press the key… (Esc cancels)' : 'Change…'}
      </button>
      {problem && <span class="error" data-testid={`${testid}-problem`}>{problem}</span>}
    </span>
  );
}
