import type { GraphWriter } from './onnx/GraphBuilder.js';

/**
 * Vocabulary columns per chunk of the output head. A vocabulary at most this wide is scored in one piece (the
 * LogSoftmax head); a wider one (Qwen's 151,936, Llama 3's 128,256) in chunks of this width, so that no tensor of
 * `[rows, tokens, vocab]` floats exists in the graph, forward or backward.
 */
export const HEAD_VOCAB_CHUNK = 16_384;

/** The chunks `[start, end)` of a vocabulary of `vocab` ids, each `chunk` wide but the last. */
export function vocabChunks(vocab: number, chunk: number = HEAD_VOCAB_CHUNK): Array<[number, number]> {
  const chunks: Array<[number, number]> = [];
  for (let start = 0; start < vocab; start += chunk) chunks.push([start, Math.min(vocab, start + chunk)]);
  return chunks;
}

export interface ChunkedHeadInputs {
  /** The final-normed hidden states of the predicting columns, `[batch, responses, hidden]`. */
  hidden: string;
  /**
   * The output projection's `[vocab, hidden]` rows (the Hugging Face tensor: sliced and differentiated in that
   * layout, no transposed copy).
   */
  head: {
    value: string;
    /** Casts a chunk's slice of a head stored in another precision. */ toFloat?: (x: string) => string;
  };
  /** The predicted ids `[batch, responses]` (int64). */
  targets: string;
  /** Each row's `1 / temperature`, `[batch, 1, 1]`. */
  inverseTemperature: string;
  hiddenSize: number;
  vocabSize: number;
}

/**
 * The tempered log-probs of the targets and the entropies, `[batch, responses]`, over the vocabulary in chunks
 * (`vocabChunks`): per chunk z = (h W_j) / T gives its log-sum-exp, its softmax-weighted mean logit and the target's
 * logit when the target falls in it; these combine to log p(t) = z_t - lse and H = lse - sum_v p_v z_v. Only
 * `[batch, responses, chunk]` tensors exist, one chunk at a time: each chunk's products wait on the previous chunk's
 * statistics through a zero-valued term (h + 0 * s, exact for finite s), which onnxruntime can neither reorder nor
 * merge.
 *
 * The derivative is written by hand (`customGradient`): for upstream gradients g1 of log p(t) and g2 of H,
 * dL/dz_v = p_v (g2 mean - g1 - g2 z_v) + g1 [v = t]; each chunk's logits are recomputed from h and the chunk's slice
 * of W (kept from the forward), again one chunk at a time and only after the loss's gradient exists, giving
 * dh = sum_j dz_j W_j^T / T and dW = [h^T dz_1 / T, ...]: in `RowBlocks` (one per chunk),
 * which a trainer adds into its buffer block by block, so that no `[vocab, hidden]` tensor is made in a run.
 */
export function writeChunkedScoreHead(
  g: GraphWriter,
  { hidden, head: { value: head, toFloat }, targets, inverseTemperature, hiddenSize, vocabSize }: ChunkedHeadInputs,
  chunk: number = HEAD_VOCAB_CHUNK,
): { logProbs: string; entropy: string } {
  const chunks = vocabChunks(vocabSize, chunk);
  const last = g.ints([-1]);
  const zero = g.scalar(0);
  const target = g.op('Unsqueeze', [targets, last]);
  const sumLast = (x: string) => g.op('ReduceSum', [x, last], { keepdims: 1 });
  const maxLast = (x: string) => g.op('ReduceMax', [x], { axes: [-1], keepdims: 1 });
  /** A zero that exists only once all of `values` do: orders what is written after it behind them. */
  const after = (values: string[]) => {
    const totals = values.map((v) => g.op('ReduceSum', [v], { keepdims: 0 }));
    return g.op('Mul', [totals.length === 1 ? totals[0]! : g.op('Sum', totals), zero]);
  };
  const targetShape = g.op('Shape', [targets]);
  const logitShape = g.op('Concat', [targetShape, g.ints([-1])], { axis: 0 });
  const logitsOf = (x: string, slice: string) => {
    const product = g.op('Reshape', [g.op('Gemm', [g.op('Reshape', [x, g.ints([-1, hiddenSize])]), slice], { transB: 1 }), logitShape]);
    return g.op('Mul', [product, inverseTemperature]);
  };
  const perToken = (x: string) => g.op('Reshape', [x, targetShape]);
  // Per chunk [start, end): where each target falls in it (`at`, 0 where it falls outside) and whether it does.
  const targetIn = chunks.map(([start, end]) => {
    const local = g.op('Sub', [target, g.ints([start], true)]);
    const inChunk = g.op('And', [g.op('GreaterOrEqual', [local, g.ints([0], true)]), g.op('Less', [local, g.ints([end - start], true)])]);
    return { at: g.op('Where', [inChunk, local, g.ints([0], true)]), inChunk };
  });

  const slices: string[] = [];
  let lse = '';
  let mean = '';
  const [logProbs, entropy] = g.customGradient(
    [hidden, head],
    () => {
      const stats: string[] = [];
      for (const [j, [start, end]] of chunks.entries()) {
        const stored = g.op('Slice', [head, g.ints([start]), g.ints([end]), g.ints([0])]);
        const slice = toFloat ? toFloat(stored) : stored;
        slices.push(slice);
        const x = stats.length === 0 ? hidden : g.op('Add', [hidden, after(stats.slice(-1))]);
        const z = logitsOf(x, slice);
        const max = maxLast(z);
        const e = g.op('Exp', [g.op('Sub', [z, max])]);
        const sum = sumLast(e);
        const { at, inChunk } = targetIn[j]!;
        const picked = g.op('GatherElements', [z, at], { axis: -1 });
        stats.push(
          g.op(
            'Concat',
            [
              g.op('Add', [max, g.op('Log', [sum])]),
              g.op('Div', [sumLast(g.op('Mul', [e, z])), sum]),
              g.op('Where', [inChunk, picked, zero]),
            ],
            { axis: -1 },
          ),
        );
      }
      // stats [batch, responses, 3 * chunks]: each chunk's log-sum-exp, mean logit and target logit.
      const [chunkLse, chunkMean, chunkTarget] = ([0, 1, 2] as const).map((k) =>
        g.op('Slice', [
          g.op('Reshape', [g.op('Concat', stats, { axis: -1 }), g.ints([0, 0, chunks.length, 3])]),
          g.ints([k]),
          g.ints([k + 1]),
          last,
        ]),
      ) as [string, string, string];
      const lseOf = g.op('Reshape', [chunkLse, g.ints([0, 0, -1])]);
      const top = maxLast(lseOf);
      lse = g.op('Add', [top, g.op('Log', [sumLast(g.op('Exp', [g.op('Sub', [lseOf, top])]))])]);
      const weights = g.op('Exp', [g.op('Sub', [lseOf, lse])]);
      mean = sumLast(g.op('Mul', [weights, g.op('Reshape', [chunkMean, g.ints([0, 0, -1])])]));
      const targetLogit = sumLast(g.op('Reshape', [chunkTarget, g.ints([0, 0, -1])]));
      return [perToken(g.op('Sub', [targetLogit, lse])), perToken(g.op('Sub', [lse, mean]))];
    },
    ([dLogProbs, dEntropy], [wantHidden, wantHead]) => {
      if (!dLogProbs && !dEntropy) return [undefined, undefined];
      const g1 = dLogProbs && g.op('Unsqueeze', [dLogProbs, last]);
      const g2 = dEntropy && g.op('Unsqueeze', [dEntropy, last]);
      // dz = p * (a - g2 z) + g1 [v = t], a = g2 mean - g1.
      const a = g2 ? (g1 ? g.op('Sub', [g.op('Mul', [g2, mean]), g1]) : g.op('Mul', [g2, mean])) : g.op('Neg', [g1!]);
      let order = after([a]);
      let dHidden: string | undefined;
      const dHead: string[] = [];
      chunks.forEach(([start, end], j) => {
        const x = g.op('Add', [hidden, order]);
        const z = logitsOf(x, slices[j]!);
        const p = g.op('Exp', [g.op('Sub', [z, lse])]);
        let dz = g.op('Mul', [p, g2 ? g.op('Sub', [a, g.op('Mul', [g2, z])]) : a]);
        if (g1) {
          // g1 added at each row's target: gathered, added and scattered back, one value a row (a Where broadcast over
          // the chunk took longer than the chunk's Exp); a row whose target is elsewhere writes back its own value.
          const { at, inChunk } = targetIn[j]!;
          const current = g.op('GatherElements', [dz, at], { axis: -1 });
          const updated = g.op('Where', [inChunk, g.op('Add', [current, g1]), current]);
          dz = g.op('ScatterElements', [dz, at, updated], { axis: -1 });
        }
        const flat = g.op('Reshape', [g.op('Mul', [dz, inverseTemperature]), g.ints([-1, end - start])]);
        const done: string[] = [];
        if (wantHidden) {
          const part = g.op('Gemm', [flat, slices[j]!]);
          dHidden = dHidden ? g.op('Add', [dHidden, part]) : part;
          done.push(dHidden);
        }
        if (wantHead) {
          const x2 = g.op('Reshape', [x, g.ints([-1, hiddenSize])]);
          dHead.push(g.op('Gemm', [flat, x2], { transA: 1 }));
          done.push(dHead[dHead.length - 1]!);
        }
        order = after(done);
      });
      return [
        dHidden && g.op('Reshape', [dHidden, g.op('Shape', [hidden])]),
        wantHead ? { blocks: dHead.map((value, j) => ({ start: chunks[j]![0], value })) } : undefined,
      ];
    },
  ) as [string, string];
  return { logProbs, entropy };
}
