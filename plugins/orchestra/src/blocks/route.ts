import { withSpec, type AgentOutput, type Block, type BlockContext, type OrchestraRow } from './Block.js';

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
  return withSpec(
    async (rows, context) => {
      if (rows.length === 0) return;
      await context.callAgent(router, rows);
      const routed = new Map<string, OrchestraRow[]>();
      for (const row of rows) {
        const branch = routedBranch(row, context, router, branches, options);
        if (branch !== undefined) routed.set(branch, [...(routed.get(branch) ?? []), row]);
      }
      for (const [name, block] of Object.entries(branches)) {
        const group = routed.get(name);
        if (group) await block(group, context);
      }
    },
    { kind: 'route', router, branches, select: options.select, otherwise: options.otherwise },
  );
}

/** The branch a row takes after the router ran, or undefined when it takes none. */
export function routedBranch(
  row: OrchestraRow,
  context: BlockContext,
  router: string,
  branches: Readonly<Record<string, Block>>,
  options: RouteOptions,
): string | undefined {
  const output = row.outputs.get(router)!;
  const chosen = options.select ? options.select(row, context, output) : routeKey(output);
  return chosen !== undefined && Object.hasOwn(branches, chosen) ? chosen : options.otherwise;
}
