import { agent } from '@drmas/core';
import { actionFrom, call, defineOrchestra, NO_ACTION, PromptedAgent } from '@drmas/plugin-orchestra';

/** Short: the tiny models read every prompt token on a CPU. */
export const CODER_PROMPT = 'Code: {question}\n';

/** The Coder: writes the function inside `<code>...</code>` (the tag makes a turn valid; the stop ends it). */
export class CoderAgent extends PromptedAgent {}
agent('coder')(CoderAgent);

/**
 * One round, one Coder turn: the environment runs the code of the Coder's whole answer (a ``` fence or
 * `<code>` tag, see env-code's `extractCode`) against the task's tests.
 */
export const codeOrchestra = defineOrchestra({
  name: 'code',
  agents: {
    coder: { prompt: CODER_PROMPT, tag: 'code', stop: ['</code>'], invalidPenalty: 0.1, sampling: { maxNewTokens: 64 } },
  },
  round: call('coder'),
  action: (row) => actionFrom(row, 'coder', 'answer', 'text') ?? NO_ACTION,
});
