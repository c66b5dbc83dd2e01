import { z } from '@drmas/core';
import { searchTogether } from '@drmas/plugin-env-search';
import {
  actionFrom,
  call,
  defineOrchestra,
  END,
  loopUntil,
  metricDeltaAllocator,
  NO_ACTION,
  sequential,
  when,
  workflowGraph,
  type Block,
  type GraphContext,
  type NodeExecution,
  type Orchestra,
  type OrchestraRow,
  type TraceAllocator,
} from '@drmas/plugin-orchestra';
import { answerF1, searchEpisode } from './searchSteps.js';

/**
 * Short prompts: the tiny models read every prompt token on a CPU. The Searcher and Answerer keep the search preset's
 * prompts (`Search: {observation}`, `Answer: {observation}`), which its base checkpoint was warmed up on; the
 * observation holds the question and every `<information>` block retrieved so far.
 */
export const MASK_PLANNER_PROMPT = 'Plan: {question}\n';
export const MASK_SUMMARIZER_PROMPT = 'Summarize: {observation}\n';
export const MASK_UPDATER_PROMPT = 'Update: {question}\n{team_context}\n';

/** What the Searcher writes, alone or as its query, to end the search (UnityMAS-O's `<end>`). */
export const SEARCH_END = '<end>';

/** The Searcher's latest query in this step, or undefined when it ended the search (`<end>`) or wrote no query. */
export function searchQuery(row: OrchestraRow): string | undefined {
  const output = row.outputs.get('searcher');
  if (!output?.valid || output.text.includes(SEARCH_END)) return undefined;
  const query = output.action?.content.trim();
  return query && query.toLowerCase() !== 'end' ? query : undefined;
}

/** Whether the row searches again: a query, and room in the episode for the search and the answer after it. */
function searches(row: OrchestraRow): boolean {
  return searchQuery(row) !== undefined && searchEpisode(row).canSearch;
}

/** M-ASK's per-episode state: the F1 of the latest (temporary) answer, and the search round it belongs to. */
export const maskState = z.object({ f1: z.number().default(0), round: z.number().int().min(0).default(0) });
export type MaskState = z.output<typeof maskState>;

const maxRounds = (ctx: { settings: Readonly<Record<string, unknown>> }) => Number(ctx.settings.maxLoops ?? 3);

/**
 * M-ASK as a graph, for the async executor. Plan (an initial answer a0), then rounds of search -> retrieve (a tool
 * node: the episode's retriever) -> summary -> update -> answer (a temporary answer a_t), at most `orchestra.maxLoops`
 * rounds; a round stops early when the Searcher writes `<end>` (or no query, or the episode has no room for another
 * search). After each answer a function node stores its F1 in the state, which the `mask_f1` allocator reads.
 */
export function maskGraph() {
  return workflowGraph(maskState)
    .agent('plan', 'planner')
    .fn('score_plan', (ctx) => ({ f1: answerF1(ctx.row, 'planner') }))
    .agent('search', 'searcher', { update: (_output, ctx) => ({ round: ctx.state.round + 1 }) })
    .tool('retrieve', 'retriever', (ctx) => searchEpisode(ctx.row).search([searchQuery(ctx.row)!]))
    .agent('summary', 'summarizer')
    .agent('update', 'updater')
    .agent('answer', 'answerer')
    .fn('score_answer', (ctx) => ({ f1: answerF1(ctx.row, 'answerer') }))
    .start('plan')
    .edge('plan', 'score_plan')
    .edge('score_plan', 'search')
    .edge('search', 'retrieve', { when: (ctx) => searches(ctx.row), label: 'query' })
    .edge('search', END, { label: 'end' })
    .edge('retrieve', 'summary')
    .edge('summary', 'update')
    .edge('update', 'answer')
    .edge('answer', 'score_answer')
    .edge('score_answer', 'search', { limit: (ctx: GraphContext<unknown>) => maxRounds(ctx) - 1 })
    .edge('score_answer', END)
    .build();
}

/**
 * The same workflow in lock-step blocks (what `rollout.executor.kind: lockstep` runs, e.g. to compare the two): each
 * agent call is one generate for every row that reaches it, and a round's retrievals are one retriever call. It
 * keeps no state, so the `mask_f1` allocator (which reads traces) needs the executor.
 */
export function maskBlocks(): Block {
  const stopped = new WeakSet<OrchestraRow>();
  const retrieve: Block = async (rows) => {
    const going = rows.filter((row) => {
      if (searches(row)) return true;
      stopped.add(row);
      return false;
    });
    await searchTogether(going.map((row) => ({ episode: searchEpisode(row), queries: [searchQuery(row)!] })));
  };
  const round = sequential(
    call('searcher'),
    retrieve,
    when((row) => !stopped.has(row), sequential(call('summarizer'), call('updater'), call('answerer'))),
  );
  return sequential(
    call('planner'),
    loopUntil((row) => stopped.has(row), round, { maxLoops: (ctx) => maxRounds(ctx) }),
  );
}

/**
 * The whole workflow runs in one round; the environment then takes the last answer (the Answerer's
 * latest, else the Planner's), read from the output's text as the temporary answers were scored.
 */
export function createMaskOrchestra(): Orchestra {
  return defineOrchestra({
    name: 'm-ask',
    agents: {
      planner: { prompt: MASK_PLANNER_PROMPT, tag: 'answer', stop: ['</answer>'], invalidPenalty: 0.01, sampling: { maxNewTokens: 32 } },
      searcher: { prompt: 'Search: {observation}', tag: 'search', stop: ['</search>'], invalidPenalty: 0.01 },
      summarizer: {
        prompt: MASK_SUMMARIZER_PROMPT,
        tag: 'summary',
        stop: ['</summary>'],
        invalidPenalty: 0.01,
        sampling: { maxNewTokens: 32 },
      },
      updater: { prompt: MASK_UPDATER_PROMPT, tag: 'notes', stop: ['</notes>'], invalidPenalty: 0.01, sampling: { maxNewTokens: 32 } },
      answerer: { prompt: 'Answer: {observation}', tag: 'answer', stop: ['</answer>'], invalidPenalty: 0.01 },
    },
    round: maskBlocks(),
    graph: maskGraph(),
    action: (row) => actionFrom(row, 'answerer', 'answer', 'text') ?? actionFrom(row, 'planner', 'answer', 'text') ?? NO_ACTION,
  });
}

/** The round an execution belongs to: the state's `round` after it (the Searcher opens a round). */
const roundOf = (execution: NodeExecution) => `${execution.step}/${(execution.stateAfter as Partial<MaskState> | undefined)?.round ?? 0}`;

/**
 * UnityMAS-O's M-ASK allocation (`reward.allocator: mask_f1`, with `reward.absoluteAgents: [planner, answerer]`): the
 * Planner gets F1(a0), the Answerer F1(a_t) of its round's answer, and the Searcher, Summarizer and Updater of round
 * t the round's gain F1(a_t) - F1(a_{t-1}) (span `step` cut into rounds); a round the Searcher ends with `<end>` has
 * no answer, so its search gets 0. (Span `next` would measure the search at the retrieval tool node after it, whose
 * state carries the previous F1: a gain of 0.)
 */
export const maskF1Allocator: TraceAllocator = metricDeltaAllocator('mask_f1', 'f1', 'round', roundOf);
