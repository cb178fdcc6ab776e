import { render } from 'preact';
import { App } from './App';
import { ipc } from './ipc';
import './style.css';

// Rejected promises go to the app's log too (index.html sends page errors there).
window.addEventListener('unhandledrejection', (e) => {
  ipc.log(`error: unhandled rejection: ${String(e.reason)}`).catch(() => undefined);
});

const root = document.getElementById('app');
if (root) render(<App />, root);
