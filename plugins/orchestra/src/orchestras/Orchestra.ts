import { createToken, DrmasError, type EnvAction, type Episode, type Turn } from '@drmas/core';
import type { PromptedAgentOptions } from '../agents/agentConfig.js';
import type { Block, OrchestraRow } from '../blocks/Block.js';
import type { WorkflowGraph } from '../graph/WorkflowGraph.js';

/**
 * A multi-agent workflow: its roles (with default prompt, output format, sampling and invalid penalty, which
 * `agents.<role>` config overrides), what one round runs (blocks, or a graph), and what each row hands the environment
 * at the end of it.
 */
export interface Orchestra {
  readonly name: string;
  readonly agents: Readonly<Record<string, PromptedAgentOptions>>;
  /** The blocks of a round, run in lock-step (and, built from the built-in blocks, as a graph too). */
  readonly round?: Block;
  /** @deprecated since 0.2.0: `round`. */
  readonly step?: Block;
  /** A round as a graph, for the async executor (`rollout.executor.kind: async`); default: `round`'s graph. */
  readonly graph?: WorkflowGraph;
  action(row: OrchestraRow): EnvAction;
  /**
   * Turn-level scores (`turn.info.turnScore`, the `per_turn` allocator's reward) for the turns one round produced, in
   * call order, by turn index; `episode` is the row's, after the round. `judge` is the episode's
   * (undefined when it offers none, as a remote episode); scores missing from the map, or no map entries at all, leave
   * only the turn whose action the environment took with a score (the episode's `roundScore`).
   */
  turnScores?(turns: readonly Turn[], judge: ((action: EnvAction) => number) | undefined, episode: Episode): Map<number, number>;
}

export const Orchestra = createToken<Orchestra>('Orchestra', { label: 'orchestra', configKey: 'orchestra.name', named: true });

/** The orchestra's blocks, which the lock-step runner needs; a graph-only orchestra runs only on the async executor. */
export function blocksOf(orchestra: Orchestra): Block {
  const blocks = orchestra.round ?? orchestra.step;
  if (blocks) return blocks;
  throw new DrmasError('CONFIG_INVALID', `orchestra "${orchestra.name}" is a graph without blocks, so it runs only on the async executor`, {
    key: 'rollout.executor.kind',
    hint: 'set rollout.executor.kind: async',
  });
}

/** Gives an orchestra object its type; returns it unchanged. */
export function defineOrchestra(orchestra: Orchestra): Orchestra {
  return orchestra;
}

/**
 * The row's action from `agentId`'s latest output in this round: `type` with the parsed content when valid,
 * `invalid` with the raw text otherwise; undefined when the agent did not run.
 */
export function actionFrom(
  row: OrchestraRow,
  agentId: string,
  type: EnvAction['type'],
  content: 'parsed' | 'text' = 'parsed',
): EnvAction | undefined {
  const output = row.outputs.get(agentId);
  if (!output) return undefined;
  const where = { agentId, turnIndex: output.turn.index };
  if (content === 'text') return { type, content: output.text, ...where };
  return output.valid && output.action
    ? { type, content: output.action.content, ...where }
    : { type: 'invalid', content: output.text, ...where };
}

export const NO_ACTION: EnvAction = { type: 'invalid', content: '' };
