import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ADVANTAGE_ESTIMATORS,
  type BuiltinEstimatorName,
  computeAdvantage,
  lossSettings,
  PolicyLossFunction,
  TRAINABLE_VARIANTS,
  similarityRatio,
  type AdvantageInput,
  type AdvantageOptions,
  type KlPenaltyKind,
  type AlgorithmSettings,
  type LossAggregation,
} from '../src/index.js';
import { hostTensorOps, lossTotalsInput } from '@drmas/core';
import { expectClose, expectMatrixClose } from './closeTo.js';
import { arr } from './hostRows.js';
import { aggregateLoss } from './reference/aggregateLoss.js';
import { entropyFromLogits } from './reference/entropy.js';
import { klPenalty } from './reference/klPenalty.js';
import { policyLoss, type PolicyLossInput, type PolicyLossOptions } from './reference/policyLoss.js';
import { valueLoss, type ValueLossInput } from './reference/valueLoss.js';

/** Cases from test/reference/generate_reference.py (veRL / verl-agent formulas in torch float64). */
interface Cases {
  advantage: Array<{
    name: string;
    estimator: string;
    input: AdvantageInput;
    options: AdvantageOptions;
    expected: { advantages: number[][]; returns: number[][] };
  }>;
  policyLoss: Array<{
    name: string;
    input: PolicyLossInput;
    options: PolicyLossOptions;
    expected: Record<'loss' | 'clipFraction' | 'clipFractionLower' | 'approxKl', number>;
  }>;
  aggregateLoss: Array<{
    name: string;
    loss: number[][];
    mask: number[][];
    mode: LossAggregation;
    opts: { lossScaleFactor?: number };
    expected: number;
  }>;
  klPenalty: Array<{ name: string; logProbs: number[][]; refLogProbs: number[][]; kind: KlPenaltyKind; expected: number[][] }>;
  valueLoss: Array<{
    name: string;
    input: ValueLossInput;
    options: { clipRange: number; aggregation: LossAggregation };
    expected: { loss: number; clipFraction: number };
  }>;
  entropy: Array<{ name: string; logits: number[][][]; expected: number[][] }>;
  similarity: Array<{ a: string; b: string; expected: number }>;
}

const here = dirname(fileURLToPath(import.meta.url));
const cases = JSON.parse(readFileSync(join(here, 'reference', 'cases.json'), 'utf8')) as Cases;

describe('reference cases (veRL formulas, torch float64)', () => {
  /** Estimators veRL does not have; their oracle is the hand-worked file named, after the code they follow. */
  const OUTSIDE_VERL: Record<string, string> = {
    magrpo: 'jointAction.test.ts (CoMLRL)',
    marloo: 'jointAction.test.ts (CoMLRL)',
    maremax: 'jointAction.test.ts (CoMLRL)',
    rae: 'rae.test.ts (SPIRAL)',
  };

  it('covers every estimator veRL has', () => {
    const names = new Set(cases.advantage.map((c) => c.estimator));
    for (const e of Object.keys(ADVANTAGE_ESTIMATORS)) {
      if (e in OUTSIDE_VERL) expect(names).not.toContain(e);
      else expect(names).toContain(e);
    }
  });

  it.each(cases.advantage.map((c) => [c.name, c] as const))('advantage: %s', (_name, c) => {
    // The reference's `dapo` cases are veRL's GRPO advantages (DAPO changes the loss and the sampling, not them).
    const name = (c.estimator === 'dapo' ? 'grpo' : c.estimator) as BuiltinEstimatorName;
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS[name], c.input, c.options);
    expectMatrixClose(out.advantages, c.expected.advantages, 1e-9, 'advantages');
    expectMatrixClose(out.returns, c.expected.returns, 1e-9, 'returns');
  });

  it.each(cases.policyLoss.map((c) => [c.name, c] as const))('policy loss: %s', (_name, c) => {
    const out = policyLoss(c.input, c.options);
    for (const k of ['loss', 'clipFraction', 'clipFractionLower', 'approxKl'] as const) expectClose(out[k], c.expected[k], 1e-9, k);
  });

  // The loss the trainers differentiate, written over TensorOps (here float64 arrays), on every case it can take: the
  // trainable variants without importance weights, its settings defaulted as `algorithm.loss` defaults them.
  const trainable = cases.policyLoss.filter(
    (c) => !c.input.importanceWeights && (TRAINABLE_VARIANTS as readonly string[]).includes(c.options.variant ?? 'vanilla'),
  );
  it.each(trainable.map((c) => [c.name, c] as const))('the training loss (PolicyLossFunction): %s', (_name, c) => {
    const { variant = 'vanilla', clipRatio = 0.2, clipRatioLow, clipRatioHigh, clipRatioC = 3, aggregation } = c.options;
    const loss = {
      variant,
      clipRatio,
      clipRatioLow,
      clipRatioHigh,
      clipRatioC,
      aggregation,
      klCoef: 0,
      klType: 'low_var_kl',
      entropyCoef: 0,
    };
    const fn = new PolicyLossFunction(lossSettings({ loss } as AlgorithmSettings));
    const input = c.input as unknown as Record<'logProbs' | 'oldLogProbs' | 'advantages' | 'responseMask', number[][]>;
    const mask = input.responseMask;
    const totals = {
      tokens: mask.flat().reduce((a, b) => a + b, 0),
      rows: mask.filter((row) => row.some((m) => m > 0)).length,
      responseLength: mask[0]!.length,
      microBatches: 1,
    };
    const out = fn.compute(hostTensorOps, {
      logProbs: arr(input.logProbs),
      oldLogProbs: arr(input.oldLogProbs),
      advantages: arr(input.advantages),
      responseMask: arr(mask),
      totals: lossTotalsInput(hostTensorOps, totals),
    });
    expectClose(out.loss.data[0]!, c.expected.loss, 1e-9, 'loss');
    // veRL's masked_mean divides by the mask's sum + 1e-8, the metrics here by the token total: 1e-8 apart at most.
    expectClose(out.metrics.pg_clipfrac!.data[0]!, c.expected.clipFraction, 1e-8, 'clipFraction');
    expectClose(out.metrics.pg_clipfrac_lower!.data[0]!, c.expected.clipFractionLower, 1e-8, 'clipFractionLower');
    expectClose(out.metrics.ppo_kl!.data[0]!, c.expected.approxKl, 1e-8, 'approxKl');
  });

  it.each(cases.aggregateLoss.map((c) => [c.name, c] as const))('aggregateLoss: %s', (_name, c) => {
    expectClose(aggregateLoss(c.loss, c.mask, c.mode, c.opts), c.expected, 1e-9, c.name);
  });

  it.each(cases.klPenalty.map((c) => [c.name, c] as const))('klPenalty: %s', (_name, c) => {
    expectMatrixClose(klPenalty(c.logProbs, c.refLogProbs, c.kind), c.expected, 1e-9, c.name);
  });

  it.each(cases.valueLoss.map((c) => [c.name, c] as const))('valueLoss: %s', (_name, c) => {
    const out = valueLoss(c.input, c.options);
    expectClose(out.loss, c.expected.loss, 1e-9, 'loss');
    expectClose(out.clipFraction, c.expected.clipFraction, 1e-9, 'clipFraction');
  });

  it.each(cases.entropy.map((c) => [c.name, c] as const))('entropyFromLogits: %s', (_name, c) => {
    expectMatrixClose(entropyFromLogits(c.logits), c.expected, 1e-9, c.name);
  });

  it.each(cases.similarity.map((c, i) => [i, c] as const))('difflib ratio %#', (_i, c) => {
    expectClose(similarityRatio(c.a, c.b), c.expected, 1e-12, `${c.a} / ${c.b}`);
  });
});
