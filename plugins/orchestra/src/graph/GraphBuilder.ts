import { DrmasError, z } from '@drmas/core';
import type { AgentOutput } from '../blocks/Block.js';
import {
  END,
  START,
  type AgentNode,
  type FunctionNode,
  type GraphContext,
  type GraphEdge,
  type GraphNode,
  type GraphSetting,
  type ToolNode,
  type WorkflowGraph,
} from './WorkflowGraph.js';

export interface EdgeOptions<S> {
  when?: (ctx: GraphContext<S>) => boolean;
  /** Traversals at most per entry into the target: what makes a loop's back edge end. */
  limit?: GraphSetting;
  label?: string;
}

/**
 * Builds a `WorkflowGraph` with typed node names and state: `edge` accepts only nodes added before (or `END`), and
 * nodes see the state the schema describes.
 *
 * ```ts
 * const graph = workflowGraph(z.object({ tries: z.number().default(0) }))
 *   .agent('solver', 'solver', { update: (_out, ctx) => ({ tries: ctx.state.tries + 1 }) })
 *   .agent('verifier', 'verifier')
 *   .start('solver')
 *   .edge('solver', 'verifier')
 *   .edge('verifier', END, { when: (ctx) => ctx.row.outputs.get('verifier')?.action?.content === 'approve' })
 *   .edge('verifier', 'solver', { limit: 2 })
 *   .build();
 * ```
 */
export class GraphBuilder<S, N extends string = never> {
  private readonly nodes = new Map<string, GraphNode<S>>();
  private readonly edges: GraphEdge<S>[] = [];

  constructor(private readonly state: z.ZodType<S>) {}

  /** A node that calls agent `agent` (a role of the orchestra). */
  agent<I extends string>(
    id: I,
    agent: string,
    options: { variables?: AgentNode<S>['variables']; update?: (output: AgentOutput, ctx: GraphContext<S>) => Partial<S> | undefined } = {},
  ): GraphBuilder<S, N | I> {
    return this.add(id, { kind: 'agent', agent, ...options });
  }

  /** A node that calls a tool: `call` gets an AbortSignal that fires on the tool's timeout. */
  tool<I extends string>(
    id: I,
    tool: string,
    call: ToolNode<S>['call'],
    update?: (result: unknown, ctx: GraphContext<S>) => Partial<S> | undefined,
  ): GraphBuilder<S, N | I> {
    return this.add(id, { kind: 'tool', tool, call, update });
  }

  /** A node that runs a function of the state. */
  fn<I extends string>(id: I, run: FunctionNode<S>['run']): GraphBuilder<S, N | I> {
    return this.add(id, { kind: 'function', run });
  }

  /** Where each round begins (several calls: tried in order, as edges). */
  start(to: N, options: Omit<EdgeOptions<S>, 'limit'> = {}): this {
    this.edges.push({ from: START, to, ...options });
    return this;
  }

  /** An edge; a node's edges are tried in the order they are added, and a node with none ends the step. */
  edge(from: N, to: N | typeof END, options: EdgeOptions<S> = {}): this {
    this.edges.push({ from, to, ...options });
    return this;
  }

  /** The graph (checked by `validateGraph` when an orchestra using it is loaded). */
  build(): WorkflowGraph<S> {
    return { nodes: new Map(this.nodes), edges: [...this.edges], state: this.state };
  }

  private add<I extends string>(id: I, node: GraphNode<S>): GraphBuilder<S, N | I> {
    if (this.nodes.has(id) || id === START || id === END) {
      throw new DrmasError('CONFIG_INVALID', `graph node "${id}" is ${this.nodes.has(id) ? 'added twice' : 'a reserved name'}`, {
        hint: 'give each node its own name',
      });
    }
    this.nodes.set(id, node);
    return this;
  }
}

/** Starts a graph whose per-episode state `state` describes (default: no state). */
export function workflowGraph<S = Record<string, never>>(state?: z.ZodType<S>): GraphBuilder<S> {
  return new GraphBuilder<S>(state ?? (z.object({}) as unknown as z.ZodType<S>));
}
