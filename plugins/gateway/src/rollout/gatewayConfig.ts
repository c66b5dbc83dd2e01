import { z } from '@drmas/core';
import { DEFAULT_SESSION_IDLE_MS } from '../capture/Sessions.js';

/** The `gateway` config section: the agentic rollout's agent and its in-process gateway. */
export const gatewaySection = z.object({
  /** The agent module (default export `(task, connection, context) => Promise<answer>`), from the config file's folder. */
  agent: z.string().min(1).optional(),
  /** Episodes run at once; their calls share each engine's batches. */
  concurrency: z.number().int().min(1).max(1024).default(16),
  /** How long a request waits for others to share its engine call (ms). */
  batchWindowMs: z.number().min(0).max(10_000).default(5),
  /** Requests per engine call at most. */
  maxBatch: z.number().int().min(1).max(1024).default(32),
  /** A capture session untouched this long (seconds) is freed: an episode whose function hangs between calls loses it. */
  sessionIdleS: z
    .number()
    .positive()
    .max(7 * 24 * 3600)
    .default(DEFAULT_SESSION_IDLE_MS / 1000),
});

export type GatewaySettings = z.infer<typeof gatewaySection>;

declare module '@drmas/core' {
  interface ConfigSections {
    /** The agentic rollout: the user's agent function, run per episode through an in-process gateway. */
    gateway?: z.input<typeof gatewaySection>;
  }
}
