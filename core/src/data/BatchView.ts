import type { LossColumn, LossTotals } from '../compute/TensorOps.js';
import type { TrainingBatch } from './TrainingBatch.js';

/** Some rows of a batch, in the order given: a worker group's share, a mini-batch, the rows to score. */
export interface BatchView {
  readonly batch: TrainingBatch;
  /** Row indices into `batch`. */
  readonly rows: Int32Array;
}

/** The rows one worker group trains on: its agents' turns, in trajectory order. */
export interface WorkerGroupBatch extends BatchView {
  readonly workerGroupId: string;
  readonly agentIds: readonly string[];
}

/** The rows at `positions` of a view (positions index `view.rows`), in that order. */
export function selectRows(view: BatchView, positions: ArrayLike<number>): BatchView {
  return { batch: view.batch, rows: Int32Array.from(positions, (p) => view.rows[p]!) };
}

/** Whether `row` trains: false for a row an estimator kept out of the loss (`TrainingBatch.excludedRows`). */
export function rowTrains(batch: TrainingBatch, row: number): boolean {
  return batch.excludedRows?.[row] !== 1;
}

/**
 * The rows with a nonzero advantage on some trained token: the only rows an inert loss (`zeroAdvantageRowsInert`)
 * learns from. Rows kept out of the loss (`excludedRows`) have no trained token.
 */
export function rowsWithAdvantage(view: BatchView): BatchView {
  const { responseLength: R, responseMask, advantages } = view.batch;
  const kept: number[] = [];
  for (const row of view.rows) {
    if (!rowTrains(view.batch, row)) continue;
    for (let t = 0; t < R; t++) {
      if (responseMask[row * R + t] !== 0 && advantages[row * R + t] !== 0) {
        kept.push(row);
        break;
      }
    }
  }
  return { batch: view.batch, rows: Int32Array.from(kept) };
}

/**
 * What a loss over `view` normalizes by: trained tokens, rows with at least one trained token (rows with none, those
 * kept out of the loss among them, do not count, as in the seq-mean aggregations), `responseLength` (the
 * seq-mean-token-sum-norm divisor) and the number of micro-batches of `microBatchSize` rows.
 */
export function lossTotals(view: BatchView, options: { responseLength: number; microBatchSize: number }): LossTotals {
  const { responseLength: R, responseMask } = view.batch;
  let tokens = 0;
  let rows = 0;
  for (const row of view.rows) {
    if (!rowTrains(view.batch, row)) continue;
    let rowTokens = 0;
    for (let t = 0; t < R; t++) rowTokens += responseMask[row * R + t]!;
    tokens += rowTokens;
    if (rowTokens > 0) rows++;
  }
  const microBatchSize = Math.max(1, Math.floor(options.microBatchSize || view.rows.length));
  return { tokens, rows, responseLength: options.responseLength, microBatches: Math.max(1, Math.ceil(view.rows.length / microBatchSize)) };
}

/** The longest response among the view's rows (at least 1). */
export function longestResponse(view: BatchView): number {
  let longest = 1;
  for (const row of view.rows) longest = Math.max(longest, view.batch.responseLengths[row]!);
  return longest;
}

/**
 * Each view row's values over its response tokens, from an array laid out `[view rows * responseLength]` in the
 * view's order (as `PolicyBackend.score` returns them).
 */
export function responseValues(view: BatchView, values: ArrayLike<number>): number[][] {
  const { responseLength: R, responseLengths } = view.batch;
  return Array.from(view.rows, (row, i) => Array.from({ length: responseLengths[row]! }, (_, j) => values[i * R + j]!));
}

/**
 * The batch's columns for `rows`, cut after the last response column any of them trains (at least 1): a trainer's
 * micro-batch spends no compute on columns that are padding for every row in it. What every engine feeds a loss
 * from: each input a `[rows.length, columns]` float32 copy.
 */
export interface TrainedColumns {
  /** Response columns kept. */
  columns: number;
  /** A `[rows.length, columns]` copy of a `[batch rows * responseLength]` column (log-probs, values, returns). */
  take: (flat: ArrayLike<number>) => Float32Array;
  /** The response mask as losses see it: 0 on every token of a row kept out of the loss (`excludedRows`). */
  responseMask: () => Float32Array;
  /** A column a loss reads (`LossColumn`), built from the batch's own column for it. */
  column: (name: LossColumn) => Float32Array;
}

/** The message of a loss column the batch lacks. */
function missingColumn(name: LossColumn, column: string): Error {
  return new Error(`the loss reads ${name} but the batch has no ${column} column`);
}

export function trainedColumns(batch: TrainingBatch, rows: ArrayLike<number>): TrainedColumns {
  const R = batch.responseLength;
  let columns = 1;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if (!rowTrains(batch, r)) continue;
    for (let j = R - 1; j >= columns; j--) {
      if (batch.responseMask[r * R + j] !== 0) {
        columns = j + 1;
        break;
      }
    }
  }
  /** `[rows.length, columns]` of `value(row, token index into the batch's columns)`. */
  const cut = (value: (row: number, at: number) => number): Float32Array => {
    const out = new Float32Array(rows.length * columns);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      for (let j = 0; j < columns; j++) out[i * columns + j] = value(r, r * R + j);
    }
    return out;
  };
  const take = (flat: ArrayLike<number>): Float32Array => {
    const out = new Float32Array(rows.length * columns);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      for (let j = 0; j < columns; j++) out[i * columns + j] = flat[r * R + j]!;
    }
    return out;
  };
  const sides = (): Int8Array => {
    if (!batch.pairs) throw missingColumn('preference', 'pairs');
    const side = new Int8Array(batch.rows);
    batch.pairs.chosen.forEach((row) => (side[row] = 1));
    batch.pairs.rejected.forEach((row) => (side[row] = -1));
    return side;
  };
  const columnOf: Record<LossColumn, () => Float32Array> = {
    advantages: () => {
      const { advantages, advantageFactors: factors } = batch;
      return factors ? cut((_, at) => advantages[at]! * factors[at]!) : take(advantages);
    },
    lossWeights: () => {
      if (!batch.lossWeights) throw missingColumn('lossWeights', 'lossWeights');
      return take(batch.lossWeights);
    },
    preference: () => {
      const side = sides();
      return cut((r) => side[r]!);
    },
  };
  return {
    columns,
    take,
    responseMask: () =>
      batch.excludedRows ? cut((r, at) => (rowTrains(batch, r) ? batch.responseMask[at]! : 0)) : take(batch.responseMask),
    column: (name) => columnOf[name](),
  };
}

/**
 * A micro-batch's token budget (veRL's `use_dynamic_bsz` with `ppo_max_token_len_per_gpu`): at most `tokens` padded
 * tokens, the micro-batch's rows times its longest prompt plus its longest response (what an engine that pads its
 * rows computes on). Rows go widest first (prompt plus response; rows of one width in their order), packed greedily,
 * so that short rows share a micro-batch rather than each pad up to a long neighbour's width. A row longer than the
 * budget goes alone.
 */
export interface MicroBatchTokens {
  tokens: number;
  batch: TrainingBatch;
  /** Rows that go into a micro-batch together, consecutive in `rows` (2: a pairwise loss's preference pairs); default 1. */
  unit?: number;
}

/** A unit of rows that go into a micro-batch together, with its rows' longest prompt and longest response. */
interface RowUnit {
  rows: Int32Array;
  prompt: number;
  response: number;
}

/** `picked`'s units of `unit` consecutive rows, widest first (their longest prompt plus their longest response). */
function unitsWidestFirst(picked: Int32Array, { batch, unit = 1 }: MicroBatchTokens): RowUnit[] {
  const units = Array.from({ length: Math.ceil(picked.length / unit) }, (_, u) => {
    const rows = picked.subarray(u * unit, (u + 1) * unit);
    let prompt = 0;
    let response = 0;
    for (const row of rows) {
      prompt = Math.max(prompt, batch.promptIds[row]!.length);
      response = Math.max(response, batch.responseLengths[row]!);
    }
    return { rows, prompt, response };
  });
  return units.sort((a, b) => b.prompt + b.response - (a.prompt + a.response));
}

/**
 * `rows` split into micro-batches of `size` rows (all of them in one when `size` is 0), consecutive; with `budget`,
 * of at most its padded tokens each, rows widest first (`MicroBatchTokens`). With `partOf` (a part index per batch
 * row, e.g. its agent), each part's rows are split on their own, parts in increasing order, so that no micro-batch
 * mixes two parts and each part's gradient can be read off before the next one's is added.
 */
export function partMicroBatches(
  rows: Int32Array,
  size: number,
  partOf?: Int32Array,
  budget?: MicroBatchTokens,
): Array<{ rows: Int32Array; part: number }> {
  const step = Math.max(1, Math.floor(size || rows.length));
  const out: Array<{ rows: Int32Array; part: number }> = [];
  const split = (part: number, given: Int32Array) => {
    if (!budget) {
      for (let start = 0; start < given.length; start += step) out.push({ rows: given.subarray(start, start + step), part });
      return;
    }
    const units = unitsWidestFirst(given, budget);
    const picked = new Int32Array(given.length);
    let filled = 0;
    for (const { rows: unitRows } of units) {
      picked.set(unitRows, filled);
      filled += unitRows.length;
    }
    // Greedily, a unit at a time, the first whatever its width.
    let start = 0;
    for (let u = 0; u < units.length;) {
      let { prompt, response } = units[u]!;
      let end = start + units[u++]!.rows.length;
      for (; u < units.length; u++) {
        const next = units[u]!;
        const [widerPrompt, widerResponse] = [Math.max(prompt, next.prompt), Math.max(response, next.response)];
        const count = end + next.rows.length - start;
        if (count > step || count * (widerPrompt + widerResponse) > budget.tokens) break;
        [prompt, response, end] = [widerPrompt, widerResponse, end + next.rows.length];
      }
      out.push({ rows: picked.subarray(start, end), part });
      start = end;
    }
  };
  if (!partOf) {
    split(0, rows);
    return out;
  }
  const parts = [...new Set(Array.from(rows, (row) => partOf[row]!))].sort((a, b) => a - b);
  for (const part of parts)
    split(
      part,
      rows.filter((row) => partOf[row] === part),
    );
  return out;
}
