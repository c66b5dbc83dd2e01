import { secretUrl, z } from '@drmas/core';

/** The `mlflow` config section. */
export const mlflowSection = z.object({
  /**
   * The tracking server (`http://host:5000`); default: the MLFLOW_TRACKING_URI environment variable. User info in it
   * (`https://user:password@host`) goes as basic auth and is hidden wherever the config is shown.
   */
  trackingUri: secretUrl({ protocol: /^https?$/ }).optional(),
  /** The experiment the run goes into; created when missing. */
  experiment: z.string().min(1).default('drmas'),
  /** The MLflow run's name; default: the run directory's name. */
  runName: z.string().min(1).optional(),
  /** Tags set on the MLflow run. */
  tags: z.record(z.string(), z.string()).default({}),
  /** Log the resolved config as params (`trainer.steps`, `models.policy.model`, ...). */
  logParams: z.boolean().default(true),
  /** Per request. */
  timeoutMs: z.number().int().min(100).max(600_000).default(10_000),
  /** Further tries after a failed request, waiting 0.5 s, 1 s, 2 s, ... */
  retries: z.number().int().min(0).max(10).default(3),
});

export type MlflowSettings = z.infer<typeof mlflowSection>;

declare module '@drmas/core' {
  interface ConfigSections {
    /** MLflow tracking of the run. */
    mlflow?: z.input<typeof mlflowSection>;
  }
}
