import { withSpec, type Block } from './Block.js';

/** Calls agent `agentId` on every row that reaches the block, with one batched generate. */
export function call(agentId: string): Block {
  return withSpec(
    async (rows, context) => {
      if (rows.length > 0) await context.callAgent(agentId, rows);
    },
    { kind: 'call', agent: agentId },
  );
}
