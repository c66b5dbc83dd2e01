import { createToken, type RolloutBatch } from '@drmas/core';

export interface AllocationContext {
  /** The invalid-turn penalty of an agent (`agents.<role>.invalidPenalty`, else the orchestra's default). */
  invalidPenalty(agentId: string): number;
  /** Agents whose turns a metric-delta allocator gives the metric's value rather than its change (`reward.absoluteAgents`). */
  absoluteAgents?: readonly string[];
}

/** Turns episode outcomes (and turn scores) into per-turn rewards; chosen by name with `reward.allocator`. */
export interface RewardAllocator {
  readonly name: string;
  allocate(batch: RolloutBatch, context: AllocationContext): RolloutBatch;
}

export const RewardAllocator = createToken<RewardAllocator>('RewardAllocator', {
  label: 'reward allocator',
  configKey: 'reward.allocator',
  named: true,
});
