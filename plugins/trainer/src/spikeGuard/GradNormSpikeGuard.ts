import { DrmasError, type Checkpointable } from '@drmas/core';
import type { SpikeGuardSettings } from '../config/trainingConfig.js';

/** One optimizer step's gradient norm judged against the window of the norms before it. */
export interface SpikeVerdict {
  readonly spike: boolean;
  /** (norm - mean) / std over the window; undefined while the window holds fewer than `warmup` norms. */
  readonly z: number | undefined;
  readonly mean: number;
  readonly std: number;
  /** Norms the statistics were taken over. */
  readonly count: number;
}

/**
 * A worker group's gradient-norm spike detector: the z-score of each optimizer step's pre-clip norm against the
 * mean and unbiased std of the last `window` norms that were not spikes. A step is a spike when z > `threshold`
 * (only upward jumps: a small norm harms nothing), once the window holds `warmup` norms. A window of equal norms
 * (std 0) makes any larger norm a spike. Non-finite norms are the engine's to skip and never enter the window.
 */
export class GradNormSpikeGuard {
  private norms: number[] = [];

  constructor(readonly settings: SpikeGuardSettings) {}

  check(norm: number): SpikeVerdict {
    const count = this.norms.length;
    const mean = count ? this.norms.reduce((s, x) => s + x, 0) / count : 0;
    const std = count > 1 ? Math.sqrt(this.norms.reduce((s, x) => s + (x - mean) ** 2, 0) / (count - 1)) : 0;
    if (count < this.settings.warmup || !Number.isFinite(norm)) return { spike: false, z: undefined, mean, std, count };
    const z = std > 0 ? (norm - mean) / std : norm > mean ? Infinity : 0;
    return { spike: z > this.settings.threshold, z, mean, std, count };
  }

  /** Adds an accepted norm to the window (the oldest leaves once it is full). */
  record(norm: number): void {
    if (!Number.isFinite(norm)) return;
    this.norms.push(norm);
    if (this.norms.length > this.settings.window) this.norms.splice(0, this.norms.length - this.settings.window);
  }

  getState(): number[] {
    return [...this.norms];
  }

  setState(norms: unknown): void {
    if (!Array.isArray(norms) || norms.some((x) => typeof x !== 'number' || !Number.isFinite(x))) {
      throw new DrmasError('CHECKPOINT_INVALID', 'the spike guard state of a worker group is not a list of finite gradient norms', {
        key: 'trainer/spikeGuards',
        hint: 'resume from a checkpoint written by this version of drmas, or start the run afresh',
      });
    }
    this.norms = (norms as number[]).slice(-this.settings.window);
  }
}

/**
 * One optimizer step under a guard: `acceptGradNorm` for the engine (with `skip`, it judges the norm before the step
 * is applied), then `settle` with the step's norm, which judges it if the engine did not and adds a norm that was no
 * spike to the window. Without a guard both do nothing.
 */
export function watchStep(guard: GradNormSpikeGuard | undefined): {
  acceptGradNorm: ((norm: number) => boolean) | undefined;
  settle: (norm: number) => SpikeVerdict | undefined;
} {
  let verdict: SpikeVerdict | undefined;
  return {
    acceptGradNorm: guard?.settings.action === 'skip' ? (norm) => !(verdict = guard.check(norm)).spike : undefined,
    settle: (norm) => {
      if (!guard) return undefined;
      if (verdict === undefined && Number.isFinite(norm)) verdict = guard.check(norm);
      if (verdict && !verdict.spike) guard.record(norm);
      return verdict;
    },
  };
}

/** The run log's line on a spike: the norm, its z-score against the window, and what was done. */
export function describeSpike(where: string, step: number, update: number, norm: number, verdict: SpikeVerdict, action: string): string {
  const done =
    action === 'skip'
      ? 'skipped the optimizer step'
      : action === 'rollback'
        ? "rolled back to the weights and optimizer state from before this step's update, and dropped the rest of it"
        : 'kept the step (action log)';
  return (
    `gradient-norm spike in ${where} at step ${step}, optimizer step ${update}: norm ${norm.toPrecision(4)}, ` +
    `z ${verdict.z!.toPrecision(3)} over the previous ${verdict.count} norms (mean ${verdict.mean.toPrecision(4)}, std ` +
    `${verdict.std.toPrecision(3)}); ${done}`
  );
}

/**
 * Guards by id, one state for all (the windows by id): the worker groups' (those whose model sets `spikeGuard`),
 * checkpointed under `key`, and the critics' (`critic.spikeGuard`), which `Critics` saves beside their weights.
 */
export class SpikeGuards implements Checkpointable {
  readonly key = 'trainer/spikeGuards';
  private readonly guards = new Map<string, GradNormSpikeGuard>();

  constructor(settings: ReadonlyMap<string, SpikeGuardSettings>) {
    for (const [group, guard] of settings) this.guards.set(group, new GradNormSpikeGuard(guard));
  }

  of(group: string): GradNormSpikeGuard | undefined {
    return this.guards.get(group);
  }

  getState(): Record<string, number[]> {
    return Object.fromEntries([...this.guards].map(([group, guard]) => [group, guard.getState()]));
  }

  setState(state: unknown): void {
    const saved = (state ?? {}) as Record<string, unknown>;
    for (const [group, guard] of this.guards) if (group in saved) guard.setState(saved[group]);
  }
}
