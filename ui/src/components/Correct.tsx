// The history window's correction flow (issue 30 item 3): write what a dictation should have
// been, Save, and see what Dictum could learn from it (new vocabulary words; replacements for
// words whisper got wrong in more than one corrected dictation). The engine proposes
// (crates/dictum-engine/src/learn.rs, as `dictum history --correct`); each proposal is accepted
// or rejected here; only the accepted ones are written, and nothing is learned before that.

import { useState } from 'preact/hooks';
import type { Entry } from '../bindings/Entry';
import type { Review } from '../bindings/Review';
import { errorText, ipc } from '../ipc';
import { acceptedOf, decided, describe, type Choice } from '../lib/learn';

export function Correct({ entry, toast, onClose }: { entry: Entry; toast: (s: string) => void; onClose: () => void }) {
  const id = entry.id ?? 0;
  const [text, setText] = useState(entry.text || entry.raw_text || '');
  const [review, setReview] = useState<Review | null>(null);
  const [choices, setChoices] = useState<Record<number, Choice>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      setReview(await ipc.historyCorrect(id, text));
      setChoices({});
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const finish = async () => {
    if (!review) return;
    const accepted = acceptedOf(review.proposals, choices);
    if (accepted.length === 0) {
      toast('Correction saved; nothing learned');
      onClose();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const w = await ipc.historyLearn(id, accepted);
      const parts = [
        ...w.vocabulary.map((v) => `“${v}” added to the vocabulary`),
        ...w.replacements.map(([from, to]) => `“${from}” → “${to}”`),
      ];
      toast(parts.length ? `Learned: ${parts.join('; ')}` : 'Already learned: nothing new written');
      onClose();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const choose = (i: number, c: Choice) => setChoices((old) => ({ ...old, [i]: c }));

  return (
    <div class="correct" data-testid="correct" style="margin-top:14px">
      <div class="muted">Correct it: write the text as it should have been</div>
      <textarea value={text} onInput={(e) => { setText((e.target as HTMLTextAreaElement).value); setReview(null); }}
        disabled={busy} data-testid="correct-text" />
      <div class="row">
        <button class="primary" disabled={busy || !text.trim() || review !== null} onClick={save} data-testid="correct-save">Save correction</button>
        <button disabled={busy} onClick={onClose} data-testid="correct-cancel">{review ? 'Close' : 'Cancel'}</button>
      </div>
      {error && <p class="error" data-testid="correct-error">{error}</p>}
      {review && review.proposals.length === 0 && (
        <p class="muted" data-testid="learn-none">Correction saved. Nothing to learn from it yet: a replacement is proposed once
          whisper makes the same mistake in two corrected dictations, and new words only when they look like names or terms
          (a capital letter, or letters with digits).</p>
      )}
      {review && review.proposals.length > 0 && (
        <div data-testid="learn">
          <p class="muted" style="margin:8px 0 4px">Correction saved. What Dictum could learn from it: nothing is learned until you accept it.</p>
          {review.proposals.map((p, i) => (
            <div class="row" key={i} data-testid="proposal" data-kind={p.kind} data-choice={p.known ? 'known' : choices[i] ?? ''}>
              <span style="flex:1">{describe(p)}</span>
              {p.known ? <span class="badge ok">already learned</span> : (
                <>
                  <button aria-pressed={choices[i] === 'accept'} class={choices[i] === 'accept' ? 'primary' : ''} disabled={busy}
                    onClick={() => choose(i, 'accept')} data-testid="proposal-accept">Accept</button>
                  <button aria-pressed={choices[i] === 'reject'} class={choices[i] === 'reject' ? 'danger' : ''} disabled={busy}
                    onClick={() => choose(i, 'reject')} data-testid="proposal-reject">Reject</button>
                </>
              )}
            </div>
          ))}
          <div class="row">
            <button class="primary" disabled={busy || !decided(review.proposals, choices)} onClick={finish} data-testid="learn-apply"
              title="Accept or reject each proposal first">
              {acceptedOf(review.proposals, choices).length ? `Learn ${acceptedOf(review.proposals, choices).length} accepted` : 'Done, learn nothing'}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
