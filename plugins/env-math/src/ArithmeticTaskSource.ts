import { EpochSchedule, hashFraction, hashParts, SplitMix32, type QuestionRequest, type QuestionSet } from '@drmas/core';
import { MathTaskSourceError } from './errors.js';
import type { ArithmeticTask, MathSplit, MathTask, MathTaskSource, TaskBatch } from './MathTask.js';
import { ARITHMETIC_LEVELS, generateArithmeticProblem, type GeneratedProblem } from './arithmetic/generateProblem.js';

export interface ArithmeticTaskSourceOptions {
  seed: number;
  /** Difficulty levels to draw from, uniformly: 1 a±b, 2 a*b+c, 3 parentheses and negatives, 4 fractions, 5 word problems. */
  levels: number[];
  /** A finite training pool of this many tasks, reshuffled each epoch; omitted: an endless stream of fresh draws. */
  trainSize?: number;
  /** Size of the fixed held-out list. */
  testSize: number;
}

export const ARITHMETIC_DATA_SOURCE = 'synthetic-arithmetic';

/**
 * Share of all problems (by partition key) reserved for the held-out split. The partition depends on the problem
 * only, not on the seed, so every run holds out the same problems and train never sees a test question.
 */
export const HELD_OUT_SHARE = 0.1;

/** A draw lands in the wrong partition about once in ten; this bound is never reached in practice. */
const MAX_REDRAWS = 10_000;

export function isHeldOutProblem(key: string): boolean {
  return hashFraction('drmas/env-math/held-out', key) < HELD_OUT_SHARE;
}

/**
 * Synthetic arithmetic tasks. Task `index` of a split is a pure function of (seed, split, index): it is drawn from
 * its own generator seeded by a hash of the three, never from a shared stream.
 */
export class ArithmeticTaskSource implements MathTaskSource {
  readonly seed: number;
  readonly levels: readonly number[];
  readonly trainSize?: number;
  readonly testSize: number;
  private readonly schedule?: EpochSchedule;
  private testTasks?: ArithmeticTask[];

  constructor(options: ArithmeticTaskSourceOptions) {
    const { seed, levels, trainSize, testSize } = options;
    if (!Number.isFinite(seed)) throw new MathTaskSourceError(`seed must be a finite number, got ${seed}`, 'seed');
    if (!Array.isArray(levels) || levels.length === 0)
      throw new MathTaskSourceError(`levels must list at least one of ${ARITHMETIC_LEVELS.join(', ')}`, 'levels');
    for (const level of levels) {
      if (!(ARITHMETIC_LEVELS as readonly number[]).includes(level))
        throw new MathTaskSourceError(`unknown level ${level} in levels; use levels from ${ARITHMETIC_LEVELS.join(', ')}`, 'levels');
    }
    if (trainSize !== undefined && !(Number.isInteger(trainSize) && trainSize > 0))
      throw new MathTaskSourceError(`trainSize must be a positive integer, got ${trainSize}; omit it for an endless stream`, 'trainSize');
    if (!(Number.isInteger(testSize) && testSize >= 0))
      throw new MathTaskSourceError(`testSize must be a non-negative integer, got ${testSize}`, 'testSize');
    this.seed = seed;
    this.levels = [...levels];
    this.trainSize = trainSize;
    this.testSize = testSize;
    if (trainSize !== undefined) this.schedule = new EpochSchedule(trainSize, seed, 'arithmetic-train');
  }

  /** Training task `index` (below `trainSize` when one is set). Its question is never in the held-out split. */
  train(index: number): ArithmeticTask {
    checkIndex(index, 'index');
    if (this.trainSize !== undefined && index >= this.trainSize)
      throw new MathTaskSourceError(
        `train index ${index} is outside the pool of trainSize ${this.trainSize}; use batch(cursor, count) to cycle through epochs`,
        'index',
      );
    for (let attempt = 0; attempt < MAX_REDRAWS; attempt++) {
      const drawn = this.draw('train', index, attempt);
      if (!isHeldOutProblem(drawn.problem.key)) return this.toTask(drawn, 'train', index);
    }
    throw new Error(`no training problem found for index ${index} after ${MAX_REDRAWS} draws`);
  }

  /**
   * The held-out list: `testSize` distinct problems from the held-out partition, the same for a given seed and levels.
   * Returns a fresh array each call.
   */
  test(): ArithmeticTask[] {
    this.testTasks ??= this.buildTestList();
    return this.testTasks.map((task) => ({ ...task }));
  }

  /**
   * `count` training tasks starting at `cursor`. With `trainSize`, cursor c is position c % trainSize of epoch
   * floor(c / trainSize), each epoch a permutation drawn from (seed, epoch); without, it is simply `train(c)`.
   */
  batch(cursor: number, count: number): TaskBatch {
    checkIndex(cursor, 'cursor');
    checkIndex(count, 'count');
    const tasks: ArithmeticTask[] = [];
    for (let c = cursor; c < cursor + count; c++) tasks.push(this.train(this.schedule ? this.schedule.indexAt(c) : c));
    return { tasks, nextCursor: cursor + count };
  }

  private draw(split: MathSplit, index: number, attempt: number): { level: number; problem: GeneratedProblem } {
    const random = new SplitMix32(hashParts('arithmetic', this.seed, split, index, attempt));
    const level = random.pick(this.levels);
    return { level, problem: generateArithmeticProblem(level, random) };
  }

  private toTask(drawn: { level: number; problem: GeneratedProblem }, split: MathSplit, index: number): ArithmeticTask {
    const { level, problem } = drawn;
    return {
      id: `arith-${this.seed}-${split}-${index}`,
      question: problem.question,
      answer: problem.answer,
      dataSource: ARITHMETIC_DATA_SOURCE,
      difficulty: level,
      split,
      steps: problem.steps,
    };
  }

  private buildTestList(): ArithmeticTask[] {
    const tasks: ArithmeticTask[] = [];
    const seen = new Set<string>();
    const maxDraws = 1000 + 50 * this.testSize;
    for (let k = 0; tasks.length < this.testSize; k++) {
      if (k >= maxDraws)
        throw new MathTaskSourceError(
          `only ${tasks.length} distinct held-out problems found at levels [${this.levels.join(', ')}] for testSize ${this.testSize}; lower testSize or add levels`,
          'testSize',
        );
      const drawn = this.draw('test', k, 0);
      if (!isHeldOutProblem(drawn.problem.key) || seen.has(drawn.problem.key)) continue;
      seen.add(drawn.problem.key);
      tasks.push(this.toTask(drawn, 'test', tasks.length));
    }
    return tasks;
  }
}

/**
 * The QuestionSet `math` env-math contributes: `trainSize` training and `testSize` held-out arithmetic questions of
 * `ArithmeticTaskSource` (the request's seed and levels, env-math's default levels 1 and 2 when it names none), each
 * with its answer. env-debate's `env.debate.tasks: math` debates them.
 */
export const arithmeticQuestionSet: QuestionSet = Object.freeze({
  questions({ seed, levels = [1, 2], trainSize, testSize }: QuestionRequest) {
    const source = new ArithmeticTaskSource({ seed, levels: [...levels], trainSize, testSize });
    const question = ({ id, question, answer }: MathTask) => ({ id, question, answer });
    return { train: Array.from({ length: trainSize }, (_, i) => question(source.train(i))), test: source.test().map(question) };
  },
});

function checkIndex(value: number, name: string): void {
  if (!(Number.isInteger(value) && value >= 0)) throw new MathTaskSourceError(`${name} must be a non-negative integer, got ${value}`, name);
}
