import { agent, DrmasError, z } from '@drmas/core';
import type { CodeEnvironment, CodeEpisode, CodeVerdict } from '@drmas/plugin-env-code';
import {
  actionFrom,
  defineOrchestra,
  END,
  NO_ACTION,
  PromptedAgent,
  workflowGraph,
  type AgentOutput,
  type GraphContext,
} from '@drmas/plugin-orchestra';
import { CODER_PROMPT } from './codeOrchestra.js';

/**
 * Code turns at most (UnityMAS-O's CODE_MAX_TURNS): the code preset's `orchestra.maxLoops`, and the bound when the
 * graph runs without that setting.
 */
export const REFLECTIVE_CODE_TURNS = 3;

/** The Planner: a short plan inside `<plan>...</plan>`, written again before every code turn. */
export class PlannerAgent extends PromptedAgent {}
agent('planner')(PlannerAgent);
/** The Reflector: reads the code and the verifier's feedback, says what to change inside `<reflect>...</reflect>`. */
export class ReflectorAgent extends PromptedAgent {}
agent('reflector')(ReflectorAgent);

/**
 * What one episode carries between nodes: the prompt pieces the agents read (each `''` until written, so the first
 * code turn's prompt is the code preset's `Code: {question}\n` plus the plan) and the latest verification.
 */
export const reflectiveCodeState = z.object({
  /** `Plan: ...\n` from the Planner's latest valid output. */
  plan: z.string().default(''),
  /** The Coder's latest output, as the verifier runs it. */
  code: z.string().default(''),
  /** `Tests: 2/4 tests passed; ...\n`: the verifier's feedback on that code. */
  feedback: z.string().default(''),
  /** `Reflection: ...\n` from the Reflector's latest valid output. */
  reflection: z.string().default(''),
  /** Share of the task's tests the latest code passed (what `pass_rate_turn_delta` rewards the change of). */
  pass_rate: z.number().default(0),
  all_passed: z.boolean().default(false),
});

export type ReflectiveCodeState = z.output<typeof reflectiveCodeState>;

type Context = GraphContext<ReflectiveCodeState>;

/** Code turns at most in this episode: `orchestra.maxLoops`. */
export function codeTurns(ctx: { settings: Readonly<Record<string, unknown>> }): number {
  const setting = ctx.settings.maxLoops;
  return typeof setting === 'number' ? setting : REFLECTIVE_CODE_TURNS;
}

/** A tagged agent output as a prompt line, or nothing when the output was not in its format. */
const taggedLine = (label: string, output: AgentOutput) =>
  output.valid && output.action ? `${label}: ${output.action.content.trim()}\n` : '';

/** The verifier tool: env-code's `verify` on the episode's task and the Coder's latest output, with the run's sandbox limits. */
export async function verifyLatestCode(ctx: Context): Promise<CodeVerdict> {
  if (ctx.environment.name !== 'code') {
    throw new DrmasError(
      'CONFIG_INVALID',
      `the reflective-code workflow verifies code with the code environment, and env.name is "${ctx.environment.name}"`,
      { key: 'env.name', hint: 'set env.name: code (presets: ["code"] does)' },
    );
  }
  const environment = ctx.environment as CodeEnvironment;
  return environment.verify((ctx.episode as CodeEpisode).task, ctx.state.code);
}

/**
 * UnityMAS-O's reflective code workflow as a graph, for the async executor: plan, code, verify (a tool node running
 * the task's tests in env-code's sandbox), and, while tests fail and code turns are left, reflect and plan again.
 * All tests passing ends the episode's step early; `orchestra.maxLoops` bounds the code turns (3 in the workflow's
 * configs). The environment then scores the Coder's latest code (its outcome: the share of tests passed).
 *
 * ```text
 * plan -> code -> verify --all passed--> END
 *   ^                    --turns left--> reflect -> plan (at most maxLoops - 1 times)
 *   |                    --otherwise---> END
 * ```
 */
export const reflectiveCodeGraph = workflowGraph(reflectiveCodeState)
  .agent('plan', 'planner', {
    variables: (ctx) => ({ feedback: ctx.state.feedback, reflection: ctx.state.reflection }),
    update: (output) => ({ plan: taggedLine('Plan', output) }),
  })
  .agent('code', 'coder', {
    variables: (ctx) => ({ plan: ctx.state.plan, feedback: ctx.state.feedback, reflection: ctx.state.reflection }),
    update: (output) => ({ code: output.text }),
  })
  .tool('verify', 'code_verifier', verifyLatestCode, (result) => {
    const verdict = result as CodeVerdict;
    return {
      pass_rate: verdict.total > 0 ? verdict.passed / verdict.total : 0,
      all_passed: verdict.allPassed,
      feedback: `Tests: ${verdict.feedback}\n`,
    };
  })
  .agent('reflect', 'reflector', {
    variables: (ctx) => ({ code: ctx.state.code, feedback: ctx.state.feedback }),
    update: (output) => ({ reflection: taggedLine('Reflection', output) }),
  })
  .start('plan')
  .edge('plan', 'code')
  .edge('code', 'verify')
  .edge('verify', END, { when: (ctx) => ctx.state.all_passed, label: 'all passed' })
  .edge('verify', 'reflect', { when: (ctx) => ctx.visits('code') < codeTurns(ctx), label: 'turns left' })
  .edge('verify', END, { label: 'turn limit' })
  .edge('reflect', 'plan', { limit: (ctx) => codeTurns(ctx) - 1 })
  .build();

/** `orchestra.name: reflective-code`: Planner, Coder and Reflector around env-code's verifier; async executor only. */
export const reflectiveCodeOrchestra = defineOrchestra({
  name: 'reflective-code',
  agents: {
    planner: {
      prompt: 'Plan: {question}\n{feedback}{reflection}',
      tag: 'plan',
      stop: ['</plan>'],
      invalidPenalty: 0.1,
      sampling: { maxNewTokens: 32 },
    },
    coder: {
      prompt: `${CODER_PROMPT}{plan}{feedback}{reflection}`,
      tag: 'code',
      stop: ['</code>'],
      invalidPenalty: 0.1,
      sampling: { maxNewTokens: 64 },
    },
    reflector: {
      prompt: 'Reflect: {question}\n{code}\n{feedback}',
      tag: 'reflect',
      stop: ['</reflect>'],
      invalidPenalty: 0.1,
      sampling: { maxNewTokens: 32 },
    },
  },
  graph: reflectiveCodeGraph,
  // The Coder's whole latest output: the environment extracts and runs its code, as the verifier tool did.
  action: (row) => actionFrom(row, 'coder', 'answer', 'text') ?? NO_ACTION,
});
