import { envSection, TOOL_CALL_FORMATS, z } from '@drmas/core';

/** env-tools' settings, under `env.tools`. */
export const toolsSection = z.strictObject({
  /**
   * The tools agents get, by name: the built-ins (`calculator`, `fs`) and any a plugin adds (`ctx.provide(Tool, name,
   * tool)`: env-search's `search`, env-code's `python`).
   */
  enabled: z.array(z.string().min(1)).min(1).default(['calculator', 'fs']),
  /**
   * Kinds of synthetic task, drawn uniformly, each offered by a tool: the built-ins' `arithmetic` (calculator) and
   * `file` (fs), env-search's `lookup` (search).
   */
  kinds: z.array(z.string().min(1)).min(1).default(['arithmetic', 'file']),
  trainSize: z.number().int().positive().max(1_000_000).default(4096),
  testSize: z.number().int().min(0).max(10_000).default(64),
  /** A task file (JSON/JSONL, see the README); replaces the synthetic tasks. */
  file: z.string().min(1).optional(),
  /** How calls are written: `hermes` (`<tool_call>{...}</tool_call>`, the documented form), or a template's form. */
  format: z.enum(TOOL_CALL_FORMATS as ['hermes', 'llama3', 'mistral']).default('hermes'),
  /** Calls run per turn at most; more are answered with an error. */
  maxCallsPerTurn: z.number().int().positive().max(16).default(4),
  /** Time limit of a call (a tool may set its own: Python allows for Pyodide's start). */
  timeoutMs: z.number().int().positive().max(600_000).default(5000),
  /** Characters of a tool's result the agent reads. */
  maxOutputChars: z.number().int().positive().max(100_000).default(400),
  /** Added to the outcome: this times the share of the episode's turns that were a well-formed call or answer. */
  formatReward: z.number().min(0).max(1).default(0),
  /** Taken from the outcome per call made. */
  callPenalty: z.number().min(0).max(1).default(0),
});

export const toolsEnvKeys = z.strictObject({ tools: toolsSection.prefault({}) });

export const toolsEnvSettings = envSection.extend(toolsEnvKeys.shape);
export type ToolsEnvSettings = z.output<typeof toolsEnvSettings>;
export type ToolsEnvSettingsInput = z.input<typeof toolsEnvSettings>;

declare module '@drmas/core' {
  interface EnvConfig extends z.input<typeof toolsEnvKeys> {}
}
