import type { Kernel } from '../kernel/Kernel.js';
import type { Plugin } from '../plugins/Plugin.js';
import { AdvantageEstimator } from '../roles/tokens.js';

const PLUGIN_NAME = 'drmas:advantage';

/**
 * Taps the `advantage` hook with the estimator named by `algorithm.advantage`, resolved from the estimators that
 * plugins provide. Does nothing when no estimator is configured.
 */
export class AdvantagePlugin implements Plugin {
  readonly name = PLUGIN_NAME;

  apply(kernel: Kernel): void {
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      if (config.algorithm.advantage) kernel.getNamed(AdvantageEstimator, config.algorithm.advantage, 'algorithm.advantage');
    });
    kernel.hooks.advantage.tapPromise(PLUGIN_NAME, async (batch, step) => {
      const name = kernel.config.algorithm.advantage;
      if (!name) return batch;
      return kernel.getNamed(AdvantageEstimator, name, 'algorithm.advantage').estimate(batch, step);
    });
  }
}

