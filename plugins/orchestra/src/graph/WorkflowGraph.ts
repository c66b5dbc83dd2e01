import type { Environment, Episode } from '@drmas/core';
import type { z } from '@drmas/core';
import type { AgentOutput, LoopState, OrchestraRow } from '../blocks/Block.js';

/** The edge target that ends the graph's run for this round. */
export const END = '$end';
/** The name edges from the graph's start leave from. */
export const START = '$start';

/** What nodes and edge conditions see of one episode while the graph runs one round. */
export interface GraphContext<S> {
  /** The episode's state, typed by the graph's `state` schema; it carries over between rounds. */
  readonly state: S;
  readonly row: OrchestraRow;
  readonly episode: Episode;
  /** The run's environment (`env.name`): what a tool node calls for the environment's own tools (env-code's `verify`). */
  readonly environment: Environment;
  /** 0-based round of the episode. */
  readonly round: number;
  readonly maxRounds: number;
  readonly isLastRound: boolean;
  /** @deprecated since 0.2.0: `round`. */
  readonly step: number;
  /** @deprecated since 0.2.0: `isLastRound`. */
  readonly isLastStep: boolean;
  /** The `orchestra` config section (`maxLoops`, ...). */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The innermost `loopUntil` iteration, in conditions compiled from blocks (`blockGraph`). */
  readonly loop?: LoopState;
  /** Times `node` ran in this round. */
  visits(node: string): number;
  /** Traversals of the limited edges counting on `counter` since their target was last entered from outside. */
  traversals(counter: string): number;
  /** Aborted when the episode (or the batch) times out or is cancelled. */
  readonly signal: AbortSignal;
}

/** A number, or one read at run time (e.g. `(ctx) => ctx.settings.maxLoops`). */
export type GraphSetting = number | ((ctx: GraphContext<unknown>) => number);

/** Calls an agent: its prompt gets the task's variables, `{observation}`, `{team_context}` and `variables(ctx)`. */
export interface AgentNode<S> {
  readonly kind: 'agent';
  readonly agent: string;
  /** Extra prompt variables (e.g. from the state). */
  variables?(ctx: GraphContext<S>): Record<string, string>;
  /** The state's change from the agent's output. */
  update?(output: AgentOutput, ctx: GraphContext<S>): Partial<S> | undefined;
}

/** Calls a tool (a retriever, a code verifier): an async function given an AbortSignal. */
export interface ToolNode<S> {
  readonly kind: 'tool';
  /** The tool's name in traces. */
  readonly tool: string;
  call(ctx: GraphContext<S>, signal: AbortSignal): Promise<unknown>;
  update?(result: unknown, ctx: GraphContext<S>): Partial<S> | undefined;
}

/** A plain function of the state. */
export interface FunctionNode<S> {
  readonly kind: 'function';
  run(ctx: GraphContext<S>): Partial<S> | undefined | Promise<Partial<S> | undefined>;
}

export type GraphNode<S> = AgentNode<S> | ToolNode<S> | FunctionNode<S>;

/** A node's outgoing edge; a node's edges are tried in order and the first whose condition holds is taken. */
export interface GraphEdge<S> {
  readonly from: string;
  /** A node, or `END`. */
  readonly to: string;
  when?(ctx: GraphContext<S>): boolean;
  /** Traversals at most per entry into `to` (a loop's back edge: `maxLoops - 1`); when reached the edge is skipped. */
  readonly limit?: GraphSetting;
  /**
   * The counter a limited edge counts on (default `from->to`): edges that close one loop from several nodes share
   * it. Entering `to` by an edge without a limit resets the counters of the limited edges into `to`.
   */
  readonly counter?: string;
  /** For messages and traces (`approve`, `no`). */
  readonly label?: string;
}

/**
 * A workflow as a graph: nodes, ordered guarded edges, and the zod schema of the per-episode state. Nodes' and
 * edges' functions are methods, so a graph over a typed state is also a `WorkflowGraph` (of unknown state).
 */
export interface WorkflowGraph<S = unknown> {
  readonly nodes: ReadonlyMap<string, GraphNode<S>>;
  /** Every edge; those from `START` say where each round begins. */
  readonly edges: readonly GraphEdge<S>[];
  /** The per-episode state's schema; its defaults give the initial state. */
  readonly state: z.ZodType<S>;
  /** Where a message about the graph points (`orchestra.name`, `orchestra.graph`). */
  readonly configKey?: string;
}

/** The edges leaving `node`, in order. */
export function edgesFrom<S>(graph: WorkflowGraph<S>, node: string): GraphEdge<S>[] {
  return graph.edges.filter((edge) => edge.from === node);
}

/** The counter a limited edge counts on. */
export function counterOf(edge: GraphEdge<unknown>): string {
  return edge.counter ?? `${edge.from}->${edge.to}`;
}

/** A setting's value for one episode. */
export function settingValue(setting: GraphSetting, ctx: GraphContext<unknown>): number {
  return typeof setting === 'function' ? setting(ctx) : setting;
}
