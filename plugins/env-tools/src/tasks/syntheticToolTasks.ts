import { DrmasError, hashParts, SplitMix32, type ToolTaskContent, type ToolTaskKind } from '@drmas/core';
import type { ToolTask } from './ToolTask.js';

/** Share of all tasks (by their content, whatever the seed) held out: a held-out task is never trained on. */
export const TOOLS_HELD_OUT_SHARE = 0.15;
const MAX_REDRAWS = 10_000;

export interface SyntheticToolOptions {
  seed: number;
  /** The kinds of task, drawn uniformly: what the tools offer (the calculator's `arithmetic`, the search tool's `lookup`). */
  kinds: readonly ToolTaskKind[];
  trainSize: number;
  testSize: number;
}

export function isHeldOutTask(key: string): boolean {
  return hashParts('drmas/env-tools/held-out', key) / 4294967296 < TOOLS_HELD_OUT_SHARE;
}

/**
 * Deterministic tasks that need a tool, of the kinds the tools offer: `What is 48213 * 937?` (the calculator's
 * `arithmetic`), `What is in /notes/3.txt?` (the filesystem's `file`, the file made for the episode), env-search's
 * single-hop knowledge-base questions (the search tool's `lookup`). Task `index` of a split is a pure function of
 * (seed, split, index): its own generator picks the kind, and the kind draws the task from it. The held-out list has
 * `testSize` distinct tasks, none in training.
 */
export function syntheticToolTasks(options: SyntheticToolOptions): { train: ToolTask[]; test: ToolTask[] } {
  const { seed, kinds, trainSize, testSize } = options;
  const draw = (split: string, index: number, attempt: number): { key: string; task: ToolTaskContent } => {
    const random = new SplitMix32(hashParts('synthetic-tools', seed, split, index, attempt));
    return random.pick(kinds).draw(random, seed);
  };
  const train: ToolTask[] = [];
  for (let index = 0; index < trainSize; index++) {
    for (let attempt = 0; attempt < MAX_REDRAWS; attempt++) {
      const drawn = draw('train', index, attempt);
      if (isHeldOutTask(drawn.key)) continue;
      train.push({ id: `tools-${seed}-train-${index}`, ...drawn.task });
      break;
    }
  }
  const test: ToolTask[] = [];
  const seen = new Set<string>();
  const maxDraws = 1000 + 50 * testSize;
  for (let k = 0; test.length < testSize; k++) {
    if (k >= maxDraws)
      throw new DrmasError('LIMIT_EXCEEDED', `only ${test.length} distinct held-out tool tasks exist for env.tools.testSize ${testSize}`, {
        key: 'env.tools.testSize',
        hint: `lower env.tools.testSize to ${test.length} or less, or add a kind to env.tools.kinds`,
      });
    const drawn = draw('test', k, 0);
    if (!isHeldOutTask(drawn.key) || seen.has(drawn.key)) continue;
    seen.add(drawn.key);
    test.push({ id: `tools-${seed}-test-${test.length}`, ...drawn.task });
  }
  return { train, test };
}
