import type { EnvAction, TaggedAction, Turn } from '@drmas/core';
import { call } from '../blocks/call.js';
import { loopUntil } from '../blocks/loopUntil.js';
import { notLastLoop, verdictIs } from '../blocks/predicates.js';
import { sequential } from '../blocks/sequential.js';
import { when } from '../blocks/when.js';
import { MATH_SOLVER_PROMPT, MATH_VERIFIER_PROMPT } from './mathPrompts.js';
import { actionFrom, defineOrchestra, NO_ACTION, type Orchestra } from './Orchestra.js';

/** `orchestra.maxLoops` when the config gives none: Dr. MAS's max_loop_num. */
export const DEFAULT_MAX_LOOPS = 2;

/**
 * Turn-level credit: each Solver turn scores its own answer (1 when right), each Verifier turn scores its verdict
 * on the solution before it (1 for approving a right one or rejecting a wrong one; 0 when unparseable).
 */
function mathTurnScores(turns: readonly Turn[], judge: ((action: EnvAction) => number) | undefined): Map<number, number> {
  const scores = new Map<number, number>();
  if (!judge) return scores;
  let solved: number | undefined;
  for (const turn of turns) {
    if (turn.agentId === 'solver') {
      solved = judge({ type: 'answer', content: turn.responseText ?? '', agentId: 'solver', turnIndex: turn.index });
      scores.set(turn.index, solved);
    } else if (turn.agentId === 'verifier' && solved !== undefined) {
      const verdict = turn.valid ? (turn.action as TaggedAction | undefined)?.content : undefined;
      scores.set(turn.index, verdict !== undefined && (verdict === 'approve') === (solved === 1) ? 1 : 0);
    }
  }
  return scores;
}

/**
 * Dr. MAS math: the Solver proposes a solution ending in `\boxed{}`, the Verifier approves or rejects it;
 * rejected rows (and rows whose verifier output is unparseable) go back to the Solver, up to `orchestra.maxLoops`
 * solves, with no Verifier after the last one. The answer is the Solver's latest.
 */
export function createMathOrchestra(): Orchestra {
  return defineOrchestra({
    name: 'math',
    agents: {
      solver: { prompt: MATH_SOLVER_PROMPT, tag: 'boxed', invalidPenalty: 0.1, sampling: { maxNewTokens: 1024 } },
      verifier: {
        prompt: MATH_VERIFIER_PROMPT,
        tag: 'verify',
        values: ['approve', 'reject'],
        stop: ['</verify>'],
        invalidPenalty: 0.1,
        sampling: { maxNewTokens: 1024 },
      },
    },
    round: loopUntil(verdictIs('verifier', 'approve'), sequential(call('solver'), when(notLastLoop, call('verifier'))), {
      maxLoops: (context) => (context.settings.maxLoops as number | undefined) ?? DEFAULT_MAX_LOOPS,
    }),
    // The solver's whole text: the environment scores its last \boxed{} after any </think>.
    action: (row) => actionFrom(row, 'solver', 'answer', 'text') ?? NO_ACTION,
    turnScores: mathTurnScores,
  });
}
