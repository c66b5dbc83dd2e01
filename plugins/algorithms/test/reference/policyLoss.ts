import { AlgorithmInputError } from '../../src/errors.js';
import { maskedMean } from '../../src/kernels/maskedStatistics.js';
import { flattenMatrix, type Matrix } from '../../src/matrix.js';
import { unknownNameError } from '../../src/nameSuggestion.js';
import type { LossAggregation } from '../../src/losses/aggregation.js';
import { aggregateFlat, checkAggregation } from './aggregateLoss.js';

export type PolicyLossVariant = 'vanilla' | 'gspo' | 'cispo' | 'gpg';

export interface PolicyLossInput {
  logProbs: Matrix;
  oldLogProbs: Matrix;
  advantages: Matrix;
  responseMask: Matrix;
  /** Per-token weights (e.g. rollout importance-sampling corrections) multiplying the loss after clipping. */
  importanceWeights?: Matrix;
}

export interface PolicyLossOptions {
  variant?: PolicyLossVariant;
  /** Default 0.2. */
  clipRatio?: number;
  /** Default `clipRatio`. */
  clipRatioLow?: number;
  /** Default `clipRatio`. */
  clipRatioHigh?: number;
  /** Dual-clip bound for negative advantages, > 1. Default 3. */
  clipRatioC?: number;
  /** Default `token-mean` (`seq-mean-token-mean` for gspo, as veRL forces). */
  aggregation?: LossAggregation;
}

export interface PolicyLossResult {
  loss: number;
  clipFraction: number;
  clipFractionLower: number;
  approxKl: number;
}

interface PolicyBatch {
  readonly logp: Float64Array;
  readonly old: Float64Array;
  readonly adv: Float64Array;
  readonly mask: Float64Array;
  readonly weights: Float64Array | undefined;
  readonly rows: number;
  readonly cols: number;
}

interface ClipSettings {
  readonly low: number;
  readonly high: number;
  readonly c: number;
}

interface TokenLosses {
  readonly losses: Float64Array;
  readonly clipFraction: number;
  readonly clipFractionLower: number;
  readonly approxKl: number;
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(Math.max(x, lo), hi);

/** Clamped log-ratio logp - old in [-20, 20], as veRL clamps `negative_approx_kl`. */
function clampedLogRatios(b: PolicyBatch): Float64Array {
  const d = new Float64Array(b.logp.length);
  for (let i = 0; i < d.length; i++) d[i] = clamp(b.logp[i]! - b.old[i]!, -20, 20);
  return d;
}

function negatedMean(d: Float64Array, mask: Float64Array): number {
  return -maskedMean(d, mask);
}

/** veRL `compute_policy_loss_vanilla`: PPO clip with asymmetric bounds and dual clip for A < 0. */
function vanilla(b: PolicyBatch, clip: ClipSettings): TokenLosses {
  const d = clampedLogRatios(b);
  const n = d.length;
  const losses = new Float64Array(n);
  const clipped = new Float64Array(n);
  const clippedLower = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const a = b.adv[i]!;
    const ratio = Math.exp(d[i]!);
    const l1 = -a * ratio;
    const l2 = -a * clamp(ratio, 1 - clip.low, 1 + clip.high);
    const c1 = Math.max(l1, l2);
    const l3 = -a * clip.c;
    clipped[i] = l2 > l1 ? 1 : 0;
    clippedLower[i] = c1 > l3 && a < 0 ? 1 : 0;
    losses[i] = a < 0 ? Math.min(l3, c1) : c1;
  }
  return {
    losses,
    clipFraction: maskedMean(clipped, b.mask),
    clipFractionLower: maskedMean(clippedLower, b.mask),
    approxKl: negatedMean(d, b.mask),
  };
}

/**
 * veRL `compute_policy_loss_gspo` (https://arxiv.org/pdf/2507.18071): the sequence-level ratio
 * exp(min(mean_t(logp - old over the mask), 10)) shared by every token of the row, PPO-clipped; no dual clip.
 */
function gspo(b: PolicyBatch, clip: ClipSettings): TokenLosses {
  const n = b.logp.length;
  const losses = new Float64Array(n);
  const clipped = new Float64Array(n);
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = b.logp[i]! - b.old[i]!;
  for (let r = 0; r < b.rows; r++) {
    const base = r * b.cols;
    let s = 0;
    let len = 0;
    for (let t = 0; t < b.cols; t++) {
      const m = b.mask[base + t]!;
      s += d[base + t]! * m;
      len += m;
    }
    const ratio = Math.exp(Math.min(s / Math.max(len, 1), 10));
    for (let t = 0; t < b.cols; t++) {
      const i = base + t;
      const a = b.adv[i]!;
      const l1 = -a * ratio;
      const l2 = -a * clamp(ratio, 1 - clip.low, 1 + clip.high);
      losses[i] = Math.max(l1, l2);
      clipped[i] = l2 > l1 ? 1 : 0;
    }
  }
  return { losses, clipFraction: maskedMean(clipped, b.mask), clipFractionLower: 0, approxKl: negatedMean(d, b.mask) };
}

/** veRL `compute_policy_loss_cispo` (https://arxiv.org/pdf/2506.13585): -sg(clip(ratio)) A logp. */
function cispo(b: PolicyBatch, clip: ClipSettings): TokenLosses {
  const d = clampedLogRatios(b);
  const n = d.length;
  const losses = new Float64Array(n);
  const clipped = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const ratio = Math.exp(d[i]!);
    const c = clamp(ratio, 1 - clip.low, 1 + clip.high);
    losses[i] = -c * b.adv[i]! * b.logp[i]!;
    clipped[i] = ratio !== c ? 1 : 0;
  }
  return { losses, clipFraction: maskedMean(clipped, b.mask), clipFractionLower: 0, approxKl: negatedMean(d, b.mask) };
}

/** veRL `compute_policy_loss_gpg`: -logp A, no ratio and no clipping (approxKl is reported unclamped). */
function gpgLoss(b: PolicyBatch): TokenLosses {
  const n = b.logp.length;
  const losses = new Float64Array(n);
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const logp = b.logp[i]!;
    losses[i] = -logp * b.adv[i]!;
    d[i] = logp - b.old[i]!;
  }
  return { losses, clipFraction: 0, clipFractionLower: 0, approxKl: negatedMean(d, b.mask) };
}

interface VariantSpec {
  readonly tokenLosses: (b: PolicyBatch, clip: ClipSettings) => TokenLosses;
  readonly defaultAggregation: LossAggregation;
}

const VARIANTS: Record<PolicyLossVariant, VariantSpec> = {
  vanilla: { tokenLosses: vanilla, defaultAggregation: 'token-mean' },
  gspo: { tokenLosses: gspo, defaultAggregation: 'seq-mean-token-mean' },
  cispo: { tokenLosses: cispo, defaultAggregation: 'token-mean' },
  gpg: { tokenLosses: gpgLoss, defaultAggregation: 'token-mean' },
};

export const POLICY_LOSS_VARIANTS = Object.keys(VARIANTS) as PolicyLossVariant[];

function ratioOption(o: PolicyLossOptions, name: keyof PolicyLossOptions, fallback: number): number {
  const v = o[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw new AlgorithmInputError(`options.${name}`, `must be a finite number >= 0, got ${String(v)}`);
  }
  return v;
}

/**
 * PPO-style policy loss and its metrics. `vanilla`: ratio = exp(clamp(logp - old, -20, 20)),
 * max(-A ratio, -A clip(ratio, 1 - low, 1 + high)), and for A < 0 at most -A c (dual clip).
 */
export function policyLoss(input: PolicyLossInput, options: PolicyLossOptions = {}): PolicyLossResult {
  const variantName = options.variant ?? 'vanilla';
  if (!Object.prototype.hasOwnProperty.call(VARIANTS, variantName)) {
    throw unknownNameError('options.variant', 'policy loss variant', variantName, POLICY_LOSS_VARIANTS);
  }
  const variant = VARIANTS[variantName];
  const clipRatio = ratioOption(options, 'clipRatio', 0.2);
  const clip: ClipSettings = {
    low: ratioOption(options, 'clipRatioLow', clipRatio),
    high: ratioOption(options, 'clipRatioHigh', clipRatio),
    c: ratioOption(options, 'clipRatioC', 3),
  };
  if (!(clip.c > 1)) {
    throw new AlgorithmInputError('options.clipRatioC', `the dual-clip bound must be greater than 1, got ${clip.c}`);
  }
  const aggregation = checkAggregation(options.aggregation ?? variant.defaultAggregation, 'options.aggregation');
  const logp = flattenMatrix(input.logProbs, 'logProbs');
  const { rows, cols } = logp;
  const batch: PolicyBatch = {
    logp: logp.data,
    old: flattenMatrix(input.oldLogProbs, 'oldLogProbs', rows, cols).data,
    adv: flattenMatrix(input.advantages, 'advantages', rows, cols).data,
    mask: flattenMatrix(input.responseMask, 'responseMask', rows, cols).data,
    weights:
      input.importanceWeights === undefined ? undefined : flattenMatrix(input.importanceWeights, 'importanceWeights', rows, cols).data,
    rows,
    cols,
  };
  const t = variant.tokenLosses(batch, clip);
  if (batch.weights !== undefined) for (let i = 0; i < t.losses.length; i++) t.losses[i]! *= batch.weights[i]!;
  const loss = aggregateFlat({ loss: t.losses, mask: batch.mask, rows, cols }, aggregation);
  return { loss, clipFraction: t.clipFraction, clipFractionLower: t.clipFractionLower, approxKl: t.approxKl };
}
