import { describe as suite, expect, it } from 'vitest';
import type { Proposal } from '../../src/bindings/Proposal';
import { acceptedOf, decided, describe, open } from '../../src/lib/learn';

const vocab: Proposal = { kind: 'vocabulary', word: 'Marija', known: false };
const known: Proposal = { kind: 'vocabulary', word: 'Dictum', known: true };
const replace: Proposal = { kind: 'replace', from: 'maria', to: 'Marija', seen: 2, known: false };

suite('learning from a correction', () => {
  it('words each proposal', () => {
    expect(describe(vocab)).toContain('“Marija” to the vocabulary');
    expect(describe(replace)).toBe('Always write “Marija” where whisper writes “maria” (you corrected it 2 times)');
  });
  it('needs a decision for every proposal not already learned', () => {
    const ps = [vocab, known, replace];
    expect(open(ps)).toEqual([0, 2]);
    expect(decided(ps, {})).toBe(false);
    expect(decided(ps, { 0: 'accept' })).toBe(false);
    expect(decided(ps, { 0: 'reject', 2: 'accept' })).toBe(true);
    expect(decided([known], {})).toBe(true);
  });
  it('sends only the accepted ones, never a known one', () => {
    const ps = [vocab, known, replace];
    expect(acceptedOf(ps, { 0: 'reject', 1: 'accept', 2: 'accept' })).toEqual([replace]);
    expect(acceptedOf(ps, { 0: 'reject', 2: 'reject' })).toEqual([]);
  });
});
