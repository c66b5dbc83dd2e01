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
        prompt: MATH_VERIFIER_PROMPT, tag: 'verify', values: ['approve', 'reject'], stop: ['</verify>'], invalidPenalty: 0.1,
        sampling: { maxNewTokens: 1024 },
      },
    },
    step: loopUntil(
      verdictIs('verifier', 'approve'),
      sequential(call('solver'), when(notLastLoop, call('verifier'))),
      { maxLoops: (context) => (context.settings.maxLoops as number | undefined) ?? DEFAULT_MAX_LOOPS },
    ),
    // The solver's whole text: the environment scores its last \boxed{} after any </think>.
    action: (row) => actionFrom(row, 'solver', 'answer', 'text') ?? NO_ACTION,
  });
}
