import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as tf from '@tensorflow/tfjs-core';
import { lossTotalsInput } from '@drmas/core';
import { SeededRandom } from '@drmas/models';
import { DpoLossFunction, type DpoSettings } from '@drmas/plugin-algorithms';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { tfjsTensorOps } from '../src/training/TfjsTensorOps.js';

/**
 * The DPO losses as tfjs differentiates them (loss, TRL's metrics, gradient with respect to every per-token log-prob)
 * against TRL's formulas computed independently in PyTorch float64 (test/reference/dpo_torch.py, run by Debian's
 * python3-torch: `bash scripts/install-test-deps.sh torch`). Skips, saying so, where that python has no torch.
 */

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'reference', 'dpo_torch.py');
const torchMissing = spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0;
if (torchMissing) console.warn(`dpoTorchReference: skipped, ${PYTHON} cannot import torch (bash scripts/install-test-deps.sh torch)`);

interface Case extends DpoSettings {
  logProbs: number[][];
  refLogProbs: number[][];
  mask: number[][];
}
interface Reference {
  loss: number;
  grad: number[][];
  metrics: Record<string, number>;
}

/** Three pairs of rows [chosen, rejected, ...] with responses of 1 to 6 tokens and log-ratios of either sign. */
function randomCase(settings: DpoSettings, seed: number): Case {
  const rng = new SeededRandom(seed);
  const rows = 6;
  const cols = 6;
  const mask = Array.from({ length: rows }, () => {
    const length = 1 + Math.floor(rng.uniform() * cols);
    return Array.from({ length: cols }, (_, j) => (j < length ? 1 : 0));
  });
  const logProbs = mask.map((row) => row.map(() => -0.05 - rng.uniform() * 3));
  const refLogProbs = logProbs.map((row) => row.map((x) => x + (rng.uniform() * 2 - 1) * 0.8));
  return { ...settings, logProbs, refLogProbs, mask };
}

const SETTINGS: DpoSettings[] = [
  { variant: 'sigmoid', beta: 0.1 },
  { variant: 'sigmoid', beta: 0.5, labelSmoothing: 0.2 },
  { variant: 'robust', beta: 0.3, labelSmoothing: 0.1 },
  { variant: 'hinge', beta: 0.4 },
  { variant: 'ipo', beta: 0.5 },
];
const CASES = SETTINGS.flatMap((settings, i) => [randomCase(settings, 100 + i), randomCase(settings, 200 + i)]);

/** Loss, metrics and gradient by tfjs, rows split into micro-batches of `micro` whole pairs (gradients added). */
function tfjsRun(c: Case, micro: number): Reference {
  const loss = new DpoLossFunction(c);
  const rows = c.mask.length;
  const tokens = c.mask.flat().reduce((a, b) => a + b, 0);
  const totals = { tokens, rows, responseLength: c.mask[0]!.length, microBatches: Math.ceil(rows / micro) };
  let total = 0;
  const metrics: Record<string, number> = {};
  const grad: number[][] = [];
  for (let start = 0; start < rows; start += micro) {
    const pick = (m: number[][]) => tf.tensor2d(m.slice(start, start + micro));
    const mask = pick(c.mask);
    // The preference column: +1 on every column of a chosen row (even), -1 on a rejected one's.
    const preference = tf.tensor2d(c.mask.slice(start, start + micro).map((row, i) => row.map(() => ((start + i) % 2 === 0 ? 1 : -1))));
    const metricValues: Record<string, number> = {};
    const { value, grads } = tf.valueAndGrads((logProbs: tf.Tensor) => {
      const out = loss.compute(tfjsTensorOps, {
        logProbs,
        oldLogProbs: logProbs,
        preference,
        responseMask: mask,
        refLogProbs: pick(c.refLogProbs),
        totals: lossTotalsInput(tfjsTensorOps, totals),
      });
      for (const [k, t] of Object.entries(out.metrics)) metricValues[k] = t.dataSync()[0]!;
      return out.loss as tf.Scalar;
    })([pick(c.logProbs)]);
    total += value.dataSync()[0]!;
    for (const [k, v] of Object.entries(metricValues)) metrics[k] = (metrics[k] ?? 0) + v;
    grad.push(...(grads[0]!.arraySync() as number[][]));
  }
  return { loss: total, grad, metrics };
}

/** |a - b| <= 1e-5 (1 + |b|): float32 against float64. */
function close(actual: number, expected: number): boolean {
  return Math.abs(actual - expected) <= 1e-5 * (1 + Math.abs(expected));
}

(torchMissing ? describe.skip : describe)('DPO losses on tfjs against a PyTorch reference (TRL formulas)', () => {
  let references: Reference[];

  beforeAll(async () => {
    await selectRuntime('wasm');
    references = JSON.parse(execFileSync(PYTHON, [SCRIPT], { input: JSON.stringify(CASES), encoding: 'utf8' })) as Reference[];
  });

  test.each(CASES.map((c, i) => [`${c.variant} beta ${c.beta} eps ${c.labelSmoothing ?? 0} (case ${i})`, i] as const))(
    '%s: loss, metrics and gradient, whole and in micro-batches of one pair',
    (_label, i) => {
      const reference = references[i]!;
      for (const micro of [6, 2]) {
        const ours = tfjsRun(CASES[i]!, micro);
        expect({ micro, loss: ours.loss, close: close(ours.loss, reference.loss) }).toEqual({ micro, loss: ours.loss, close: true });
        for (const [k, v] of Object.entries(reference.metrics))
          expect({ k, close: close(ours.metrics[k]!, v) }).toEqual({ k, close: true });
        const worst = Math.max(...reference.grad.flatMap((row, r) => row.map((g, j) => Math.abs(ours.grad[r]![j]! - g))));
        expect(worst).toBeLessThan(1e-6);
      }
    },
  );

  test('the reference itself is not degenerate: gradients are nonzero and losses differ across variants', () => {
    expect(new Set(references.map((r) => r.loss.toFixed(6))).size).toBe(references.length);
    for (const r of references.filter((_, i) => CASES[i]!.variant !== 'hinge'))
      expect(Math.max(...r.grad.flat().map(Math.abs))).toBeGreaterThan(1e-3);
  });
});
