import { createToken, type z } from '@drmas/core';

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

/**
 * A tool: a name the agent calls it by, a description and a zod input schema (both shown to the agent, the schema as
 * JSON schema), and a handler that returns the text the agent reads. A handler that throws (or whose input fails
 * the schema, or that passes its time limit) gives the agent a tool error instead; the episode goes on.
 */
export interface ToolDefinition<I = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<I>;
  /** Its own time limit; default `env.tools.timeoutMs`. */
  readonly timeoutMs?: number;
  run(input: I, context: ToolContext): Promise<string> | string;
}

/** Gives a tool definition its type (the input inferred from the schema); returns it unchanged. */
export function defineTool<S extends z.ZodType>(tool: {
  name: string;
  description: string;
  input: S;
  timeoutMs?: number;
  run(input: z.output<S>, context: ToolContext): Promise<string> | string;
}): ToolDefinition<z.output<S>> {
  return tool as ToolDefinition<z.output<S>>;
}

/**
 * Tools are contributions: a plugin adds one with `ctx.provide(Tool, 'weather', weatherTool)`, and `env.tools.enabled`
 * chooses which the agents get (by name, with suggestions for a misspelt one).
 */
export const Tool = createToken<ToolDefinition>('Tool', { label: 'tool', configKey: 'env.tools.enabled', named: true });
