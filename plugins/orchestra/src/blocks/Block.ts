import type { Episode, TaggedAction, Trajectory, Turn } from '@drmas/core';

/** One agent call's result for one row. */
export interface AgentOutput {
  agentId: string;
  text: string;
  action?: TaggedAction;
  valid: boolean;
  reason?: string;
  turn: Turn;
}

/** One episode as the orchestra sees it during a round. */
export interface OrchestraRow {
  /** Position of the row in the rollout batch. */
  readonly index: number;
  readonly episode: Episode;
  readonly trajectory: Trajectory;
  /** `The output of "<agent>": <text>` lines of this round, in call order. */
  readonly teamContext: string[];
  /** The latest output of each agent in this round. */
  readonly outputs: Map<string, AgentOutput>;
}

export interface LoopState {
  /** 0-based iteration. */
  iteration: number;
  maxLoops: number;
  isLast: boolean;
}

/** What blocks see while a round runs. */
export interface BlockContext {
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
  /** The innermost `loopUntil` iteration, when inside one. */
  readonly loop?: LoopState;
  /** Calls `agentId` on `rows` with one batched generate. */
  callAgent(agentId: string, rows: OrchestraRow[]): Promise<void>;
}

/**
 * A piece of an orchestra: works on the rows that reach it, all together. The built-in blocks also carry their
 * `spec`, from which `blockGraph` builds the same workflow as a graph for the async executor; a block written by
 * hand has none and runs only in lock-step.
 */
export type Block = ((rows: OrchestraRow[], context: BlockContext) => Promise<void>) & { readonly spec?: BlockSpec };

/** What a built-in block is made of. */
export type BlockSpec =
  | { readonly kind: 'call'; readonly agent: string }
  | { readonly kind: 'sequential'; readonly blocks: readonly Block[] }
  | { readonly kind: 'when'; readonly predicate: RowPredicate; readonly then: Block; readonly otherwise?: Block }
  | { readonly kind: 'loopUntil'; readonly condition: RowPredicate; readonly body: Block; readonly maxLoops: Setting<number> }
  | {
      readonly kind: 'route';
      readonly router: string;
      readonly branches: Readonly<Record<string, Block>>;
      readonly select?: (row: OrchestraRow, context: BlockContext, output: AgentOutput) => string | undefined;
      readonly otherwise?: string;
    };

/** `run` with its spec attached. */
export function withSpec(run: (rows: OrchestraRow[], context: BlockContext) => Promise<void>, spec: BlockSpec): Block {
  return Object.assign(run, { spec });
}

export type RowPredicate = (row: OrchestraRow, context: BlockContext) => boolean;

/** A number, or one read from the context at run time (e.g. `(ctx) => ctx.settings.maxLoops`). */
export type Setting<T> = T | ((context: BlockContext) => T);
