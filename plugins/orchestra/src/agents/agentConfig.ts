import { z } from '@drmas/core';
import { ORCHESTRA_LIMITS } from '../plugin/orchestraLimits.js';

export const samplingSchema = z.strictObject({
  /** 0 is greedy. */
  temperature: z.number().min(0).optional(),
  topP: z.number().gt(0).max(1).optional(),
  /** 0 disables top-k. */
  topK: z.number().int().min(0).optional(),
  /** Tokens a turn may sample; with the prompt, within the model's positions (checked at validate and per prompt). */
  maxNewTokens: z.number().int().positive().max(ORCHESTRA_LIMITS.maxNewTokens).optional(),
});

/**
 * The keys this plugin adds to each `agents.<role>` entry (core owns `model` and `train`). Every key is optional:
 * the orchestra's defaults for the role fill what is left out.
 */
export const agentEntrySchema = z.strictObject({
  sampling: samplingSchema.optional(),
  /** Prompt template: `{observation}`, `{team_context}`, `{round}`, `{max_rounds}` and the task's variables (`{question}`). */
  prompt: z.string().min(1).optional(),
  /** System message, used when the model's tokenizer has a chat template. */
  system: z.string().optional(),
  /** Subtracted from the reward of each invalid turn (`drmas` allocator). */
  invalidPenalty: z.number().min(0).optional(),
  /** Stop generation once one of these strings appears. */
  stop: z.array(z.string().min(1)).optional(),
});

export type AgentEntry = z.infer<typeof agentEntrySchema>;

/** The options a `PromptedAgent` is constructed with: an orchestra's defaults for the role, then the user's entry. */
export const promptedAgentOptionsSchema = z.object({
  prompt: z.string().min(1),
  system: z.string().optional(),
  /** The action tag (`verify`, `search`, `answer`, ...) or `boxed`. */
  tag: z.string().min(1),
  /** Allowed contents of the tag, e.g. `['approve', 'reject']`. */
  values: z.array(z.string().min(1)).min(1).optional(),
  requireThink: z.boolean().default(false),
  stop: z.array(z.string().min(1)).default([]),
  sampling: z
    .object({
      temperature: z.number().min(0).default(1),
      topP: z.number().gt(0).max(1).default(1),
      topK: z.number().int().min(0).default(0),
      maxNewTokens: z.number().int().positive().max(ORCHESTRA_LIMITS.maxNewTokens).default(512),
    })
    .prefault({}),
  invalidPenalty: z.number().min(0).default(0),
});

export type PromptedAgentOptions = z.input<typeof promptedAgentOptionsSchema>;

/** Merges a role's defaults with the user's `agents.<role>` entry (sampling key by key). */
export function mergeAgentOptions(
  defaults: PromptedAgentOptions | undefined,
  entry: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const user = (entry ?? {}) as AgentEntry;
  const merged: Record<string, unknown> = { ...defaults };
  for (const key of ['prompt', 'system', 'invalidPenalty', 'stop'] as const) if (user[key] !== undefined) merged[key] = user[key];
  merged.sampling = { ...defaults?.sampling, ...definedOnly(user.sampling ?? {}) };
  return merged;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

declare module '@drmas/core' {
  interface AgentConfig extends z.input<typeof agentEntrySchema> {}
}
