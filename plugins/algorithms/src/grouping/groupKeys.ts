import { AlgorithmInputError } from '../errors.js';
import { unknownNameError } from '../nameSuggestion.js';
import { combineCodings, type Coding } from './coding.js';

/** Per-row id columns a group key can combine. */
export type IdColumn = 'groupIds' | 'agentIds' | 'turnIds' | 'workerGroupIds';

/**
 * Built-in group keys: which rows share one baseline.
 * - `prompt`: all rows of a prompt group (veRL `uid`); GRPO.
 * - `prompt_agent`: rows of one agent within a prompt group; Dr. MAS agent-wise normalization.
 * - `prompt_agent_turn`: additionally split by turn (needs `turnIds`).
 * - `prompt_worker_group`: agents that share one trained model (worker group) are normalized together (needs `workerGroupIds`).
 */
export const GROUP_KEYS = {
  prompt: ['groupIds'],
  prompt_agent: ['groupIds', 'agentIds'],
  prompt_agent_turn: ['groupIds', 'agentIds', 'turnIds'],
  prompt_worker_group: ['groupIds', 'workerGroupIds'],
} as const satisfies Record<string, readonly IdColumn[]>;

export type GroupKeyName = keyof typeof GROUP_KEYS;

export const GROUP_KEY_NAMES = Object.keys(GROUP_KEYS) as GroupKeyName[];

/**
 * A custom group key: rows with equal keys share one baseline. It receives the row index and the
 * `computeAdvantage` input; e.g. `(row, input) => \`${input.groupIds[row]}/${input.agentIds![row]}\``.
 */
export type GroupKeyFn<Input = unknown> = (row: number, input: Input) => string | number;

export type GroupKey<Input = unknown> = GroupKeyName | GroupKeyFn<Input>;

/** Resolves a built-in key to a coding, combining the codings of its id columns. */
export function resolveBuiltInGroupKey(
  name: string,
  column: (c: IdColumn) => Coding | undefined,
  columnKey: (c: IdColumn) => string,
): Coding {
  if (!Object.prototype.hasOwnProperty.call(GROUP_KEYS, name)) {
    throw unknownNameError('options.groupKey', 'group key', name, GROUP_KEY_NAMES);
  }
  let coding: Coding | undefined;
  for (const c of GROUP_KEYS[name as GroupKeyName]) {
    const next = column(c);
    if (next === undefined) {
      throw new AlgorithmInputError(columnKey(c), `is required by group key '${name}'`);
    }
    coding = coding === undefined ? next : combineCodings(coding, next);
  }
  return coding as Coding;
}
