import { agent, type Plugin } from '@drmas/core';
import { actionFrom, defineOrchestra, END, NO_ACTION, Orchestra, PromptedAgent, workflowGraph } from '@drmas/plugin-orchestra';
import { SOLVER_PROMPT, VERIFIER_PROMPT } from './mathPrompts.js';

/** The Refiner: rewrites a rejected solution, ending in `\boxed{}`. */
export class RefinerAgent extends PromptedAgent {}
agent('refiner')(RefinerAgent);
/** The Finalizer: states the team's final answer in `\boxed{}`; the environment scores it. */
export class FinalizerAgent extends PromptedAgent {}
agent('finalizer')(FinalizerAgent);

/** Short, in the preset's style: the tiny models read every prompt token on a CPU. */
export const REFINER_PROMPT = 'Refine: {question}\n{team_context}';
export const FINALIZER_PROMPT = 'Final: {question}\n{team_context}';

/**
 * UnityMAS-O's math workflow as a graph: the Solver solves, the Verifier approves or rejects, a rejected (or
 * unparseable) verdict sends the solution to the Refiner, and the Finalizer gives the answer the environment scores.
 *
 * ```text
 * solve -> check --approve--> finalize -> END
 *                --otherwise-> refine -> finalize -> END
 * ```
 */
export const mathFourAgentGraph = workflowGraph()
  .agent('solve', 'solver')
  .agent('check', 'verifier')
  .agent('refine', 'refiner')
  .agent('finalize', 'finalizer')
  .start('solve')
  .edge('solve', 'check')
  .edge('check', 'finalize', {
    when: (ctx) => ctx.row.outputs.get('verifier')?.valid === true && ctx.row.outputs.get('verifier')?.action?.content === 'approve',
    label: 'approve',
  })
  .edge('check', 'refine', { label: 'reject' })
  .edge('refine', 'finalize')
  .edge('finalize', END)
  .build();

/** `orchestra.name: math-four-agent`: Solver, Verifier, Refiner, Finalizer on env-math; async executor only. */
export const mathFourAgentOrchestra = defineOrchestra({
  name: 'math-four-agent',
  agents: {
    solver: { prompt: SOLVER_PROMPT, tag: 'boxed', invalidPenalty: 0.1, sampling: { maxNewTokens: 56 } },
    verifier: {
      prompt: VERIFIER_PROMPT,
      tag: 'verify',
      values: ['approve', 'reject'],
      stop: ['</verify>'],
      invalidPenalty: 0.1,
      sampling: { maxNewTokens: 72 },
    },
    refiner: { prompt: REFINER_PROMPT, tag: 'boxed', invalidPenalty: 0.1, sampling: { maxNewTokens: 56 } },
    finalizer: { prompt: FINALIZER_PROMPT, tag: 'boxed', invalidPenalty: 0.1, sampling: { maxNewTokens: 56 } },
  },
  graph: mathFourAgentGraph,
  // The Finalizer's whole text: the environment scores its last \boxed{} (final-answer accuracy).
  action: (row) => actionFrom(row, 'finalizer', 'answer', 'text') ?? NO_ACTION,
});

/** Registers the Refiner and Finalizer roles and the `math-four-agent` orchestra (the Solver and Verifier are the orchestra plugin's). */
export const mathWorkflowsPlugin: Plugin = {
  name: 'math-workflows',
  register(ctx) {
    ctx.agents.register(RefinerAgent);
    ctx.agents.register(FinalizerAgent);
    ctx.provide(Orchestra, 'math-four-agent', mathFourAgentOrchestra);
  },
};
