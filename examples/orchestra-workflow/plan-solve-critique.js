// @ts-check
/**
 * A third workflow written with the orchestra building blocks: a Planner writes a plan once, then the Solver and a
 * Critic loop until the Critic approves (at most 3 solves). It runs on the math environment and trains like the
 * presets' workflows: every agent turn is recorded, rewarded and trained.
 */
import { agent } from '@drmas/core';
import {
  actionFrom,
  call,
  defineOrchestra,
  loopUntil,
  NO_ACTION,
  notLastLoop,
  Orchestra,
  PromptedAgent,
  sequential,
  verdictIs,
  when,
} from '@drmas/plugin-orchestra';

class PlannerAgent extends PromptedAgent {}
agent('planner')(PlannerAgent);
class CriticAgent extends PromptedAgent {}
agent('critic')(CriticAgent);

const planSolveCritique = defineOrchestra({
  name: 'plan-solve-critique',
  agents: {
    planner: { prompt: 'Plan: {question}\n', tag: 'plan', stop: ['</plan>'], sampling: { maxNewTokens: 24 } },
    solver: { prompt: 'Solve: {question}\n{team_context}', tag: 'boxed', sampling: { maxNewTokens: 40 } },
    critic: {
      prompt: 'Check: {question}\n{team_context}',
      tag: 'verify',
      values: ['approve', 'reject'],
      stop: ['</verify>'],
      sampling: { maxNewTokens: 40 },
    },
  },
  round: sequential(
    call('planner'),
    loopUntil(verdictIs('critic', 'approve'), sequential(call('solver'), when(notLastLoop, call('critic'))), { maxLoops: 3 }),
  ),
  action: (row) => actionFrom(row, 'solver', 'answer', 'text') ?? NO_ACTION,
});

/** @type {import('@drmas/core').Plugin} */
export default {
  name: 'plan-solve-critique',
  register(ctx) {
    ctx.agents.register(PlannerAgent);
    ctx.agents.register(CriticAgent);
    ctx.provide(Orchestra, 'plan-solve-critique', planSolveCritique);
  },
};
