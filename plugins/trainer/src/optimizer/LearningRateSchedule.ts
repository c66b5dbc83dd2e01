import type { ScheduleKind } from '../config/trainingConfig.js';

/**
 * The learning-rate factor at each step of a run, as transformers' `LambdaLR` schedules give it: linear warm-up from
 * 0 over `warmupSteps`, then constant, linear decay to 0 at `totalSteps`, or a half-cosine to 0 at `totalSteps`.
 * Steps are training steps (0-based), so every optimizer step of one training step has the same rate and a resumed
 * run continues the schedule from its step alone.
 */
export class LearningRateSchedule {
  constructor(
    readonly kind: ScheduleKind,
    readonly warmupSteps: number,
    readonly totalSteps: number,
  ) {}

  scaleAt(step: number): number {
    const { kind, warmupSteps: warmup, totalSteps: total } = this;
    if (step < warmup) return step / Math.max(1, warmup);
    if (kind === 'constant') return 1;
    if (kind === 'linear') return Math.max(0, (total - step) / Math.max(1, total - warmup));
    const progress = (step - warmup) / Math.max(1, total - warmup);
    return Math.max(0, 0.5 * (1 + Math.cos(Math.PI * progress)));
  }
}
