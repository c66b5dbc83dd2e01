import type { RowPredicate } from './Block.js';

/** The agent's latest output in this step is valid and its action content is `value` (`approve`, `yes`, ...). */
export function verdictIs(agentId: string, value: string): RowPredicate {
  return (row) => {
    const output = row.outputs.get(agentId);
    return output?.valid === true && output.action?.content === value;
  };
}

/** Inside `loopUntil`: not the last iteration. */
export const notLastLoop: RowPredicate = (_row, context) => !context.loop?.isLast;

export const isLastStep: RowPredicate = (_row, context) => context.isLastStep;
