import type { BatchView, CriticContexts } from '@drmas/core';

/**
 * MAPPO's centralized state for each of the view's rows: the responses of every earlier turn of its episode (all
 * agents, in turn order) followed by the row's own prompt, keeping the latest tokens when longer than `maxTokens`
 * minus the row's response. Rows are packed in trajectory order, so a row's earlier turns are the rows before it with
 * its trajectory id.
 */
export function jointContexts(view: BatchView, maxTokens: number | undefined): CriticContexts {
  const { batch } = view;
  const R = batch.responseLength;
  const wanted = new Set(view.rows);
  const history = new Map<number, number[]>();
  const contexts = new Map<number, Int32Array>();
  for (let row = 0; row < batch.rows; row++) {
    const trajectory = batch.ids.trajectory.codes[row]!;
    const earlier = history.get(trajectory) ?? [];
    if (wanted.has(row)) {
      const prompt = batch.promptIds[row]!;
      const context = new Int32Array(earlier.length + prompt.length);
      context.set(earlier);
      context.set(prompt, earlier.length);
      const room = maxTokens === undefined ? context.length : Math.max(prompt.length, maxTokens - batch.responseLengths[row]!);
      contexts.set(row, context.length > room ? context.subarray(context.length - room) : context);
    }
    const response = batch.responseIds.subarray(row * R, row * R + batch.responseLengths[row]!);
    for (const id of response) earlier.push(id);
    history.set(trajectory, earlier);
  }
  return contexts;
}
