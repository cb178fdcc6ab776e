// Playwright (playwright-core driving Debian's chromium, headless) against the built UI
// (ui/dist, served on 127.0.0.1) with only Tauri's IPC mocked in the page (tests/mock-ipc.ts).
// Screenshots go to ui/test-artifacts/. Exit status 1 on any failure.
//
//   npm run build && npm run e2e        (CHROMIUM=/path/to/chromium to override)

import { chromium } from 'playwright-core';
import { build } from 'esbuild';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const ui = path.resolve(here, '..');
const dist = path.join(ui, 'dist');
const out = path.join(ui, 'test-artifacts');
fs.mkdirSync(out, { recursive: true });
assert.ok(fs.existsSync(path.join(dist, 'index.html')), 'ui/dist is missing: run `npm run build` first');

// The mock, bundled with the real @tauri-apps/api/mocks.
const mockJs = path.join(out, 'mock-ipc.js');
await build({ entryPoints: [path.join(here, 'mock-ipc.ts')], bundle: true, format: 'iife', outfile: mockJs, target: 'es2021', logLevel: 'warning' });

// The app's Content-Security-Policy (src-tauri/tauri.conf.json), sent with every page: the UI
// must work under it (a violation is a console error, which fails the test).
const tauriConf = JSON.parse(fs.readFileSync(path.join(ui, '../src-tauri/tauri.conf.json'), 'utf8'));
const cspConf = tauriConf.app.security.csp;
assert.ok(cspConf && typeof cspConf === 'object', 'tauri.conf.json has no CSP');
const csp = Object.entries(cspConf).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(' ') : v}`).join('; ');
assert.ok(!/unsafe-inline|unsafe-eval/.test(cspConf['script-src'] ?? ''), `script-src too loose: ${csp}`);

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const file = path.join(dist, url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname));
  if (!file.startsWith(dist) || !fs.existsSync(file)) { res.writeHead(404); res.end(); return; }
  const headers = { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' };
  if (path.extname(file) === '.html') headers['content-security-policy'] = csp;
  res.writeHead(200, headers);
  fs.createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--disable-background-networking', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});

const results = [];
// E2E_ONLY=regex runs only the tests whose name matches (all by default).
const only = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY) : null;
async function test(name, fn) {
  if (only && !only.test(name)) return;
  const context = await browser.newContext({ viewport: { width: 1200, height: 820 }, deviceScaleFactor: 1 });
  await context.addInitScript({ path: mockJs });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const t0 = Date.now();
  try {
    await fn(page);
    assert.deepEqual(errors, [], 'page errors');
    results.push([name, 'ok', Date.now() - t0]);
  } catch (e) {
    results.push([name, 'FAIL', Date.now() - t0]);
    console.error(`\n✗ ${name}\n${e?.stack ?? e}`);
    await page.screenshot({ path: path.join(out, `FAILED-${name.replace(/\W+/g, '-')}.png`) }).catch(() => {});
  } finally {
    await context.close();
  }
}
/** Retries `fn` (which asserts) until it passes or 5 s have gone: the UI updates asynchronously. */
async function eventually(fn, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
const shot = (page, name) => page.screenshot({ path: path.join(out, `${name}.png`) });
const mockState = (page) => page.evaluate(() => window.__mock);

await test('settings round-trip', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('settings').waitFor();
  assert.equal(await page.getByTestId('hotkey').textContent(), 'ctrl+alt+space');
  assert.ok(await page.getByTestId('save').isDisabled(), 'Save enabled with nothing changed');
  await page.getByTestId('language').selectOption('de');
  await page.getByTestId('mode-toggle').check();
  await page.getByTestId('inject-method').selectOption('paste');
  await page.getByTestId('vocabulary').fill('Kubernetes\nDictum\n');
  await page.getByTestId('llm-enabled').check();
  await page.getByTestId('llm-backend').selectOption('openai');
  await page.getByTestId('llm-url').fill('http://127.0.0.1:8080');
  await page.getByTestId('llm-num-ctx').fill('4096');
  await page.getByTestId('llm-keep-alive').fill('-1');
  await page.getByTestId('llm-prompt').fill('Fix punctuation only.');
  await page.getByTestId('retention').fill('30');
  await page.getByTestId('keep-audio').check();
  assert.ok(await page.getByTestId('sound-volume').isDisabled(), 'volume enabled with cues off');
  await page.getByTestId('sound-cues').check();
  assert.ok(await page.getByTestId('sound-volume').isEnabled(), 'volume disabled with cues on');
  await page.getByTestId('mute-output').check();
  await page.getByTestId('live-words').uncheck();
  // Hotkey recorder: a thumb mouse button (the page's button 4, X11's 9) gives mouse:9.
  await page.getByTestId('record-hotkey').click();
  await page.getByTestId('record-hotkey').filter({ hasText: 'Press the key' }).waitFor();
  await page.evaluate(() => window.dispatchEvent(new MouseEvent('mousedown', { button: 4 })));
  await page.getByTestId('hotkey').filter({ hasText: 'mouse:9' }).waitFor({ timeout: 5000 });
  // Hotkey recorder: press Ctrl+Alt+D.
  await page.getByTestId('record-hotkey').click();
  await page.getByTestId('record-hotkey').filter({ hasText: 'Press the key' }).waitFor();
  await page.keyboard.press('Control+Alt+KeyD');
  await page.getByTestId('hotkey').filter({ hasText: 'Ctrl+Alt+D' }).waitFor({ timeout: 5000 });
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  const saved = (await mockState(page)).saved.at(-1);
  assert.equal(saved.stt.language, 'de');
  assert.deepEqual(saved.stt.vocabulary, ['Kubernetes', 'Dictum']);
  assert.equal(saved.dictation.mode, 'toggle');
  assert.equal(saved.dictation.hotkey, 'Ctrl+Alt+D');
  assert.equal(saved.inject.method, 'paste');
  assert.equal(saved.llm.enabled, true);
  assert.equal(saved.llm.backend, 'openai');
  assert.equal(saved.llm.num_ctx, 4096);
  assert.equal(saved.llm.keep_alive, '-1');
  assert.equal(saved.llm.system_prompt, 'Fix punctuation only.');
  assert.equal(saved.history.retention_days, 30);
  assert.equal(saved.history.keep_audio, true);
  assert.equal(saved.dictation.sound_cues, true);
  assert.equal(saved.dictation.mute_output, true);
  assert.equal(saved.dictation.pause_media, false, 'muting leaves pausing as it was');
  assert.equal(saved.dictation.sound_volume, 0.3);
  assert.equal(saved.dictation.live_words, false);
  // Untouched values survive the round trip unchanged.
  assert.equal(saved.llm.top_p, 0.9);
  assert.equal(saved.vad.threshold, 0.5);
  // Reload: the form shows what was saved.
  await page.reload();
  await page.getByTestId('settings').waitFor();
  assert.equal(await page.getByTestId('language').inputValue(), 'de');
  assert.equal(await page.getByTestId('llm-num-ctx').inputValue(), '4096');
  assert.equal(await page.getByTestId('hotkey').textContent(), 'Ctrl+Alt+D');
  assert.ok(await page.getByTestId('mode-toggle').isChecked());
  // The level meter moves.
  await page.waitForFunction(() => parseFloat(document.querySelector('[data-testid=level] > div').style.width) > 20);
  // LLM: list models, test.
  await page.getByTestId('llm-refresh').click();
  await page.getByTestId('llm-model-pick').selectOption('qwen2.5:3b-instruct');
  await eventually(async () => assert.equal(await page.getByTestId('llm-model').inputValue(), 'qwen2.5:3b-instruct'));
  await page.getByTestId('llm-test').click();
  await page.getByTestId('llm-result').waitFor();
  assert.match(await page.getByTestId('llm-latency').textContent(), /413 ms/);
  assert.match(await page.getByTestId('llm-tps').textContent(), /73\.4 tokens\/s/);
  assert.match(await page.getByTestId('llm-loaded').textContent(), /already loaded/);
  // Autostart switch calls the app.
  await page.getByTestId('autostart').check();
  assert.ok((await mockState(page)).calls.includes('set_autostart'));
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.locator('main').evaluate((m) => m.scrollTo(0, 0));
  await shot(page, 'settings');
  await page.getByTestId('card-llm').screenshot({ path: path.join(out, 'settings-llm.png') });
});

await test('settings: one grid (labels left, controls wrap in their column), every control labelled', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('settings').waitFor();
  // Terminal window classes: a box that wraps; commas and/or lines, saved as the same list.
  const classes = page.getByTestId('terminal-classes');
  assert.equal(await classes.evaluate((e) => e.tagName), 'TEXTAREA');
  await classes.fill('XTerm, kitty, Alacritty, foot, org.gnome.Terminal, org.gnome.Console, konsole\nxfce4-terminal,, tilix\n\nterminator, wezterm, com.mitchellh.ghostty, st-256color, URxvt ');
  await classes.press('Tab'); // the change is committed when the field is left
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  assert.deepEqual((await mockState(page)).saved.at(-1).inject.terminal_classes, ['XTerm', 'kitty', 'Alacritty', 'foot', 'org.gnome.Terminal',
    'org.gnome.Console', 'konsole', 'xfce4-terminal', 'tilix', 'terminator', 'wezterm', 'com.mitchellh.ghostty', 'st-256color', 'URxvt']);
  assert.equal(await page.getByTestId('sound-volume').evaluate((e) => [...e.labels].map((l) => l.textContent.trim()).join()), 'Volume');
  // Show what is only there on demand: the speech server's fields and result, a replacement,
  // a snippet, a custom command, the LLM's model list and test result.
  await page.getByTestId('stt-backend').selectOption('openai');
  await page.getByTestId('replace-add').click();
  await page.getByTestId('snippet-add').click();
  await page.getByTestId('custom-add').click();
  await page.getByTestId('sound-cues').check();
  await page.getByTestId('llm-refresh').click();
  await page.getByTestId('llm-model-pick').waitFor();
  await page.getByTestId('llm-test').click();
  await page.getByTestId('llm-result').waitFor();
  await page.getByTestId('stt-test').click();
  await page.getByTestId('stt-result').waitFor();

  // Every visible input/select/textarea has a label with text or an aria-label; ids are unique.
  const unlabelled = () => page.evaluate(() => {
    const settings = document.querySelector('[data-testid="settings"]');
    const ids = [...settings.querySelectorAll('[id]')].map((e) => e.id);
    const dupes = ids.filter((id, k) => ids.indexOf(id) !== k).map((id) => `duplicate id ${id}`);
    return dupes.concat([...settings.querySelectorAll('input, select, textarea')]
      .filter((el) => el.getClientRects().length > 0 && el.type !== 'hidden')
      .filter((el) => ![...el.labels].some((l) => l.textContent.trim()) && !el.getAttribute('aria-label')?.trim())
      .map((el) => `<${el.tagName.toLowerCase()} type=${el.type} data-testid=${el.dataset.testid ?? '-'} id=${el.id || '-'}>`));
  });
  // In every visible .row, everything but the first-child column label starts in the control
  // column (the row's left + the 170 px label column + the 12 px gap); result boxes too.
  const outOfColumn = () => page.evaluate(() => {
    const col = 170 + 12;
    const shown = (el) => el.getClientRects().length > 0;
    const what = (el) => `<${el.tagName.toLowerCase()}${el.dataset.testid ? ` data-testid=${el.dataset.testid}` : ''}> “${(el.textContent ?? '').trim().slice(0, 40)}”`;
    const bad = [];
    const settings = document.querySelector('[data-testid="settings"]');
    for (const row of settings.querySelectorAll('.row')) {
      if (!shown(row)) continue;
      const left = row.getBoundingClientRect().left;
      const name = (row.firstElementChild?.tagName === 'LABEL' ? row.firstElementChild : row).textContent.trim().slice(0, 40);
      [...row.children].forEach((child, k) => {
        if ((k === 0 && child.tagName === 'LABEL') || !shown(child)) return;
        const x = child.getBoundingClientRect().left - left;
        if (x < col - 1) bad.push(`row “${name}”: ${what(child)} at ${Math.round(x)} px`);
      });
    }
    for (const box of settings.querySelectorAll('.result-box')) {
      if (!shown(box)) continue;
      const p = box.parentElement;
      const cs = getComputedStyle(p);
      const x = box.getBoundingClientRect().left - (p.getBoundingClientRect().left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft));
      if (x < col - 1) bad.push(`result ${what(box)} at ${Math.round(x)} px`);
    }
    return bad;
  });
  for (const width of [1280, 900]) {
    await page.setViewportSize({ width, height: 900 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const missing = await unlabelled();
    assert.deepEqual(missing, [], `at ${width} px, controls without a label:\n${missing.join('\n')}`);
    const out_ = await outOfColumn();
    assert.deepEqual(out_, [], `at ${width} px, outside the control column:\n${out_.join('\n')}`);
    // The page scrolls in <main>: a viewport as tall as its content shows all of it.
    const full = await page.evaluate(() => { const m = document.querySelector('main'); return Math.ceil(m.getBoundingClientRect().top + m.scrollHeight); });
    await page.setViewportSize({ width, height: Math.min(full, 16000) });
    await page.screenshot({ path: path.join(out, `settings-grid-${width}.png`), fullPage: true });
  }
});

await test('speech server: backend, Test button, key to the keyring only', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('settings').waitFor();
  assert.equal(await page.getByTestId('stt-url').count(), 0, 'server fields shown for the local backend');
  await page.getByTestId('stt-backend').selectOption('openai');
  assert.equal(await page.getByTestId('stt-upload').inputValue(), 'auto');
  await page.getByTestId('stt-upload').selectOption('wav');
  // No key variable on the page (issue 38): it is set in the config file only, and said so.
  assert.equal(await page.locator('input[data-testid="stt-key-env"], input[data-testid="llm-api-key-env"]').count(), 0, 'an api_key_env input');
  assert.match(await page.getByTestId('stt-key-env-note').textContent(), /config file only/);
  assert.match(await page.getByTestId('llm-api-key-env-note').textContent(), /config file only/);
  // A key typed for one server is not carried to a new URL: the field is cleared, and says why.
  await page.getByTestId('stt-key').fill('sk-typed-for-the-old-server');
  await page.getByTestId('stt-url').fill('https://gpu-box.lan:8000');
  await page.getByTestId('stt-url').press('Tab'); // the change is committed when the field is left
  assert.equal(await page.getByTestId('stt-key').inputValue(), '', 'a URL change kept the typed key');
  assert.match(await page.getByTestId('stt-key-msg').textContent(), /does not take the key along/);
  await page.getByTestId('stt-test').click();
  await page.getByTestId('stt-result').waitFor();
  assert.match(await page.getByTestId('stt-rtt').textContent(), /231 ms/);
  assert.equal(await page.getByTestId('stt-text').textContent(), '10 of clubs.');
  // A typed-in URL that is not saved yet is tested without the key, and the result says so.
  assert.match(await page.getByTestId('stt-key-used').textContent(), /tested without the API key.*save the URL first/);
  // Save the URL first, then enter its key (bound to the saved server's origin).
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  await page.getByTestId('stt-key').fill('sk-e2e-secret-key');
  await page.getByTestId('stt-key-save').click();
  await page.getByTestId('stt-key-msg').filter({ hasText: 'saved in the keyring' }).waitFor();
  assert.equal(await page.getByTestId('stt-key').inputValue(), '', 'the key stays in the form');
  const state = await mockState(page);
  const saved = state.saved.at(-1);
  assert.equal(saved.stt.backend, 'openai');
  assert.equal(saved.stt.url, 'https://gpu-box.lan:8000');
  assert.equal(saved.stt.upload, 'wav');
  assert.ok(!JSON.stringify(saved).includes('sk-e2e-secret-key'), 'the key reached the config');
  assert.ok(state.calls.includes('stt_key_set'));
  // Saved: the same URL is tested with the saved key source (the page never names it).
  await page.getByTestId('stt-test').click();
  await page.getByTestId('stt-key-used').filter({ hasText: 'API key from the keyring' }).waitFor();
  await page.getByTestId('card-speech').screenshot({ path: path.join(out, 'settings-speech-server.png') });
});

await test('voice commands: built-ins, punctuation, a custom command', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('settings').waitFor();
  assert.ok(await page.getByTestId('command-undo').isChecked());
  await page.getByTestId('command-undo').uncheck();
  await page.getByTestId('commands-punctuation').check();
  await page.getByTestId('custom-add').click();
  await page.getByTestId('custom-phrase-0').fill('save the file');
  await page.getByTestId('custom-keys-0').fill('ctrl+s');
  await page.getByTestId('custom-add').click(); // left empty: not saved
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  const saved = (await mockState(page)).saved.at(-1);
  assert.deepEqual(saved.commands, { enabled: true, punctuation: true, disabled: ['undo'], custom: [{ phrase: 'save the file', keys: 'ctrl+s' }] });
  await page.getByTestId('card-commands').screenshot({ path: path.join(out, 'settings-commands.png') });
});

await test('edit by voice: on, its own key, a clash refused, saved', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('settings').waitFor();
  const card = page.getByTestId('card-edit');
  assert.equal(await card.getByTestId('edit-hotkey').textContent(), 'ctrl+alt+e');
  assert.equal(await card.getByTestId('edit-needs-llm').count(), 0, 'no LLM warning while edits are off');
  await card.getByTestId('edit-enabled').check();
  await card.getByTestId('edit-needs-llm').waitFor();
  await page.getByTestId('llm-enabled').check();
  await eventually(async () => assert.equal(await card.getByTestId('edit-needs-llm').count(), 0));
  // The dictation key recorded as the edit key: Settings says so, and the engine refuses it.
  await card.getByTestId('record-edit-hotkey').click();
  await card.getByTestId('record-edit-hotkey').filter({ hasText: 'Press the key' }).waitFor();
  await page.keyboard.press('Control+Alt+Space');
  await card.getByTestId('edit-hotkey').filter({ hasText: 'Ctrl+Alt+Space' }).waitFor({ timeout: 5000 });
  assert.equal(await page.getByTestId('hotkey').textContent(), 'ctrl+alt+space', 'the dictation hotkey is unchanged');
  await card.getByTestId('edit-hotkey-clash').waitFor();
  const before = (await mockState(page)).saved.length;
  await page.getByTestId('save').click();
  await card.getByTestId('edit-engine-error').filter({ hasText: 'edit.hotkey' }).waitFor();
  assert.equal((await mockState(page)).saved.length, before, 'a clash is not saved');
  await card.getByTestId('record-edit-hotkey').click();
  await card.getByTestId('record-edit-hotkey').filter({ hasText: 'Press the key' }).waitFor();
  await page.keyboard.press('Control+Alt+KeyR');
  await card.getByTestId('edit-hotkey').filter({ hasText: 'Ctrl+Alt+R' }).waitFor({ timeout: 5000 });
  assert.equal(await card.getByTestId('edit-hotkey-clash').count(), 0);
  await card.getByTestId('edit-newlines').uncheck();
  await card.getByTestId('edit-timeout').fill('45');
  await card.getByTestId('edit-max-selection').fill('2000');
  await card.getByTestId('edit-prompt').fill('Answer with the rewritten text only.');
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  const saved = (await mockState(page)).saved.at(-1);
  assert.deepEqual(saved.edit, { enabled: true, hotkey: 'Ctrl+Alt+R', prompt: 'Answer with the rewritten text only.', timeout_ms: 45000, max_selection_chars: 2000, keep_on_clipboard: true, type_newlines: false });
  assert.equal(saved.dictation.hotkey, 'ctrl+alt+space');
  await card.screenshot({ path: path.join(out, 'settings-edit.png') });
});

await test('text around the cursor (context): off, opt-out list, budget refused, saved, kept on reload', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('settings').waitFor();
  const card = page.getByTestId('card-context');
  // Right after the Styles card.
  assert.equal(await page.getByTestId('card-styles').evaluate((e) => e.nextElementSibling?.dataset.testid), 'card-context');
  assert.ok(await card.getByTestId('context-around').isChecked());
  assert.ok(await card.getByTestId('context-llm').isChecked());
  assert.ok(!(await card.getByTestId('context-llm-remote').isChecked()));
  assert.equal(await card.getByTestId('context-opt-out').inputValue(), 'keepassxc\nbitwarden\npinentry');
  assert.equal(await card.getByTestId('context-budget').inputValue(), '150');
  // The LLM settings say they need the LLM, until it is on.
  await card.getByTestId('context-llm-off').waitFor();
  await page.getByTestId('llm-enabled').check();
  await eventually(async () => assert.equal(await card.getByTestId('context-llm-off').count(), 0));
  await card.getByTestId('context-around').uncheck();
  await card.getByTestId('context-llm-remote').check();
  assert.ok(!(await card.getByTestId('context-switch-a11y').isChecked()), 'the switch is off unless asked');
  await card.getByTestId('context-switch-a11y').check();
  const optOut = card.getByTestId('context-opt-out');
  await optOut.fill('  keepassxc\n\nbitwarden \norg.signal.Signal\n  \n');
  await optOut.press('Tab'); // the change is committed when the field is left
  // Out of range: the engine refuses, the card says so, nothing is saved.
  await card.getByTestId('context-budget').fill('5');
  const before = (await mockState(page)).saved.length;
  await page.getByTestId('save').click();
  await card.getByTestId('context-engine-error').filter({ hasText: 'context.budget_ms' }).waitFor();
  assert.equal((await mockState(page)).saved.length, before, 'an out-of-range budget was saved');
  await card.getByTestId('context-budget').fill('300');
  await card.getByTestId('context-budget').press('Tab');
  await eventually(async () => assert.equal(await card.getByTestId('context-engine-error').count(), 0));
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  assert.deepEqual((await mockState(page)).saved.at(-1).context,
    { around_cursor: false, opt_out: ['keepassxc', 'bitwarden', 'org.signal.Signal'], llm: true, llm_remote: true, budget_ms: 300, switch_on_accessibility: true });
  await page.reload();
  await page.getByTestId('settings').waitFor();
  assert.ok(!(await card.getByTestId('context-around').isChecked()), 'around_cursor not kept');
  assert.ok(await card.getByTestId('context-llm-remote').isChecked(), 'llm_remote not kept');
  assert.ok(await card.getByTestId('context-switch-a11y').isChecked(), 'switch_on_accessibility not kept');
  assert.equal(await card.getByTestId('context-opt-out').inputValue(), 'keepassxc\nbitwarden\norg.signal.Signal');
  assert.equal(await card.getByTestId('context-budget').inputValue(), '300');
  await card.screenshot({ path: path.join(out, 'settings-context.png') });
});

await test('snippets and replacements: add, edit, remove, save, engine refusal', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('card-snippets').waitFor();
  assert.equal(await page.getByTestId('snippet-phrase-0').count(), 0, 'the mock config has no snippets');
  await page.getByTestId('replace-add').click();
  await page.getByTestId('replace-from-0').fill('cooper netties');
  await page.getByTestId('replace-to-0').fill('Kubernetes');
  await page.getByTestId('replace-add').click();
  await page.getByTestId('replace-from-1').fill('um');
  await page.getByTestId('snippet-add').click();
  await page.getByTestId('snippet-phrase-0').fill('my address');
  await page.getByTestId('snippet-text-0').fill('12 Main Street\nSpringfield');
  await page.getByTestId('snippet-add').click();
  await page.getByTestId('snippet-phrase-1').fill('my email');
  await page.getByTestId('snippet-text-1').fill('me@example.com');
  await page.getByTestId('snippet-add').click(); // left blank: not saved, not judged
  assert.equal(await page.getByTestId('snippet-problem').count(), 0, await page.getByTestId('snippets').textContent());
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  let saved = (await mockState(page)).saved.at(-1);
  assert.deepEqual(saved.replace, [{ from: 'cooper netties', to: 'Kubernetes' }, { from: 'um', to: '' }]);
  assert.deepEqual(saved.snippet, [{ phrase: 'my address', text: '12 Main Street\nSpringfield' }, { phrase: 'my email', text: 'me@example.com' }]);
  // Reload: the saved tables are shown, the newline kept.
  await page.reload();
  await page.getByTestId('card-snippets').waitFor();
  assert.equal(await page.getByTestId('snippet-text-0').inputValue(), '12 Main Street\nSpringfield');
  assert.equal(await page.getByTestId('replace-to-0').inputValue(), 'Kubernetes');
  assert.equal(await page.getByTestId('snippet-phrase-2').count(), 0, 'the blank row was saved');
  // Remove one of each: the others stay, in order.
  await page.getByTestId('snippet-remove-0').click();
  await page.getByTestId('replace-remove-1').click();
  assert.equal(await page.getByTestId('snippet-phrase-0').inputValue(), 'my email');
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  saved = (await mockState(page)).saved.at(-1);
  assert.deepEqual(saved.snippet, [{ phrase: 'my email', text: 'me@example.com' }]);
  assert.deepEqual(saved.replace, [{ from: 'cooper netties', to: 'Kubernetes' }]);
  // The page's checks: a phrase said twice (any case, punctuation aside), an empty text.
  await page.getByTestId('snippet-add').click();
  await page.getByTestId('snippet-phrase-1').fill('My Email!');
  await page.getByTestId('snippet-problem').filter({ hasText: 'snippet #2: "my email" has two snippets' }).waitFor();
  assert.equal(await page.getByTestId('snippet-phrase-1').getAttribute('aria-invalid'), 'true');
  // Saved anyway: the engine refuses, its message is shown (bar and card), nothing is saved.
  await page.getByTestId('snippet-text-1').fill('other@example.com');
  const before = (await mockState(page)).saved.length;
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'invalid setting snippet #2.phrase: "my email" has two snippets' }).waitFor();
  assert.match(await page.getByTestId('snippets-engine-error').textContent(), /^Not saved: invalid setting snippet #2\.phrase/);
  assert.equal((await mockState(page)).saved.length, before, 'a refused config was saved');
  await page.getByTestId('snippet-phrase-1').fill('my work email');
  assert.equal(await page.getByTestId('snippet-problem').count(), 0);
  assert.equal(await page.getByTestId('snippets-engine-error').count(), 0, 'the refusal outlived the edit');
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  assert.deepEqual((await mockState(page)).saved.at(-1).snippet.map((x) => x.phrase), ['my email', 'my work email']);
  await page.getByTestId('card-snippets').screenshot({ path: path.join(out, 'settings-snippets.png') });
});

await test('styles: built-in list, a test per style, edits saved as tables, refusals shown', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('settings').waitFor();
  const card = page.getByTestId('card-styles');
  await card.scrollIntoViewIfNeeded();
  // No [[style]] tables: the built-in ones, said to be so.
  await page.getByTestId('styles-builtin').waitFor();
  const names = await card.locator('[data-testid$="-name"]').evaluateAll((els) => els.map((e) => e.value));
  assert.deepEqual(names, ['spoken', 'clean', 'formal', 'chat', 'commit']);
  // Test "chat" on a sentence: the LLM is asked with the chat prompt and the settings' model,
  // and the answer is shown without its final period (the style drops it).
  await page.getByTestId('style-sample').fill('um so i think we should uh send the report to maria by friday');
  await page.getByTestId('style-3-test').click();
  await page.getByTestId('style-3-result').waitFor();
  let asked = (await mockState(page)).llmTests;
  assert.equal(asked.length, 1);
  assert.match(asked[0].system_prompt, /^Style: chat\./);
  assert.equal(asked[0].model, 'llama3.2:3b');
  assert.equal(asked[0].text, 'um so i think we should uh send the report to maria by friday');
  assert.match(await page.getByTestId('style-3-result').textContent(), /→ So I think we should send the report to Maria by Friday$/);
  // "spoken" has no LLM: nothing is sent, the sentence comes back as said.
  await page.getByTestId('style-0-test').click();
  assert.match(await page.getByTestId('style-0-result').textContent(), /no LLM → um so i think/);
  assert.equal((await mockState(page)).llmTests.length, 1);
  // Edits: chat gets shift, a new "memo" style with its own prompt and model, memo for every
  // dictation, the terminal profile writes in chat.
  await page.getByTestId('style-3-modifier').selectOption('shift');
  await page.getByTestId('style-add').click();
  await page.getByTestId('style-5-name').fill('memo');
  await page.getByTestId('style-5-prompt').fill('Memo style. Clean up the text.{vocabulary}');
  await page.getByTestId('style-5-model').fill('qwen2.5:3b-instruct');
  await page.getByTestId('style-current').selectOption('memo');
  await page.getByTestId('profile-0-style').selectOption('chat');
  await page.getByTestId('style-5-test').click();
  await page.getByTestId('style-5-result').waitFor();
  asked = (await mockState(page)).llmTests;
  assert.equal(asked.at(-1).system_prompt, 'Memo style. Clean up the text.{vocabulary}');
  assert.equal(asked.at(-1).model, 'qwen2.5:3b-instruct');
  await card.screenshot({ path: path.join(out, 'settings-styles.png') });
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  const saved = (await mockState(page)).saved.at(-1);
  assert.deepEqual(saved.style.map((s) => s.name), ['spoken', 'clean', 'formal', 'chat', 'commit', 'memo']);
  assert.equal(saved.style[3].modifier, 'shift');
  assert.deepEqual(saved.style[5], { name: 'memo', llm: true, prompt: 'Memo style. Clean up the text.{vocabulary}', model: 'qwen2.5:3b-instruct' });
  assert.equal(saved.dictation.style, 'memo');
  assert.equal(saved.profile[0].style, 'chat');
  await page.reload();
  await page.getByTestId('settings').waitFor();
  assert.equal(await page.getByTestId('styles-builtin').count(), 0);
  assert.equal(await page.getByTestId('style-current').inputValue(), 'memo');
  assert.equal(await page.getByTestId('style-3-modifier').inputValue(), 'shift');
  assert.equal(await page.getByTestId('profile-0-style').inputValue(), 'chat');
  // Two styles of one name: the page says it, and the engine's refusal shows in the card.
  await page.getByTestId('style-5-name').fill('chat');
  await page.getByTestId('style-problem').filter({ hasText: 'Two styles are named' }).waitFor();
  await page.getByTestId('save').click();
  await page.getByTestId('styles-engine-error').filter({ hasText: 'two styles have this name' }).waitFor();
  assert.equal((await mockState(page)).saved.length, 0, 'a refused config was saved'); // (the mock's record starts again at the reload)
});

await test('translate: refused with an English-only model, saved with a multilingual one', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('settings').waitFor();
  assert.equal(await page.getByTestId('stt-task').inputValue(), 'transcribe');
  assert.equal(await page.getByTestId('task-problem').count(), 0);
  await page.getByTestId('stt-task').selectOption('translate');
  // The page says it before Save (the default model is tiny.en-q8_0)...
  assert.match(await page.getByTestId('task-problem').textContent(), /tiny\.en-q8_0 is English-only/);
  // ...and the engine refuses on Save, with its message.
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'invalid setting stt.task' }).waitFor();
  assert.match(await page.getByTestId('task-engine-error').textContent(), /English-only and cannot translate; pick a multilingual model instead, e\.g\. stt\.model = "tiny-q8_0"/);
  assert.equal((await mockState(page)).saved.length, 0, 'a refused config was saved');
  assert.equal(await page.getByTestId('task-problem').count(), 0, "the page's guess shown next to the engine's word");
  await page.getByTestId('card-speech').screenshot({ path: path.join(out, 'settings-translate-refused.png') });
  // A multilingual model: download it, make it the default; the warning goes, Save works.
  await page.getByTestId('download-base-q8_0').click();
  await page.getByTestId('model-base-q8_0').getByText('installed', { exact: true }).waitFor({ timeout: 10_000 });
  await page.getByTestId('default-base-q8_0').click();
  await page.getByTestId('model-base-q8_0').getByText('default', { exact: true }).waitFor();
  await page.getByTestId('task-engine-error').waitFor({ state: 'detached' }); // about a form that changed
  assert.equal(await page.getByTestId('task-problem').count(), 0);
  await page.getByTestId('profile-0-task').selectOption('transcribe');
  await page.getByTestId('save').click();
  await page.getByTestId('save-status').filter({ hasText: 'Saved' }).waitFor();
  const saved = (await mockState(page)).saved.at(-1);
  assert.equal(saved.stt.task, 'translate');
  assert.equal(saved.stt.model, 'base-q8_0');
  assert.equal(saved.profile[0].task, 'transcribe');
  assert.equal(await page.getByTestId('task-engine-error').count(), 0);
  await page.reload();
  await page.getByTestId('settings').waitFor();
  assert.equal(await page.getByTestId('stt-task').inputValue(), 'translate');
  assert.equal(await page.getByTestId('profile-0-task').inputValue(), 'transcribe');
});

await test('model download progress, cancel and resume', async (page) => {
  await page.goto(`${base}#settings`);
  const row = page.getByTestId('model-small.en-q8_0');
  await row.scrollIntoViewIfNeeded();
  await page.getByTestId('download-small.en-q8_0').click();
  const progress = page.getByTestId('progress-small.en-q8_0');
  await progress.waitFor();
  const pct = async () => Number(/(\d+) %/.exec(await progress.textContent())?.[1] ?? -1);
  await page.waitForFunction(() => /([3-9]\d) %/.test(document.querySelector('[data-testid=progress-small\\.en-q8_0]')?.textContent ?? ''));
  const p1 = await pct();
  await page.getByTestId('card-models').screenshot({ path: path.join(out, 'settings-models-downloading.png') });
  await page.waitForTimeout(300);
  const p2 = await pct();
  assert.ok(p2 === -1 || p2 > p1, `progress did not advance: ${p1} → ${p2}`);
  await row.getByText('installed').waitFor({ timeout: 10_000 });
  assert.ok(await page.getByTestId('default-small.en-q8_0').isVisible(), 'Set default missing on an installed model');
  // Cancel another one part-way: it keeps the partial download and offers Resume.
  await page.getByTestId('download-medium.en-q5_0').click();
  await page.waitForFunction(() => /([2-9]\d) %/.test(document.querySelector('[data-testid=progress-medium\\.en-q5_0]')?.textContent ?? ''));
  await page.getByTestId('cancel-medium.en-q5_0').click();
  await page.getByTestId('model-medium.en-q5_0').getByText('downloaded').waitFor();
  assert.equal(await page.getByTestId('download-medium.en-q5_0').textContent(), 'Resume');
  // Set default, delete.
  await page.getByTestId('default-small.en-q8_0').click();
  await page.getByTestId('model-small.en-q8_0').getByText('default').waitFor();
  await page.getByTestId('delete-tiny.en-q8_0').click();
  await page.getByTestId('model-tiny.en-q8_0').getByText('not installed').waitFor();
  await page.getByTestId('card-models').screenshot({ path: path.join(out, 'settings-models.png') });
});

await test('settings: measure again, the numbers, switch to the recommended model', async (page) => {
  // tiny.en-q8_0 (the default) and base.en installed: both are timed, base.en fits and is more accurate.
  await page.goto(`${base}?installed=base.en#settings`);
  const button = page.getByTestId('measure-again');
  await button.scrollIntoViewIfNeeded();
  await button.click();
  await page.getByTestId('measure-status').filter({ hasText: 'measuring… timing' }).waitFor();
  assert.ok(await button.isDisabled(), 'Measure again clickable while measuring');
  await page.getByTestId('measure-table').waitFor();
  assert.ok(await button.isEnabled(), 'Measure again still disabled after the result');
  // Each timed model with its passes, key-up → text p95 and file RTF; the estimate is not a row.
  const tiny = await page.getByTestId('measure-row-tiny.en-q8_0').textContent();
  assert.match(tiny, /120 ms.*330 ms.*190 ms.*0\.03× real time.*fits/);
  assert.match(tiny, /in use/);
  assert.match(await page.getByTestId('measure-row-base.en').textContent(), /200 ms.*560 ms.*280 ms.*0\.06× real time/);
  assert.equal(await page.getByTestId('measure-row-small.en-q8_0').count(), 0, 'an estimate that was not chosen is listed');
  assert.equal(await page.getByTestId('measure-recommended').textContent(), 'base.en');
  assert.match(await page.getByTestId('measure-reason').textContent(), /small\.en-q8_0 would take 780 ms/);
  assert.match(await page.getByTestId('measure-note').textContent(), /tiny\.en-q8_0 32 ms per second of audio/);
  await page.getByTestId('card-models').screenshot({ path: path.join(out, 'settings-measure-again.png') });
  // Switch: the config is saved with the new model, and the list shows it as the default.
  const savedBefore = (await mockState(page)).saved.length;
  await page.getByTestId('measure-switch').click();
  await page.getByTestId('measure-in-use').waitFor();
  const state = await mockState(page);
  assert.equal(state.saved.length, savedBefore + 1, 'switching did not save the config');
  assert.equal(state.saved.at(-1).stt.model, 'base.en');
  assert.equal(state.saved.at(-1).stt.language, 'en', 'the rest of the saved config changed');
  await page.getByTestId('model-base.en').getByText('default').waitFor();
  assert.equal(await page.getByTestId('measure-switch').count(), 0);
});

await test('settings: measure again refused while dictating says what to do', async (page) => {
  await page.goto(`${base}?measure=dictating#settings`);
  await page.getByTestId('measure-again').click();
  const err = page.getByTestId('measure-error');
  await err.waitFor();
  assert.match(await err.textContent(), /^Not measured: a dictation is under way: measure again once its text is typed/);
  assert.equal(await page.getByTestId('measure-table').count(), 0);
  assert.ok(await page.getByTestId('measure-again').isEnabled(), 'the button stays disabled after an error');
  assert.ok(!(await mockState(page)).calls.includes('save_config'));
});

await test('history search, filter, detail, export, delete', async (page) => {
  await page.goto(`${base}#history`);
  await page.getByTestId('count').filter({ hasText: '12,000 entries' }).waitFor();
  await page.getByTestId('row').first().waitFor();
  const rendered = await page.getByTestId('row').count();
  assert.ok(rendered > 5 && rendered < 60, `virtualized list rendered ${rendered} rows`);
  // Scroll deep: pages load, the DOM stays small.
  const list = page.getByTestId('list');
  for (let i = 0; i < 8; i++) {
    await list.evaluate((el) => el.scrollBy(0, 52 * 150));
    await page.waitForTimeout(60);
  }
  await page.waitForFunction(() => Math.max(...[...document.querySelectorAll('[data-testid=row]')].map((r) => Number(r.style.top.replace('px', '')))) > 52 * 1000);
  assert.ok((await page.getByTestId('row').count()) < 60, 'rows not virtualized after scrolling');
  assert.ok((await mockState(page)).calls.filter((c) => c === 'history_page').length >= 5, 'did not page');
  // Search.
  await page.getByTestId('search').fill('quarterly rep');
  await page.waitForFunction(() => !/^12,000/.test(document.querySelector('[data-testid=count]').textContent));
  await eventually(async () => {
    const texts = await page.locator('[data-testid=row] .text').allTextContents();
    assert.ok(texts.length > 0);
    for (const t of texts) assert.match(t.toLowerCase(), /quarterly rep/);
  });
  const searchCount = Number((await page.getByTestId('count').textContent()).replace(/\D/g, ''));
  assert.ok(searchCount > 100 && searchCount < 3000, `search count ${searchCount}`);
  // App + outcome filters.
  await page.getByTestId('app').selectOption('kitty');
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=count]').textContent.replace(/\D/g, '')) < n, searchCount);
  await eventually(async () => {
    for (const m of await page.locator('[data-testid=row] .meta').allTextContents()) assert.match(m, /kitty/);
  });
  await page.getByTestId('search').fill('');
  await page.getByTestId('outcome').selectOption('llm_rejected');
  await eventually(async () => {
    const badges = await page.locator('[data-testid=row] .badge').allTextContents();
    assert.ok(badges.length > 0);
    for (const b of badges) assert.match(b, /LLM rejected/);
  });
  // Date range: one day.
  // An error row with kept audio: Retry calls the command, and the row then has the text.
  await page.getByTestId('outcome').selectOption('error');
  await page.getByTestId('row').first().click();
  await page.getByTestId('retry').click();
  await page.getByTestId('toast').filter({ hasText: 'Retried and typed' }).waitFor();
  assert.equal((await mockState(page)).retried.length, 1);
  await page.getByTestId('final').filter({ hasText: 'Retried from the kept audio.' }).waitFor();
  assert.equal(await page.getByTestId('retry').count(), 0, 'delivered: no Retry');
  await page.getByTestId('outcome').selectOption('');
  await page.getByTestId('app').selectOption('');
  await page.getByTestId('from').fill('2026-11-01');
  await page.getByTestId('to').fill('2026-11-01');
  await eventually(async () => {
    const dayCount = Number((await page.getByTestId('count').textContent()).replace(/\D/g, ''));
    assert.ok(dayCount > 100 && dayCount < 400, `one day has ${dayCount}`);
    for (const m of await page.locator('[data-testid=row] .meta').allTextContents()) assert.match(m, /^2026-11-01/);
  });
  await page.getByTestId('from').fill('');
  await page.getByTestId('to').fill('');
  await page.getByTestId('count').filter({ hasText: '12,000 entries' }).waitFor();
  // Detail: raw vs final, timing bar.
  await page.getByTestId('search').fill('plants');
  await eventually(async () => assert.match((await page.locator('[data-testid=row] .text').first().textContent()).toLowerCase(), /plants/));
  await page.getByTestId('row').first().click();
  await page.getByTestId('detail').waitFor();
  // The Retry step above left another row's detail open: wait for this one's.
  await eventually(async () => {
    assert.match(await page.getByTestId('raw').textContent(), /^um remind me to water the plants/);
    assert.match(await page.getByTestId('final').textContent(), /plants/);
  });
  const stages = await page.locator('[data-testid=timing-bar] > div').evaluateAll((ds) => ds.map((d) => [d.dataset.stage, parseFloat(d.style.width)]));
  assert.deepEqual(stages.map((s) => s[0]), ['capture', 'stt', 'llm', 'inject']);
  assert.ok(Math.abs(stages.reduce((a, s) => a + s[1], 0) - 100) < 0.01, JSON.stringify(stages));
  await page.getByTestId('search').fill('');
  await page.getByTestId('count').filter({ hasText: '12,000 entries' }).waitFor();
  await page.getByTestId('row').filter({ hasText: 'cleaned' }).nth(1).click();
  await page.getByTestId('detail').waitFor();
  await page.getByTestId('timing-bar').locator('[data-stage=llm]').waitFor();
  await shot(page, 'history');
  // Export the selection (Markdown) and everything (CSV).
  const checks = page.getByTestId('row-check');
  await checks.nth(0).check();
  await checks.nth(1).check();
  await page.getByTestId('export-format').selectOption('markdown');
  await page.getByTestId('export-selected').click();
  await page.getByTestId('toast').filter({ hasText: 'Exported 2 entries' }).waitFor();
  let st = await mockState(page);
  assert.equal(st.exports.at(-1).format, 'markdown');
  assert.equal(st.exports.at(-1).selection.ids.length, 2);
  assert.ok(st.exports.at(-1).selection.ids[0] > st.exports.at(-1).selection.ids[1], 'ids newest first');
  await page.getByTestId('export-format').selectOption('csv');
  await page.getByTestId('export-all').click();
  await page.getByTestId('toast').filter({ hasText: 'Exported 12,000'.replace(',', '') }).waitFor();
  st = await mockState(page);
  assert.equal(st.exports.at(-1).selection.ids, undefined);
  // Delete the two selected.
  await page.getByTestId('delete-selected').click();
  await page.getByTestId('count').filter({ hasText: '11,998 entries' }).waitFor();
  assert.equal((await mockState(page)).deleted.length, 2);
  // Re-inject says honestly that it is not there yet.
  await page.getByTestId('row').first().click();
  await page.getByTestId('reinject').click();
  await page.getByTestId('toast').filter({ hasText: 'injection module' }).waitFor();
});

await test('delete all history, with confirmation', async (page) => {
  await page.goto(`${base}?rows=500#history`);
  await page.getByTestId('count').filter({ hasText: '500 entries' }).waitFor();
  // Cancel leaves everything.
  await page.getByTestId('delete-all').click();
  await page.getByTestId('confirm-delete-all').waitFor();
  await shot(page, 'history-delete-all-confirm');
  await page.getByTestId('confirm-cancel').click();
  await page.getByTestId('confirm-delete-all').waitFor({ state: 'detached' });
  assert.equal((await mockState(page)).calls.includes('history_delete_all'), false);
  // Confirmed: every entry goes, whatever the filter.
  await page.getByTestId('search').fill('quarterly');
  await page.waitForFunction(() => !/^500 /.test(document.querySelector('[data-testid=count]').textContent));
  await page.getByTestId('delete-all').click();
  await page.getByTestId('confirm-delete').click();
  await page.getByTestId('toast').filter({ hasText: 'Deleted 500 entries' }).waitFor();
  await page.getByTestId('count').filter({ hasText: '0 entries' }).waitFor();
  assert.equal(await page.getByTestId('row').count(), 0);
  assert.equal((await mockState(page)).deleted.length, 500);
});

await test('history correction: proposals accepted or rejected one by one', async (page) => {
  await page.goto(`${base}?rows=500#history`);
  await page.getByTestId('count').filter({ hasText: '500 entries' }).waitFor();
  await page.getByTestId('search').fill('quarterly');
  await page.waitForFunction(() => !/^500 /.test(document.querySelector('[data-testid=count]').textContent));
  // Corrects the n-th matching row: "Maria" → "Marija"; returns the proposals shown.
  const correct = async (n) => {
    await page.getByTestId('row').nth(n).click();
    await page.getByTestId('detail').waitFor();
    await eventually(async () => assert.match(await page.getByTestId('raw').textContent(), /^um send the quarterly report to maria/));
    await page.getByTestId('correct-open').click();
    const box = page.getByTestId('correct-text');
    const typed = await box.inputValue();
    assert.match(typed, /quarterly report to maria/i, 'the box starts with the typed text');
    await box.fill(typed.replace(/maria/i, 'Marija'));
    await page.getByTestId('correct-save').click();
    await page.getByTestId('learn').waitFor();
    return page.getByTestId('proposal');
  };
  // First correction: a new word only; a mistake seen once is no replacement yet.
  let proposals = await correct(0);
  assert.equal(await proposals.count(), 1);
  assert.match(await proposals.first().textContent(), /“Marija” to the vocabulary/);
  let st = await mockState(page);
  assert.ok(st.calls.includes('history_correct'));
  assert.ok(!st.calls.includes('history_learn'), 'saving a correction learned something');
  // Every proposal needs a yes or a no before anything is applied.
  assert.ok(await page.getByTestId('learn-apply').isDisabled());
  await proposals.first().getByTestId('proposal-reject').click();
  assert.match(await page.getByTestId('learn-apply').textContent(), /Done, learn nothing/);
  await page.getByTestId('learn-apply').click();
  await page.getByTestId('toast').filter({ hasText: 'nothing learned' }).waitFor();
  st = await mockState(page);
  assert.ok(!st.calls.includes('history_learn'), 'a rejected proposal was sent');
  // Second correction of the same mistake: the replacement is proposed (seen twice).
  proposals = await correct(1);
  assert.equal(await proposals.count(), 2);
  const replace = page.locator('[data-testid=proposal][data-kind=replace]');
  assert.match(await replace.textContent(), /Always write “Marija” where whisper writes “maria” \(you corrected it 2 times\)/);
  await replace.getByTestId('proposal-accept').click();
  assert.ok(await page.getByTestId('learn-apply').isDisabled(), 'applied with the vocabulary word undecided');
  await page.locator('[data-testid=proposal][data-kind=vocabulary]').getByTestId('proposal-reject').click();
  await shot(page, 'history-correct');
  assert.match(await page.getByTestId('learn-apply').textContent(), /Learn 1 accepted/);
  await page.getByTestId('learn-apply').click();
  await page.getByTestId('toast').filter({ hasText: 'Learned: “maria” → “Marija”' }).waitFor();
  st = await mockState(page);
  assert.deepEqual(st.learned, [{ kind: 'replace', from: 'maria', to: 'Marija', seen: 2, known: false }]);
  // Written to the config as `--accept` does: the replacement, not the rejected word.
  const saved = await page.evaluate(() => JSON.parse(localStorage.getItem('mock-config')));
  assert.deepEqual(saved.replace, [{ from: 'maria', to: 'Marija' }]);
  assert.deepEqual(saved.stt.vocabulary, []);
  await page.getByTestId('correct').waitFor({ state: 'detached' });
  // A row with nothing heard has nothing to correct.
  await page.getByTestId('search').fill('');
  await page.getByTestId('outcome').selectOption('no_speech');
  await eventually(async () => {
    const badges = await page.locator('[data-testid=row] .badge').allTextContents();
    assert.ok(badges.length > 0 && badges.every((b) => /no speech/i.test(b)), badges.join());
  });
  await page.getByTestId('row').first().click();
  await eventually(async () => assert.equal(await page.getByTestId('raw').textContent(), '—'));
  assert.equal(await page.getByTestId('correct-open').count(), 0);
});

await test('history: the text around the cursor, the LLM context, a Wayland paste is delivered (no Retry)', async (page) => {
  await page.goto(`${base}?rows=30#history`);
  await page.getByTestId('count').filter({ hasText: '30 entries' }).waitFor();
  const id = (await mockState(page)).pastedId;
  assert.ok(id, 'the mock has no Wayland paste row');
  await page.locator(`[data-testid=row][data-id="${id}"]`).click();
  await page.getByTestId('detail').waitFor();
  assert.equal(await page.getByTestId('context').textContent(), 'Text around the cursor: joined (7.5 ms)');
  assert.equal(await page.getByTestId('llm-context').textContent(), 'LLM context: sent');
  assert.match(await page.getByTestId('inject-error').textContent(), /^Typing: pasted \(unconfirmed/);
  assert.equal(await page.getByTestId('retry').count(), 0, 'Retry offered for a delivered paste');
  await page.getByTestId('detail').screenshot({ path: path.join(out, 'history-context.png') });
});

await test('history: dictations apart from transcribed files', async (page) => {
  await page.goto(`${base}?rows=200&files=3#history`);
  await page.getByTestId('count').filter({ hasText: '203 entries' }).waitFor();
  assert.equal(await page.getByTestId('source').evaluate((e) => e.getAttribute('aria-label')), 'Show dictations, files or both');
  await page.getByTestId('source').selectOption('file');
  await page.getByTestId('count').filter({ hasText: /^3 entries/ }).waitFor();
  const st = await mockState(page);
  assert.equal(st.filters.at(-1).source, 'file', JSON.stringify(st.filters.at(-1)));
  // A file's row: its name and length where a dictation's names the app.
  const places = await page.locator('[data-testid=row] .meta .place').allTextContents();
  assert.deepEqual(places, ['1:35 · voice memo 14.opus', '58:00 · lecture-week-6.mp3', '40:00 · interview-2026-11-18.m4a']);
  assert.equal(await page.locator('[data-testid=row] .place').first().getAttribute('title'), '/home/you/Recordings/voice memo 14.opus');
  await page.getByTestId('row').last().click();
  await page.getByTestId('detail').waitFor();
  await shot(page, 'history-files');
  await eventually(async () => assert.match(await page.getByTestId('final').textContent(), /^Transcript of interview-2026-11-18\.m4a\. So the first question/));
  // A file's text is not typed anywhere: no Re-inject (it would type a whole file).
  assert.equal(await page.getByTestId('reinject').count(), 0);
  // Export all matching takes the source with it.
  await page.getByTestId('export-all').click();
  await page.getByTestId('toast').filter({ hasText: 'Exported 3 entries' }).waitFor();
  assert.equal((await mockState(page)).exports.at(-1).selection.filter.source, 'file');
  await page.getByTestId('source').selectOption('mic');
  await page.getByTestId('count').filter({ hasText: '200 entries' }).waitFor();
  assert.equal((await mockState(page)).filters.at(-1).source, 'mic');
  await page.getByTestId('source').selectOption('');
  await page.getByTestId('count').filter({ hasText: '203 entries' }).waitFor();
  assert.equal('source' in (await mockState(page)).filters.at(-1), false, 'both: no source sent');
});

await test('transcribe window', async (page) => {
  await page.goto(`${base}?installed=base-q8_0#transcribe`);
  await page.getByTestId('transcribe').waitFor();
  assert.equal(await page.title(), 'Dictum — Transcribe');
  assert.equal(await page.getByTestId('tab-transcribe').getAttribute('class'), 'active');
  await page.getByTestId('dropzone').filter({ hasText: 'Drop audio or video files here' }).waitFor();
  const job = (id) => page.locator(`[data-testid=job][data-job="${id}"]`);
  await job(3).waitFor();
  assert.equal(await page.getByTestId('job').count(), 3);
  assert.deepEqual(await page.getByTestId('job-name').allTextContents(), ['interview-2026-11-18.m4a', 'lecture-week-7.mp3', 'standup-2026-11-19.ogg']);
  // The done file: its whole text, every save, Remove; no Cancel.
  assert.equal(await job(1).getAttribute('data-state'), 'done');
  assert.match(await job(1).getByTestId('job-text').textContent(), /^Thanks for making the time\.\nSo the first question/);
  assert.equal(await job(1).getByTestId('job-text').evaluate((e) => getComputedStyle(e).whiteSpace), 'pre-wrap');
  assert.equal(await job(1).getByTestId('progress').evaluate((e) => e.value), 100);
  assert.equal(await job(1).getByTestId('position').textContent(), '40:00 / 40:00');
  assert.equal(await job(1).getByTestId('times').textContent(), 'took 5:12');
  assert.equal(await job(1).getByTestId('cancel').count(), 0);
  for (const b of ['copy', 'save-txt', 'save-srt', 'save-vtt', 'remove']) assert.ok(await job(1).getByTestId(b).isEnabled(), b);
  // The running one: at 40 % and moving; TXT while it runs, not the subtitles.
  await eventually(async () => {
    const v = await job(2).getByTestId('progress').evaluate((e) => e.value);
    assert.ok(v > 40 && v < 100, `running at ${v}%`);
  });
  assert.match(await job(2).getByTestId('position').textContent(), /^\d\d:\d\d \/ 1:00:00$/);
  assert.match(await job(2).getByTestId('times').textContent(), /^2:\d\d elapsed · about \d:\d\d left$/);
  assert.ok(await job(2).getByTestId('save-txt').isEnabled());
  assert.ok(await job(2).getByTestId('save-srt').isDisabled());
  assert.ok(await job(2).getByTestId('save-vtt').isDisabled());
  assert.equal(await job(2).getByTestId('remove').count(), 0);
  assert.match(await job(2).getByTestId('job-text').textContent(), /^Good morning everyone/);
  // The queued one: Cancel only.
  assert.equal(await job(3).getAttribute('data-state'), 'queued');
  assert.equal(await job(3).getByTestId('copy').count(), 0);
  assert.equal(await job(3).getByTestId('job-text').count(), 0);
  assert.ok(await job(3).getByTestId('cancel').isVisible());
  // The options of the next files: the dictation's model and language.
  assert.equal(await page.getByTestId('model').inputValue(), 'tiny.en-q8_0');
  assert.equal(await page.getByTestId('language').inputValue(), 'en');
  assert.ok(!(await page.getByTestId('translate').isChecked()));
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'transcribe');

  // Cancel the running one: the text so far stays, its subtitles can be saved, then the next runs.
  await job(2).getByTestId('cancel').click();
  await eventually(async () => assert.equal(await job(2).getAttribute('data-state'), 'cancelled'));
  let st = await mockState(page);
  assert.deepEqual(st.fileJobCalls.filter((c) => c.cmd === 'file_job_cancel').map((c) => c.args), [{ id: 2 }]);
  assert.match(await job(2).getByTestId('note').textContent(), /the text so far is kept/);
  assert.match(await job(2).getByTestId('job-text').textContent(), /^Good morning everyone/);
  assert.ok(await job(2).getByTestId('save-srt').isEnabled());
  assert.ok(await job(2).getByTestId('remove').isVisible());
  await eventually(async () => assert.equal(await job(3).getAttribute('data-state'), 'running'));
  // A dictation goes first: the running file pauses.
  await page.evaluate(() => { window.__mock.dictating = true; });
  await job(3).getByTestId('waiting').filter({ hasText: 'Paused: a dictation goes first' }).waitFor();
  assert.match(await job(3).getByTestId('times').textContent(), /paused$/);
  await page.evaluate(() => { window.__mock.dictating = false; });
  await job(3).getByTestId('waiting').waitFor({ state: 'detached' });

  // Save as SRT, Copy.
  await job(1).getByTestId('save-srt').click();
  await page.getByTestId('toast').filter({ hasText: 'Saved /home/you/Recordings/interview-2026-11-18.srt' }).waitFor();
  await job(1).getByTestId('copy').click();
  await page.getByTestId('toast').filter({ hasText: 'Copied' }).waitFor();
  st = await mockState(page);
  assert.deepEqual(st.fileJobCalls.filter((c) => c.cmd === 'file_job_save').map((c) => c.args), [{ id: 1, format: 'srt' }]);
  assert.deepEqual(st.fileJobCalls.filter((c) => c.cmd === 'file_job_copy').map((c) => c.args), [{ id: 1 }]);

  // Add files with another model, a language and translation.
  await page.getByTestId('model').selectOption('base-q8_0');
  await page.getByTestId('language').selectOption('de');
  await page.getByTestId('translate').check();
  await page.getByTestId('add-files').click();
  await job(5).waitFor();
  st = await mockState(page);
  assert.ok(st.calls.includes('file_jobs_pick'));
  assert.deepEqual(st.fileJobCalls.filter((c) => c.cmd === 'file_jobs_add').map((c) => c.args), [{
    paths: ['/home/you/Recordings/call with Ana.opus', '/home/you/Videos/demo-2026-11-19.mkv'],
    options: { model: 'base-q8_0', language: 'de', translate: true },
  }]);
  assert.match(await job(4).textContent(), /call with Ana\.opus.*Queued.*base-q8_0 · de · to English/);
  // An English-only model cannot translate: said before adding.
  await page.getByTestId('model').selectOption('tiny.en-q8_0');
  await page.getByTestId('translate-problem').waitFor();

  // Remove a finished row.
  await job(1).getByTestId('remove').click();
  await job(1).waitFor({ state: 'detached' });
  st = await mockState(page);
  assert.deepEqual(st.fileJobCalls.filter((c) => c.cmd === 'file_job_remove').map((c) => c.args), [{ id: 1 }]);

  // Every control is labelled.
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('[data-testid=transcribe] :is(input, select, textarea, button, progress)')]
    .filter((el) => !(el.labels && [...el.labels].some((l) => l.textContent.trim())) && !el.getAttribute('aria-label')?.trim() && !(el.tagName === 'BUTTON' && el.textContent.trim()))
    .map((el) => `<${el.tagName.toLowerCase()} data-testid=${el.dataset.testid ?? '-'}>`));
  assert.deepEqual(unlabelled, []);

  // What the app's log heard (the Xvfb test of the real app reads these lines).
  st = await mockState(page);
  const logs = st.logs.filter((l) => l.startsWith('transcribe:'));
  assert.equal(logs[0], 'transcribe: rendered 3 files');
  for (const l of ['transcribe: #1 done 100%', 'transcribe: #2 running 40%', 'transcribe: #3 queued 0%', 'transcribe: #3 running 0%',
    'transcribe: saved /home/you/Recordings/interview-2026-11-18.srt', 'transcribe: #4 queued 0%']) assert.ok(logs.includes(l), `${l} not in\n${logs.join('\n')}`);
  assert.ok(logs.some((l) => /^transcribe: #2 running 4[1-9]%$/.test(l)), 'no progress logged');
  assert.ok(logs.some((l) => /^transcribe: #2 cancelled \d+%$/.test(l)), 'no cancel logged');
  assert.equal(new Set(logs).size, logs.length, `a line logged twice:\n${logs.join('\n')}`);
});

await test('transcribe window: an empty queue, a cancelled pick', async (page) => {
  await page.goto(`${base}?jobs=0&pick=none#transcribe`);
  await page.getByTestId('queue-empty').waitFor();
  await page.getByTestId('add-files').click();
  await eventually(async () => assert.ok((await mockState(page)).calls.includes('file_jobs_pick')));
  await page.waitForTimeout(200);
  const st = await mockState(page);
  assert.ok(!st.calls.includes('file_jobs_add'), 'added nothing picked');
  assert.ok(st.logs.includes('transcribe: rendered 0 files'));
  assert.equal(await page.getByTestId('job').count(), 0);
});

await test('tabs ask the app for the view window', async (page) => {
  await page.goto(`${base}#settings`);
  await page.getByTestId('tab-stats').click();
  await eventually(async () => assert.ok((await mockState(page)).calls.includes('show_view')));
  await page.waitForFunction(() => location.hash === '#stats');
});

// The mock history ends at a fixed moment (mock-ipc.ts NOW, 2026-11-20 12:00 UTC) and the stats
// view counts its range back from Date.now(): the page's clock is set to that moment, or "the
// last 30 days" slides off the data as real days pass (4940 rows on 2026-11-25, a red run).
const atMockNow = (page) => page.clock.setFixedTime(new Date(Date.UTC(2026, 10, 20, 12, 0, 0)));

await test('stats rendering', async (page) => {
  await atMockNow(page);
  await page.goto(`${base}#stats`);
  await page.getByTestId('summary').waitFor();
  await page.getByTestId('plot-stages').locator('canvas').waitFor();
  assert.equal(await page.locator('.uplot').count(), 3);
  const total = Number((await page.getByTestId('total-count').textContent()).replace(/\D/g, ''));
  assert.ok(total > 5000 && total < 7000, `30 days hold ${total}`);
  // The canvases have drawn lines (not blank); uPlot may draw a frame later.
  const ink = () => [...document.querySelectorAll('.uplot canvas')].map((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return n;
  });
  await page.waitForFunction(`(${ink})().length === 3 && (${ink})().every((n) => n > 2000)`, null, { timeout: 5000 })
    .catch(async () => assert.fail(`plots nearly empty: ${await page.evaluate(`(${ink})()`)}`));
  const legend = await page.getByTestId('plot-stages').locator('.u-legend').textContent();
  for (const s of ['stt p50', 'llm p95', 'inject p50', 'total p95']) assert.ok(legend.includes(s), legend);
  await shot(page, 'stats');
  await page.getByTestId('bucketing').selectOption('entries');
  await page.getByTestId('range').selectOption('0');
  // The new range arrives asynchronously: wait for it, then for its plots.
  await eventually(async () => assert.equal(Number((await page.getByTestId('total-count').textContent()).replace(/\D/g, '')), 12000));
  await page.waitForFunction(() => document.querySelectorAll('.uplot').length === 3);
});

await test('stats with one day of history and no LLM', async (page) => {
  await atMockNow(page);
  await page.goto(`${base}?rows=6&span_days=0.2&llm=0#stats`);
  await page.getByTestId('plot-stages').locator('canvas').waitFor();
  await page.getByTestId('stats-one-bucket').waitFor();
  // No empty "LLM generation speed" chart: a sentence says when it will fill.
  assert.equal(await page.getByTestId('plot-tokens').count(), 0);
  assert.match(await page.getByTestId('tokens-empty').textContent(), /appears here once dictations are cleaned up/);
  // The x axis spans that day, not years (it drew 2027 to 2029 before).
  for (const id of ['plot-stages', 'plot-counts']) {
    const el = page.getByTestId(id);
    await eventually(async () => {
      const span = Number(await el.getAttribute('data-x-max')) - Number(await el.getAttribute('data-x-min'));
      assert.ok(span > 0 && span <= 2 * 86_400, `${id} x axis spans ${span} s`);
    });
  }
  await shot(page, 'stats-one-day');
});

await test('stats with no history', async (page) => {
  await page.goto(`${base}?rows=0#stats`);
  await page.getByTestId('stats-empty').waitFor();
  assert.match(await page.getByTestId('stats-empty').textContent(), /charts appear after the first one/);
  assert.equal(await page.locator('.uplot').count(), 0);
});

await test('first-run window: recommend, download, hotkey, try box', async (page) => {
  await page.goto(`${base}#welcome`);
  await page.getByTestId('welcome').waitFor();
  assert.equal(await page.title(), 'Welcome to Dictum');
  assert.match(await page.getByTestId('hardware').textContent(), /2 CPU cores/);
  assert.equal(await page.getByTestId('recommended').textContent(), 'tiny.en-q8_0');
  // A model is installed: the window times it on its own and shows the numbers behind the choice.
  await page.getByTestId('measure-note').filter({ hasText: 'Measured on this machine' }).waitFor();
  assert.match(await page.getByTestId('measured-tiny.en-q8_0').textContent(), /190 ms · 0\.06× · measured/);
  assert.match(await page.getByTestId('measured-base-q8_0').textContent(), /estimate from tiny\.en-q8_0/);
  assert.ok((await mockState(page)).calls.filter((c) => c === 'first_run_info').length >= 2, 'measured once more');
  await page.getByTestId('import').isDisabled().then((d) => assert.ok(d, 'import enabled without a path'));
  await page.getByTestId('import-path').fill('relative.bin');
  await page.getByTestId('import').click();
  await page.getByTestId('model-message').filter({ hasText: 'full path' }).waitFor();
  await page.getByTestId('download').click();
  await page.getByTestId('download-progress').waitFor();
  await page.getByTestId('model-message').filter({ hasText: 'is installed' }).waitFor({ timeout: 10000 });
  await page.getByTestId('model-ready').waitFor();
  assert.ok((await mockState(page)).calls.includes('set_default_model'));
  await page.getByTestId('record-hotkey').click();
  await page.getByTestId('record-hotkey').filter({ hasText: 'Press the key' }).waitFor();
  await page.keyboard.press('Control+Alt+KeyD');
  await eventually(async () => assert.equal((await mockState(page)).saved.at(-1)?.dictation.hotkey, 'Ctrl+Alt+D'));
  await page.getByTestId('try-box').waitFor();
  await shot(page, 'first-run');
});

await test('first-run window: a Bluetooth headset\'s microphone, its cost and the choice', async (page) => {
  await page.goto(`${base}?mic=bluetooth#welcome`);
  await page.getByTestId('welcome').waitFor();
  assert.equal(await page.getByTestId('microphone').textContent(), 'WH-1000XM4');
  const note = await page.getByTestId('bluetooth-note').textContent();
  assert.match(note, /Bluetooth headset's \(WH-1000XM4\)/);
  assert.match(note, /music quality/);
  assert.match(note, /1–2 s/);
  assert.ok(await page.getByTestId('mic-auto').isChecked(), 'auto is the default');
  await page.getByTestId('mic-always').check();
  await eventually(async () => assert.equal((await mockState(page)).saved.at(-1)?.dictation.microphone, 'always'));
  await page.getByTestId('mic-auto').check();
  await eventually(async () => assert.equal((await mockState(page)).saved.at(-1)?.dictation.microphone, 'auto'));
  await page.getByTestId('step-microphone').screenshot({ path: path.join(out, 'first-run-bluetooth.png') });
});

await test('first-run window: a wired microphone gets one plain line', async (page) => {
  await page.goto(`${base}#welcome`);
  await page.getByTestId('step-microphone').waitFor();
  assert.equal(await page.getByTestId('microphone').textContent(), 'Built-in Audio Analog Stereo');
  assert.equal(await page.getByTestId('bluetooth-note').count(), 0);
  assert.match(await page.getByTestId('microphone-rule').textContent(), /open only while you dictate/);
});

await test('recording indicator', async (page) => {
  await page.setViewportSize({ width: 240, height: 70 });
  await page.goto(`${base}?state=recording#indicator`);
  await page.getByTestId('indicator').waitFor();
  assert.equal(await page.getByTestId('indicator').getAttribute('data-state'), 'recording');
  assert.match(await page.getByTestId('indicator').textContent(), /Listening/);
  assert.equal(await page.getByTestId('indicator-style').count(), 0);
  await shot(page, 'indicator');
});

await test('recording indicator names the style every dictation is written in', async (page) => {
  await page.setViewportSize({ width: 240, height: 70 });
  await page.goto(`${base}?state=recording&style=chat#indicator`);
  await page.getByTestId('indicator').waitFor();
  assert.equal(await page.getByTestId('indicator-style').textContent(), '· chat');
  await shot(page, 'indicator-style');
});

await test('recording indicator with the words so far', async (page) => {
  await page.setViewportSize({ width: 420, height: 110 });
  await page.goto(`${base}?state=recording#indicator`);
  await page.getByTestId('indicator').waitFor();
  // As the tray forwards `dictum run --json`'s `partial` events (src-tauri/src/controller.rs).
  const send = (p) => page.evaluate((payload) => window.__TAURI_INTERNALS__.invoke('plugin:event|emit', { event: 'dictation-partial', payload }), p);
  const words = page.getByTestId('live-words');
  await send({ seq: 1, dictation: 1, id: 7, committed: 'And so my fellow Americans', speculative: 'ask not', ms: 2100 });
  await words.filter({ hasText: 'ask not' }).waitFor();
  await send({ seq: 2, dictation: 1, id: 7, committed: 'And so my fellow Americans, ask not what your country can do for you. Ask what you can do for your country.', speculative: 'And Mr. John', ms: 9400 });
  await words.filter({ hasText: 'And Mr. John' }).waitFor();
  // An older one arriving late does not replace it.
  await send({ seq: 1, dictation: 1, id: 7, committed: 'stale words', speculative: '', ms: 2100 });
  await page.waitForTimeout(300);
  assert.match(await words.textContent(), /And Mr\. John/);
  assert.doesNotMatch(await words.textContent(), /stale/);
  // The speculation is its own (lighter) span; the oldest words are cut with an ellipsis.
  assert.equal((await words.locator('.speculative').textContent()).trim(), 'And Mr. John');
  assert.match(await words.textContent(), /^…/);
  await shot(page, 'indicator-words');
});

await browser.close();
server.close();
for (const [name, r, ms] of results) console.log(`${r === 'ok' ? '✓' : '✗'} ${name} (${ms} ms)`);
const failed = results.filter((r) => r[1] !== 'ok').length;
console.log(`${results.length - failed} passed, ${failed} failed; screenshots in ${path.relative(process.cwd(), out)}/`);
process.exit(failed ? 1 : 0);
