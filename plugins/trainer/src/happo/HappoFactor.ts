import type { BatchView, TrainingBatch } from '@drmas/core';
import type { HappoSettings } from '../config/criticConfig.js';

/** A row's joint action: its trajectory at its round (the turns all roles took there). */
function jointActionCodes(batch: TrainingBatch): { codes: Int32Array; count: number } {
  const trajectory = batch.ids.trajectory.codes;
  const round = batch.ids.round.codes;
  const rounds = batch.ids.round.names.length;
  const seen = new Map<number, number>();
  const codes = new Int32Array(batch.rows);
  for (let r = 0; r < batch.rows; r++) {
    const key = trajectory[r]! * rounds + round[r]!;
    let code = seen.get(key);
    if (code === undefined) seen.set(key, (code = seen.size));
    codes[r] = code;
  }
  return { codes, count: seen.size };
}

/**
 * HAPPO's M factor over one step's batch. It starts at 1 for every joint action; after a role's update, `multiply`
 * folds in that role's ratios pi_new / pi_old at its turns (`sequence`: one ratio per turn, the product or the
 * geometric mean of its token ratios; `token`: one per response position); `scale` multiplies the next role's
 * advantages by the product so far, clipped to `factorClip`. Kept unclipped between roles, as HARL's runner keeps
 * `factor`: only the M a role trains with is clipped.
 */
export class HappoFactor {
  private readonly joint: { codes: Int32Array; count: number };
  /** `sequence`: [joint actions]; `token`: [joint actions * responseLength]. */
  private readonly product: Float64Array;
  private readonly R: number;

  constructor(
    private readonly batch: TrainingBatch,
    private readonly settings: Pick<HappoSettings, 'ratio' | 'sequenceRatio' | 'factorClip'>,
  ) {
    this.joint = jointActionCodes(batch);
    this.R = batch.responseLength;
    this.product = new Float64Array(this.joint.count * (settings.ratio === 'token' ? this.R : 1)).fill(1);
  }

  /** Folds in the ratios of `view`'s turns: `newLogProbs` after the role's update, `oldLogProbs` its PPO denominator. */
  multiply(view: BatchView, newLogProbs: Float32Array, oldLogProbs: Float32Array): void {
    const { responseLengths } = this.batch;
    const R = this.R;
    for (const row of view.rows) {
      const length = responseLengths[row]!;
      const j = this.joint.codes[row]!;
      if (this.settings.ratio === 'token') {
        for (let t = 0; t < length; t++) this.product[j * R + t]! *= Math.exp(newLogProbs[row * R + t]! - oldLogProbs[row * R + t]!);
        continue;
      }
      let logRatio = 0;
      for (let t = 0; t < length; t++) logRatio += newLogProbs[row * R + t]! - oldLogProbs[row * R + t]!;
      if (this.settings.sequenceRatio === 'geometric-mean' && length > 0) logRatio /= length;
      this.product[j]! *= Math.exp(logRatio);
    }
  }

  /**
   * Sets M on `view`'s response tokens in the batch's `advantageFactors` (the policy loss multiplies the advantages
   * by it); returns a function that sets them back to 1, and M's token mean, min, max and the share of tokens where
   * the clip bound.
   */
  scale(view: BatchView): { restore: () => void; mean: number; min: number; max: number; clipped: number } {
    const { responseLengths } = this.batch;
    const R = this.R;
    const [low, high] = this.settings.factorClip;
    const factors = (this.batch.advantageFactors ??= new Float64Array(this.batch.rows * R).fill(1));
    let sum = 0;
    let min = Infinity;
    let max = -Infinity;
    let clipped = 0;
    let tokens = 0;
    for (const row of view.rows) {
      const j = this.joint.codes[row]!;
      for (let t = 0; t < responseLengths[row]!; t++) {
        const raw = this.settings.ratio === 'token' ? this.product[j * R + t]! : this.product[j]!;
        const m = Math.min(high, Math.max(low, raw));
        factors[row * R + t] = m;
        sum += m;
        min = Math.min(min, m);
        max = Math.max(max, m);
        if (m !== raw) clipped++;
        tokens++;
      }
    }
    const restore = () => view.rows.forEach((row) => factors.fill(1, row * R, (row + 1) * R));
    return tokens === 0
      ? { restore, mean: 1, min: 1, max: 1, clipped: 0 }
      : { restore, mean: sum / tokens, min, max, clipped: clipped / tokens };
  }
}
