import { AlgorithmInputError } from '../../src/errors.js';
import { flattenMatrix, type Matrix } from '../../src/matrix.js';
import { unknownNameError } from '../../src/nameSuggestion.js';
import { LOSS_AGGREGATIONS, type LossAggregation } from '../../src/losses/aggregation.js';

export interface FlatLoss {
  readonly loss: ArrayLike<number>;
  readonly mask: ArrayLike<number>;
  readonly rows: number;
  readonly cols: number;
}

type Aggregator = (m: FlatLoss, lossScaleFactor: number | undefined) => number;

/** Per-row masked sums and mask sums; a value under a zero mask is ignored (even NaN), as in veRL `masked_sum`. */
function rowTotals(m: FlatLoss): { sums: Float64Array; counts: Float64Array } {
  const sums = new Float64Array(m.rows);
  const counts = new Float64Array(m.rows);
  for (let r = 0; r < m.rows; r++) {
    let s = 0;
    let c = 0;
    const base = r * m.cols;
    for (let t = 0; t < m.cols; t++) {
      const w = m.mask[base + t]!;
      if (w !== 0) s += m.loss[base + t]! * w;
      c += w;
    }
    sums[r] = s;
    counts[r] = c;
  }
  return { sums, counts };
}

/** Mean over rows with a nonzero mask sum of perRow(row); 0 when there is none. */
function seqMean(m: FlatLoss, perRow: (sum: number, count: number) => number): number {
  const { sums, counts } = rowTotals(m);
  let total = 0;
  let n = 0;
  for (let r = 0; r < m.rows; r++) {
    const count = counts[r]!;
    if (count > 0) {
      total += perRow(sums[r]!, count);
      n++;
    }
  }
  return n === 0 ? 0 : total / n;
}

/** Mirrors veRL `agg_loss` (dp_size 1, no global batch info); an all-zero mask gives 0 instead of 0/0. */
const AGGREGATORS: Record<LossAggregation, Aggregator> = {
  'token-mean': (m) => {
    const { sums, counts } = rowTotals(m);
    let s = 0;
    let c = 0;
    for (let r = 0; r < m.rows; r++) {
      s += sums[r]!;
      c += counts[r]!;
    }
    return c === 0 ? 0 : s / c;
  },
  'seq-mean-token-sum': (m) => seqMean(m, (sum) => sum),
  'seq-mean-token-mean': (m) => seqMean(m, (sum, count) => sum / (count + 1e-8)),
  'seq-mean-token-sum-norm': (m, factor) => {
    const { sums } = rowTotals(m);
    let s = 0;
    for (let r = 0; r < m.rows; r++) s += sums[r]!;
    return s / (factor ?? m.cols);
  },
};

export function checkAggregation(mode: unknown, key: string): LossAggregation {
  if (typeof mode !== 'string' || !Object.prototype.hasOwnProperty.call(AGGREGATORS, mode)) {
    throw unknownNameError(key, 'loss aggregation', mode, LOSS_AGGREGATIONS);
  }
  return mode as LossAggregation;
}

/** Aggregation over flat buffers (used by the losses). */
export function aggregateFlat(m: FlatLoss, mode: LossAggregation, lossScaleFactor?: number): number {
  return AGGREGATORS[mode](m, lossScaleFactor);
}

/**
 * Reduces a `[rows][tokens]` loss matrix to a scalar:
 * - `token-mean`: sum(mask * loss) / sum(mask)
 * - `seq-mean-token-sum`: mean over non-empty rows of the row sums
 * - `seq-mean-token-mean`: mean over non-empty rows of row sum / (row mask sum + 1e-8)
 * - `seq-mean-token-sum-norm`: total / (`lossScaleFactor`, default the padded length)
 */
export function aggregateLoss(loss: Matrix, mask: Matrix, mode: LossAggregation, opts: { lossScaleFactor?: number } = {}): number {
  const aggregation = checkAggregation(mode, 'mode');
  const factor = opts.lossScaleFactor;
  if (factor !== undefined && !(typeof factor === 'number' && Number.isFinite(factor) && factor > 0)) {
    throw new AlgorithmInputError('opts.lossScaleFactor', `must be a positive number, got ${String(factor)}`);
  }
  const l = flattenMatrix(loss, 'loss');
  const m = flattenMatrix(mask, 'mask', l.rows, l.cols);
  return aggregateFlat({ loss: l.data, mask: m.data, rows: l.rows, cols: l.cols }, aggregation, factor);
}
