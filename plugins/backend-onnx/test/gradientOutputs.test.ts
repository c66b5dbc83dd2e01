import { describe, expect, it } from '@jest/globals';
import { SeededRandom } from '@drmas/models';
import { loadOnnxRuntime } from '../src/ExecutionProvider.js';
import { DifferentiableGraph } from '../src/training/DifferentiableGraph.js';
import { TrainingNames, writeGradientOutputs } from '../src/training/TrainingGraph.js';

/**
 * Accumulated gradient outputs (`writeGradientOutputs` with `accumulate`), run as the trainer runs them: `grad_in/W`
 * and the bound `grad/W` output are one buffer, already holding an earlier micro-batch's gradient. A projection's
 * gradient is written by its own Gemm with that buffer as C (no product tensor, no Add); a weight used twice keeps
 * the Add. Checked against the gradients worked out by hand in float64: for loss = sum(c1 * x1 W^T) (+ sum(c2 * x2
 * W^T)), dL/dW = c1^T x1 (+ c2^T x2).
 */

const ROWS = 5;
const IN = 3;
const OUT = 2;

function random(rng: SeededRandom, length: number): Float32Array {
  return Float32Array.from({ length }, () => Math.fround(rng.uniform() * 2 - 1));
}

/** `a^T b` in float64, for `a` [rows, OUT] and `b` [rows, IN] row-major: [OUT, IN]. */
function transposedProduct(a: Float32Array, b: Float32Array): Float64Array {
  const out = new Float64Array(OUT * IN);
  for (let o = 0; o < OUT; o++)
    for (let i = 0; i < IN; i++) for (let r = 0; r < ROWS; r++) out[o * IN + i]! += a[r * OUT + o]! * b[r * IN + i]!;
  return out;
}

async function accumulated(uses: 1 | 2) {
  const rng = new SeededRandom(7 + uses);
  const g = new DifferentiableGraph('accumulate');
  const w = g.input('W', 'float', [OUT, IN]);
  let loss = '';
  const feeds: Record<string, Float32Array> = {};
  for (let k = 1; k <= uses; k++) {
    const x = g.input(`x${k}`, 'float', [ROWS, IN]);
    const c = g.input(`c${k}`, 'float', [ROWS, OUT]);
    feeds[`x${k}`] = random(rng, ROWS * IN);
    feeds[`c${k}`] = random(rng, ROWS * OUT);
    const term = g.op('ReduceSum', [g.op('Mul', [g.op('Gemm', [x, w], { transB: 1 }), c])], { keepdims: 0 });
    loss = loss ? g.op('Add', [loss, term]) : term;
  }
  writeGradientOutputs(g, loss, new Map([['W', w]]), new Map([['W', [OUT, IN]]]), { accumulate: true });
  const expected = new Float64Array(OUT * IN);
  for (let k = 1; k <= uses; k++) transposedProduct(feeds[`c${k}`]!, feeds[`x${k}`]!).forEach((v, i) => (expected[i]! += v));

  const ort = await loadOnnxRuntime();
  const session = await ort.InferenceSession.create(g.builder.toModelProto());
  const earlier = random(rng, OUT * IN);
  const buffer = earlier.slice();
  const tensor = (data: Float32Array, dims: number[]) => new ort.Tensor('float32', data, dims);
  const out = await session.run(
    {
      W: tensor(random(rng, OUT * IN), [OUT, IN]),
      ...Object.fromEntries(Object.entries(feeds).map(([name, data]) => [name, tensor(data, [ROWS, name.startsWith('x') ? IN : OUT])])),
      [TrainingNames.gradientIn('W')]: tensor(buffer, [OUT, IN]),
    },
    { [TrainingNames.gradient('W')]: tensor(buffer, [OUT, IN]) },
  );
  await session.release();
  return { ops: g.builder.opTypes(), buffer, returned: out[TrainingNames.gradient('W')]!.data as Float32Array, earlier, expected };
}

describe('accumulated gradient outputs', () => {
  it("a projection's gradient is added into the bound buffer by its own Gemm: the earlier sum plus c^T x", async () => {
    const { ops, buffer, returned, earlier, expected } = await accumulated(1);
    expect(ops.filter((op) => op === 'Add')).toEqual([]);
    expect(ops.filter((op) => op === 'Gemm')).toHaveLength(2);
    for (let i = 0; i < expected.length; i++) {
      expect(Math.abs(buffer[i]! - (earlier[i]! + expected[i]!))).toBeLessThan(1e-6);
      expect(returned[i]).toBe(buffer[i]);
    }
    expect(Math.max(...expected.map(Math.abs))).toBeGreaterThan(0.1);
  });

  it('a weight used twice: its two products summed, then added to the earlier sum', async () => {
    const { ops, buffer, earlier, expected } = await accumulated(2);
    expect(ops).toContain('Sum');
    for (let i = 0; i < expected.length; i++) expect(Math.abs(buffer[i]! - (earlier[i]! + expected[i]!))).toBeLessThan(1e-6);
  });
});
