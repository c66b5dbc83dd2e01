import type { AgentOutput, Block, BlockContext, OrchestraRow } from './Block.js';

export interface RouteOptions {
  /** The branch of a row; default: the router's parsed action content (`yes`, `no`, ...), undefined when invalid. */
  select?: (row: OrchestraRow, context: BlockContext, output: AgentOutput) => string | undefined;
  /** Branch for rows whose selection names no branch (an invalid router output); without it they stop here. */
  otherwise?: string;
}

/** The router's parsed action content for valid output, else undefined. */
export function routeKey(output: AgentOutput | undefined): string | undefined {
  return output?.valid ? output.action?.content : undefined;
}

/**
 * Calls the router agent on all rows, then runs each branch on the rows routed to it (each branch once, in the
 * order the branches are written).
 */
export function route(router: string, branches: Record<string, Block>, options: RouteOptions = {}): Block {
  return async (rows, context) => {
    if (rows.length === 0) return;
    await context.callAgent(router, rows);
    const routed = new Map<string, OrchestraRow[]>();
    for (const row of rows) {
      const output = row.outputs.get(router)!;
      const chosen = options.select ? options.select(row, context, output) : routeKey(output);
      const branch = chosen !== undefined && Object.hasOwn(branches, chosen) ? chosen : options.otherwise;
      if (branch !== undefined) routed.set(branch, [...(routed.get(branch) ?? []), row]);
    }
    for (const [name, block] of Object.entries(branches)) {
      const group = routed.get(name);
      if (group) await block(group, context);
    }
  };
}
