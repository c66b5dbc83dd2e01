import { responseValues } from '../data/BatchView.js';
import { TrainingBatch } from '../data/TrainingBatch.js';
import type { PolicyBackend } from './PolicyBackend.js';

/**
 * Teacher-forced log-probs (and entropies) of (prompt, response) token rows outside a training step, each row's
 * values cut to its response: packs the rows into a batch and scores all of them.
 */
export async function scoreSequences(
  backend: Pick<PolicyBackend, 'score'>,
  prompts: readonly ArrayLike<number>[],
  responses: readonly ArrayLike<number>[],
  options: { temperatures?: ArrayLike<number>; withEntropy?: boolean } = {},
): Promise<{ logProbs: number[][]; entropy?: number[][] }> {
  const view = TrainingBatch.fromSequences(prompts, responses, { temperatures: options.temperatures }).all();
  const scored = await backend.score({ batch: view, withEntropy: options.withEntropy });
  return {
    logProbs: responseValues(view, scored.logProbs),
    ...(scored.entropy ? { entropy: responseValues(view, scored.entropy) } : {}),
  };
}
