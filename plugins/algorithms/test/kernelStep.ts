import { createKernel, makeTurn, type Plugin, type RolloutBatch, type TrainingBatch, type Trajectory } from '@drmas/core';
import algorithmsPlugin from '../src/index.js';

/** One episode of prompt `groupId`: one turn per agent, in the order given, each with its reward on its last of 3 tokens. */
export function trajectory(groupId: string, id: string, rewards: Record<string, number>, outcome = 0): Trajectory {
  return {
    groupId,
    trajectoryId: id,
    taskId: groupId,
    done: true,
    outcome,
    turns: Object.entries(rewards).map(([agentId, reward], index) =>
      makeTurn({
        groupId,
        trajectoryId: id,
        agentId,
        workerGroupId: agentId,
        round: 0,
        index,
        promptIds: [1],
        responseIds: [4, 5, 6],
        logProbs: [-1, -1, -1],
        valid: true,
        reward,
      }),
    ),
  };
}

export function producer(batches: RolloutBatch[]): Plugin {
  let round = 0;
  return {
    name: 'producer',
    apply(kernel) {
      kernel.hooks.rollout.tapPromise('producer', async () => structuredClone(batches[Math.min(round++, batches.length - 1)]!));
    },
  };
}

/** The advantages of a batch row (one turn), over its response tokens. */
export function advantagesOf(batch: TrainingBatch, row: number): number[] {
  const R = batch.responseLength;
  return Array.from(batch.advantages.subarray(row * R, row * R + batch.responseLengths[row]!));
}

/**
 * One kernel step over `batches` (handed out by the rollout hook in turn) with `algorithm.advantage` and the `extra`
 * algorithm keys; `config` adds top-level sections (`agents`, ...). Returns what the step saw.
 */
export async function runStep(
  advantage: string | undefined,
  batches: RolloutBatch[],
  extra: Record<string, unknown> = {},
  plugins: Plugin[] = [],
  config: Record<string, unknown> = {},
) {
  let seen: { rollout: RolloutBatch; batch: TrainingBatch } | undefined;
  const capture: Plugin = {
    name: 'capture',
    apply(k) {
      k.hooks.afterStep.tap('capture', (r) => {
        seen = { rollout: r.rollout, batch: r.batch };
      });
    },
  };
  const { kernel } = await createKernel({
    cwd: process.cwd(),
    inline: { plugins: [algorithmsPlugin(), producer(batches), capture, ...plugins], algorithm: { advantage, ...extra }, ...config },
  });
  const logs: string[] = [];
  const result = await kernel.step(kernel.runContext({ runDir: '/x', log: (m) => logs.push(m) }), 1);
  return { rollout: seen!.rollout, batch: seen!.batch, metrics: result.metrics, logs, kernel };
}
