// Learning from a correction (issue 30 item 3), the page's side: how a proposal of the engine
// (crates/dictum-engine/src/learn.rs) is worded, and which ones the user accepted. The engine
// decides what is proposed, and checks again on accept that each one is its own proposal.

import type { Proposal } from '../bindings/Proposal';

export type Choice = 'accept' | 'reject';

/** One line for a proposal, in the words of `dictum history --correct`. */
export function describe(p: Proposal): string {
  if (p.kind === 'vocabulary') return `Add “${p.word}” to the vocabulary (whisper is told to expect it)`;
  const times = p.seen === 1 ? 'once' : `${p.seen} times`;
  return `Always write “${p.to}” where whisper writes “${p.from}” (you corrected it ${times})`;
}

/** Proposals that still need a yes or a no: those not already in the config. */
export const open = (ps: Proposal[]): number[] => ps.flatMap((p, i) => (p.known ? [] : [i]));

/** Every open proposal has been accepted or rejected. */
export const decided = (ps: Proposal[], choices: Record<number, Choice>): boolean =>
  open(ps).every((i) => choices[i] === 'accept' || choices[i] === 'reject');

/** The proposals to send to the app: accepted ones only, never one already known. */
export const acceptedOf = (ps: Proposal[], choices: Record<number, Choice>): Proposal[] =>
  open(ps).filter((i) => choices[i] === 'accept').map((i) => ps[i]);
