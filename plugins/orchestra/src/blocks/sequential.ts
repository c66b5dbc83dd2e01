import { withSpec, type Block } from './Block.js';

/** Runs the blocks one after the other, each on all the rows. */
export function sequential(...blocks: Block[]): Block {
  return withSpec(
    async (rows, context) => {
      for (const block of blocks) await block(rows, context);
    },
    { kind: 'sequential', blocks },
  );
}
