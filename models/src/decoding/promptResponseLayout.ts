/**
 * Prompt + response rows laid out for teacher forcing: prompts left-padded to `promptColumns`, responses
 * right-padded to `responseColumns`, so the logits predicting response token j of every row come from the same
 * column `promptColumns - 1 + j` (one slice, no gather).
 */
export interface PromptResponseLayout {
  rows: number;
  promptColumns: number;
  responseColumns: number;
  /** `[rows * (promptColumns + responseColumns)]` */
  ids: Int32Array;
  valid: Uint8Array;
  positions: Int32Array;
  /** Response ids `[rows * responseColumns]`, 0 at padding. */
  targets: Int32Array;
}

export function promptResponseLayout(
  prompts: ArrayLike<number>[],
  responses: ArrayLike<number>[],
  responseColumns = Math.max(1, ...responses.map((r) => r.length)),
): PromptResponseLayout {
  const rows = prompts.length;
  if (responses.length !== rows) throw new RangeError(`${rows} prompts but ${responses.length} responses`);
  const promptColumns = Math.max(1, ...prompts.map((p) => p.length));
  const width = promptColumns + responseColumns;
  const ids = new Int32Array(rows * width);
  const valid = new Uint8Array(rows * width);
  const positions = new Int32Array(rows * width);
  const targets = new Int32Array(rows * responseColumns);
  for (let r = 0; r < rows; r++) {
    const prompt = prompts[r]!;
    const response = responses[r]!;
    if (prompt.length === 0) throw new RangeError(`row ${r} has an empty prompt; scoring needs at least one prompt token`);
    const pad = promptColumns - prompt.length;
    const n = Math.min(response.length, responseColumns);
    for (let j = 0; j < prompt.length; j++) {
      const o = r * width + pad + j;
      ids[o] = prompt[j]!;
      valid[o] = 1;
      positions[o] = j;
    }
    for (let j = 0; j < n; j++) {
      const o = r * width + promptColumns + j;
      const token = response[j]!;
      ids[o] = token;
      valid[o] = 1;
      positions[o] = prompt.length + j;
      targets[r * responseColumns + j] = token;
    }
  }
  return { rows, promptColumns, responseColumns, ids, valid, positions, targets };
}
