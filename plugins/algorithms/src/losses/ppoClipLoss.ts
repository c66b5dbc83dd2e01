import { lossColumn, type LossFunction, type LossInput, type LossOutput, type TensorOps } from '@drmas/core';
import { aggregate, type LossAggregation } from './aggregation.js';
import { klTerm, type KlPenaltyKind } from './klPenalty.js';

/** The policy-loss variants that can train (written over TensorOps, so every backend differentiates them). */
export const TRAINABLE_VARIANTS = ['vanilla', 'gspo', 'cispo', 'gpg'] as const;
export type TrainableVariant = (typeof TRAINABLE_VARIANTS)[number];

export interface PolicyLossSettings {
  variant: TrainableVariant;
  clipRatioLow: number;
  clipRatioHigh: number;
  clipRatioC: number;
  aggregation: LossAggregation;
  lossScaleFactor?: number;
  klCoef: number;
  klType: KlPenaltyKind;
  entropyCoef: number;
}

/** ops.where(condition, a, b) for a 0/1 condition, written with arithmetic. */
function select<T>(ops: TensorOps<T>, condition: T, a: T, b: T): T {
  return ops.add(ops.mul(condition, a), ops.mul(ops.add(ops.neg(condition), 1), b));
}

/**
 * The training loss: the policy-gradient term of veRL's `compute_policy_loss_<variant>` aggregated by
 * `aggregation`, plus `klCoef` times the aggregated KL to the reference policy, minus `entropyCoef` times the
 * aggregated entropy. Matches the float64 references (`test/reference/`: `policyLoss`, `klPenalty`,
 * `aggregateLoss`, veRL's numbers) on the same inputs.
 */
export class PolicyLossFunction implements LossFunction {
  readonly needsEntropy: boolean;
  readonly needsReference: boolean;
  readonly zeroAdvantageRowsInert: boolean;

  constructor(readonly settings: PolicyLossSettings) {
    this.needsEntropy = settings.entropyCoef !== 0;
    this.needsReference = settings.klCoef > 0;
    this.zeroAdvantageRowsInert = !this.needsEntropy && !this.needsReference;
  }

  compute<T>(ops: TensorOps<T>, input: LossInput<T>): LossOutput<T> {
    const s = this.settings;
    const { logProbs: logp, oldLogProbs: old, responseMask: mask, totals } = input;
    const adv = lossColumn(input, 'advantages');
    const logRatio = s.variant === 'gspo' ? ops.sub(logp, old) : ops.clip(ops.sub(logp, old), -20, 20);
    const negAdv = ops.neg(adv);
    let tokenLoss: T;
    let clipped: T | undefined;
    let clippedLower: T | undefined;
    if (s.variant === 'gspo') {
      // GSPO-token (veRL's compute_policy_loss_gspo): every token's ratio has the value of its row's sequence ratio
      // exp(mean over the mask of logp - old), capped at e^10, and the gradient of its own token's ratio scaled by it:
      // log s_t = logp_t - sg(logp_t) + sg(mean_t(logp - old)).
      const rowKl = ops.div(ops.sum(ops.mul(logRatio, mask), 1), ops.maximum(ops.sum(mask, 1), 1));
      const tokenPart = ops.sub(logp, ops.stopGradient(logp));
      const ratio = ops.exp(ops.minimum(ops.add(tokenPart, ops.stopGradient(ops.reshape(rowKl, [-1, 1]))), 10));
      const l1 = ops.mul(negAdv, ratio);
      const l2 = ops.mul(negAdv, ops.clip(ratio, 1 - s.clipRatioLow, 1 + s.clipRatioHigh));
      tokenLoss = ops.maximum(l1, l2);
      clipped = ops.greater(l2, l1);
    } else if (s.variant === 'gpg') {
      tokenLoss = ops.mul(ops.neg(logp), adv);
    } else if (s.variant === 'cispo') {
      const ratio = ops.exp(logRatio);
      const bounded = ops.clip(ratio, 1 - s.clipRatioLow, 1 + s.clipRatioHigh);
      tokenLoss = ops.mul(ops.mul(ops.stopGradient(bounded), negAdv), logp);
      clipped = ops.add(ops.greater(ratio, 1 + s.clipRatioHigh), ops.less(ratio, 1 - s.clipRatioLow));
    } else {
      const ratio = ops.exp(logRatio);
      const l1 = ops.mul(negAdv, ratio);
      const l2 = ops.mul(negAdv, ops.clip(ratio, 1 - s.clipRatioLow, 1 + s.clipRatioHigh));
      const c1 = ops.maximum(l1, l2);
      const l3 = ops.mul(negAdv, s.clipRatioC);
      const negative = ops.less(adv, 0);
      tokenLoss = select(ops, negative, ops.minimum(l3, c1), c1);
      clipped = ops.greater(l2, l1);
      clippedLower = ops.mul(ops.greater(c1, l3), negative);
    }
    const pgLoss = aggregate(ops, tokenLoss, mask, s.aggregation, totals, s.lossScaleFactor);
    const tokenMean = (values: T) => ops.stopGradient(ops.div(ops.sum(ops.mul(values, mask)), ops.maximum(totals.tokens, 1)));
    const metrics: Record<string, T> = {
      pg_loss: ops.stopGradient(pgLoss),
      pg_clipfrac: clipped ? tokenMean(clipped) : ops.scalar(0),
      pg_clipfrac_lower: clippedLower ? tokenMean(clippedLower) : ops.scalar(0),
      ppo_kl: tokenMean(ops.neg(logRatio)),
    };
    let loss = pgLoss;
    if (s.klCoef > 0) {
      if (!input.refLogProbs) throw new Error('PolicyLossFunction: klCoef > 0 but the batch has no reference log-probs');
      const kl = aggregate(ops, klTerm(ops, logp, input.refLogProbs, s.klType), mask, s.aggregation, totals, s.lossScaleFactor);
      metrics.kl_loss = ops.stopGradient(kl);
      loss = ops.add(loss, ops.mul(kl, s.klCoef));
    }
    if (input.entropy) {
      const entropy = aggregate(ops, input.entropy, mask, s.aggregation, totals, s.lossScaleFactor);
      metrics.entropy = ops.stopGradient(entropy);
      if (s.entropyCoef !== 0) loss = ops.sub(loss, ops.mul(entropy, s.entropyCoef));
    }
    return { loss, metrics };
  }
}
