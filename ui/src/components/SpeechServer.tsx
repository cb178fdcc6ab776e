// The speech backend (issue 15): local whisper, or a shared server speaking OpenAI's
// /v1/audio/transcriptions with the local model as fallback. The Test button sends the built-in
// clip and shows the round trip and the text; the model list comes from /v1/models where the
// server has one. The API key goes from this field straight to the desktop keyring: it is never
// put in the config, and never shown again.

import { useEffect, useState } from 'preact/hooks';
import type { ServerCheck } from '../bindings/ServerCheck';
import type { SttConfig } from '../bindings/SttConfig';
import { errorText, ipc } from '../ipc';
import { formatMs } from '../lib/format';

const val = (e: Event) => (e.target as HTMLInputElement).value;

export function SpeechServer({ stt, set }: { stt: SttConfig; set: (p: Partial<SttConfig>) => void }) {
  const [check, setCheck] = useState<ServerCheck | null>(null);
  const [testing, setTesting] = useState(false);
  const [key, setKey] = useState('');
  const [keyStored, setKeyStored] = useState<boolean | null>(null);
  const [keyMsg, setKeyMsg] = useState<string | null>(null);
  const remote = stt.backend === 'openai';

  useEffect(() => {
    if (remote) ipc.sttKeyStatus().then(setKeyStored, () => setKeyStored(null));
  }, [remote]);

  return (
    <div data-testid="stt-server">
      <div class="row">
        <label for="stt-backend">Backend</label>
        <select id="stt-backend" value={stt.backend} onChange={(e) => set({ backend: val(e) as SttConfig['backend'] })} data-testid="stt-backend">
          <option value="local">This computer (whisper.cpp; nothing leaves it)</option>
          <option value="openai">A speech server (OpenAI-compatible /v1/audio/transcriptions)</option>
        </select>
      </div>
      {remote && (
        <>
          <div class="row">
            <label for="stt-url">Server URL</label>
            <input id="stt-url" type="text" style="width:280px" value={stt.url} placeholder="https://gpu-box:8000" onChange={(e) => {
              const url = val(e);
              if (url !== stt.url) {
                // A key belongs to the server it was entered for: a new URL does not take it.
                setKey('');
                setKeyStored(false);
                setKeyMsg('a new URL does not take the key along: save the settings, then enter the key for this server');
              }
              set({ url });
            }} data-testid="stt-url" />
            <label title="Plain http to another machine sends your audio unencrypted">
              <input type="checkbox" checked={stt.allow_insecure} onChange={(e) => set({ allow_insecure: (e.target as HTMLInputElement).checked })} data-testid="stt-insecure" /> allow http
            </label>
          </div>
          <div class="row">
            <label for="stt-model">Model</label>
            <input id="stt-model" type="text" list="stt-models" value={stt.remote_model} onChange={(e) => set({ remote_model: val(e) })} data-testid="stt-model" />
            <datalist id="stt-models">{(check?.models ?? []).map((m) => <option key={m} value={m} />)}</datalist>
            <label for="stt-timeout">Timeout</label>
            <span><input id="stt-timeout" type="number" min={100} step={500} style="width:90px" value={stt.timeout_ms} onChange={(e) => set({ timeout_ms: Number(val(e)) || 0 })} data-testid="stt-timeout" /> ms</span>
            <label title="FLAC is about 40 % smaller than WAV; 'auto' sends FLAC and switches to WAV for a server that refuses it" for="stt-upload">Upload</label>
            <select id="stt-upload" value={stt.upload} onChange={(e) => set({ upload: val(e) as SttConfig['upload'] })} data-testid="stt-upload">
              <option value="auto">FLAC, WAV if refused</option>
              <option value="flac">FLAC only</option>
              <option value="wav">WAV only</option>
            </select>
          </div>
          <div class="row">
            <label title="Stored in the desktop keyring, never in the config file" for="stt-key">API key</label>
            <input id="stt-key" type="password" autocomplete="off" style="width:220px" value={key} placeholder={keyStored ? "(a key is in the keyring)" : "optional"} onInput={(e) => setKey(val(e))} data-testid="stt-key" />
            <button disabled={!key.trim()} data-testid="stt-key-save" onClick={async () => {
              try { await ipc.sttKeySet(key); setKey(''); setKeyStored(true); setKeyMsg('saved in the keyring'); } catch (e) { setKeyMsg(errorText(e)); }
            }}>Save in keyring</button>
            {keyStored && <button data-testid="stt-key-clear" onClick={async () => {
              try { await ipc.sttKeyClear(); setKeyStored(false); setKeyMsg('removed'); } catch (e) { setKeyMsg(errorText(e)); }
            }}>Remove</button>}
            <span class="muted" data-testid="stt-key-env-note">{stt.api_key_env
              ? `or $${stt.api_key_env} (stt.api_key_env: set in the config file only)`
              : 'a key variable (stt.api_key_env) is set in the config file only'}</span>
            {keyMsg && <span class="muted" data-testid="stt-key-msg">{keyMsg}</span>}
          </div>
          <div class="row">
            <label>Fallback</label>
            <label>
              <input type="checkbox" checked={stt.fallback} onChange={(e) => set({ fallback: (e.target as HTMLInputElement).checked })} data-testid="stt-fallback" /> use the local model when the server fails
            </label>
            <button disabled={testing} data-testid="stt-test" onClick={async () => {
              setTesting(true);
              try { setCheck(await ipc.sttServerCheck(stt)); } catch (e) {
                setCheck({ url: stt.url, ok: false, detail: errorText(e), round_trip_ms: null, text: null, key: '', models: [] });
              } finally { setTesting(false); }
            }}>{testing ? 'Testing…' : 'Test'}</button>
          </div>
          {check && (
            <div class="result-box" data-testid="stt-result">
              <span class={`badge ${check.ok ? 'ok' : 'error'}`}>{check.ok ? 'ok' : 'failed'}</span>{' '}
              {check.round_trip_ms != null && <>round trip <b data-testid="stt-rtt">{formatMs(check.round_trip_ms)}</b> · </>}
              {check.text != null && <>heard “<span data-testid="stt-text">{check.text}</span>” · </>}
              {check.models.length > 0 && <>{check.models.length} models listed · </>}
              {!check.ok && <div class="error">{check.detail}</div>}
              {check.key && <div class="muted" data-testid="stt-key-used">{check.key}</div>}
            </div>
          )}
          <div class="muted">Sent for each dictation: the trimmed audio, the language and your vocabulary (docs/REMOTE.md).</div>
        </>
      )}
    </div>
  );
}
