import { describe, expect, it } from 'vitest';
import { BLANK_REPLACE, BLANK_SNIPPET, englishOnlyModel, phraseWords, problems, savableReplacements, savableSnippets, translateProblem, withRow } from '../../src/lib/snippets';

describe('snippets and replacements', () => {
  it('splits phrases into words as the engine does', () => {
    // The engine's own cases (config/snippets.rs phrase_words): punctuation separates, case
    // and curly apostrophes do not count, an apostrophe inside a word stays.
    expect(phraseWords('Cooper-Netties,')).toEqual(['cooper', 'netties']);
    expect(phraseWords('  My  ADDRESS. ')).toEqual(['my', 'address']);
    expect(phraseWords('Don\u2019t panic')).toEqual(["don't", 'panic']);
    expect(phraseWords("'quoted' rock'n'roll'")).toEqual(['quoted', "rock'n'roll"]);
    expect(phraseWords('Zürich 2026')).toEqual(['zürich', '2026']);
    expect(phraseWords(' ,.! ')).toEqual([]);
  });

  it('rows: append, edit, remove; blank rows are not saved', () => {
    let s = withRow([], 0, {}, BLANK_SNIPPET);
    s = withRow(s, 0, { phrase: 'my address' }, BLANK_SNIPPET);
    s = withRow(s, 0, { text: '1 Main St\nSpringfield' }, BLANK_SNIPPET);
    s = withRow(s, 1, {}, BLANK_SNIPPET);
    expect(s).toEqual([{ phrase: 'my address', text: '1 Main St\nSpringfield' }, { phrase: '', text: '' }]);
    expect(savableSnippets(s)).toEqual([s[0]]);
    expect(withRow(s, 0, null, BLANK_SNIPPET)).toEqual([{ phrase: '', text: '' }]);
    const r = withRow(withRow([], 0, { from: 'um' }, BLANK_REPLACE), 1, { from: ' ', to: ' ' }, BLANK_REPLACE);
    // "to" may be empty (the words are removed); a row with nothing at all is dropped.
    expect(savableReplacements(r)).toEqual([{ from: 'um', to: '' }]);
  });

  it('finds what the engine refuses', () => {
    expect(problems([{ phrase: 'my address', text: 'x' }], [{ from: 'cooper netties', to: 'Kubernetes' }, { from: 'um', to: '' }])).toEqual([]);
    const msgs = (...a: Parameters<typeof problems>) => problems(...a).map((p) => `${p.list}#${p.row}.${p.field}`);
    expect(msgs([], [{ from: ' ', to: 'x' }])).toEqual(['replace#0.from']);
    expect(msgs([], [{ from: 'Cooper Netties', to: 'a' }, { from: 'cooper-netties!', to: 'b' }])).toEqual(['replace#1.from']);
    expect(msgs([{ phrase: 'my address', text: 'a' }, { phrase: 'My Address.', text: 'b' }], [])).toEqual(['snippet#1.phrase']);
    expect(msgs([{ phrase: 'kube', text: 'a' }], [{ from: 'Kube', to: 'Kubernetes' }])).toEqual(['snippet#0.phrase']);
    expect(msgs([{ phrase: 'sig', text: '  \n ' }], [])).toEqual(['snippet#0.text']);
    expect(msgs([{ phrase: 'one two three four five six seven eight nine ten eleven twelve thirteen', text: 'x' }], [])).toEqual(['snippet#0.phrase']);
    // Newlines and tabs are allowed in a snippet's text only.
    expect(msgs([{ phrase: 'sig', text: 'a\n\tb' }], [{ from: 'x', to: 'a\nb' }])).toEqual(['replace#0.to']);
    expect(msgs([{ phrase: 'bell', text: 'a\u0007' }], [])).toEqual(['snippet#0.text']);
    expect(msgs([{ phrase: 'long', text: 'x'.repeat(4001) }], [])).toEqual(['snippet#0.text']);
    expect(problems([{ phrase: 'my address', text: 'a' }, { phrase: 'my address', text: 'b' }], [])[0].message)
      .toBe('snippet #2: "my address" has two snippets; keep one');
  });

  it('knows English-only models by name, as the engine does', () => {
    for (const m of ['tiny.en-q8_0', 'tiny.en', 'base.en-q5_1', '/work/shared/models/ggml-tiny.en-q8_0.bin', 'ggml-small.en.bin', 'distil-small.en']) {
      expect(englishOnlyModel(m), m).toBe(true);
    }
    for (const m of ['base-q8_0', 'large-v3-turbo-q5_0', 'ggml-medium.english-finetune.bin', '/home/en/ggml-base.bin']) {
      expect(englishOnlyModel(m), m).toBe(false);
    }
  });

  it('translate is refused where an English-only local model would run', () => {
    const stt = { task: 'translate', model: 'tiny.en-q8_0', backend: 'local', fallback: true } as const;
    expect(translateProblem(stt)).toMatch(/tiny\.en-q8_0 is English-only/);
    expect(translateProblem({ ...stt, task: 'transcribe' })).toBeNull();
    expect(translateProblem({ ...stt, model: 'base-q8_0' })).toBeNull();
    // A speech server with the local fallback still needs the local model to translate.
    expect(translateProblem({ ...stt, backend: 'openai' })).toMatch(/stands in when the speech server fails/);
    expect(translateProblem({ ...stt, backend: 'openai', fallback: false })).toBeNull();
  });
});
