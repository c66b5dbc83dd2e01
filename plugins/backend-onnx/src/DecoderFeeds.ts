import { scoringTemperature } from '@drmas/core';
import { rotaryTables, type DecoderConfig, type PromptResponseLayout } from '@drmas/models';
import type * as OrtModule from 'onnxruntime-node';
import { GraphNames } from './DecoderGraph.js';
import type { Ort } from './ExecutionProvider.js';

export type Feeds = Record<string, OrtModule.Tensor>;

/** Additive attention bias of a hidden key (the tfjs backend's value). */
export const MASKED = -1e9;

export function ortTensor(ort: Ort, data: Float32Array | BigInt64Array, dims: number[]): OrtModule.Tensor {
  return new ort.Tensor(data instanceof Float32Array ? 'float32' : 'int64', data, dims);
}

/** Inputs of the prefill, score and training graphs for a left-padded `[rows, columns]` batch. */
export function forwardFeeds(
  ort: Ort,
  config: DecoderConfig,
  invFreq: Float64Array,
  batch: { ids: Int32Array; valid: Uint8Array; positions: Int32Array; rows: number; columns: number },
): Feeds {
  const { ids, valid: validMask, positions, rows, columns } = batch;
  const c = config;
  const group = c.numHeads / c.numKvHeads;
  const { cos, sinSigned } = rotaryTables(invFreq, positions);
  const bias = new Float32Array(rows * group * columns * columns);
  let o = 0;
  for (let b = 0; b < rows; b++) {
    for (let g = 0; g < group; g++) {
      for (let q = 0; q < columns; q++) {
        for (let k = 0; k < columns; k++, o++) if (k > q || validMask[b * columns + k] === 0) bias[o] = MASKED;
      }
    }
  }
  return {
    [GraphNames.inputIds]: ortTensor(
      ort,
      BigInt64Array.from(ids, (x) => BigInt(x)),
      [rows, columns],
    ),
    [GraphNames.ropeCos]: ortTensor(ort, cos, [rows, columns, 1, 1, c.headDim]),
    [GraphNames.ropeSin]: ortTensor(ort, sinSigned, [rows, columns, 1, 1, c.headDim]),
    [GraphNames.attentionBias]: ortTensor(ort, bias, [rows, 1, group * columns, columns]),
  };
}

/**
 * All inputs of the score graph (and of the training graph's forward) for teacher-forced scoring of a prompt /
 * response layout, each row's logits scaled by 1 / its temperature.
 */
export function scoreFeeds(
  ort: Ort,
  config: DecoderConfig,
  invFreq: Float64Array,
  layout: PromptResponseLayout,
  temperatures: ArrayLike<number | undefined>,
): Feeds {
  const { rows: n, promptColumns: p, responseColumns: r } = layout;
  const feeds = forwardFeeds(ort, config, invFreq, { ...layout, rows: n, columns: p + r });
  feeds[GraphNames.targets] = ortTensor(
    ort,
    BigInt64Array.from(layout.targets, (x) => BigInt(x)),
    [n, r],
  );
  feeds[GraphNames.predictStart] = ortTensor(ort, BigInt64Array.of(BigInt(p - 1)), [1]);
  feeds[GraphNames.predictEnd] = ortTensor(ort, BigInt64Array.of(BigInt(p - 1 + r)), [1]);
  feeds[GraphNames.inverseTemperature] = ortTensor(
    ort,
    Float32Array.from({ length: n }, (_, i) => 1 / scoringTemperature(temperatures[i])),
    [n, 1, 1],
  );
  return feeds;
}
