import { DrmasError } from '@drmas/core';
import { withSpec, type Block, type BlockContext, type RowPredicate, type Setting } from './Block.js';

export interface LoopOptions {
  /** Runs of `body` at most (the first included). */
  maxLoops: Setting<number>;
}

/**
 * Runs `body` on all rows, then again on the rows for which `condition` does not hold yet, at most `maxLoops`
 * times. Inside, `context.loop` tells the iteration (so a block can skip the last one).
 */
export function loopUntil(condition: RowPredicate, body: Block, options: LoopOptions): Block {
  return withSpec(
    async (rows, context) => {
      const maxLoops = resolveMaxLoops(options.maxLoops, context);
      let active = rows;
      for (let iteration = 0; iteration < maxLoops && active.length > 0; iteration++) {
        const inner = { ...context, loop: { iteration, maxLoops, isLast: iteration === maxLoops - 1 } };
        await body(active, inner);
        active = active.filter((row) => !condition(row, inner));
      }
    },
    { kind: 'loopUntil', condition, body, maxLoops: options.maxLoops },
  );
}

/** A loop's `maxLoops` for this run: an integer >= 1. */
export function resolveMaxLoops(setting: Setting<number>, context: BlockContext): number {
  const maxLoops = typeof setting === 'function' ? setting(context) : setting;
  if (!Number.isInteger(maxLoops) || maxLoops < 1) {
    throw new DrmasError('CONFIG_INVALID', `loopUntil: maxLoops must be an integer >= 1, got ${String(maxLoops)}`, {
      key: 'orchestra.maxLoops',
      hint: 'set orchestra.maxLoops to 1 or more',
    });
  }
  return maxLoops;
}
