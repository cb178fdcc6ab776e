// Snippets and replacements (issue 30): the config's [[replace]] tables (whisper's words, always
// written another way) and [[snippet]] tables (a phrase said, a text typed). Applied by the
// engine after transcription, before voice commands and the LLM (crates/dictum-engine/src/
// snippets.rs). The checks shown here mirror the engine's (lib/snippets.ts); the engine checks
// again on Save, and its refusal is shown under the lists too.

import type { ReplaceConfig } from '../bindings/ReplaceConfig';
import type { SnippetConfig } from '../bindings/SnippetConfig';
import { BLANK_REPLACE, BLANK_SNIPPET, problems, withRow, type Problem } from '../lib/snippets';

const val = (e: Event) => (e.target as HTMLInputElement | HTMLTextAreaElement).value;

export function Snippets({ snippets, replacements, setSnippets, setReplacements, engineError }: {
  snippets: SnippetConfig[];
  replacements: ReplaceConfig[];
  /** Edits apply to the latest lists (two edits before a re-render both stay). */
  setSnippets: (edit: (l: SnippetConfig[]) => SnippetConfig[]) => void;
  setReplacements: (edit: (l: ReplaceConfig[]) => ReplaceConfig[]) => void;
  /** The engine's refusal of the last Save when it is about these tables. */
  engineError: string | null;
}) {
  // Rows just added and still blank are not judged (nor saved) yet.
  const blank = (r: SnippetConfig | ReplaceConfig | undefined) => !!r && Object.values(r).every((v) => !String(v).trim());
  const issues = problems(snippets, replacements).filter((p) => !blank(p.list === 'snippet' ? snippets[p.row] : replacements[p.row]));
  const bad = (list: Problem['list'], row: number, field: Problem['field']) =>
    issues.some((p) => p.list === list && p.row === row && p.field === field) ? 'true' : undefined;

  return (
    <div data-testid="snippets">
      <h3 style="font-size:14px;margin:4px 0">Replacements</h3>
      <p class="muted" style="margin:2px 0">Words whisper keeps getting wrong, always written your way: whole words, in any case,
        everywhere in a dictation. Leave “write instead” empty to remove the words.</p>
      {replacements.map((r, i) => (
        <div class="row" key={`r${i}`} data-testid={`replace-${i}`}>
          <label for={`replace-from-${i}`}>Whisper writes</label>
          <input id={`replace-from-${i}`} type="text" style="width:220px" value={r.from} placeholder="cooper netties" aria-invalid={bad('replace', i, 'from')}
            onInput={(e) => { const v = val(e); setReplacements((l) => withRow(l, i, { from: v }, BLANK_REPLACE)); }} data-testid={`replace-from-${i}`} />
          <label class="muted" for={`replace-to-${i}`}>write instead</label>
          <input id={`replace-to-${i}`} type="text" style="width:220px" value={r.to} placeholder="Kubernetes" aria-invalid={bad('replace', i, 'to')}
            onInput={(e) => { const v = val(e); setReplacements((l) => withRow(l, i, { to: v }, BLANK_REPLACE)); }} data-testid={`replace-to-${i}`} />
          <button onClick={() => setReplacements((l) => withRow(l, i, null, BLANK_REPLACE))} title="Remove this replacement" data-testid={`replace-remove-${i}`}>✕</button>
        </div>
      ))}
      <button onClick={() => setReplacements((l) => withRow(l, l.length, {}, BLANK_REPLACE))} data-testid="replace-add">Add a replacement</button>

      <h3 style="font-size:14px;margin:16px 0 4px">Snippets</h3>
      <p class="muted" style="margin:2px 0">Say the phrase, alone or inside a sentence, and its text is typed instead.
        Newlines in the text are typed as line breaks, except in a terminal, where they become spaces (Dictum never presses Enter in a terminal).</p>
      {snippets.map((s, i) => (
        <div class="row" key={`s${i}`} style="align-items:flex-start" data-testid={`snippet-${i}`}>
          <label for={`snippet-phrase-${i}`}>When I say</label>
          <input id={`snippet-phrase-${i}`} type="text" style="width:220px" value={s.phrase} placeholder="my address" aria-invalid={bad('snippet', i, 'phrase')}
            onInput={(e) => { const v = val(e); setSnippets((l) => withRow(l, i, { phrase: v }, BLANK_SNIPPET)); }} data-testid={`snippet-phrase-${i}`} />
          <label class="muted" for={`snippet-text-${i}`}>type</label>
          <textarea id={`snippet-text-${i}`} style="flex:1;min-width:240px;min-height:54px" value={s.text} placeholder={'12 Main Street\nSpringfield'} aria-invalid={bad('snippet', i, 'text')}
            onInput={(e) => { const v = val(e); setSnippets((l) => withRow(l, i, { text: v }, BLANK_SNIPPET)); }} data-testid={`snippet-text-${i}`} />
          <button onClick={() => setSnippets((l) => withRow(l, i, null, BLANK_SNIPPET))} title="Remove this snippet" data-testid={`snippet-remove-${i}`}>✕</button>
        </div>
      ))}
      <button onClick={() => setSnippets((l) => withRow(l, l.length, {}, BLANK_SNIPPET))} data-testid="snippet-add">Add a snippet</button>
      <p class="muted" style="margin:8px 0 0">Replacements run first, then snippets, before voice commands and the LLM cleanup;
        the history keeps whisper's own words as the raw text.</p>
      {issues.map((p) => <p class="error" key={`${p.list}${p.row}${p.field}${p.message}`} data-testid="snippet-problem">{p.message}</p>)}
      {engineError && <p class="error" data-testid="snippets-engine-error">Not saved: {engineError}</p>}
    </div>
  );
}
