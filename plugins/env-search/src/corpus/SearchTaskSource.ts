import { normalizeAnswer, SplitMix32 } from '@drmas/core';
import { SearchInputError } from '../errors.js';
import type { SearchQuestion } from './SearchQuestion.js';

export interface SearchTaskSourceOptions {
  seed: number;
  /** Share of the questions held out for `test()`; default 0.1. */
  testFraction?: number;
}

export interface SearchTaskBatch {
  tasks: SearchQuestion[];
  /** Pass to the next `batch` call; save it in checkpoints to resume the exact stream. */
  nextCursor: number;
}

/**
 * Deterministic train/test split of a question set and a resumable stream of training batches.
 * The cursor counts training questions handed out so far; each pass over the training set (an epoch) uses its own
 * seeded order, so `batch(c, n)` depends only on the seed, the questions and `c`. Held-out questions never appear
 * in training, and neither does any training question whose normalised text equals a held-out one.
 */
export class SearchTaskSource {
  readonly train: readonly SearchQuestion[];
  private readonly heldOut: readonly SearchQuestion[];
  private readonly seed: number;
  private epochOrder: { epoch: number; order: number[] } | undefined;

  constructor(questions: readonly SearchQuestion[], options: SearchTaskSourceOptions) {
    const { seed, testFraction = 0.1 } = options;
    if (!Number.isInteger(seed)) throw new SearchInputError('options.seed', `must be an integer, got ${seed}`);
    if (!(testFraction >= 0 && testFraction < 1)) {
      throw new SearchInputError('options.testFraction', `must be in [0, 1), got ${testFraction}`);
    }
    const ids = new Set<string>();
    for (const q of questions) {
      if (ids.has(q.id)) throw new SearchInputError('questions', `duplicate question id "${q.id}"; ids must be unique`);
      ids.add(q.id);
    }
    this.seed = seed;
    const positions = SplitMix32.derive(seed, 'split').shuffle(questions.map((_, i) => i));
    const testCount = Math.round(questions.length * testFraction);
    const isTest = new Uint8Array(questions.length);
    for (let i = 0; i < testCount; i++) isTest[positions[i]!] = 1;
    this.heldOut = questions.filter((_, i) => isTest[i]);
    const heldOutTexts = new Set(this.heldOut.map((q) => normalizeAnswer(q.question)));
    this.train = questions.filter((q, i) => !isTest[i] && !heldOutTexts.has(normalizeAnswer(q.question)));
    if (this.train.length === 0) {
      throw new SearchInputError('questions', `no training questions left (${questions.length} questions, testFraction ${testFraction})`);
    }
  }

  batch(cursor: number, count: number): SearchTaskBatch {
    if (!Number.isSafeInteger(cursor) || cursor < 0) throw new SearchInputError('cursor', `must be an integer >= 0, got ${cursor}`);
    if (!Number.isInteger(count) || count < 0) throw new SearchInputError('count', `must be an integer >= 0, got ${count}`);
    const n = this.train.length;
    const tasks: SearchQuestion[] = [];
    for (let c = cursor; c < cursor + count; c++) {
      tasks.push(this.train[this.orderOf(Math.floor(c / n))[c % n]!]!);
    }
    return { tasks, nextCursor: cursor + count };
  }

  /** The held-out questions, in their original order. */
  test(): SearchQuestion[] {
    return [...this.heldOut];
  }

  private orderOf(epoch: number): number[] {
    if (this.epochOrder?.epoch !== epoch) {
      const order = SplitMix32.derive(this.seed, `epoch-${epoch}`).shuffle(this.train.map((_, i) => i));
      this.epochOrder = { epoch, order };
    }
    return this.epochOrder.order;
  }
}
