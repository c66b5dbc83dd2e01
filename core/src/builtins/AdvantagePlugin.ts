import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import { DrmasError } from '../errors/DrmasError.js';
import type { Kernel } from '../kernel/Kernel.js';
import type { Plugin } from '../plugins/Plugin.js';
import { BATCH_INPUTS, BatchInputSource } from '../roles/BatchInputSource.js';
import { AdvantageEstimator } from '../roles/AdvantageEstimator.js';

/** The tap name of the built-in advantage plugin. */
export const ADVANTAGE_PLUGIN_NAME = 'drmas:advantage';
const PLUGIN_NAME = ADVANTAGE_PLUGIN_NAME;
const KEY = 'algorithm.advantage';

/**
 * Taps the `advantage` hook with the estimator named by `algorithm.advantage`: the sources of the inputs it needs
 * fill their columns, then it fills the batch's advantages. `validate` checks that the estimator exists and that a
 * plugin supplies every input it needs. Does nothing when no estimator is configured.
 */
export class AdvantagePlugin implements Plugin {
  readonly name = PLUGIN_NAME;

  apply(kernel: Kernel): void {
    const estimatorOf = (config: ResolvedConfig) =>
      config.algorithm.advantage ? kernel.getNamed(AdvantageEstimator, config.algorithm.advantage, KEY) : undefined;
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      const estimator = estimatorOf(config);
      if (!estimator) return;
      const supplied = kernel.namesOf(BatchInputSource);
      for (const input of estimator.inputs ?? []) {
        if (supplied.includes(input)) continue;
        throw new DrmasError(
          'CONFIG_INVALID',
          `advantage estimator "${estimator.name}" needs ${input}: ${BATCH_INPUTS[input]}; no plugin in this config supplies it`,
          {
            key: KEY,
            hint: `choose an estimator that works from rewards alone (drmas, grpo, rloo, ...), or add a plugin that provides the batch input "${input}"`,
          },
        );
      }
    });
    kernel.hooks.advantage.tapPromise(PLUGIN_NAME, async (batch, step) => {
      const estimator = estimatorOf(kernel.config);
      if (!estimator) return;
      for (const input of estimator.inputs ?? []) await kernel.getNamed(BatchInputSource, input, KEY).fill(batch, step);
      await estimator.estimate(batch, step);
    });
  }
}
