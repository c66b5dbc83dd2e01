import { secretEnvName, secretUrl, z } from '@drmas/core';
import type { RemoteDialect } from './dialects.js';

const KINDS = ['vllm', 'sglang'] as const satisfies ReadonlyArray<RemoteDialect['kind']>;

/**
 * `models.<id>.rollout` as a server that samples the model: this plugin's form of the kernel's key (the kernel takes an
 * engine's name there; `kind` names the engine that speaks the server's API).
 */
export const remoteRolloutSchema = z.strictObject({
  /** The server family: `vllm` or `sglang`. */
  kind: z.enum(KINDS),
  /** The server's base URL (`http://gpu-host:8000`, without `/v1`); user info in it is sent as basic auth, and hidden. */
  url: secretUrl({ protocol: /^https?$/ }),
  /** The name the server serves the model under (vLLM's `--served-model-name`); default: asked of `/v1/models`. */
  servedModel: z.string().min(1).optional(),
  /**
   * The environment variable holding the server's API key (its `--api-key`), sent as `Authorization: Bearer`: the
   * variable's name, never the key itself.
   */
  apiKeyEnv: secretEnvName().optional(),
  /** Per HTTP request; a request still unanswered then fails (not retried). */
  timeoutMs: z.number().int().positive().max(86_400_000).default(120_000),
  /** Further tries of a request that failed to connect or got a 5xx or 429, after waits doubling from `retryDelayMs`. */
  retries: z.number().int().min(0).max(100).default(3),
  retryDelayMs: z.number().int().min(0).max(600_000).default(500),
  /** Requests in flight at once (one per prompt row); the server batches them. */
  concurrency: z.number().int().positive().max(65_536).default(64),
  /**
   * Where updated weights are saved (Hugging Face layout) for the server to load: a folder both machines see at the
   * same path. Default: `rollout-weights/<id>` in the run directory.
   */
  weightsDir: z.string().min(1).optional(),
});
export type RemoteRolloutSettings = z.output<typeof remoteRolloutSchema>;
