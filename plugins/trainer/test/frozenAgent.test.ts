import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel, Stage, WorkerGroups } from '@drmas/core';
import { copyWeights } from './trainerFixtures.js';
import { toyProject } from './toyRollout.js';

/**
 * The toy task with `right` frozen (`trainable: false`) on a model of its own: after two steps its weights are bitwise
 * the initial ones while `left`'s moved, no optimizer step ran for it, and the metrics count its rows as frozen.
 */
const project = toyProject('frozen-agent', {
  trainer: { steps: 2, seed: 5, logRollouts: 0 },
  agents: { left: { model: 'left' }, right: { model: 'right', trainable: false } },
});
afterAll(() => project.dispose());

describe('agents.<role>.trainable: false', () => {
  test("a frozen agent's weights stay bitwise unchanged over steps while the other agent's change", async () => {
    const { kernel } = await createKernel({ cwd: project.dir });
    const snapshots: Array<Record<'left' | 'right', Map<string, Float32Array>>> = [];
    const take = async () => {
      const groups = kernel.get(WorkerGroups);
      snapshots.push({
        left: copyWeights(await groups.forAgent('left').trainer.exportWeights()),
        right: copyWeights(await groups.forAgent('right').trainer.exportWeights()),
      });
    };
    kernel.hooks.beforeStep.tapPromise({ name: 'snapshot', stage: Stage.LAST }, async (step) => {
      if (step.step === 1) await take();
    });
    kernel.hooks.afterStep.tapPromise({ name: 'snapshot', stage: Stage.LAST }, take);
    const logs: string[] = [];
    const runDir = project.path('run');
    await kernel.run({ runDir, log: (line) => logs.push(line) });

    expect(snapshots).toHaveLength(3);
    const [start, , end] = snapshots;
    for (const [name, data] of start!.right) expect(Buffer.from(end!.right.get(name)!.buffer).equals(Buffer.from(data.buffer))).toBe(true);
    const moved = [...start!.left].filter(([name, data]) => !Buffer.from(end!.left.get(name)!.buffer).equals(Buffer.from(data.buffer)));
    expect(moved.length).toBeGreaterThan(0);

    const lines = readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    for (const line of lines) {
      // The toy rollout: 2 prompts x 4 samples, one turn per agent.
      expect(line['actor/right/frozen_rows']).toBe(8);
      expect(line['actor/right/updates']).toBeUndefined();
      expect(line['actor/left/updates']).toBe(1);
      expect(line['actor/left/frozen_rows']).toBeUndefined();
    }
    expect(logs.join('\n')).toContain('worker group right: every agent is frozen (trainable: false); it samples and is never updated');
  });
});
