import { DrmasError, type ApplyContext } from '@drmas/core';
import type { RolloutSettings } from './orchestraConfig.js';

/** The sampling streams a rollout uses: `rollout.sampleStreams`, else `row` on workers and the async executor, `position` in lock-step in-process. */
export function sampleStreamsOf(settings: RolloutSettings): 'position' | 'row' {
  return settings.sampleStreams ?? (settings.workers === 'local' && settings.executor.kind === 'lockstep' ? 'position' : 'row');
}

/** The names of the `rollout` taps of plugins other than the orchestra (those that run rollouts elsewhere). */
export function otherRolloutTaps(kernel: ApplyContext): string[] {
  return kernel
    .tapsOf('rollout')
    .map((t) => t.name)
    .filter((n) => n !== 'orchestra');
}

/**
 * `rollout.workers: bullmq` needs a plugin that sends the episodes to the workers (`rollout-bullmq`), and workers run
 * one prompt group each, which they can only sample as the whole batch would with row-keyed streams.
 */
export function checkRolloutWorkers(settings: RolloutSettings, otherTaps: readonly string[]): void {
  if (settings.workers === 'local') return;
  if (otherTaps.length === 0) {
    throw new DrmasError('CONFIG_INVALID', `rollout.workers is "${settings.workers}", but no plugin listed sends rollouts to workers`, {
      key: 'rollout.workers',
      hint: `add "rollout-${settings.workers}" to plugins (it provides the workers: drmas rollout-worker --config <this file>), or set rollout.workers to local`,
    });
  }
  if (settings.sampleStreams === 'position') {
    throw new DrmasError(
      'CONFIG_INVALID',
      `rollout.sampleStreams "position" cannot be used with rollout.workers "${settings.workers}": a worker runs one prompt group and cannot know its rows' positions in the whole step's generate calls`,
      { key: 'rollout.sampleStreams', hint: 'remove rollout.sampleStreams (workers use "row"), or set rollout.workers to local' },
    );
  }
}
