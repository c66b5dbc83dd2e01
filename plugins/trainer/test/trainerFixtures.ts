import type { PolicyBackend, WeightTensor } from '@drmas/core';
import { PolicyLossFunction } from '@drmas/plugin-algorithms';
import type { TrainedWorkerGroup } from '../src/WorkerGroupsService.js';

/** PPO's clipped surrogate as the trainer's tests use it: clip 0.2 both ways, dual clip 3, token-mean, no KL or entropy. */
export function vanillaPpoLoss(): PolicyLossFunction {
  return new PolicyLossFunction({
    variant: 'vanilla',
    clipRatioLow: 0.2,
    clipRatioHigh: 0.2,
    clipRatioC: 3,
    aggregation: 'token-mean',
    klCoef: 0,
    klType: 'low_var_kl',
    entropyCoef: 0,
  });
}

/** One worker group `policy` of one trainable agent on `backend`, with AdamW (clip 1), a constant rate and one epoch. */
export function singleAgentGroup(
  backend: PolicyBackend,
  training: { lr: number; microBatchSize: number; miniBatches: number },
): TrainedWorkerGroup {
  return {
    id: 'policy',
    agents: ['agent'],
    engine: backend.name,
    frozenAgents: [],
    trainer: backend,
    rollout: backend,
    codec: undefined,
    training: {
      optimizer: { lr: training.lr, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, maxGradNorm: 1, paramGroups: [] },
      schedule: { kind: 'constant', warmupSteps: 0 },
      microBatchSize: training.microBatchSize,
      miniBatches: training.miniBatches,
      epochs: 1,
    },
  };
}

/** A copy of an engine's exported weights, by name. */
export const copyWeights = (weights: Map<string, WeightTensor>) =>
  new Map([...weights].map(([name, w]) => [name, Float32Array.from(w.data)]));

/** Whether two weight copies are bitwise equal. */
export const sameWeights = (x: Map<string, Float32Array>, y: Map<string, Float32Array>) =>
  [...x].every(([name, data]) => Buffer.from(y.get(name)!.buffer).equals(Buffer.from(data.buffer)));
