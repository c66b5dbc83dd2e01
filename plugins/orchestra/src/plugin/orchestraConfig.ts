import { z } from '@drmas/core';

/** The `orchestra` section: which orchestra runs, and settings its blocks read from `context.settings`. */
export const orchestraSection = z.object({
  /** An Orchestra registered by name (`math`, `search`). */
  name: z.string().min(1).default('math'),
  /** Solves at most per math episode (Dr. MAS max_loop_num); read by `loopUntil` blocks. */
  maxLoops: z.number().int().min(1).default(2),
});

/** The `rollout` section: episodes per training step. */
export const rolloutSection = z.object({
  /** Tasks drawn from the environment's training source per step. */
  promptsPerStep: z.number().int().positive().default(4),
  /** Episodes per task (the group size n); they share a groupId. */
  samplesPerPrompt: z.number().int().positive().default(4),
});

/** The `reward` section. */
export const rewardSection = z.object({
  /** A RewardAllocator by name: `drmas` (outcome on every turn) or `per_turn` (turn.info.turnScore). */
  allocator: z.string().min(1).default('drmas'),
});

export type OrchestraSettings = z.output<typeof orchestraSection>;
export type RolloutSettings = z.output<typeof rolloutSection>;
export type RewardSettings = z.output<typeof rewardSection>;

declare module '@drmas/core' {
  interface ConfigSections {
    /** Which orchestra runs, and settings its blocks read. */
    orchestra?: z.input<typeof orchestraSection>;
    /** Episodes per training step. */
    rollout?: z.input<typeof rolloutSection>;
    /** How episode outcomes become turn rewards. */
    reward?: z.input<typeof rewardSection>;
  }
}
