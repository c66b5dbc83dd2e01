import { secretUrl, z } from '@drmas/core';

/** How the run is tracked: `online` talks to the server; `disabled` does nothing; `offline` is refused at validate (see README). */
export const WANDB_MODES = ['online', 'offline', 'disabled'] as const;
export type WandbMode = (typeof WANDB_MODES)[number];

/** The `wandb` config section. Unset keys fall back to W&B's own environment variables, then to the defaults here. */
export const wandbSection = z.object({
  /** The W&B project; default: WANDB_PROJECT, else `drmas`. */
  project: z.string().min(1).max(128).optional(),
  /** The team or user the run goes under; default: WANDB_ENTITY, else the API key's default entity. */
  entity: z.string().min(1).optional(),
  /** The run's display name; default: WANDB_NAME, else the run directory's name. */
  name: z.string().min(1).optional(),
  /** Groups runs in the UI; default: WANDB_RUN_GROUP. */
  group: z.string().min(1).max(128).optional(),
  /** Tags set on the run; default: WANDB_TAGS (comma-separated). */
  tags: z.array(z.string().min(1).max(64)).optional(),
  /** Default: WANDB_MODE (`run` and `dryrun` read as `online` and `offline`), else `online`. */
  mode: z.enum(WANDB_MODES).optional(),
  /** The W&B API server; default: WANDB_BASE_URL, else https://api.wandb.ai. Hidden user info, as for any secret URL. */
  baseUrl: secretUrl({ protocol: /^https?$/ }).optional(),
  /** Log the resolved config as the run's config. */
  logConfig: z.boolean().default(true),
  /** Per request. */
  timeoutMs: z.number().int().min(100).max(600_000).default(10_000),
  /** Further tries after a failed request (network error, 429, 5xx), waiting 0.5 s, 1 s, 2 s, ... */
  retries: z.number().int().min(0).max(10).default(3),
  /**
   * How long the run's last request (the remaining lines and the exit code) is tried at `shutdown` before the run is
   * left to W&B's crash sweep: 7 days by default, as W&B's own client (0: one try).
   */
  finishTimeoutMs: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600_000)
    .default(7 * 24 * 3600_000),
});

export type WandbSettings = z.infer<typeof wandbSection>;

declare module '@drmas/core' {
  interface ConfigSections {
    /** Weights & Biases tracking of the run. */
    wandb?: z.input<typeof wandbSection>;
  }
}
