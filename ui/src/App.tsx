// One page, its views picked by the URL hash: the app opens windows on index.html#settings,
// #history, #stats, #transcribe, #indicator and #welcome.

import { useEffect, useState } from 'preact/hooks';
import { Settings } from './views/Settings';
import { History } from './views/History';
import { StatsView } from './views/Stats';
import { Transcribe } from './views/Transcribe';
import { Indicator } from './views/Indicator';
import { Welcome } from './views/Welcome';
import { ipc } from './ipc';

export type View = 'settings' | 'history' | 'stats' | 'transcribe' | 'indicator' | 'welcome';

export function viewFromHash(hash: string): View {
  const v = hash.replace(/^#\/?/, '').split(/[/?]/)[0];
  return v === 'history' || v === 'stats' || v === 'transcribe' || v === 'indicator' || v === 'welcome' ? v : 'settings';
}

export function App() {
  const [view, setView] = useState<View>(viewFromHash(location.hash));
  useEffect(() => {
    const on = () => setView(viewFromHash(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  useEffect(() => {
    document.title = view === 'indicator' ? 'Dictum recording' : view === 'welcome' ? 'Welcome to Dictum' : `Dictum — ${view[0].toUpperCase()}${view.slice(1)}`;
    document.body.dataset.view = view;
  }, [view]);
  if (view === 'indicator') return <Indicator />;
  if (view === 'welcome') return <Welcome />;
  return (
    <div class="shell">
      <nav class="tabs">
        <span class="brand">Dictum</span>
        {(['settings', 'history', 'stats', 'transcribe'] as const).map((v) => (
          <a key={v} href={`#${v}`} class={v === view ? 'active' : ''} data-testid={`tab-${v}`} onClick={(e) => {
            // Each view lives in its own window, which may call only that view's commands
            // (src-tauri/capabilities/): a tab asks the app for the other window.
            e.preventDefault();
            if (v !== view) ipc.showView(v).catch(() => undefined);
          }}>
            {v[0].toUpperCase() + v.slice(1)}
          </a>
        ))}
      </nav>
      <main>{view === 'settings' ? <Settings /> : view === 'history' ? <History /> : view === 'transcribe' ? <Transcribe /> : <StatsView />}</main>
    </div>
  );
}
