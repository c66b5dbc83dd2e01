/**
 * Named stages for ordering taps (tapable's `stage` option): lower runs first, taps of one stage run in the order
 * they were added. Use them as `kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.BACKEND }, fn)`.
 */
export const Stage = Object.freeze({
  /** Before anything else: checks that must see the untouched input. */
  FIRST: -1000,
  /** In `setup`: compute runtimes and backends come up before anything that allocates tensors. */
  BACKEND: -300,
  /** In `setup`: models and their worker groups load once a backend exists. */
  MODEL: -200,
  /** In `setup`: environments and datasets, which may need the models' tokenizers. */
  ENVIRONMENT: -100,
  /** Where a tap goes when it names no stage. */
  DEFAULT: 0,
  /** Taps that read what the default taps produced (metrics collectors, filters' statistics). */
  OBSERVE: 100,
  /** Writing out: metrics lines, rollouts, checkpoints, reports. */
  REPORT: 200,
  /** After everything else: cleanup that must see the final state. */
  LAST: 1000,
});

export type StageName = keyof typeof Stage;
