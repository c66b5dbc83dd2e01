import type { RowPredicate } from './Block.js';

/** The agent's latest output in this round is valid and its action content is `value` (`approve`, `yes`, ...). */
export function verdictIs(agentId: string, value: string): RowPredicate {
  return (row) => {
    const output = row.outputs.get(agentId);
    return output?.valid === true && output.action?.content === value;
  };
}

/** Inside `loopUntil`: not the last iteration. */
export const notLastLoop: RowPredicate = (_row, context) => !context.loop?.isLast;

/** The round is the episode's last (`env.maxRounds`). */
export const isLastRound: RowPredicate = (_row, context) => context.isLastRound;

/** @deprecated since 0.2.0: `isLastRound`. */
export const isLastStep = isLastRound;
