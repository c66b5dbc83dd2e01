import { LIMITS, z } from '@drmas/core';
import type { loraSection } from './loraConfig.js';

/** Caps of the trainer's count settings (rows per micro-batch, passes, rollouts logged). */
export const TRAINER_LIMITS = Object.freeze({ rows: 1_048_576, epochs: 1_000, logRollouts: 1_048_576, spikeWindow: 100_000 });

const betas = z.tuple([z.number().min(0).lt(1), z.number().min(0).lt(1)]);

/** `models.<id>.optimizer`: AdamW and its learning-rate schedule, read once per worker group at setup. */
export const optimizerSection = z.strictObject({
  lr: z.number().positive().default(1e-4),
  betas: betas.default([0.9, 0.999]),
  eps: z.number().positive().default(1e-8),
  weightDecay: z.number().min(0).default(0.01),
  /** Clip the gradient to this global norm (0: no clipping). */
  maxGradNorm: z.number().min(0).default(1),
  /**
   * AdamW's moments in `float32`, or in `8bit` as bitsandbytes' AdamW8bit holds them (blocks of 256 values, tensors of
   * 4,096 values or more): 2 bytes a parameter instead of 8, on the onnx engine.
   */
  moments: z.enum(['float32', '8bit']).default('float32'),
  /**
   * How the learning rate moves over the run's training steps (`trainer.steps`; for `drmas sft`, its optimizer
   * steps): `constant`, `linear` decay to 0, or a half-cosine to 0 (transformers' schedules), after `warmupSteps`.
   */
  schedule: z.enum(['constant', 'linear', 'cosine']).default('constant'),
  /** Training steps of linear warm-up from 0 (veRL's lr_warmup_steps). */
  warmupSteps: z.number().int().min(0).max(LIMITS.steps).default(0),
  /** Settings for the parameters matching `params` (`*` wildcards); the first matching group wins. */
  paramGroups: z
    .array(
      z.strictObject({
        params: z.array(z.string().min(1)).min(1),
        lr: z.number().positive().optional(),
        weightDecay: z.number().min(0).optional(),
        betas: betas.optional(),
        eps: z.number().positive().optional(),
      }),
    )
    .default([]),
});

/** `agents.<role>.train`: training overrides; agents that share a model must agree on them. */
export const trainOverridesSection = z.strictObject({
  lr: z.number().positive().optional(),
  weightDecay: z.number().min(0).optional(),
  maxGradNorm: z.number().min(0).optional(),
  /** Rows per micro-batch (gradient accumulation). */
  microBatchSize: z.number().int().positive().max(TRAINER_LIMITS.rows).optional(),
  /**
   * Padded tokens per micro-batch at most (rows times the longest prompt plus the longest response), besides
   * `microBatchSize`: veRL's `use_dynamic_bsz` / `ppo_max_token_len_per_gpu`. Unset: micro-batches by rows alone.
   */
  microBatchTokens: z.number().int().positive().optional(),
  /** Optimizer steps per training step: a worker group's rows are split into this many mini-batches. */
  miniBatches: z.number().int().positive().max(TRAINER_LIMITS.rows).optional(),
  /** Passes over a worker group's rows per training step (PPO epochs). */
  epochs: z.number().int().positive().max(TRAINER_LIMITS.epochs).optional(),
});

/**
 * `models.<id>.spikeGuard`: each optimizer step's pre-clip gradient norm against the previous ones. A spike (z-score
 * above `threshold` over the last `window` non-spike norms, once `warmup` of them are in) is logged and counted;
 * `skip` also drops that optimizer step, `rollback` restores the weights and optimizer state from before the group's
 * update in this training step and drops the rest of it.
 */
export const spikeGuardSection = z
  .strictObject({
    action: z.enum(['log', 'skip', 'rollback']).default('skip'),
    /** Non-spike norms the statistics are taken over (the latest ones). */
    window: z.number().int().min(2).max(TRAINER_LIMITS.spikeWindow).default(20),
    /** A z-score above this is a spike. */
    threshold: z.number().positive().default(4),
    /** Norms the window must hold before any step is judged (at least 2: the std needs them). */
    warmup: z.number().int().min(2).max(TRAINER_LIMITS.spikeWindow).default(5),
  })
  .refine((guard) => guard.warmup <= guard.window, { message: 'warmup must not exceed window', path: ['warmup'] });

/**
 * `trainer.roleSwap`: CORY's role exchange. The two roles, each on a model of its own, play on each other's models
 * every other `swapEvery` steps (steps 1..N as configured, N+1..2N swapped, ...): each model samples and is trained in
 * the other role, its optimizer state with it.
 */
export const roleSwapSection = z.strictObject({
  roles: z.tuple([z.string().min(1), z.string().min(1)]),
  swapEvery: z.number().int().positive().max(LIMITS.steps),
});

/** The keys the trainer adds to the `trainer` section (core owns steps, seed, outputDir, runName, saveEvery, keepLast). */
export const trainerSection = z.strictObject({
  /** Trajectories per step written to rollouts.jsonl (0: none). */
  logRollouts: z.number().int().min(0).max(TRAINER_LIMITS.logRollouts).default(16),
  /**
   * The PPO ratio's old log-probs: `recompute` scores each batch with the trainer first (veRL's default);
   * `rollout` takes the rollout engine's sampling log-probs (veRL's bypass mode), one forward pass fewer; `current`
   * takes the update's own forward pass, detached (TRL's, and veRL's actor's on-policy path: the ratio is exactly 1),
   * one forward pass fewer, for worker groups that take one optimizer step per batch; `auto` (the default) is
   * `current` for such a group that samples on its trainer's engine, and `recompute` for the others and under HAPPO.
   */
  oldLogProbs: z.enum(['auto', 'recompute', 'rollout', 'current']).default('auto'),
  /** Two roles exchange their models every `swapEvery` steps (CORY). */
  roleSwap: roleSwapSection.optional(),
  /**
   * Measure Dr. MAS's mechanism per agent (`agent/<role>/...`): each agent's share of every optimizer step's
   * pre-clip gradient norm, its reward statistics in the prompt groups, and the gradient inflation of a global
   * baseline, predicted (Prop. 4.3) and measured (two extra forward and backward passes per worker group, at steps
   * 1, 1 + inflationEvery, ...; `true` is every step).
   */
  agentDiagnostics: z
    .union([z.boolean(), z.strictObject({ inflationEvery: z.number().int().positive().max(LIMITS.steps).default(1) })])
    .default(false),
});

/** `trainer.agentDiagnostics` as settings: undefined when off. */
export function agentDiagnosticsSettings(trainer: Pick<TrainerSection, 'agentDiagnostics'>): { inflationEvery: number } | undefined {
  const value = trainer.agentDiagnostics;
  if (value === false || value === undefined) return undefined;
  return value === true ? { inflationEvery: 1 } : value;
}

/** Whether `trainer.agentDiagnostics` measures the inflation at this (1-based) training step. */
export function measuresInflationAt(settings: { inflationEvery: number }, step: number): boolean {
  return (step - 1) % settings.inflationEvery === 0;
}

export type OptimizerSection = z.output<typeof optimizerSection>;
export type TrainOverrides = z.output<typeof trainOverridesSection>;
export type TrainerSection = z.output<typeof trainerSection>;
export type SpikeGuardSettings = z.output<typeof spikeGuardSection>;
export type RoleSwapSettings = z.output<typeof roleSwapSection>;
export type ScheduleKind = OptimizerSection['schedule'];

declare module '@drmas/core' {
  interface TrainerConfig extends z.input<typeof trainerSection> {}
  interface ModelConfig {
    /** AdamW and its learning-rate schedule. */
    optimizer?: z.input<typeof optimizerSection>;
    /** Watch each optimizer step's gradient norm for spikes: log, skip the step, or roll back. */
    spikeGuard?: z.input<typeof spikeGuardSection>;
  }
  interface AgentConfig {
    /** Training overrides; agents sharing a model must agree on them. */
    train?: z.input<typeof trainOverridesSection>;
    /** A LoRA adapter of the agent's own (PEFT's r, lora_alpha, lora_dropout, target_modules) on a frozen shared base. */
    lora?: z.input<typeof loraSection>;
    /** false: the agent samples but is never trained (its rows leave the loss). Default true. */
    trainable?: boolean;
  }
}
