import { withSpec, type Block, type OrchestraRow, type RowPredicate } from './Block.js';

/** Runs `then` on the rows that satisfy `predicate` and `otherwise` (if given) on the rest. */
export function when(predicate: RowPredicate, then: Block, otherwise?: Block): Block {
  return withSpec(
    async (rows, context) => {
      const yes: OrchestraRow[] = [];
      const no: OrchestraRow[] = [];
      for (const row of rows) (predicate(row, context) ? yes : no).push(row);
      if (yes.length > 0) await then(yes, context);
      if (otherwise && no.length > 0) await otherwise(no, context);
    },
    { kind: 'when', predicate, then, otherwise },
  );
}
