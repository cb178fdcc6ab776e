// Runs before the app (a plain script, loaded from the app's own origin: the CSP in
// src-tauri/tauri.conf.json allows no inline script).
// Page and resource errors (a script that fails to load included) go to the app's log.
window.addEventListener('error', function (e) {
  var t = window.__TAURI_INTERNALS__;
  var what = e.message ? e.message + ' at ' + e.filename + ':' + e.lineno : 'cannot load ' + ((e.target && (e.target.src || e.target.href)) || 'a resource');
  if (t && t.invoke) t.invoke('ui_log', { message: 'error: ' + what }).catch(function () {});
}, true);
// Under LANG=C WebKit reports the language "C", which Intl rejects (uPlot formats with
// navigator.language): fall back to en-US rather than fail to start.
try { new Intl.NumberFormat(navigator.language); } catch (_) {
  Object.defineProperty(Navigator.prototype, 'language', { get: function () { return 'en-US'; } });
}
