import type { ApplyContext, Plugin, PluginConfig, RegisterContext } from '@drmas/core';
import { rewardSection } from '../plugin/orchestraConfig.js';
import { RewardAllocator } from './RewardAllocator.js';
import { drmasAllocator, perTurnAllocator } from './RewardAllocators.js';
import { fromTraceAllocator, TRACE_ALLOCATORS } from './traceAllocators.js';

/** The allocators the plugin provides: over trajectories, and over the async executor's traces. */
export const REWARD_ALLOCATORS: readonly RewardAllocator[] = [
  drmasAllocator,
  perTurnAllocator,
  ...TRACE_ALLOCATORS.map(fromTraceAllocator),
];

const PLUGIN_NAME = 'orchestra:reward';
const KEY = 'reward.allocator';

/**
 * Provides the reward allocators by name and taps the `reward` hook with the one `reward.allocator` names.
 * `penaltyOf` gives each agent's invalid-turn penalty (the orchestra plugin passes its agents' settings).
 */
export class RewardAllocationPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { reward: rewardSection };

  constructor(private readonly penaltyOf: (agentId: string) => number = () => 0) {}

  register(ctx: RegisterContext): void {
    for (const allocator of REWARD_ALLOCATORS) ctx.provide(RewardAllocator, allocator.name, allocator);
  }

  apply(kernel: ApplyContext<PluginConfig<{ reward: typeof rewardSection }>>): void {
    const allocator = () => kernel.getNamed(RewardAllocator, kernel.config.reward.allocator, KEY);
    kernel.hooks.validate.tap(PLUGIN_NAME, () => {
      allocator();
    });
    kernel.hooks.reward.tapPromise(PLUGIN_NAME, async (batch) =>
      allocator().allocate(batch, {
        invalidPenalty: this.penaltyOf,
        absoluteAgents: kernel.config.reward.absoluteAgents,
      }),
    );
  }
}
