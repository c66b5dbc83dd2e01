import type { z } from 'zod';
import { createToken } from '../di/Token.js';
import type { SplitMix32 } from '../random/SplitMix32.js';

/** What a tool's handler gets besides its input. */
export interface ToolContext {
  /** Aborted at the tool's time limit (or when the episode is dropped): a handler that waits should stop. */
  readonly signal: AbortSignal;
  /** The time left, in milliseconds, for handlers that hand a deadline on (the Python sandbox). */
  readonly timeoutMs: number;
  /**
   * State the tool keeps for the episode (a filesystem, a REPL's history): made by `create` on the first call of
   * the episode, the same object on its later calls, never shared with another episode.
   */
  readonly episodeState: <S>(key: string, create: () => S) => S;
  /** The files the task starts with (path to text), for tools that hold files. */
  readonly taskFiles: Readonly<Record<string, string>>;
}

/** A task that needs a tool: a question, its answer, the files the episode starts with, and the call that solves it. */
export interface ToolTaskContent {
  /** For per-source metrics (`tools-lookup`). */
  dataSource: string;
  question: string;
  /** The expected answer (a tool-use environment compares numbers exactly as numbers, other text after normalisation). */
  answer: string;
  /** Files (path to text) in the episode's filesystem at its start. */
  files?: Record<string, string>;
  /** The call a solver makes first: what a warm-up's teacher writes. */
  solution?: { name: string; arguments: unknown };
}

/**
 * Synthetic tasks a tool offers for training its use, named by `kind` (env-tools' `env.tools.kinds`: the calculator's
 * `arithmetic`, the search tool's `lookup`). A task is a pure function of the draws it takes from `random`.
 */
export interface ToolTaskKind {
  readonly kind: string;
  /** One task; `key` names its content (a held-out split hashes it), `seed` is the environment's (`env.seed`). */
  draw(random: SplitMix32, seed: number): { key: string; task: ToolTaskContent };
}

/**
 * A tool: a name the agent calls it by, a description and a zod input schema (both shown to the agent, the schema as
 * JSON schema), and a handler that returns the text the agent reads. A handler that throws (or whose input fails
 * the schema, or that passes its time limit) gives the agent a tool error instead; the episode goes on.
 */
export interface Tool<I = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<I>;
  /** Its own time limit; default: the environment's (`env.tools.timeoutMs`). */
  readonly timeoutMs?: number;
  /** The synthetic tasks that need this tool, if it offers some. */
  readonly tasks?: ToolTaskKind;
  run(input: I, context: ToolContext): Promise<string> | string;
}

/** Gives a tool definition its type (the input inferred from the schema); returns it unchanged. */
export function defineTool<S extends z.ZodType>(tool: {
  name: string;
  description: string;
  input: S;
  timeoutMs?: number;
  tasks?: ToolTaskKind;
  run(input: z.output<S>, context: ToolContext): Promise<string> | string;
}): Tool<z.output<S>> {
  return tool as Tool<z.output<S>>;
}

/**
 * Tools are contributions: a plugin adds one with `ctx.provide(Tool, 'weather', weatherTool)` (env-tools its
 * calculator and filesystem, env-search its search, env-code its Python REPL), and a tool-use environment chooses which
 * its agents get by name (env-tools' `env.tools.enabled`).
 */
export const Tool = createToken<Tool>('Tool', { label: 'tool', named: true });
