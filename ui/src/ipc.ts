// The only door between the UI and the app: typed wrappers over Tauri's `invoke` and events.
// Argument and result types are generated from the Rust types (src/bindings/, ts-rs); the
// command names match src-tauri/src/commands.rs.

import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import type { Config } from './bindings/Config';
import type { ConfigView } from './bindings/ConfigView';
import type { DownloadOutcome } from './bindings/DownloadOutcome';
import type { DownloadProgress } from './bindings/DownloadProgress';
import type { Entry } from './bindings/Entry';
import type { ExportFormat } from './bindings/ExportFormat';
import type { ExportResult } from './bindings/ExportResult';
import type { ExportSelection } from './bindings/ExportSelection';
import type { FocusedWindow } from './bindings/FocusedWindow';
import type { HistoryFilter } from './bindings/HistoryFilter';
import type { JobDefaults } from './bindings/JobDefaults';
import type { JobOptions } from './bindings/JobOptions';
import type { JobView } from './bindings/JobView';
import type { LlmConfig } from './bindings/LlmConfig';
import type { LlmTestResult } from './bindings/LlmTestResult';
import type { MicLevel } from './bindings/MicLevel';
import type { ModelStatus } from './bindings/ModelStatus';
import type { Page } from './bindings/Page';
import type { PageRequest } from './bindings/PageRequest';
import type { Proposal } from './bindings/Proposal';
import type { Review } from './bindings/Review';
import type { SavedFile } from './bindings/SavedFile';
import type { SaveFormat } from './bindings/SaveFormat';
import type { ServerCheck } from './bindings/ServerCheck';
import type { Stats } from './bindings/Stats';
import type { SttConfig } from './bindings/SttConfig';
import type { StatsRequest } from './bindings/StatsRequest';
import type { TrayStatus } from './bindings/TrayStatus';
import type { Written } from './bindings/Written';
import type { FirstRunInfo } from './lib/firstrun';
import type { Remeasured } from './lib/measure';

/** A settings form without `api_key_env`: where an API key comes from is never the page's to say. */
export function withoutKeySource<T extends { api_key_env: string }>(form: T): Omit<T, 'api_key_env'> {
  const rest: Partial<T> = { ...form };
  delete rest.api_key_env;
  return rest as Omit<T, 'api_key_env'>;
}

export const ipc = {
  getConfig: () => invoke<ConfigView>('get_config'),
  saveConfig: (config: Config) => invoke<ConfigView>('save_config', { config }),
  setAutostart: (enabled: boolean) => invoke<boolean>('set_autostart', { enabled }),

  listModels: () => invoke<ModelStatus[]>('list_models'),
  downloadModel: (name: string) => invoke<DownloadOutcome>('download_model', { name }),
  cancelDownload: (name: string) => invoke<void>('cancel_download', { name }),
  deleteModel: (name: string) => invoke<boolean>('delete_model', { name }),
  setDefaultModel: (name: string) => invoke<ConfigView>('set_default_model', { name }),
  /** Times the installed models here (seconds each) and recommends one, with the numbers behind
   * it; refused while a dictation is under way or another timing runs. */
  measureModels: () => invoke<Remeasured>('measure_models'),

  listMics: () => invoke<string[]>('list_mics'),
  startLevelMeter: (device: string) => invoke<void>('start_level_meter', { device }),
  stopLevelMeter: () => invoke<void>('stop_level_meter'),

  // The probes send the form without its key source: the app takes that from the saved
  // settings only, and sends the key only to the saved server (docs/SECURITY.md).
  llmModels: (llm: LlmConfig) => invoke<string[]>('llm_models', { llm: withoutKeySource(llm) }),
  llmTest: (llm: LlmConfig, vocabulary: string[], text: string) =>
    invoke<LlmTestResult>('llm_test', { llm: withoutKeySource(llm), vocabulary, text }),
  /** The window focused `seconds` from now (the per-app profile picker). */
  focusedWindowIn: (seconds: number) => invoke<FocusedWindow>('focused_window_in', { seconds }),
  sttServerCheck: (stt: SttConfig) => invoke<ServerCheck>('stt_server_check', { stt: withoutKeySource(stt) }),
  sttKeySet: (secret: string) => invoke<void>('stt_key_set', { secret }),
  sttKeyClear: () => invoke<boolean>('stt_key_clear'),
  sttKeyStatus: () => invoke<boolean>('stt_key_status'),

  historyPage: (req: PageRequest) => invoke<Page>('history_page', { req }),
  historyCount: (filter: HistoryFilter) => invoke<number>('history_count', { filter }),
  historyApps: () => invoke<string[]>('history_apps'),
  historyGet: (id: number) => invoke<Entry | null>('history_get', { id }),
  historyDelete: (ids: number[]) => invoke<number>('history_delete', { ids }),
  /** Deletes every entry and kept recording; the number of entries deleted. */
  historyDeleteAll: () => invoke<number>('history_delete_all'),
  historyExport: (selection: ExportSelection, format: ExportFormat) =>
    invoke<ExportResult>('history_export', { selection, format }),
  historyReinject: (id: number) => invoke<void>('history_reinject', { id }),
  /** Transcribes an undelivered entry again from its kept audio and types it; its text. */
  historyRetry: (id: number) => invoke<string>('history_retry', { id }),
  /** Saves an entry's correction; what could be learned from it (nothing is learned yet). */
  historyCorrect: (id: number, text: string) => invoke<Review>('history_correct', { id, text }),
  /** Writes the accepted proposals of an entry's correction into the config. */
  historyLearn: (id: number, accepted: Proposal[]) => invoke<Written>('history_learn', { id, accepted }),

  stats: (req: StatsRequest) => invoke<Stats>('stats', { req }),

  trayStatus: () => invoke<TrayStatus>('tray_status'),
  toggleDictation: () => invoke<TrayStatus>('toggle_dictation'),
  setHotkeyPaused: (paused: boolean) => invoke<TrayStatus>('set_hotkey_paused', { paused }),

  /** Opens (or focuses) the window of a view: each view has its own window and permissions. */
  showView: (view: 'settings' | 'history' | 'stats' | 'transcribe') => invoke<void>('show_view', { view }),

  // The "Transcribe a file…" window: a queue of files, each sent as `file-job` on every change.
  /** The installed models and the dictation's model and language, for the pickers. */
  fileJobDefaults: () => invoke<JobDefaults>('file_job_defaults'),
  /** The whole queue, oldest first (files queued before the window opened too). */
  fileJobs: () => invoke<JobView[]>('file_jobs'),
  /** The native open dialog (several files); [] when the user cancels. */
  fileJobsPick: () => invoke<string[]>('file_jobs_pick'),
  /** Queues the files with these options; the jobs just queued. */
  fileJobsAdd: (paths: string[], options: JobOptions) => invoke<JobView[]>('file_jobs_add', { paths, options }),
  /** Stops a queued or running file; the text so far is kept. */
  fileJobCancel: (id: number) => invoke<void>('file_job_cancel', { id }),
  /** Takes a finished file off the list (its history row stays). */
  fileJobRemove: (id: number) => invoke<void>('file_job_remove', { id }),
  /** The app puts the file's text on the clipboard. */
  fileJobCopy: (id: number) => invoke<void>('file_job_copy', { id }),
  /** The native save dialog, then the text as TXT, SRT or VTT; null when the user cancels. */
  fileJobSave: (id: number, format: SaveFormat) => invoke<SavedFile | null>('file_job_save', { id, format }),

  /** First-run setup (the welcome window only): hardware, recommendation, catalog. With
   * `measure`, the installed models are timed first (seconds): the recommendation is measured. */
  firstRunInfo: (measure = false) => invoke<FirstRunInfo>('first_run_info', { measure }),
  /** Copies a ggml model file into the models folder and makes it the default; its name. */
  importModel: (path: string) => invoke<string>('import_model', { path }),

  /** A line in the app's log (the Xvfb test reads "rendered N rows" from it). */
  log: (message: string) => invoke<void>('ui_log', { message }),
};

/** `dictation-partial`: the words of the dictation being recorded (the engine's `Partial`):
 * `committed` is final, `speculative` may still change. A preview; the typed text is what
 * the release produces. */
export interface LivePartial {
  seq: number;
  dictation: number;
  id: number | null;
  committed: string;
  speculative: string;
  ms: number;
}

export const events = {
  downloadProgress: (cb: (p: DownloadProgress) => void): Promise<UnlistenFn> =>
    listen<DownloadProgress>('download-progress', (e) => cb(e.payload)),
  /** `measure-progress`: the model Measure again is timing now. */
  measureProgress: (cb: (p: { model: string }) => void): Promise<UnlistenFn> =>
    listen<{ model: string }>('measure-progress', (e) => cb(e.payload)),
  micLevel: (cb: (l: MicLevel) => void): Promise<UnlistenFn> => listen<MicLevel>('mic-level', (e) => cb(e.payload)),
  trayStatus: (cb: (s: TrayStatus) => void): Promise<UnlistenFn> =>
    listen<TrayStatus>('tray-status', (e) => cb(e.payload)),
  partial: (cb: (p: LivePartial) => void): Promise<UnlistenFn> =>
    listen<LivePartial>('dictation-partial', (e) => cb(e.payload)),
  /** `file-job`: a full snapshot of one file of the transcribe queue, on every change. */
  fileJob: (cb: (j: JobView) => void): Promise<UnlistenFn> => listen<JobView>('file-job', (e) => cb(e.payload)),
};

/** The message of whatever a command rejected with (Tauri rejects with the error string). */
export function errorText(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e instanceof Error) return e.message;
  return JSON.stringify(e);
}
