import { lossColumn, type LossColumn, type LossFunction, type LossInput, type LossOutput, type TensorOps } from '@drmas/core';
import { AlgorithmInputError } from '../errors.js';

/** The preference losses of TRL's DPOTrainer that `drmas dpo` and the online `dpo` update train with. */
export const DPO_VARIANTS = ['sigmoid', 'robust', 'hinge', 'ipo'] as const;
export type DpoVariant = (typeof DPO_VARIANTS)[number];

export interface DpoSettings {
  variant: DpoVariant;
  /** The KL strength β (for ipo, the regularisation τ). TRL's default is 0.1. */
  beta: number;
  /**
   * ε, the probability that a pair's label is flipped: cDPO's smoothing of the sigmoid loss and the robust loss's
   * noise rate; in [0, 0.5). Default 0.
   */
  labelSmoothing?: number;
}

/** -log σ(x) = softplus(-x), written so exp never overflows: max(-x, 0) + log(1 + exp(-|x|)). */
function negLogSigmoid<T>(ops: TensorOps<T>, x: T): T {
  return ops.add(ops.maximum(ops.neg(x), 0), ops.log(ops.add(ops.exp(ops.neg(ops.abs(x))), 1)));
}

/** Checks the settings; a bad value names its `algorithm.dpo.*` key. */
export function checkDpoSettings(settings: DpoSettings): void {
  if (!DPO_VARIANTS.includes(settings.variant))
    throw new AlgorithmInputError('dpo.variant', `must be one of ${DPO_VARIANTS.join(', ')}, got "${settings.variant}"`);
  if (!(settings.beta > 0) || !Number.isFinite(settings.beta))
    throw new AlgorithmInputError('dpo.beta', `must be above 0, got ${settings.beta}`);
  const eps = settings.labelSmoothing ?? 0;
  if (!(eps >= 0 && eps < 0.5)) throw new AlgorithmInputError('dpo.labelSmoothing', `must be in [0, 0.5), got ${eps}`);
}

/**
 * Direct preference optimisation over pairs of rows, following TRL's `DPOTrainer` (`dpo_loss`). A micro-batch holds
 * whole pairs as adjacent rows; the `preference` column marks each row +1 for the chosen response and -1 for the
 * rejected one (from the batch's `pairs`, as `preferenceBatch` lays them out). A sequence's log-prob is the sum of its response tokens'
 * log-probs (TRL's default); with the reference's sums, h = (chosen - ref chosen) - (rejected - ref rejected), and per
 * pair:
 *
 * - `sigmoid`: -(1-ε) log σ(βh) - ε log σ(-βh) (DPO; with ε > 0, cDPO as TRL up to 0.2x wrote it);
 * - `robust`: (-(1-ε) log σ(βh) + ε log σ(-βh)) / (1 - 2ε) (robust DPO);
 * - `hinge`: max(0, 1 - βh) (RSO);
 * - `ipo`: (h' - 1/(2β))², h' taking each sequence's log-ratio per response token (TRL normalises IPO by length).
 *
 * The loss is the mean over the mini-batch's pairs (`totals.rows / 2`, every row training at least one token).
 * Metrics, TRL's names, each a mean over pairs: `rewards/chosen` = β(chosen - ref chosen), `rewards/rejected`,
 * `rewards/accuracies` (chosen reward above rejected), `rewards/margins`, `logps/chosen`, `logps/rejected`.
 */
export class DpoLossFunction implements LossFunction {
  readonly columns: readonly LossColumn[] = ['preference'];
  readonly needsReference = true;
  readonly pairedRows = true;
  private readonly eps: number;

  /** `referencePolicy`: whose log-probs the ratios are taken against (see `LossFunction.referencePolicy`). */
  constructor(
    readonly settings: DpoSettings,
    readonly referencePolicy: 'initial' | 'current' = 'initial',
  ) {
    checkDpoSettings(settings);
    this.eps = settings.labelSmoothing ?? 0;
  }

  compute<T>(ops: TensorOps<T>, input: LossInput<T>): LossOutput<T> {
    if (!input.refLogProbs) throw new AlgorithmInputError('refLogProbs', 'the DPO loss needs reference log-probs');
    const { beta, variant } = this.settings;
    const mask = input.responseMask;
    const preference = lossColumn(input, 'preference');
    // Per row: 1 when it is the chosen (+1) or the rejected (-1) side; padding rows (no token) count as neither.
    const rowChosen = ops.greater(ops.sum(ops.mul(ops.greater(preference, 0), mask), 1), 0);
    const rowRejected = ops.greater(ops.sum(ops.mul(ops.less(preference, 0), mask), 1), 0);
    // Sums each adjacent pair of a per-row vector: [rows] -> [pairs].
    const perPair = (rowValues: T): T => ops.sum(ops.reshape(rowValues, [-1, 2]), 1);
    const split = (rowValues: T) => ({
      chosen: perPair(ops.mul(rowValues, rowChosen)),
      rejected: perPair(ops.mul(rowValues, rowRejected)),
    });
    const logps = split(ops.sum(ops.mul(input.logProbs, mask), 1));
    const ref = split(ops.stopGradient(ops.sum(ops.mul(input.refLogProbs, mask), 1)));
    const chosenRatio = ops.sub(logps.chosen, ref.chosen);
    const rejectedRatio = ops.sub(logps.rejected, ref.rejected);
    const h = ops.sub(chosenRatio, rejectedRatio);
    const scaled = ops.mul(h, beta);
    let losses: T;
    switch (variant) {
      case 'sigmoid':
        losses = ops.add(ops.mul(negLogSigmoid(ops, scaled), 1 - this.eps), ops.mul(negLogSigmoid(ops, ops.neg(scaled)), this.eps));
        break;
      case 'robust':
        losses = ops.div(
          ops.sub(ops.mul(negLogSigmoid(ops, scaled), 1 - this.eps), ops.mul(negLogSigmoid(ops, ops.neg(scaled)), this.eps)),
          1 - 2 * this.eps,
        );
        break;
      case 'hinge':
        losses = ops.maximum(ops.add(ops.neg(scaled), 1), 0);
        break;
      case 'ipo': {
        const lengths = split(ops.sum(mask, 1));
        const perToken = ops.sub(
          ops.div(chosenRatio, ops.maximum(lengths.chosen, 1)),
          ops.div(rejectedRatio, ops.maximum(lengths.rejected, 1)),
        );
        losses = ops.square(ops.sub(perToken, 1 / (2 * beta)));
        break;
      }
    }
    const pairs = ops.maximum(ops.mul(input.totals.rows, 0.5), 1);
    const mean = (values: T) => ops.div(ops.sum(values), pairs);
    const chosenReward = ops.stopGradient(ops.mul(chosenRatio, beta));
    const rejectedReward = ops.stopGradient(ops.mul(rejectedRatio, beta));
    return {
      loss: mean(losses),
      metrics: {
        'rewards/chosen': mean(chosenReward),
        'rewards/rejected': mean(rejectedReward),
        'rewards/accuracies': mean(ops.greater(chosenReward, rejectedReward)),
        'rewards/margins': mean(ops.sub(chosenReward, rejectedReward)),
        'logps/chosen': mean(ops.stopGradient(logps.chosen)),
        'logps/rejected': mean(ops.stopGradient(logps.rejected)),
      },
    };
  }
}
