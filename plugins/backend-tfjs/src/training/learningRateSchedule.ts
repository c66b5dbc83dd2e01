import type { OptimizerSettings } from '@drmas/core';

/**
 * Learning rate of the optimizer step with 0-based index `step`, like transformers' `LambdaLR` schedules: linear
 * warmup from 0 over `warmupSteps` (`get_constant_schedule_with_warmup`), then constant, or a half-cosine to 0 at
 * `totalSteps` (`get_cosine_schedule_with_warmup`).
 */
export function learningRateAt(settings: OptimizerSettings, step: number): number {
  const warmup = settings.warmupSteps ?? 0;
  if (step < warmup) return (settings.lr * step) / Math.max(1, warmup);
  if (settings.schedule === 'cosine') {
    const total = settings.totalSteps;
    if (!total) throw new RangeError("optimizer schedule 'cosine' needs totalSteps");
    const progress = (step - warmup) / Math.max(1, total - warmup);
    return settings.lr * Math.max(0, 0.5 * (1 + Math.cos(Math.PI * progress)));
  }
  return settings.lr;
}
