import { envSection, z } from '@drmas/core';
import { TOOL_CALL_FORMATS } from '@drmas/models';
import { TOOL_TASK_KINDS } from '../tasks/syntheticToolTasks.js';

/** The built-in tools, by the names agents call them. */
export const BUILTIN_TOOLS = ['calculator', 'search', 'python', 'fs'] as const;

/** env-tools' settings, under `env.tools`. */
export const toolsSection = z.strictObject({
  /** The tools agents get, by name: the built-ins and any a plugin adds (`ctx.provide(Tool, name, tool)`). */
  enabled: z.array(z.string().min(1)).min(1).default(['calculator', 'search', 'fs']),
  /** Kinds of synthetic task, drawn uniformly. */
  kinds: z.array(z.enum(TOOL_TASK_KINDS)).min(1).default(['arithmetic', 'lookup', 'file']),
  trainSize: z.number().int().positive().max(1_000_000).default(4096),
  testSize: z.number().int().min(0).max(10_000).default(64),
  /** A task file (JSON/JSONL, see the README); replaces the synthetic tasks. */
  file: z.string().min(1).optional(),
  /** Entities of env-search's knowledge base: the lookups' questions and the search tool's documents. */
  entities: z.number().int().min(12).max(100_000).default(120),
  /** Passages a search returns. */
  topk: z.number().int().positive().max(20).default(1),
  /** How calls are written: `hermes` (`<tool_call>{...}</tool_call>`, the documented form), or a template's form. */
  format: z.enum(TOOL_CALL_FORMATS as ['hermes', 'llama3', 'mistral']).default('hermes'),
  /** Calls run per turn at most; more are answered with an error. */
  maxCallsPerTurn: z.number().int().positive().max(16).default(4),
  /** Time limit of a call (a tool may set its own: Python allows for Pyodide's start). */
  timeoutMs: z.number().int().positive().max(600_000).default(5000),
  /** Characters of a tool's result the agent reads. */
  maxOutputChars: z.number().int().positive().max(100_000).default(400),
  /** Python: CPU budget of one call, and memory. */
  pythonTimeoutMs: z.number().int().positive().max(60_000).default(3000),
  pythonMemoryMb: z.number().int().min(4).max(2048).default(64),
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
